"""Per-warp requests of sites whose lanes a condition or a loop picks (--access-stats, issue 27):
counted from the formula in default mode (static_warps.py: enumerated, or by classes of blocks)
and by the hooks in basic mode, both against counts derived here by hand; the numpy model of
many requests at once (warp_requests.requests) against the hand-checked one-request model; a
device array's base that is not 128-byte aligned. The model: docs/report.md."""
from __future__ import annotations

import numpy as np
import pytest

from gmprof.mode import Mode
from gmprof.runtime.session import Profiler
from gmprof.runtime.static_warps import warp_stats
from gmprof.runtime.warp_requests import device_request, requests, shared_request

SOURCE = r"""
__global__ void picked(float *out, const float *x) {
    __shared__ float s[256];
    int t = threadIdx.x;
    if (t < 40) s[t] = x[t];
    __syncthreads();
    out[t] = s[t];
}

// (a kernel of its own: the CPU backend's lanes do not meet again after an `if` that some of
// a warp's lanes skip, as a GPU's do, and the hooks measure the lanes that meet)
__global__ void looped(float *out, const float *x) {
    __shared__ float s[256];
    int t = threadIdx.x;
    for (int i = t; i < 100; i += 64) s[2 * i] = x[i];
    __syncthreads();
    out[t] = s[2 * t];
}

__global__ void gather(float *out, const float *x, const int *idx) {
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    out[g] = x[idx[g]];
}

__global__ void walk(float *out, const float *x, const int *lo) {
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (int j = lo[g]; j < lo[g] + 4; j++) s += x[j];
    out[g] = s;
}

__global__ void indexed(float *out, const float *x, const int *idx) {
    __shared__ float s[1024];
    int t = threadIdx.x;
    for (int i = t; i < 1024; i += 32) s[i] = 1.0f;
    __syncthreads();
    out[t] = x[idx[t]] + s[idx[t]];
}

__global__ void invariant(float *out, const float *x, const int *idx, int n) {
    __shared__ float s[64];
    int t = threadIdx.x;
    s[t] = 1.0f;
    s[t + 32] = 2.0f;
    __syncthreads();
    float acc = 0.0f;
    for (int k = 0; k < n; k++) acc += x[idx[t]] * (float)k + s[idx[t] % 64];
    out[t] = acc;
}

__global__ void edges(float *out, const float *x) {
    int g = blockIdx.x * 64 + threadIdx.x;
    if (g > 0 && g < 130) out[g] = x[g - 1];
}
"""


@pytest.fixture(scope="module")
def prof():
    return Profiler(text=SOURCE, name="picked.cu", backend="cpu")


def stats(report, text):
    site = next(s for s in report.sites if s.text == text)
    assert site.warps is not None, text
    w = site.warps
    return w.requests, w.units, w.ideal, w.lines


@pytest.mark.parametrize("mode", ["default", "basic"])
def test_lanes_picked_by_a_condition_and_a_loop(prof, mode):
    x = np.arange(256, dtype=np.float32)
    out = np.zeros(64, np.float32)
    report = prof.launch("picked", 1, 64, [out, x], mode=Mode.parse(mode, warps=True))
    # two warps. `if (t < 40)`: warp 0 all 32 lanes, warp 1 lanes 32..39.
    #   s[t]: words 0..31, then 32..39: one wavefront each
    #   x[t]: bytes 0..127 (4 sectors, 1 line), then 128..159 (1 sector, 1 line): ideal 4 + 1
    assert stats(report, "s[t]") == (2, 2, 2, 0)
    assert stats(report, "x[t]") == (2, 5, 5, 2)
    if mode == "default":
        for text in ("s[t]", "x[t]"):
            assert next(s for s in report.sites if s.text == text).warps.how == "static", text
    report = prof.launch("looped", 1, 64, [out, x], mode=Mode.parse(mode, warps=True))
    # the loop: iteration 0 all 64 threads (i = t); iteration 1 threads t < 36 (i = t + 64):
    # warp 0 all lanes (i = 64..95), warp 1 lanes 32..35 (i = 96..99): 4 requests
    #   x[i]: bytes 0..127, 128..255, 256..383 (4 sectors, 1 line each), 384..399 (1, 1)
    assert stats(report, "x[i]") == (4, 13, 13, 4)
    #   s[2 * i]: even words, two in each even bank (2 wavefronts) for the three full warps;
    #   words 192..198 (banks 0, 2, 4, 6): 1
    assert stats(report, "s[2 * i]") == (4, 7, 4, 0)
    w = next(s for s in report.sites if s.text == "s[2 * i]").warps
    assert w.histogram[:3] == [1, 3, 0]
    if mode == "default":
        for text in ("x[i]", "s[2 * i]"):
            assert next(s for s in report.sites if s.text == text).warps.how == "static", text


