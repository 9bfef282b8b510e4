"""A shared access that every thread of the block makes alike (BLOCK: tid-invariant, block-
convergent) walking a range in a loop (co's `colCL[c]` for c < nCol, under a condition on
shared data): counted once per entry of the loop, the range shared out over the block's
threads (gmprof.cuh sm_range_block), instead of one update per iteration by thread 0 (issue 17).
Expected counts derived by hand."""
from __future__ import annotations

import numpy as np
import pytest

from gmprof.mode import Mode
from gmprof.passes.pipeline import Pipeline
from gmprof.runtime.session import Profiler

SOURCE = r"""
#define N 100
__device__ int walk(const int *tab, int n, int step) {
    int s = 0;
    for (int c = 0; c < n; c++) s += tab[step * c];
    return s;
}

__global__ void ranges(int *out, const int *in, const int *flag, int n) {
    __shared__ int tab[N];
    __shared__ int rev[N];
    __shared__ int on[4];
    for (int i = threadIdx.x; i < N; i += blockDim.x) { tab[i] = in[i]; rev[i] = 2 * in[i]; }
    if (threadIdx.x < 4) on[threadIdx.x] = flag[threadIdx.x];
    __syncthreads();
    int s = 0;
    for (int r = 0; r < 4; r++)
        if (flag[r] > 0) {                     // data, the same for every thread
            for (int c = 0; c < n; c++) s += tab[c];          // range, stride 1
            for (int c = n - 1; c >= 0; c -= 2) s += rev[c];  // range, stride -2
        }
    s += on[threadIdx.x % 4];
    s += walk(tab, n / 2 + flag[3] + 2, 2);    // through a helper, stride 2 (flag[3] = -2)
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
"""


def test_planned():
    pipeline = Pipeline()
    program = pipeline.analyze(pipeline.load(text=SOURCE, name="shared_ranges.cu"))
    plan = pipeline.plan(program, Mode.parse("default", profile="shm"))
    ranged = {(sp.site.text, sp.mode) for sp in plan.sites.values() if sp.range is not None}
    assert ranged == {("tab[c]", "BLOCK"), ("rev[c]", "BLOCK"), ("tab[step * c]", "BLOCK")}
    assert not any(s.ranges for s in plan.slots)  # no difference array for shared memory
    for text in ("basic", "SA-NA-SM", "trace"):
        p = pipeline.plan(program, Mode.parse(text, profile="shm"))
        assert not any(sp.range for sp in p.sites.values() if sp.slot and sp.slot.kind ==
                       "shared"), text


@pytest.fixture(scope="module")
def prof():
    return Profiler(text=SOURCE, name="shared_ranges.cu", backend="cpu")


@pytest.mark.parametrize("mode", ["default", "SA-SM", "SA", "basic"])
@pytest.mark.parametrize("block,n", [(64, 100), (32, 37), (96, 1), (40, 0)])
def test_shared_range_counts(prof, mode, block, n):
    grid = 3
    inp = (np.arange(100) * 3 % 17).astype(np.int32)
    flag = np.array([1, 0, 5, -2], np.int32)  # entries r = 0 and 2 run the inner loops
    out = np.zeros(grid * block, np.int32)
    report = prof.launch("ranges", grid, block, [out, inp, flag, np.int32(n)],
                         mode=Mode.parse(mode, profile="shm"))
    assert report.run.outputs_identical
    entries = 2
    rev_read = np.zeros(100, int)
    rev_read[np.arange(n - 1, -1, -2)] = 1 if n else 0
    walk_read = np.zeros(100, int)
    walk_read[2 * np.arange(n // 2)] = 1
    expect_out = entries * (inp[:n].sum() + 2 * inp[rev_read == 1].sum()) + \
        inp[walk_read == 1].sum() + flag[np.arange(block) % 4]
    np.testing.assert_array_equal(out, np.tile(expect_out, grid))
    # per block: every word written once by the fill; then each thread reads tab[0..n) and
    # rev[n-1], rev[n-3], ... once per entry (2 entries), and tab[0], tab[2], ... once in walk
    tab = 1 + block * (entries * (np.arange(100) < n) + walk_read)
    rev = 1 + block * entries * rev_read
    np.testing.assert_array_equal(report.array("tab").counts, grid * tab)
    np.testing.assert_array_equal(report.array("rev").counts, grid * rev)
    # on[k]: written once, read by the threads t with t % 4 == k
    readers = np.bincount(np.arange(block) % 4, minlength=4)
    np.testing.assert_array_equal(report.array("on").counts, grid * (1 + readers))
    for name in ("tab", "rev", "on"):
        assert report.array(name).label == "exact" and report.array(name).out_of_range == 0
