"""Cooperative launches on the CPU backend: `cudaLaunchCooperativeKernel` with a grid barrier
(`cg::this_grid().sync()`) runs its blocks in phases between grid barriers, each block keeping
its shared memory and its threads' stacks (runtime_cu/cpu/gmprof_cpu_launch.h); the launch is
profiled. Counts derived by hand."""
from __future__ import annotations

import json

import pytest

from conftest import gmprof

PROGRAM = r"""
#include <cstdio>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
// phase 1: each block sums its 64 elements of in[] through shared memory into partial[block];
// grid barrier; phase 2: every thread checks that its block's shared memory (static and
// dynamic) kept its values,
// and block 0 adds the partial sums (written by the other blocks before the barrier)
__global__ void two_phase(const int *in, int *partial, int *out, int *kept) {
  __shared__ int s[64];
  extern __shared__ int d[];
  cg::grid_group grid = cg::this_grid();
  int t = threadIdx.x;
  s[t] = in[blockIdx.x * 64 + t];
  d[t] = t + 100 * blockIdx.x;
  __syncthreads();
  if (t == 0) {
    int sum = 0;
    for (int k = 0; k < 64; ++k) sum += s[k];
    partial[blockIdx.x] = sum;
  }
  int mine = s[t];
  GUARD
  grid.sync();
  int j = in[blockIdx.x * 64 + t] & 63;  // = t (in[i] = i), but measured at run time
  kept[blockIdx.x * 64 + t] = (s[t] == mine) + s[j] - s[t] + d[t] - t - 100 * blockIdx.x;
  if (blockIdx.x == 0 && t == 0) {
    int total = 0;
    for (int b = 0; b < gridDim.x; ++b) total += partial[b];
    *out = total;
  }
}
int main() {
  const int blocks = 4, n = blocks * 64;
  int *in, *partial, *out, *kept;
  cudaMallocManaged(&in, n * sizeof(int));
  cudaMallocManaged(&partial, blocks * sizeof(int));
  cudaMallocManaged(&out, sizeof(int));
  cudaMallocManaged(&kept, n * sizeof(int));
  for (int i = 0; i < n; ++i) in[i] = i;
  void *args[] = {&in, &partial, &out, &kept};
  cudaError_t e = cudaLaunchCooperativeKernel((void *)two_phase, blocks, 64, args,
                                              64 * sizeof(int), 0);
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  int k = 0;
  for (int i = 0; i < n; ++i) k += kept[i];
  printf("%s: total %d, kept %d of %d\n", cudaGetErrorString(e), *out, k, n);
  return e == cudaSuccess ? 0 : 2;
}
"""


def _arrays(doc):
    (kernel,) = doc["kernels"]
    return kernel, {a["name"]: a for a in kernel["arrays"]}


@pytest.mark.parametrize("mode", ["default", "basic"])
def test_two_phase_kernel_with_grid_sync(tmp_path, need_gxx, mode):
    (tmp_path / "coop.cu").write_text(PROGRAM.replace("GUARD", ""))
    p = gmprof("run", "--json", "--mode", mode, "coop.cu", cwd=tmp_path, check=False)
    assert p.returncode == 0, p.stderr
    # sum(0..255) = 32640; every thread saw its block's shared memory unchanged by the others
    assert "no error: total 32640, kept 256 of 256" in p.stderr
    kernel, a = _arrays(json.loads(p.stdout))
    assert kernel["kernel"] == "two_phase" and kernel["run"]["launches"] == 1
    # in: read once before the barrier (s[t] = in[...]) and once after (j) by each thread
    assert (a["in"]["reads"], a["in"]["writes"]) == (2 * 256, 0)
    assert a["in"]["counts"] == [2] * 256
    # s, summed over the 4 blocks: per word, 1 write (s[t] = ...) and 5 reads per block
    # (thread 0's loop s[k], mine = s[t], s[t] == mine, s[j] with j = t, and - s[t])
    assert (a["s"]["reads"], a["s"]["writes"]) == (4 * 5 * 64, 4 * 64)
    assert a["s"]["counts"] == [4 * 6] * 64
    # partial: each block's thread 0 writes its word; block 0's thread 0 reads all 4
    # d (dynamic shared memory): each thread writes d[t] before the barrier, reads it after
    assert (a["d"]["reads"], a["d"]["writes"]) == (4 * 64, 4 * 64)
    assert (a["partial"]["reads"], a["partial"]["writes"]) == (4, 4)
    assert (a["out"]["reads"], a["out"]["writes"]) == (0, 1)
    assert (a["kept"]["reads"], a["kept"]["writes"]) == (0, 256)


def test_block_that_leaves_before_the_grid_barrier_is_a_deadlock(tmp_path, need_gxx):
    (tmp_path / "dead.cu").write_text(PROGRAM.replace("GUARD", "if (blockIdx.x == 2) return;"))
    p = gmprof("run", "--json", "dead.cu", cwd=tmp_path, check=False)
    assert p.returncode == 2 and "Traceback" not in p.stderr  # the program's own status
    assert "dead.cu:24: error: kernel two_phase: deadlock at the grid barrier " \
        "(this_grid().sync()): 3 of 4 blocks wait there" in p.stderr
    doc = json.loads(p.stdout)
    assert [(f["kernel"], f["launch"]) for f in doc["program"]["failed_launches"]] == \
        [("two_phase", 0)]


STEPS = r"""
#include <cstdio>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
// dst[i] = src[i] + src[(i + 1) % n], 3 steps with a grid barrier after each (a, b swapped)
__global__ void steps(int *a, int *b, int n) {
  cg::grid_group g = cg::this_grid();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int s = 0; s < 3; ++s) {
    int *src = (s % 2) ? b : a, *dst = (s % 2) ? a : b;
    if (i < n) dst[i] = src[i] + src[(i + 1) % n];
    g.sync();
  }
}
int main() {
  const int n = 96;
  int *a, *b;
  cudaMallocManaged(&a, n * sizeof(int));
  cudaMallocManaged(&b, n * sizeof(int));
  for (int i = 0; i < n; ++i) a[i] = i;
  int nn = n;
  void *args[] = {&a, &b, &nn};
  cudaLaunchCooperativeKernel((void *)steps, 3, 40, args, 0, 0);  // 120 threads, 96 work
  cudaDeviceSynchronize();
  int bad = 0;  // after 3 steps b[i] = a[i] + 3 a[i+1] + 3 a[i+2] + a[i+3] (indices mod n)
  for (int i = 0; i < n; ++i)
    bad += b[i] != i + 3 * ((i + 1) % n) + 3 * ((i + 2) % n) + (i + 3) % n;
  printf("bad %d\n", bad);
  return 0;
}
"""


def test_grid_barrier_in_a_loop(tmp_path, need_gxx):
    (tmp_path / "steps.cu").write_text(STEPS)
    p = gmprof("run", "--json", "steps.cu", cwd=tmp_path, check=False)
    assert p.returncode == 0 and "bad 0" in p.stderr, p.stderr
    kernel, a = _arrays(json.loads(p.stdout))
    # step 0 reads a twice per element (src[i], src[i + 1]) and writes b once; step 1 reads b
    # twice and writes a once; step 2 reads a twice and writes b once
    assert a["a"]["counts"] == [2 + 1 + 2] * 96
    assert a["b"]["counts"] == [1 + 2 + 1] * 96
