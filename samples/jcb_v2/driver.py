"""jcb_v2: Jacobi 5-point sweeps, a haloed tile of the input in shared memory (GMProf's jcb_v2)."""
from __future__ import annotations

from pathlib import Path

from gmprof.driver import load_sample

# Same grids, launches and reference as jcb_v1; only the kernel differs.
_V1 = type(load_sample(Path(__file__).resolve().parent.parent / "jcb_v1").driver)


class JacobiV2(_V1):
    kernel = "jacobi_v2"
    description = ("Jacobi sweeps as jcb_v1, with a (TILE_Y+2) x (TILE_X+2) tile of the INPUT in "
                   "shared memory: inner words are read 4 times per live range, `in` about once "
                   "per element from device memory, `out` written directly. Large: 4096^2 x 50 "
                   "sweeps, 4.4 ms native on an H100.")


DRIVER = JacobiV2()
