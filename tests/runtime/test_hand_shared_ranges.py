"""A shared access that every thread of the block makes alike (BLOCK: tid-invariant, block-
convergent) walking a range in a loop (co's `colCL[c]` for c < nCol, under a condition on
shared data): counted once per entry of the loop, the range shared out over the block's
threads (gmprof.cuh sm_range_block), instead of one update per iteration by thread 0 (issue 17).
Expected counts derived by hand."""
from __future__ import annotations

import numpy as np
import pytest

from gmprof.mode import Mode
from gmprof.passes.hooks import SmSpreadBlock
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
    ranged = {(sp.site.text, sp.mode) for sp in plan.sites.values()
              if sp.hook.range is not None}
    assert ranged == {("tab[c]", "BLOCK"), ("rev[c]", "BLOCK"), ("tab[step * c]", "BLOCK")}
    assert not any(s.ranges for s in plan.slots)  # no difference array for shared memory
    for text in ("basic", "SA-NA-SM", "trace"):
        p = pipeline.plan(program, Mode.parse(text, profile="shm"))
        assert not any(sp.hook.range for sp in p.sites.values() if sp.slot and sp.slot.kind ==
                       "shared"), text


@pytest.fixture(scope="module", params=["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
def prof(request):
    return Profiler(text=SOURCE, name="shared_ranges.cu", backend=request.param)


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


GATHER = r"""
#define M 64
// as co's RClusterCnt: the shared arrays reach the loops through a helper's parameters
__device__ int rows(const int *tab, const int *idx, int *acc, const int *flag, int n) {
    int s = 0;
    for (int r = 0; r < 3; r++)
        if (flag[r] > 0) {
            for (int c = 0; c < n; c++) s += tab[(r * 5 + idx[c]) % M];  // spread
            for (int c = 0; c < n; c++) {                                  // not: t changes
                int t = idx[c];
                s += tab[t];
            }
        }
    for (int c = 0; c < n; c++) {          // not: the loop writes memory
        s += tab[idx[c]];
        if (threadIdx.x == 0) acc[c] += 1;
    }
    return s;
}

__global__ void gathers(int *out, const int *in, const int *cols, const int *flag, int n) {
    __shared__ int tab[M];
    __shared__ int idx[M];
    __shared__ int acc[M];
    for (int i = threadIdx.x; i < M; i += blockDim.x) {
        tab[i] = in[i]; idx[i] = cols[i]; acc[i] = 0;
    }
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = rows(tab, idx, acc, flag, n);
}
"""


def test_gather_spread_planned():
    pipeline = Pipeline()
    program = pipeline.analyze(pipeline.load(text=GATHER, name="gathers.cu"))
    plan = pipeline.plan(program, Mode.parse("default", profile="shm"))
    spread = {sp.site.text for sp in plan.sites.values() if isinstance(sp.hook, SmSpreadBlock)}
    assert spread == {"tab[(r * 5 + idx[c]) % M]"}
    ranged = {sp.site.text for sp in plan.sites.values() if sp.hook.range is not None}
    assert ranged == {"idx[c]"}  # the first loop's (the others' are under a store or a local)


@pytest.fixture(scope="module", params=["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
def gprof(request):
    return Profiler(text=GATHER, name="gathers.cu", backend=request.param)


@pytest.mark.parametrize("mode", ["default", "SA", "basic"])
@pytest.mark.parametrize("block,n", [(64, 64), (32, 50), (128, 3), (40, 0)])
def test_gather_spread_counts(gprof, mode, block, n):
    grid = 2
    inp = (np.arange(64) * 5 % 13).astype(np.int32)
    cols = (np.arange(64) * 7 % 64 // 2).astype(np.int32)  # repeats: hot words
    flag = np.array([1, 0, 2], np.int32)                     # entries r = 0 and 2
    out = np.zeros(grid * block, np.int32)
    report = gprof.launch("gathers", grid, block, [out, inp, cols, flag, np.int32(n)],
                          mode=Mode.parse(mode, profile="shm"))
    assert report.run.outputs_identical
    c = cols[:n]
    per_thread = sum(inp[(r * 5 + c) % 64].sum() + inp[c].sum() for r in (0, 2)) + inp[c].sum()
    expect = np.full(block, per_thread)
    np.testing.assert_array_equal(out, np.tile(expect, grid))
    # per block: tab written once; read per thread at (r*5 + cols[c]) % 64 for r = 0, 2 and at
    # cols[c] twice more (the local-t loop for r = 0, 2) and once (the last loop)
    hist = lambda idx: np.bincount(idx, minlength=64)  # noqa: E731
    tab = 1 + block * (hist((0 * 5 + c) % 64) + hist((2 * 5 + c) % 64) + 3 * hist(c))
    np.testing.assert_array_equal(report.array("tab").counts, grid * tab)
    # idx: written once; read at c < n by every thread in two loops per entry (2 entries)
    # and in the last loop: 5 times
    idx = 1 + block * 5 * (np.arange(64) < n)
    np.testing.assert_array_equal(report.array("idx").counts, grid * idx)
    # acc: zeroed once; thread 0's acc[c] += 1 for c < n (one read-write access)
    acc = 1 + (np.arange(64) < n)
    np.testing.assert_array_equal(report.array("acc").counts, grid * acc)
    for name in ("tab", "idx", "acc"):
        assert report.array(name).label == "exact" and report.array(name).out_of_range == 0
