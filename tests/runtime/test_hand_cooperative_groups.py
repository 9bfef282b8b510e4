"""Cooperative groups on the CPU backend (issue 24): `#include <cooperative_groups.h>` code, as
cuda-samples and CUTLASS-style kernels write it, compiles (runtime_cu/cpu/include/) and runs
with the same results as a GPU's, profiled in default, SA and basic mode. The members of a
group (`tile.thread_rank()`) are calls gmprof cannot see into, so the accesses they index are
measured, not taken as thread-invariant. Expected counts derived by hand below; outputs checked
against numpy (gmprof also compares the instrumented outputs with the native ones)."""
from __future__ import annotations

import numpy as np
import pytest

from gmprof.errors import GmprofError, KernelFault
from gmprof.mode import Mode
from gmprof.runtime.cpu import CpuModule
from gmprof.runtime.session import Profiler

MODES = ["default", "SA", "basic"]

SOURCE = r"""
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

// a block reduction: tiles of 32 reduce with cg::reduce, the first tile sums the tiles' sums
__global__ void block_sum(const float *x, float *out, int n) {
  __shared__ float warp_sums[32];
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
  unsigned i = block.group_index().x * block.size() + block.thread_rank();
  float v = i < n ? x[i] : 0.f;
  v = cg::reduce(tile, v, cg::plus<float>());
  if (tile.thread_rank() == 0) warp_sums[tile.meta_group_rank()] = v;
  block.sync();
  if (tile.meta_group_rank() == 0) {
    float s = tile.thread_rank() < tile.meta_group_size() ? warp_sums[tile.thread_rank()] : 0.f;
    for (int o = 16; o > 0; o >>= 1) s += tile.shfl_down(s, o);
    if (tile.thread_rank() == 0) out[block.group_index().x] = s;
  }
}

// tiles of 16, 8 and 4 threads, a tile of a tile, and a tile sized at run time
__global__ void tiles(const int *x, int *out) {
  cg::thread_block b = cg::this_thread_block();
  auto t16 = cg::tiled_partition<16>(b);
  cg::thread_block_tile<8> t8 = cg::tiled_partition<8>(b);
  auto t4 = cg::tiled_partition<4>(t16);
  cg::thread_group dyn = cg::tiled_partition(b, 32);
  int t = b.thread_rank();
  int v = x[t];
  out[8 * t + 0] = cg::reduce(t16, v, cg::plus<int>());
  out[8 * t + 1] = cg::reduce(t8, v, cg::greater<int>());
  out[8 * t + 2] = cg::reduce(t4, v, cg::less<int>());
  out[8 * t + 3] = (int)t16.ballot(v & 1);
  out[8 * t + 4] = t8.any(v > 50) + 2 * t8.all(v > 10);
  out[8 * t + 5] = t4.shfl(v, 3) + 1000 * t4.shfl_xor(v, 1);
  t16.sync();
  cg::sync(b);
  out[8 * t + 6] = 1000 * t16.meta_group_rank() + 100 * t16.meta_group_size() +
                   10 * t4.meta_group_rank() + t4.meta_group_size() + 10000 * t8.meta_group_rank();
  dyn.sync();
  out[8 * t + 7] = (int)dyn.thread_rank() + 100 * (int)dyn.size() + 10000 * (int)t8.thread_rank();
}

// the lanes that take a branch together, and the block's and grid's indices
__global__ void coalesced_and_indices(const int *x, int *out, int *info) {
  cg::thread_block b = cg::this_thread_block();
  cg::grid_group grid = cg::this_grid();
  int t = b.thread_rank();
  if (x[t] & 1) {
    cg::coalesced_group g = cg::coalesced_threads();
    out[2 * t] = g.thread_rank();
    out[2 * t + 1] = g.size();
    g.sync();
  }
  info[grid.thread_rank()] = b.thread_index().x + 10 * b.thread_index().y +
                             100 * b.group_index().x + 1000 * (int)b.num_threads() +
                             100000 * (int)grid.size();
}
"""


@pytest.fixture(scope="module")
def prof():
    return Profiler(text=SOURCE, name="cg.cu", backend="cpu")


def check(report, name, expect, reads, writes):
    arr = report.array(name)
    assert arr.label == "exact", (name, arr.label)
    np.testing.assert_array_equal(arr.counts, expect, err_msg=name)
    assert (arr.reads, arr.writes) == (reads, writes), name


@pytest.mark.parametrize("mode", MODES)
def test_block_reduction_with_tiles(prof, mode):
    n, grid, block = 1000, 4, 256
    x = (np.arange(n) % 97).astype(np.float32)  # integers: every sum is exact in float32
    out = np.zeros(grid, np.float32)
    report = prof.launch("block_sum", grid, block, [x, out, np.int32(n)], mode=Mode.parse(mode))
    assert report.run.outputs_identical
    np.testing.assert_array_equal(out, [x[k * block:(k + 1) * block].sum() for k in range(grid)])
    # x[i] for i < n: once each (1024 threads, 1000 in range)
    check(report, "x", np.ones(n, np.int64), reads=n, writes=0)
    # warp_sums (per 4-byte word, summed over blocks): words 0..7 (256 / 32 tiles) are written
    # by each tile's rank 0 and read by ranks 0..7 of tile 0: 2 per block, 4 blocks
    ws = np.zeros(32, np.int64)
    ws[:8] = 2 * grid
    check(report, "warp_sums", ws, reads=8 * grid, writes=8 * grid)
    check(report, "out", np.ones(grid, np.int64), reads=0, writes=grid)


