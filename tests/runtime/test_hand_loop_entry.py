"""Counts made once per entry of a loop (a device range, a shared range, a spread) are made
before the loop where passes/entry.py proves them the first iteration's (issue 17: co's `c`
loop lost its unrolling to the first-iteration hooks), so the loop's text is the user's; where
it cannot (the address reads a local the loop sets), they stay in the first iteration. The
placement is asserted on the instrumented text, and the counts, derived by hand, are the same
in both placements (Mode.loop_entry False forces the first iteration) and per access."""
from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

from gmprof.mode import Mode
from gmprof.passes.hooks import SmSpreadBlock
from gmprof.passes.pipeline import Pipeline
from gmprof.passes.targets import NVRTC
from gmprof.runtime.session import Profiler

SOURCE = r"""
#define N 40
// as co's RClusterCnt: the shared arrays reach the loops through a helper's parameters
__device__ int rows(const int *d, const int *lab, const int *model, const int *flag, int t,
                    int n) {
    int s = 0;
    for (int r = 0; r < 3; r++)
        if (flag[r] > 0) {
            for (int c = 0; c < n; c++)
                s += d[t + c] * model[r * 8 + lab[c]] + flag[r];
            for (int c = 0; c < n; c++) {
                int k = 2 * c;
                s += d[t + k];
            }
        }
    return s;
}

__global__ void entry(int *out, const int *d, const int *flag, const int *lo, const int *hi,
                      int n) {
    __shared__ int lab[N];
    __shared__ int model[3 * 8];
    for (int i = threadIdx.x; i < N; i += blockDim.x) lab[i] = d[i] % 8;
    for (int i = threadIdx.x; i < 3 * 8; i += blockDim.x) model[i] = i;
    __syncthreads();
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int s = rows(d, lab, model, flag, t, n);
    int j;
    for (j = lo[t]; j < hi[t]; j++)
        s += d[j];
    j = lo[t] + 1;
    for (; j < hi[t]; j += 2) s += d[j];
    out[t] = s;
}
"""

DEFAULT = Mode.parse("default")
MODES = {"entry": DEFAULT,
         "first iteration": dataclasses.replace(DEFAULT, loop_entry=False),
         "per access": dataclasses.replace(DEFAULT, ranges=False)}
LOOP = ("for (int c = 0; c < n; c++)\n                s += d[t + c] * model[r * 8 + lab[c]] + "
        "flag[r];")


def _planned(mode):
    pipeline = Pipeline()
    program = pipeline.analyze(pipeline.load(text=SOURCE, name="loop_entry.cu"))
    plan = pipeline.plan(program, mode)
    text, _ = pipeline.instrumented_source(program, plan, NVRTC)
    return plan, text


def test_counts_move_to_the_loop_entry():
    plan, text = _planned(DEFAULT)
    how = {(sp.site.text, isinstance(sp.hook, SmSpreadBlock)): sp.hook.loop
           for sp in plan.sites.values() if sp.strategy == "hook" and
           sp.hook.loop is not None}
    at_entry = {key for key, loop in how.items() if loop in plan.entry}
    assert at_entry == {("d[t + c]", False), ("model[r * 8 + lab[c]]", True),
                        ("lab[c]", False), ("d[j]", False)}
    assert set(how) - at_entry == {("d[t + k]", False)}  # k is set in the loop: 1st iteration
    # flag[r] is invariant in the c loop: weighted by its trips alone, counted at its entry
    weighted = [sp for sp in plan.sites.values() if sp.site.text == "flag[r]" and
                sp.strategy == "hook" and sp.weight_loops]
    assert len(weighted) == 1 and weighted[0].weight_loops[0] in plan.entry
    assert re.search(r"::gmprof::dm<\d+, \d+, ::gmprof::\w+>\(&\(flag\[r\]\), "
                     r"__gmprof_trip_\d+, nullptr\);", text)
    # co's loop is the user's text, byte for byte; the j loops' bodies too (their conditions
    # read hi[t], counted per access); their counts come before them
    assert LOOP in text
    assert "j++)\n        s += d[j];" in text and "j += 2) s += d[j]; }" in text
    for k in (plan.loops[loop] for loop in plan.entry):
        assert f"if (__gmprof_trip_{k}) {{ ::gmprof::" in text
        assert f"__gmprof_first_{k}" not in text
    assert text.count("{ int c = 0; unsigned __gmprof_trip_") == 1
    assert "decltype(j) __gmprof_first_value = (decltype(j))(lo[t]); decltype(j) j = " in text
    first = [k for loop, k in plan.loops.items() if loop not in plan.entry]
    assert len(first) == 1 and f"if (__gmprof_first_{first[0]})" in text


