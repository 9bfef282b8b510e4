"""matmul_rect: C = A * B, 1x2 rectangular tiling, two outputs a thread (paper 004, Fig. 2(b))."""
from __future__ import annotations

from pathlib import Path

from gmprof.driver import load_sample

_Naive = type(load_sample(Path(__file__).resolve().parent.parent / "matmul_naive").driver)


class MatmulRect(_Naive):
    description = ("Matrix product with 1x2 rectangular tiling: a 16 x 16 block computes a "
                   "16 x 32 tile of C, each As word feeding two products; Bs is 16 x 32. Large: "
                   "4096^3, 14 ms native on an H100.")

    def kernel(self):
        return "matmul_rect"

    def grid(self, size):
        return (size["n"] // (2 * self.tile), size["m"] // self.tile)


DRIVER = MatmulRect()
