"""transpose_padded: Figure 1's transpose with the tile padded to [BLK_DIM][BLK_DIM + 1]."""
from __future__ import annotations

from pathlib import Path

from gmprof.driver import load_sample

# Same arrays, launch and reference as transpose_naive; only the kernel file differs.
_Naive = type(load_sample(Path(__file__).resolve().parent.parent / "transpose_naive").driver)


class TransposePadded(_Naive):
    description = ("Transpose through a shared tile padded to [BLK_DIM][BLK_DIM + 1] (no bank "
                   "conflicts); the padding column is never touched. Large: 16384^2 floats, "
                   "1.1 ms native on an H100.")


DRIVER = TransposePadded()
