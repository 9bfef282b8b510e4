"""Warp collectives after a loop whose trip count differs between lanes, on the CPU backend
(issue 24). The lanes that leave the loop first wait at the user's collective while the others
run gmprof's hooks, whose own collectives (__activemask groups, __match_any_sync,
__reduce_*_sync) name only the lanes inside the hook. They used to pair with the user's
collective (default mode deadlocked, SA mode's outputs differed); the CPU backend now completes
a collective only among lanes at the same operation with the same mask, as PTX specifies.

Expected counts derived by hand below; outputs checked against numpy (and gmprof compares the
instrumented outputs with the native ones itself)."""
from __future__ import annotations

import numpy as np
import pytest

from gmprof.mode import Mode
from gmprof.runtime.cpu import CpuModule
from gmprof.runtime.session import Profiler

MODES = ["default", "SA", "basic"]

SOURCE = r"""
// the issue's kernel
__global__ void issue(const float *x, float *out, int n) {
  int lane = threadIdx.x & 31; float s = 0.f;
  for (int j = lane; j < n; j += 32) s += x[j];
  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffff, s, o);
  unsigned b = __ballot_sync(0xffffffff, s > 0.f); __syncwarp();
  if (lane == 0) out[threadIdx.x / 32] = s + (float)__popc(b);
}

// a CSR-style row per warp: the bound is read in the loop condition (a warp-uniform hook)
__global__ void rows_shfl_ballot(const float *x, const int *rows, float *out) {
  int w = threadIdx.x / 32, lane = threadIdx.x & 31; float s = 0.f;
  for (int j = rows[w] + lane; j < rows[w + 1]; j += 32) s += x[j];
  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffff, s, o);
  unsigned b = __ballot_sync(0xffffffff, s > 0.f); __syncwarp();
  if (lane == 0) out[w] = s + (float)__popc(b);
}

// xor tree and votes; scale[w] is a warp-uniform read inside the divergent loop
__global__ void xor_votes(const float *x, const float *scale, float *out, int n) {
  int w = threadIdx.x / 32, lane = threadIdx.x & 31; float s = 0.f;
  for (int j = lane; j < n; j += 32) s += x[w * n + j] * scale[w];
  int own = s > 0.f;
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffff, s, o);
  int any_big = __any_sync(0xffffffff, s > 1000.f);
  int all_own = __all_sync(0xffffffff, own);
  if (lane == 0) { out[3 * w] = s; out[3 * w + 1] = (float)any_big; out[3 * w + 2] = (float)all_own; }
}

// a while loop with a per-thread, data-dependent trip count, then __syncwarp and a neighbour's
// shared value; coef[0] is a block-uniform read inside the loop
__global__ void while_syncwarp(const int *len, const float *x, const float *coef, float *out) {
  __shared__ float part[64];
  int t = threadIdx.x;
  float s = 0.f; int k = 0;
  while (k < len[t]) { s += x[8 * t + k] * coef[0]; k++; }
  part[t] = s;
  __syncwarp();
  out[t] = part[t] + part[t ^ 1];
}
"""


@pytest.fixture(scope="module")
def prof():
    return Profiler(text=SOURCE, name="divergent.cu", backend="cpu")


def check(report, name, expect, reads=None, writes=None):
    arr = report.array(name)
    assert arr.label == "exact", (name, arr.label)
    np.testing.assert_array_equal(arr.counts, expect, err_msg=name)
    if reads is not None:
        assert (arr.reads, arr.writes) == (reads, writes), name


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("n", [70, 20])
def test_issue_kernel(prof, mode, n):
    x, out = np.arange(1, n + 1, dtype=np.float32), np.zeros(2, np.float32)
    report = prof.launch("issue", 1, 64, [x, out, np.int32(n)], mode=Mode.parse(mode))
    assert report.run.outputs_identical
    # both warps read x[0..n) once each
    check(report, "x", np.full(n, 2))
    check(report, "out", [1, 1])
    # lane 0 ends with the warp's sum; the ballot has the lanes whose partial sum is positive:
    # min(n, 32) (x > 0; shfl_down only adds lanes above, which are zero where a lane is)
    total = x.astype(np.float64).sum()
    np.testing.assert_array_equal(out, [total + min(n, 32)] * 2)


