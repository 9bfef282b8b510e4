"""Per-warp requests of walks counted once per loop entry (--access-stats, issue 27): the requests
of a range's whole loop are costed at its entry (gmprof.cuh walk_requests: one evaluation per
residue of the lanes' shift modulo 128 bytes, a segment per distinct trip count), not at each
access. Expected values: each iteration's request by numpy (the lanes active at iteration k,
their addresses, distinct 32-byte sectors and 128-byte lines), summed here; the model:
docs/report.md. The arrays start 256-byte aligned on the CPU backend."""
from __future__ import annotations

import numpy as np
import pytest

from gmprof.mode import Mode
from gmprof.runtime.session import Profiler

SOURCE = r"""
// co's row walk: lane g walks its own row of n floats from row[g] (read: not affine, so a
// range, counted once per entry)
__global__ void rows(float *out, const float *x, const int *row, int n) {
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (int c = 0; c < n; c++) s += x[row[g] + c];
    out[g] = s;
}

// the same walk backwards
__global__ void rows_back(float *out, const float *x, const int *row, int n) {
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (int c = n - 1; c >= 0; c--) s += x[row[g] + c];
    out[g] = s;
}

// spmv's row: a warp's lanes walk one row [lo, hi) 32 elements apart; lanes stop at different
// iterations
__global__ void csr(float *out, const float *x, const int *lo, const int *hi) {
    int w = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    float s = 0.0f;
    for (int j = lo[w] + lane; j < hi[w]; j += 32) s += x[j];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// co's sColCL[c]: every lane reads the same shared word at each iteration
__global__ void shared_walk(float *out, const float *x, const int *first, int n) {
    __shared__ float s[256];
    int t = threadIdx.x;
    for (int i = t; i < 256; i += blockDim.x) s[i] = x[i];
    __syncthreads();
    float acc = 0.0f;
    for (int c = first[0]; c < n; c++) acc += s[c];
    out[t] = acc;
}

// co's sAcomp[rc * nRowCL + colCL[c]]: one shared word for all lanes, found from memory at each
// iteration (a spread); a float2 walk every lane reads alike; a device word every lane reads
__global__ void block_sites(float *out, const float *x, const int *idx, const int *first, int n) {
    __shared__ float s[256];
    __shared__ float2 s2[64];
    int t = threadIdx.x;
    for (int i = t; i < 256; i += blockDim.x) s[i] = x[i];
    for (int i = t; i < 64; i += blockDim.x) s2[i] = make_float2(x[i], x[i + 1]);
    __syncthreads();
    float acc = 0.0f;
    for (int c = first[0]; c < n; c++) {
        float2 v = s2[c];
        acc += s[idx[c]] + v.x * v.y + x[c];
    }
    out[t] = acc;
}
"""


@pytest.fixture(scope="module")
def prof():
    return Profiler(text=SOURCE, name="walks.cu", backend="cpu")


def site_of(report, text):
    return next(s for s in report.sites if s.text == text)