@pytest.mark.parametrize("mode", ["default", "basic"])
def test_edge_blocks_of_a_grid(prof, mode):
    x = np.arange(192, dtype=np.float32)
    out = np.zeros(192, np.float32)
    report = prof.launch("edges", 3, 64, [out, x], mode=Mode.parse(mode, warps=True))
    # g = 64 b + t runs where 0 < g < 130: block 0 lanes g = 1..63, block 1 all, block 2
    # g = 128, 129. Requests: block 0 warps 0 and 1, block 1 warps 0 and 1, block 2 warp 0.
    # x[g - 1] (bytes 4 (g - 1)): 0..123 (sectors 0-3, line 0; ideal 31 x 4 / 32 -> 4),
    # 124..251 (sectors 3-7: 5, lines 0-1: 2; ideal 4), 252..379 (5, 2, 4), 380..507
    # (5, 2, 4), 508..515 (sectors 15-16: 2, lines 3-4: 2; ideal 1)
    assert stats(report, "x[g - 1]") == (5, 21, 17, 9)
    # out[g] (bytes 4 g): 4..127, 128..255, 256..383, 384..511 (4 sectors, 1 line each),
    # 512..519 (1, 1)
    assert stats(report, "out[g]") == (5, 17, 17, 5)
    if mode == "default":
        assert next(s for s in report.sites if s.text == "out[g]").warps.how == "static"


@pytest.mark.parametrize("mode", ["default", "basic"])
def test_measured_requests_of_many_blocks(prof, mode):
    # default: the statistics in each block's area (shared memory), flushed at its exit;
    # basic: straight into device memory
    idx = (np.arange(256) % 4 * 32).astype(np.int32)
    x = np.arange(128, dtype=np.float32)
    out = np.zeros(256, np.float32)
    report = prof.launch("gather", 4, 64, [out, x, idx], mode=Mode.parse(mode, warps=True))
    np.testing.assert_array_equal(out, x[idx])
    # 8 warps; each lane reads one of x[0], x[32], x[64], x[96]: bytes 0, 128, 256, 384,
    # 4 sectors and 4 lines a request; 4 distinct floats, 16 bytes: ideal 1
    assert stats(report, "x[idx[g]]") == (8, 32, 8, 32)
    assert next(s for s in report.sites if s.text == "x[idx[g]]").warps.how == "measured"


@pytest.mark.parametrize("mode", ["default", "basic"])
def test_a_range_site_keeps_its_count_and_measures_its_requests(prof, mode):
    lo = (8 * np.arange(128)).astype(np.int32)
    x = np.ones(8 * 128 + 4, np.float32)
    out = np.zeros(128, np.float32)
    report = prof.launch("walk", 2, 64, [out, x, lo], mode=Mode.parse(mode, warps=True))
    site = next(s for s in report.sites if s.text == "x[j]")
    if mode == "default":
        assert "range" in site.strategy  # counted once per entry of the loop, as in default mode
    assert site.executions == 128 * 4
    # 4 warps x 4 iterations; at iteration k lane g reads x[8 g + k], bytes 32 g + 4 k: a
    # sector each (32), 32 x 32 bytes over 8 lines; 32 floats, 128 bytes: ideal 4
    assert stats(report, "x[j]") == (16, 16 * 32, 16 * 4, 16 * 8)


