"""The host runtime keeps a whole program's counters on the device and folds each launch's into
64-bit totals on its stream (runtime_cu/host/gmprof_host_fold.h): many launches, on two streams
and in two shapes, sum exactly; totals pass 2^32 exactly; GMPROF_TIMING=1 says where the
runtime's seconds went. CPU backend; counts derived by hand."""
from __future__ import annotations

import json
import subprocess

import pytest

from conftest import env, gmprof

MANY = r"""
#include <cstdio>
__global__ void add(int *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = a[i] + 1;
}
int main() {
  const int n = 64;
  int *a;
  cudaMalloc(&a, n * sizeof(int));
  cudaMemset(a, 0, n * sizeof(int));
  cudaStream_t s1, s2;
  cudaStreamCreate(&s1);
  cudaStreamCreate(&s2);
  for (int k = 0; k < LAUNCHES / 2; ++k) {
    add<<<2, 32, 0, s1>>>(a, n);   // 2 blocks of 32 threads
    cudaStreamSynchronize(s1);     // the program's own order: s1's launch, then s2's
    add<<<4, 16, 0, s2>>>(a, n);   // 4 blocks of 16 (another description: the warp flag)
    cudaStreamSynchronize(s2);
  }
  int h[n];
  cudaMemcpy(h, a, sizeof h, cudaMemcpyDeviceToHost);
  long sum = 0;
  for (int i = 0; i < n; ++i) sum += h[i];
  printf("sum %ld\n", sum);
  return 0;
}
"""


def _kernel(doc, name):
    kernel = next(k for k in doc["kernels"] if k["kernel"] == name)
    return kernel, {a["name"]: a for a in kernel["arrays"]}


# default: a[i]'s sites are counted from their formulas at each launch; basic: every site on
# the device, into per-element counters that each launch's fold adds up
@pytest.mark.parametrize("mode", ["default", "basic"])
def test_many_launches_sum_exactly(tmp_path, need_gxx, mode):
    # 1200: past 1,000 records a launch like an earlier one adds to its record (`repeat`)
    launches = 1200
    (tmp_path / "many.cu").write_text(MANY.replace("LAUNCHES", str(launches)))
    p = gmprof("run", "--json", "--mode", mode, "many.cu", cwd=tmp_path, GMPROF_TIMING=1)
    # every launch adds 1 to each of the 64 elements
    assert f"sum {64 * launches}" in p.stderr
    doc = json.loads(p.stdout)
    kernel, arrays = _kernel(doc, "add")
    assert kernel["run"]["launches"] == launches
    a = arrays["a"]
    # each launch: 64 threads each read a[i] once and write it once
    assert (a["reads"], a["writes"]) == (64 * launches, 64 * launches)
    assert a["counts"] == [2 * launches] * 64
    assert doc["program"]["failed_launches"] == []
    # 1000 records: the first 1000 launches; the last 200 added to the first two (one per shape)
    runs = kernel["launches"]
    assert len(runs) == 1000
    assert [r.get("repeat", 1) for r in runs[:3]] == [101, 101, 1]
    # GMPROF_TIMING=1: the runtime's phases and the kernel's line on standard error
    assert "gmprof timing: host runtime seconds: map" in p.stderr
    assert f"gmprof timing: kernel add: {launches} launch(es)" in p.stderr


def test_totals_pass_two_to_the_32_exactly(tmp_path, need_gxx):
    # GMPROF_TEST_TOTALS_ORIGIN starts each element's 64-bit total 20 below 2^32 (a test hook,
    # as runtime/widen.py's counter_origin is for `gmprof profile`): 10 launches add 2 each (one
    # read and one write per launch), so every total ends 2^32 + 0 exactly, which a 32-bit sum
    # would have wrapped to 0
    origin = 2 ** 32 - 20
    (tmp_path / "many.cu").write_text(MANY.replace("LAUNCHES", "10"))
    # (basic mode: a[i] is counted on the device, in per-element counters)
    p = gmprof("run", "--json", "--mode", "basic", "many.cu", cwd=tmp_path,
               GMPROF_TEST_TOTALS_ORIGIN=origin)
    assert "sum 640" in p.stderr
    kernel, arrays = _kernel(json.loads(p.stdout), "add")
    assert kernel["run"]["launches"] == 10
    assert arrays["a"]["counts"] == [origin + 2 * 10] * 64 == [2 ** 32] * 64
    # reads and writes come from the sites' 64-bit execution counts, not from the totals
    assert (arrays["a"]["reads"], arrays["a"]["writes"]) == (640, 640)


