"""matmul_prefetch: tiled C = A * B, next tiles prefetched into registers (paper 004, Fig. 2(d))."""
from __future__ import annotations

from pathlib import Path

from gmprof.driver import load_sample

_Naive = type(load_sample(Path(__file__).resolve().parent.parent / "matmul_naive").driver)


class MatmulPrefetch(_Naive):
    description = ("Tiled matrix product with prefetching: the next A and B tiles are loaded into "
                   "registers while the current shared tiles are used; counts as matmul_tiled. "
                   "Large: 4096^3, 17 ms native on an H100.")

    def kernel(self):
        return "matmul_prefetch"


DRIVER = MatmulPrefetch()