def test_first_iteration_when_asked():
    plan, text = _planned(MODES["first iteration"])
    assert plan.entry == {} and len(plan.loops) == 4
    assert "if (__gmprof_trip_" not in text
    assert "(no ranges)" not in MODES["first iteration"].name
    assert "first iterations" in MODES["first iteration"].name


@pytest.fixture(scope="module", params=["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
def prof(request):
    return Profiler(text=SOURCE, name="loop_entry.cu", backend=request.param)


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("block,n", [(32, 9), (40, 0), (64, 33)])
def test_loop_entry_counts(prof, mode, block, n):
    grid = 2
    threads = grid * block
    size = threads + 40 + 2 * n
    d = (np.arange(size) * 5 % 11).astype(np.int32)
    flag = np.array([1, 0, 3], np.int32)  # entries r = 0 and 2 run the c loop
    rng = np.random.default_rng(block + n)
    lo = rng.integers(0, 20, threads).astype(np.int32)
    hi = (lo + rng.integers(-2, 9, threads)).astype(np.int32)  # some loops run 0 times
    out = np.zeros(threads, np.int32)
    report = prof.launch("entry", grid, block, [out, d, flag, lo, hi, np.int32(n)],
                         mode=MODES[mode])
    assert report.run.outputs_identical
    lab = d[:40] % 8
    model = np.arange(24)
    want_out = np.zeros(threads, np.int64)
    want_d = np.zeros(size, np.int64)
    want_d[:40] += grid  # the fill: every block reads d[0..40) once
    want_model = np.zeros(24, np.int64)
    for t in range(threads):
        for r in (0, 2):
            for c in range(n):
                want_out[t] += d[t + c] * model[r * 8 + lab[c]] + flag[r]
                want_d[t + c] += 1
                want_model[r * 8 + lab[c]] += 1
            for c in range(n):
                want_out[t] += d[t + 2 * c]
                want_d[t + 2 * c] += 1
        for j in range(lo[t], hi[t]):
            want_out[t] += d[j]
            want_d[j] += 1
        for j in range(lo[t] + 1, hi[t], 2):
            want_out[t] += d[j]
            want_d[j] += 1
    np.testing.assert_array_equal(out, want_out.astype(np.int32))
    np.testing.assert_array_equal(report.array("d").counts, want_d)
    # shared words, summed over the blocks: written once each by the fill, then read by
    # every thread (model[r * 8 + lab[c]] once per entry r and c; lab[c] for c < n, twice)
    np.testing.assert_array_equal(report.array("model").counts, grid + want_model)
    np.testing.assert_array_equal(report.array("lab").counts,
                                  grid + threads * 2 * (np.arange(40) < n))
    # lo[t] read twice, hi[t] once per evaluation of the two loops' conditions
    np.testing.assert_array_equal(report.array("lo").counts, np.full(threads, 2))
    trips1 = np.maximum(hi - lo, 0)
    trips2 = np.maximum((hi - lo) // 2, 0)  # j = lo + 1, lo + 3, ... < hi
    np.testing.assert_array_equal(report.array("hi").counts, trips1 + 1 + trips2 + 1)
    # flag[r]: every thread reads it in the condition, and n times more where the c loop runs
    np.testing.assert_array_equal(report.array("flag").counts,
                                  threads * np.array([1 + n, 1, 1 + n]))
    for name in ("d", "model", "lab", "lo", "hi"):
        assert report.array(name).label == "exact" and report.array(name).out_of_range == 0