def expect(lane_elems, size=4):
    """(requests, sectors, ideal, lines, histogram) of iterations' requests: lane_elems[k] the
    element indices of iteration k's active lanes (one warp)."""
    req = units = ideal = lines = 0
    hist = [0] * 32
    for elems in lane_elems:
        if len(elems) == 0:
            continue
        a = size * np.asarray(elems, np.int64)
        sectors = len(np.unique(a // 32))
        req += 1
        units += sectors
        ideal += max(1, -(-len(np.unique(a)) * size // 32))
        lines += len(np.unique(a // 128))
        hist[min(sectors, 32) - 1] += 1
    return req, units, ideal, lines, hist


def stats(site):
    w = site.warps
    return w.requests, w.units, w.ideal, w.lines, list(w.histogram)


def add(*parts):
    out = [0, 0, 0, 0, [0] * 32]
    for p in parts:
        for i in range(4):
            out[i] += p[i]
        out[4] = [a + b for a, b in zip(out[4], p[4])]
    return tuple(out)


@pytest.mark.parametrize("R", [13, 32, 1])
@pytest.mark.parametrize("kernel", ["rows", "rows_back"])
def test_lanes_walking_their_own_rows(prof, kernel, R):
    # 2 warps; n = 45 iterations (more than the 32 residues of a 4-byte step modulo 128)
    # (R = 1: lanes a float apart, their walks overlapping; rows from 3: off the sector grid)
    n, threads = 45, 64
    row = (3 + R * np.arange(threads)).astype(np.int32)
    x = np.zeros(threads * R + n + 3, np.float32)
    out = np.zeros(threads, np.float32)
    report = prof.launch(kernel, 1, threads, [out, x, row, np.int32(n)],
                         mode=Mode.parse("default", warps=True))
    site = site_of(report, "x[row[g] + c]")
    assert "range" in site.strategy and site.warps.how == "measured"
    assert site.executions == threads * n
    want = add(*(expect([row[32 * w:32 * w + 32] + c for c in range(n)]) for w in range(2)))
    assert stats(site) == want


def test_lanes_of_a_row_stopping_at_different_iterations(prof):
    # warp 0: [5, 80) trips 3 for lanes 0-10, 2 for the rest; warp 1: [80, 80) none;
    # warp 2: [100, 117) one iteration of 17 lanes; warp 3: [130, 260) trips 5 for lanes 0-1
    lo = np.array([5, 80, 100, 130], np.int32)
    hi = np.array([80, 80, 117, 260], np.int32)
    x = np.zeros(300, np.float32)
    out = np.zeros(128, np.float32)
    report = prof.launch("csr", 2, 64, [out, x, lo, hi], mode=Mode.parse("default",
                                                                        warps=True))
    site = site_of(report, "x[j]")
    assert "range" in site.strategy and site.warps.how == "measured"
    lanes = np.arange(32)
    parts = []
    for a, b in zip(lo, hi):
        k = 0
        while a + 32 * k < b:
            j = a + lanes + 32 * k
            parts.append(expect([j[j < b]]))
            k += 1
    assert site.executions == int((hi - lo).sum())
    assert stats(site) == add(*parts)


def test_a_shared_word_every_lane_reads(prof):
    n = 40
    x = np.zeros(256, np.float32)
    out = np.zeros(64, np.float32)
    report = prof.launch("shared_walk", 1, 64, [out, x, np.zeros(1, np.int32), np.int32(n)],
                         mode=Mode.parse("default", warps=True))
    site = site_of(report, "s[c]")
    assert "range" in site.strategy
    # 2 warps x 40 iterations, each one word for all lanes: a broadcast, 1 wavefront (ideal 1)
    w = site.warps
    assert (w.requests, w.units, w.ideal) == (80, 80, 80)
    assert w.histogram[0] == 80 and sum(w.histogram) == 80


def test_sites_every_lane_reads_alike(prof):
    # 1 block of 48 threads: warp 0 all 32 lanes, warp 1 lanes 0-15; n = 20 iterations
    n = 20
    x = np.zeros(256, np.float32)
    idx = np.random.default_rng(3).integers(0, 256, 64).astype(np.int32)
    out = np.zeros(48, np.float32)
    report = prof.launch("block_sites", 1, 48, [out, x, idx, np.zeros(1, np.int32), np.int32(n)],
                         mode=Mode.parse("default", warps=True))
    strategies = {s.text: s.strategy for s in report.sites}
    assert "shared out over the block" in strategies["s[idx[c]]"], strategies  # a spread
    assert "range" in strategies["s2[c]"] and "range" in strategies["x[c]"], strategies
    bins = lambda k, count: [count if i == k - 1 else 0 for i in range(32)]  # noqa: E731
    # s[idx[c]]: 2 warps x 20 requests, one word each: 1 wavefront (ideal 1)
    w = site_of(report, "s[idx[c]]").warps
    assert (w.requests, w.units, w.ideal, list(w.histogram)) == (40, 40, 40, bins(1, 40))
    # s2[c]: 8 bytes, served a half-warp at a time, one wavefront each: warp 0 has lanes in
    # both halves (2 wavefronts), warp 1 in the first only (1); ideal the same
    w = site_of(report, "s2[c]").warps
    assert (w.requests, w.units, w.ideal) == (40, 20 * 2 + 20 * 1, 60)
    assert list(w.histogram) == [20, 20] + [0] * 30
    # x[c]: one float for all lanes: 1 sector, 1 line, ideal 1 a request
    w = site_of(report, "x[c]").warps
    assert (w.requests, w.units, w.ideal, w.lines) == (40, 40, 40, 40)


def _collectives(kernel, args, grid, block, warps):
    """Warp collectives (a lane's call each) of one launch on the CPU backend
    (gmprof_cpu_collectives: the cost proxy of bench/stats_collectives.py)."""
    import ctypes

    p = Profiler(text=SOURCE, name="walks.cu", backend="cpu")
    p.launch(kernel, grid, block, args, mode=Mode.parse("default", warps=warps),
             compare_native=False, warmup=0)
    total = 0
    for m in p.modules._modules.values():
        f = m.module._lib.gmprof_cpu_collectives
        f.restype = ctypes.c_ulonglong
        total += int(f())
    return total


@pytest.mark.parametrize("n", [64, 256])
def test_a_walk_costs_collectives_once_per_entry(n):
    # co's rows at its large size (rows 1024 bytes apart): the statistics cost a few
    # collectives a lane at the loop's entry, however many iterations follow (at every access
    # they were 3 or 4 a lane an iteration)
    threads = 64
    row = (256 * np.arange(threads)).astype(np.int32)
    args = [np.zeros(threads, np.float32), np.zeros(256 * threads + n, np.float32), row,
            np.int32(n)]
    added = _collectives("rows", args, 1, threads, True) - \
        _collectives("rows", args, 1, threads, False)
    # the lanes with trips at the entry (walk_lanes: __activemask, a ballot), their meeting
    # after the loop (__syncwarp), one request (a shuffle, a reduction), the lowest trip
    # count, the lowest gap between lanes, the lanes that go on: 8 a lane
    assert added <= 8 * threads
