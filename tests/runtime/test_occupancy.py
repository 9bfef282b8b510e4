"""The register cap that keeps an instrumented kernel at the native kernel's blocks a SM
(gmprof/runtime/occupancy.py). Expected values by hand: 65,536 registers a SM, a warp's
registers allocated 256 at a time (8 a thread)."""
import pytest

from gmprof.runtime.occupancy import blocks_by_registers, register_cap


def test_blocks_by_registers_by_hand():
    # 1,024 threads = 32 warps; 32 registers: 32 x 32 = 1,024 a warp, 32,768 a block: 2 blocks
    assert blocks_by_registers(32, 1024) == 2
    # 33 registers round up to 40: 1,280 a warp, 40,960 a block: 1 block
    assert blocks_by_registers(33, 1024) == 1
    # 256 threads (8 warps) at 40 registers: 10,240 a block: 6 blocks
    assert blocks_by_registers(40, 256) == 6


def test_spmv_cliff_gets_its_cap():
    # spmv: native 32 registers, 2 blocks a SM of 1,024 threads; with --access-stats 40, 1 block:
    # the most registers for 2 blocks is 65,536 / (2 x 32 warps x 32 lanes) = 32
    assert register_cap(2, 1, 40, 1024) == 32


def test_no_cap_where_registers_are_not_the_limit():
    # 1 block a SM of the native 4 although 40 registers allow 6 (shared memory decided): no cap
    assert register_cap(4, 1, 40, 256) is None
    # as many blocks as natively: nothing to do
    assert register_cap(2, 2, 40, 1024) is None


@pytest.mark.gpu
def test_spmv_with_access_stats_keeps_native_occupancy():
    from pathlib import Path

    import dataclasses

    import numpy as np

    from gmprof.driver import load_sample
    from gmprof.mode import Mode
    from gmprof.runtime.samples import first_profiled_launch, sample_profiler

    root = Path(__file__).resolve().parents[2]
    sample = load_sample(root / "samples" / "spmv")
    arrays = sample.driver.arrays(sample.driver.sizes["small"], np.random.default_rng(0))
    prof = sample_profiler(sample, "gpu")
    launch, largs = first_profiled_launch(sample, "small", prof, arrays)
    mode = dataclasses.replace(Mode.parse("default", profile="both"), warps=True)
    # one block of 1,024 threads (32 rows): its dynamic shared memory is a float a thread
    shared = 1024 * 4
    report = prof.launch(launch.kernel, (1, 1, 1), (1024, 1, 1), largs, shared, mode=mode)
    assert report.run.outputs_identical
    native = prof.modules.module(None, [launch.kernel])
    ours = native.blocks_per_sm(launch.kernel, 1024, shared)
    built = [(key, m) for key, m in prof.modules._modules.items() if m is not native]
    capped = [m for key, m in built if any(o.startswith("--maxrregcount") for o in key[1])]
    plain = [m for key, m in built if not any(o.startswith("--maxrregcount") for o in key[1])]
    if plain and plain[0].blocks_per_sm(launch.kernel, 1024, shared) < ours:
        # the first compile lost blocks to its registers: the capped one has them back
        assert capped
        assert capped[0].blocks_per_sm(launch.kernel, 1024, shared) >= ours