@pytest.mark.parametrize("pattern", ["rising", "falling", "broadcast", "runs", "random"])
def test_measured_requests_of_any_lane_order(prof, pattern):
    # the hooks' cheap path (lanes' addresses rising or falling in lane order) and their
    # matches (any order) against numpy's distinct counts of one warp's request
    rng = np.random.default_rng(7)
    lanes = np.arange(32)
    idx = {"rising": 3 * lanes, "falling": 1000 - 5 * lanes, "broadcast": np.full(32, 17),
           "runs": lanes // 4 * 40, "random": rng.integers(0, 1024, 32)}[pattern]
    idx = idx.astype(np.int32)
    x = np.zeros(1024, np.float32)
    out = np.zeros(32, np.float32)
    report = prof.launch("indexed", 1, 32, [out, x, idx], mode=Mode.parse("default",
                                                                         warps=True))
    a = 4 * idx.astype(np.int64)  # byte offsets (the arrays start 256-byte aligned)
    distinct = np.unique(a)
    assert stats(report, "x[idx[t]]") == (1, len(np.unique(a // 32)),
                                         -(-len(distinct) * 4 // 32), len(np.unique(a // 128)))
    words = np.unique(a // 4)
    assert stats(report, "s[idx[t]]") == (1, int(np.bincount(words % 32).max()), 1, 0)


@pytest.mark.parametrize("mode", ["default", "basic"])
def test_a_site_weighted_by_its_loop_measures_every_request(prof, mode):
    # x[idx[t]] and s[idx[t] % 64] do not change in the loop over k: default mode counts them
    # once, weighted by the loop's 3 trips; their requests are the 3 iterations' all the same
    idx = (np.arange(32) % 2 * 32).astype(np.int32)  # floats 0 and 32: bytes 0 and 128
    x = np.zeros(64, np.float32)
    out = np.zeros(32, np.float32)
    report = prof.launch("invariant", 1, 32, [out, x, idx, np.int32(3)],
                         mode=Mode.parse(mode, warps=True))
    site = next(s for s in report.sites if s.text == "x[idx[t]]")
    if mode == "default":
        assert "trip count" in site.strategy
    assert site.executions == 3 * 32
    # a request: two floats, 128 bytes apart: 2 sectors, 2 lines, 8 bytes ideal 1 sector
    assert stats(report, "x[idx[t]]") == (3, 6, 3, 6)
    # shared: words 0 and 32, both bank 0: 2 wavefronts a request
    assert stats(report, "s[idx[t] % 64]") == (3, 6, 3, 0)


def test_a_base_off_the_128_byte_grid():
    # x[t] over one warp, its array starting 4 bytes into a line: bytes 4..131, sectors 0..4
    # (5), lines 0 and 1 (2); ideal 128 / 32 = 4. At base 0: 4 sectors, 1 line.
    inputs = ({"tid.x": 4}, 0, (), ("true",), (1, 1, 1), (32, 1, 1), 32, 4, 4, False, 128)
    at0 = warp_stats(inputs, 32, 0)
    at4 = warp_stats(inputs, 32, 4)
    assert (at0["requests"], at0["units"], at0["ideal"], at0["lines"]) == (1, 4, 4, 1)
    assert (at4["requests"], at4["units"], at4["ideal"], at4["lines"]) == (1, 5, 4, 2)


def test_many_requests_at_once_by_hand():
    lanes = np.arange(32)
    # request 0: s[33 t] (conflict-free); request 1: s[32 t] (one bank: 32); request 2: lanes
    # 0..15 of a float2 s2[2 t] (half-warp 0 only: words 4l, 4l + 1 for l < 16, banks 4l mod
    # 32 twice each: 2 wavefronts, ideal 1 phase)
    group = np.concatenate([np.zeros(32, int), np.ones(32, int)])
    assert requests(group, np.tile(lanes, 2), np.concatenate([4 * 33 * lanes, 4 * 32 * lanes]),
                    4, True)[:4] == (2, 33, 2, 0)
    assert requests(np.zeros(16, int), lanes[:16], 16 * lanes[:16], 8, True)[:4] == (1, 2, 1, 0)
    # device: x[t] and x[32 t]: 4 + 32 sectors, 1 + 32 lines, ideal 4 + 4
    assert requests(group, np.tile(lanes, 2), np.concatenate([4 * lanes, 128 * lanes]), 4,
                    False)[:4] == (2, 36, 8, 33)


@pytest.mark.parametrize("size", [1, 2, 4, 8, 12, 16])
def test_many_requests_agree_with_one_at_a_time(size):
    rng = np.random.default_rng(size)
    groups, lanes, addrs, want = [], [], [], []
    for g in range(40):
        # (the first lanes: shared_request's lane is the offset's index)
        active = np.arange(int(rng.integers(1, 33)) if g % 3 else 32)
        stride = int(rng.choice([0, 1, 2, 32, 33]))
        a = (size * (stride * active + int(rng.integers(0, 64)))) if g % 2 else \
            rng.integers(0, 4096, len(active)) * (size if g % 4 else 1)
        groups.append(np.full(len(active), g))
        lanes.append(active)
        addrs.append(np.asarray(a, np.int64))
        want.append((shared_request(a, size), device_request(a, size)))
    group, lane, addr = map(np.concatenate, (groups, lanes, addrs))
    s = requests(group, lane, addr, size, True)
    d = requests(group, lane, addr, size, False)
    assert s[1:3] == (sum(w[0][0] for w in want), sum(w[0][1] for w in want))
    assert d[1:4] == tuple(sum(w[1][k] for w in want) for k in range(3))