RESET = r"""
#include <cstdio>
__global__ void add(int *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = a[i] + 1;
}
int main() {
  const int n = 64;
  int *a;
  for (int round = 0; round < 2; ++round) {
    cudaMalloc(&a, n * sizeof(int));
    cudaMemset(a, 0, n * sizeof(int));
    for (int k = 0; k < 3 - round; ++k) add<<<2, 32>>>(a, n);
    int h[n];
    cudaMemcpy(h, a, sizeof h, cudaMemcpyDeviceToHost);
    printf("round %d: a[0] %d\n", round, h[0]);
    cudaDeviceReset();  // gmprof reads its counters back first (it rewrites the call)
  }
  return 0;
}
"""


def test_device_reset_keeps_the_counts_before_it(tmp_path, need_gxx):
    (tmp_path / "reset.cu").write_text(RESET)
    p = gmprof("run", "--json", "--mode", "basic", "reset.cu", cwd=tmp_path)
    assert "round 0: a[0] 3" in p.stderr and "round 1: a[0] 2" in p.stderr
    kernel, arrays = _kernel(json.loads(p.stdout), "add")
    # 3 launches before the reset and 2 after, each reading and writing a's 64 elements once
    assert kernel["run"]["launches"] == 5
    assert (arrays["a"]["reads"], arrays["a"]["writes"]) == (5 * 64, 5 * 64)
    # per element: a read and a write per launch; the counts read back at the reset (straight
    # into the host's sums) and those read at exit (added to them) make 2 x 5
    assert arrays["a"]["counts"] == [2 * 5] * 64


GLOBAL_RESET = r"""
#include <cstdio>
__device__ int g[64];
__global__ void add() {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  g[i] = g[i] + 1;
}
int main() {
  for (int round = 0; round < 2; ++round) {
    for (int k = 0; k < 3 - round; ++k) add<<<2, 32>>>();
    cudaDeviceSynchronize();
    cudaDeviceReset();
  }
  printf("done\n");
  return 0;
}
"""


def test_a_group_read_back_twice_adds(tmp_path, need_gxx):
    # a __device__ array keeps its address across the reset, so its launches stay one group:
    # its counts are read back at the reset (straight into the host's sums), then again at exit
    # (added to them)
    (tmp_path / "g.cu").write_text(GLOBAL_RESET)
    gmprof("nvcc", "--gmprof-mode", "basic", "g.cu", "-o", "g", cwd=tmp_path)
    p = subprocess.run([str(tmp_path / "g")], cwd=tmp_path, capture_output=True, text=True,
                       env=env(GMPROF_OUTPUT=tmp_path / "r.json"))
    assert p.returncode == 0 and p.stdout == "done\n", p.stdout + p.stderr
    assert len(json.loads((tmp_path / "r.json").read_text())["groups"]) == 1
    doc = json.loads(gmprof("report", "--json", "r.json", cwd=tmp_path).stdout)
    kernel, arrays = _kernel(doc, "add")
    # 3 launches before the reset and 2 after; each reads and writes g[i] once per element
    assert kernel["run"]["launches"] == 5
    assert arrays["g"]["counts"] == [2 * 5] * 64


def test_wrap_label_is_per_launch(tmp_path, need_gxx, monkeypatch):
    # A 32-bit counter can only wrap within one launch (each launch's counters are folded into
    # 64-bit totals after it), so the bound of runtime/widen.py is taken over each site's
    # largest launch. a[i]'s 2 sites (a read, a write) run 64 times a launch, each access
    # covering at most ceil(16 / 4) + 1 = 5 counters: one launch's bound is 2 x 64 x 5 = 640;
    # the ten launches' sums would give 6400. Headroom lowered as the Python runtime's tests do
    # (widen.counter_origin): 1000 -> exact (the sums would have said approximate), 600 -> not.
    from gmprof.program import records
    from gmprof.runtime import widen

    (tmp_path / "many.cu").write_text(MANY.replace("LAUNCHES", "10"))
    gmprof("nvcc", "--gmprof-mode", "basic", "many.cu", "-o", "many", cwd=tmp_path)
    p = subprocess.run([str(tmp_path / "many")], cwd=tmp_path, capture_output=True, text=True,
                       env=env(GMPROF_OUTPUT=tmp_path / "r.json"))
    assert p.returncode == 0 and "sum 640" in p.stdout
    monkeypatch.setattr(widen, "counter_origin", 2 ** 32 - 1000)
    (a,) = [x for x in records.decode([tmp_path / "r.json"]).reports["add"].arrays
            if x.name == "a"]
    assert a.label == "exact"
    monkeypatch.setattr(widen, "counter_origin", 2 ** 32 - 600)
    (a,) = [x for x in records.decode([tmp_path / "r.json"]).reports["add"].arrays
            if x.name == "a"]
    assert a.label == "approximate"
