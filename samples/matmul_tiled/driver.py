"""matmul_tiled: C = A * B through 16 x 16 shared tiles (paper 004, Figure 2(a)); a template."""
from __future__ import annotations

from pathlib import Path

from gmprof.driver import load_sample

_Naive = type(load_sample(Path(__file__).resolve().parent.parent / "matmul_naive").driver)


class MatmulTiled(_Naive):
    description = ("Tiled matrix product, kernel template launched as matmul_tiled<16>: each "
                   "shared word is written once and read 16 times per tile; device reads of A and "
                   "B drop 16-fold from matmul_naive. Large: 4096^3, 17 ms native on an H100.")

    def kernel(self):
        return f"matmul_tiled<{self.tile}>"


DRIVER = MatmulTiled()
