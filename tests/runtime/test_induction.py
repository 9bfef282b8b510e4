"""Secondary induction variables (passes/value_variables.py): a variable that a `for`'s
increment steps beside the iterator (`for (a = a0, i = 0; a <= aEnd; a += aStep, ++i)`) and
nothing else in the loop changes is i0 + step * iteration, so the sites it indexes (the rotating
buffer `As[i % STAGES]` of cuda-samples' globalToShmemAsyncCopy) are counted at launch from
their formulas; one also changed in the body, or that a loop starts where its last run stopped,
stays measured, and so does `i % n` with an unsigned n where i may be negative. Counts, on the CPU backend (and the GPU), are derived here with numpy."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import gmprof
from gmprof.mode import Mode
from gmprof.passes.pipeline import Pipeline
from gmprof.passes.plan import STATIC

KERNELS = Path(__file__).resolve().parent / "cpu_kernels" / "induction.cu"
TILE, STAGES, LANES = 8, 4, 32


def _strategies():
    pipeline = Pipeline()
    program = pipeline.analyze(pipeline.load(KERNELS))
    plan = pipeline.plan(program, Mode.parse("default"))
    return {(sp.site.function.name, sp.site.text): sp.strategy for sp in plan.sites.values()}


def test_secondary_induction_sites_are_static():
    how = _strategies()
    static = {key for key, strategy in how.items() if strategy == STATIC}
    assert {key for key in how if key[0] in ("pipeline", "strides")} <= static
    assert ("not_induction", "ring[(i % STAGES) * 32 + threadIdx.x]") not in static
    assert ("not_induction", "out[s * 32 + threadIdx.x]") not in static
    assert ("unsigned_stage", "ring[i % stages]") not in static


@pytest.fixture(scope="module", params=["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
def prof(request):
    return gmprof.api.profiler(KERNELS, backend=request.param)


@pytest.mark.parametrize("mode", ["default", "basic"])
@pytest.mark.parametrize("tiles", [3, 6])  # 6 tiles: stages 0 and 1 are used twice
def test_pipeline_counts(prof, mode, tiles):
    gx, gy = 2, 3
    wA, wB = tiles * TILE, gx * TILE
    rng = np.random.default_rng(0)
    a = rng.random((gy * TILE, wA), dtype=np.float32)
    b = rng.random((wA, wB), dtype=np.float32)
    c = np.zeros((gy * TILE, wB), np.float32)
    r = prof.launch("pipeline", (gx, gy), (TILE, TILE), [c, a, b, np.int32(wA), np.int32(wB)],
                    mode=Mode.parse(mode))
    shared = np.zeros((STAGES, TILE, TILE), np.int64)
    for _ in range(gx * gy):
        for i in range(tiles):
            # stage i % STAGES: each element stored once, then read by the TILE threads of
            # its row (As) or column (Bs)
            shared[i % STAGES] += 1 + TILE
    np.testing.assert_array_equal(r.array("As").counts.reshape(shared.shape), shared)
    np.testing.assert_array_equal(r.array("Bs").counts.reshape(shared.shape), shared)
    # each element of A is read once per block column, of B once per block row
    np.testing.assert_array_equal(r.array("A").counts.reshape(a.shape), np.full(a.shape, gx))
    np.testing.assert_array_equal(r.array("B").counts.reshape(b.shape), np.full(b.shape, gy))
    np.testing.assert_array_equal(r.array("C").counts.reshape(c.shape), np.ones(c.shape))
    assert r.run.outputs_identical


@pytest.mark.parametrize("n,step", [(0, 1), (5, 1), (7, 3)])
def test_strides_counts(prof, n, step):
    out = np.zeros((5 * n + 3) * LANES, np.int32)
    r = prof.launch("strides", (1,), (LANES,), [out, np.int32(n), np.int32(step)],
                    mode=Mode.parse("default"))
    ring = np.zeros((STAGES, LANES), np.int64)
    want = np.zeros((5 * n + 3, LANES), np.int64)
    for t in range(n):
        ring[(3 + step * t) % STAGES] += 1  # up = 3 + step * t
        want[5 * n + 2 - 5 * t] += 1  # down = 5n + 2 - 5t
    np.testing.assert_array_equal(r.array("ring").counts.reshape(ring.shape), ring)
    np.testing.assert_array_equal(r.array("out").counts.reshape(want.shape), want)


def test_not_induction_counts(prof):
    n = 6
    flags = np.array([1, 0, 0, 1, 1, 0], np.int32)
    out = np.zeros((2 * n + 1) * LANES, np.int32)
    r = prof.launch("not_induction", (1,), (LANES,), [out, flags, np.int32(n)],
                    mode=Mode.parse("default"))
    ring = np.zeros((STAGES, LANES), np.int64)
    ring[0] += 1  # the store before the loop
    i = 0
    for t in range(n):
        i += int(flags[t] > 0)
        ring[i % STAGES] += 1
        i += 1
    # s runs 0 .. 2n - 1 once over all the runs of its loop (each run goes on from the last)
    want = np.zeros((2 * n + 1, LANES), np.int64)
    want[:2 * n] = 1
    np.testing.assert_array_equal(r.array("ring").counts.reshape(ring.shape), ring)
    np.testing.assert_array_equal(r.array("out").counts.reshape(want.shape), want)


@pytest.mark.parametrize("mode", ["default", "basic"])
def test_unsigned_stage_counts(prof, mode):
    n = 8
    out = np.zeros(STAGES, np.int32)
    r = prof.launch("unsigned_stage", (1,), (LANES,), [out, np.int32(n)], mode=Mode.parse(mode))
    ring = np.full(STAGES, 2, np.int64)  # the store before the loop, the read after it
    for t in range(n):
        ring[(2 - t) % 2**64 % STAGES] += 1  # i = 2 - t as a size_t: 2, 1, 0, 3, 2, 1, 0, 3
    np.testing.assert_array_equal(r.array("ring").counts, ring)
    np.testing.assert_array_equal(out, ring - 2)  # the kernel's own tally agrees
