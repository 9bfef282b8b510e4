"""GMPROF_CARVEOUT=fit's preference (gmprof/runtime/carveout.py), worked by hand: the smallest
shared-memory part of an SM (percent of its maximum) that holds the blocks a launch can have
resident at once; the GPU backend sets it on the instrumented function."""
from __future__ import annotations

from gmprof.runtime.carveout import fit_percent

H100_SHARED = 228 * 1024  # bytes of shared memory an H100 SM can have


def test_co_large_needs_a_third():
    # co large: 528 blocks on 132 SMs -> 4 resident a SM; a block: 9,472 static bytes,
    # 8,640 of counters, 1,024 reserved -> 4 x 19,136 = 76,544 bytes of 233,472: 32.8% -> 33
    assert fit_percent(9472, 8640, 1024, 528, 132, 12, H100_SHARED) == 33


def test_occupancy_caps_the_blocks():
    # 10,000 blocks: 76 a SM wanted, 12 allowed -> 12 x 19,136 = 229,632 bytes: 98.4% -> 99
    assert fit_percent(9472, 8640, 1024, 10_000, 132, 12, H100_SHARED) == 99
    # one block a SM that fills it: nothing to leave to L1 (the driver's default)
    assert fit_percent(200_000, 32_448, 1024, 132, 132, 1, H100_SHARED) is None


def test_unknown_device_leaves_it_to_the_driver():
    assert fit_percent(1024, 0, 1024, 100, 0, 4, H100_SHARED) is None
    assert fit_percent(1024, 0, 1024, 100, 132, 0, H100_SHARED) is None
    # a tiny kernel: at least 1 percent
    assert fit_percent(0, 0, 16, 1, 132, 1, H100_SHARED) == 1
