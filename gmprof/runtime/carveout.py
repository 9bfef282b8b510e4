"""The L1 / shared-memory split of the instrumented launch (an experiment of issue 17, opt-in).

SM mode puts the block's counters in dynamic shared memory. With no preference the driver sizes
the shared-memory part of each SM for the kernel's full occupancy, and L1 gets what is left: on
an H100 (256 KB a SM) co's native kernel (8.4 KB a block, 16 blocks a SM) can run with 164 KB of
shared memory and 92 KB of L1, its instrumented kernel (about 18 KB a block with the counter
area) with 228 KB and 28 KB of L1. co reads every thread's own row of `data` with a 1 KB stride
between the lanes of a warp, a load of 32 lines that the next 31 columns read again from L1:
about 64 KB of such lines are live per SM (16 warps), more than 28 KB. The prediction: co's
shared-memory profile loses its L1 hits, not its time to counting.

The GPU backend asks (unless GMPROF_CARVEOUT=driver), for each instrumented launch whose
counters live in shared memory, for the smallest shared-memory part that still holds every
block the grid can have resident at once (the grid's blocks over the SMs, at most what
occupancy allows), leaving the rest to L1. The driver rounds the preference up to a capacity
the chip has, and may ignore it. Counts and outputs do not depend on it. Measured on an H100
(bench/ab_timing.py co --profile shm --placements): native co with the counter area's 8,520
bytes of dynamic shared memory and nothing else, +0.26x under the driver's choice, +0.00x with
a 50% carveout; the instrumented kernel 0.48x -> 0.02x.
"""
from __future__ import annotations

import math


def fit_percent(static_bytes: int, dynamic_bytes: int, reserved_bytes: int, grid_blocks: int,
                sm_count: int, blocks_per_sm: int, shared_per_sm: int) -> int | None:
    """The carveout preference (percent of the SM's maximum shared memory) that holds
    min(ceil(grid_blocks / sm_count), blocks_per_sm) blocks, or None (the driver's default)
    when that is the whole of it or nothing is known."""
    if sm_count <= 0 or blocks_per_sm <= 0 or shared_per_sm <= 0 or grid_blocks <= 0:
        return None
    resident = min(math.ceil(grid_blocks / sm_count), blocks_per_sm)
    need = resident * (static_bytes + dynamic_bytes + reserved_bytes)
    if need >= shared_per_sm:
        return None
    return max(1, math.ceil(100 * need / shared_per_sm))


__all__ = ["fit_percent"]