@pytest.mark.parametrize("mode", MODES)
def test_tiles_votes_shuffles_meta_groups(prof, mode):
    rng = np.random.default_rng(24)
    x = rng.integers(0, 60, 64).astype(np.int32)
    x[8:16] = 55  # a tile of 8 where all(v > 10) holds
    out = np.zeros(8 * 64, np.int32)
    report = prof.launch("tiles", 1, 64, [x, out], mode=Mode.parse(mode))
    assert report.run.outputs_identical
    t = np.arange(64)
    got = out.reshape(64, 8)

    def per_group(size, f):
        return np.repeat([f(x[k:k + size]) for k in range(0, 64, size)], size)

    np.testing.assert_array_equal(got[:, 0], per_group(16, np.sum))
    np.testing.assert_array_equal(got[:, 1], per_group(8, np.max))
    np.testing.assert_array_equal(got[:, 2], per_group(4, np.min))
    # bit r for the tile's thread of rank r
    np.testing.assert_array_equal(
        got[:, 3], per_group(16, lambda g: sum(1 << r for r in range(16) if g[r] & 1)))
    np.testing.assert_array_equal(
        got[:, 4], per_group(8, lambda g: int((g > 50).any()) + 2 * int((g > 10).all())))
    np.testing.assert_array_equal(got[:, 5], x[t // 4 * 4 + 3] + 1000 * x[t ^ 1])
    # t16: rank t // 16 of 4; t4 (of t16): rank (t % 16) // 4 of 4; t8: rank t // 8
    np.testing.assert_array_equal(
        got[:, 6], 1000 * (t // 16) + 100 * 4 + 10 * (t % 16 // 4) + 4 + 10000 * (t // 8))
    np.testing.assert_array_equal(got[:, 7], t % 32 + 100 * 32 + 10000 * (t % 8))
    # x[t] once per thread; out: 8 words per thread, written once each
    check(report, "x", np.ones(64, np.int64), reads=64, writes=0)
    check(report, "out", np.ones(8 * 64, np.int64), reads=0, writes=8 * 64)


@pytest.mark.parametrize("mode", MODES)
def test_coalesced_threads_and_indices(prof, mode):
    x = np.array([(k * 7) % 5 for k in range(64)], np.int32)  # 0 2 4 1 3 0 2 ...: odd 2 in 5
    out = np.full(128, -1, np.int32)
    info = np.zeros(2 * 64, np.int32)
    report = prof.launch("coalesced_and_indices", 2, (16, 4), [x, out, info],
                         mode=Mode.parse(mode))
    assert report.run.outputs_identical
    odd = (x & 1) == 1
    expect = np.full(128, -1, np.int32)
    for t in np.flatnonzero(odd):
        w = t // 32 * 32
        lanes = odd[w:w + 32]
        expect[2 * t] = lanes[:t - w].sum()   # the odd lanes below it in its warp
        expect[2 * t + 1] = lanes.sum()       # the odd lanes of its warp
    np.testing.assert_array_equal(out, expect)
    lin = np.arange(64)
    blk = np.concatenate([(lin % 16) + 10 * (lin // 16) + 100 * b + 1000 * 64 + 100000 * 128
                          for b in range(2)])
    np.testing.assert_array_equal(info, blk)
    # x[t]: once per thread of each of the 2 blocks; out: 2 words per odd thread, 2 blocks
    check(report, "x", np.full(64, 2), reads=128, writes=0)
    oc = np.zeros(128, np.int64)
    oc[2 * np.flatnonzero(odd)] = 2
    oc[2 * np.flatnonzero(odd) + 1] = 2
    check(report, "out", oc, reads=0, writes=4 * int(odd.sum()))
    check(report, "info", np.ones(128, np.int64), reads=0, writes=128)


def test_grid_sync_outside_a_cooperative_launch_is_a_located_launch_error(tmp_path):
    """grid_group::sync() needs a cooperative launch (cudaLaunchCooperativeKernel, whole
    programs: tests/program/test_cooperative.py); a plain launch stops at it, at its line."""
    src = ("#include <cooperative_groups.h>\n"
           "namespace cg = cooperative_groups;\n"
           "__global__ void k(float *out)\n"
           "{\n"
           "    cg::grid_group g = cg::this_grid();\n"
           "    out[g.thread_rank()] = 1.0f;\n"
           "    g.sync();\n"
           "}\n")
    m = CpuModule(src, ["k"], filename="grid.cu", cache_dir=str(tmp_path))
    with pytest.raises(KernelFault) as e:
        m.launch("k", 2, 32, (np.zeros(64, np.float32),))
    assert "in a launch that is not cooperative" in e.value.message
    assert (e.value.location.file, e.value.location.line) == ("grid.cu", 7)


def test_bad_dynamic_tile_size_is_a_located_launch_error(tmp_path):
    src = ("#include <cooperative_groups.h>\n"
           "__global__ void k(int *out)\n"
           "{\n"
           "    auto b = cooperative_groups::this_thread_block();\n"
           "    auto g = cooperative_groups::tiled_partition(b, 64);\n"
           "    out[threadIdx.x] = g.thread_rank();\n"
           "}\n")
    m = CpuModule(src, ["k"], filename="tile.cu", cache_dir=str(tmp_path))
    with pytest.raises(KernelFault) as e:
        m.launch("k", 1, 64, (np.zeros(64, np.int32),))
    assert e.value.kind == "assert" and "power of 2 up to 32" in e.value.message
    assert (e.value.location.file, e.value.location.line) == ("tile.cu", 5)