@pytest.mark.parametrize("mode", MODES)
def test_rows_shuffle_ballot_syncwarp(prof, mode):
    rows = np.array([0, 70, 115], np.int32)  # warp 0: 70 elements, warp 1: 45
    x, out = np.arange(1, 116, dtype=np.float32), np.zeros(2, np.float32)
    report = prof.launch("rows_shfl_ballot", 1, 64, [x, rows, out], mode=Mode.parse(mode))
    assert report.run.outputs_identical
    check(report, "x", np.ones(115, np.int64), reads=115, writes=0)
    # rows[w] once per lane of warp w (32); rows[w + 1] once per condition: each element is one
    # true test, each lane has one false test: L_w + 32. rows[1] = 32 + (70 + 32), rows[2] =
    # 45 + 32.
    check(report, "rows", [32, 134, 77], reads=32 + 134 + 77, writes=0)
    check(report, "out", [1, 1], reads=0, writes=2)
    # L >= 32 in both warps: all 32 lanes hold a positive sum at the ballot
    np.testing.assert_array_equal(out, [x[:70].sum() + 32, x[70:].sum() + 32])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("n", [70, 20])
def test_xor_tree_any_all(prof, mode, n):
    x, scale = np.arange(1, 2 * n + 1, dtype=np.float32), np.array([1, 2], np.float32)
    out = np.zeros(6, np.float32)
    report = prof.launch("xor_votes", 1, 64, [x, scale, out, np.int32(n)], mode=Mode.parse(mode))
    assert report.run.outputs_identical
    check(report, "x", np.ones(2 * n, np.int64))
    check(report, "scale", [n, n])  # once per loop iteration of the warp's n elements
    check(report, "out", np.ones(6, np.int64))
    sums = [x[:n].sum() * 1, x[n:].sum() * 2]  # every lane holds its warp's sum after the tree
    # n = 70: 2485, 14770; n = 20: 210, 1220. all_own: every lane had an element (n >= 32)
    expect = []
    for s in sums:
        expect += [s, float(s > 1000), float(n >= 32)]
    np.testing.assert_array_equal(out, expect)


@pytest.mark.parametrize("mode", MODES)
def test_while_loop_then_syncwarp(prof, mode):
    t = np.arange(64)
    length = ((5 * t) % 8).astype(np.int32)  # 0..7 iterations, different in neighbouring lanes
    x, coef = np.arange(1, 513, dtype=np.float32), np.array([1.5], np.float32)
    out = np.zeros(64, np.float32)
    report = prof.launch("while_syncwarp", 1, 64, [length, x, coef, out], mode=Mode.parse(mode))
    assert report.run.outputs_identical
    # len[t]: len[t] true tests and one false test
    check(report, "len", length + 1)
    # x[8t + k] for k < len[t]: once each
    xc = np.zeros(512, np.int64)
    for i in t:
        xc[8 * i: 8 * i + length[i]] = 1
    check(report, "x", xc)
    check(report, "coef", [int(length.sum())])  # once per iteration of any thread: 224
    # part (shared, per 4-byte word): written by thread t, read by t and by t ^ 1
    check(report, "part", np.full(64, 3), reads=128, writes=64)
    check(report, "out", np.ones(64, np.int64))
    s = np.array([x[8 * i: 8 * i + length[i]].sum() * 1.5 for i in t], np.float32)
    np.testing.assert_array_equal(out, s + s[t ^ 1])


def test_subgroup_collective_does_not_pair_with_a_full_mask_one(tmp_path):
    # lanes 0-5 reduce among themselves while lanes 6-31 already wait at a full-mask shuffle:
    # PTX pairs only lanes at the same operation with the same mask
    src = r"""
__global__ void k(int *out) {
  int lane = threadIdx.x & 31, v = lane;
  if (lane < 6) v = __reduce_add_sync(__activemask(), lane);
  out[threadIdx.x] = __shfl_down_sync(0xffffffff, v, 1);
}
"""
    m = CpuModule(src, ["k"], filename="pair.cu", cache_dir=str(tmp_path))
    out = np.zeros(32, np.int32)
    m.launch("k", 1, 32, (out,))
    v = np.where(np.arange(32) < 6, 0 + 1 + 2 + 3 + 4 + 5, np.arange(32))
    # lane l reads lane l + 1; lane 31's source is outside the warp: its own value
    np.testing.assert_array_equal(out, np.append(v[1:], v[31]))
