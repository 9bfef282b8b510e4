"""A launch that trips a device-side assert (cuda-samples' simpleAssert): the report of the other
launches is still written and decoded, the failed launch (and the launch after it, which fails
on the sticky error as on a GPU) is listed as failed with CUDA's message, and the program's own
output and exit status are kept. Counts derived by hand."""
from __future__ import annotations

import json

from conftest import gmprof

PROGRAM = r"""
#include <cstdio>
#include <cassert>
__global__ void scale(float *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = 2 * a[i];
}
__global__ void check(const float *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) assert(a[i] < 100.0f);
}
int main() {
  const int n = 64;
  float *a;
  cudaMalloc(&a, n * sizeof(float));
  cudaMemset(a, 0, n * sizeof(float));
  scale<<<2, 32>>>(a, n);                 // launch 0
  check<<<2, 32>>>(a, n);                 // launch 1: passes
  cudaError_t e = cudaDeviceSynchronize();
  printf("first check: %s\n", cudaGetErrorString(e));
  float h = 1000.0f;
  cudaMemcpy(a + 40, &h, sizeof h, cudaMemcpyHostToDevice);
  check<<<2, 32>>>(a, n);                 // launch 2: a[40] trips the assert
  e = cudaDeviceSynchronize();
  printf("second check: %s\n", cudaGetErrorString(e));
  scale<<<1, 32>>>(a, n);                 // launch 3: the context is gone (sticky error)
  return e == cudaSuccess ? 0 : 3;
}
"""


def test_failed_launch_keeps_the_report(tmp_path, need_gxx):
    (tmp_path / "a.cu").write_text(PROGRAM)
    p = gmprof("run", "--json", "a.cu", cwd=tmp_path, check=False)
    assert p.returncode == 3, p.stderr  # the program's own status
    assert "second check: device-side assert triggered" in p.stderr  # its output (--json)
    assert "Traceback" not in p.stderr
    doc = json.loads(p.stdout)
    kernels = {k["kernel"]: k for k in doc["kernels"]}
    # launch 0: 64 threads, each reads and writes a[i] once
    a = next(x for x in kernels["scale"]["arrays"] if x["name"] == "a")
    assert (a["reads"], a["writes"], kernels["scale"]["run"]["launches"]) == (64, 64, 1)
    assert a["counts"] == [2] * 64
    # launch 1: 64 threads each read a[i] once in the assert; launch 2 is not counted
    a = next(x for x in kernels["check"]["arrays"] if x["name"] == "a")
    assert (a["reads"], a["writes"], kernels["check"]["run"]["launches"]) == (64, 0, 1)
    failed = [(f["kernel"], f["launch"], f["grid"], f["error"])
              for f in doc["program"]["failed_launches"]]
    assert failed == [("check", 2, [2, 1, 1], "device-side assert triggered"),
                      ("scale", 3, [1, 1, 1], "device-side assert triggered")]
    assert any("launch 2 of check" in n and "failed" in n for n in doc["program"]["notes"])
    assert doc["failed_checks"] == []  # the program's own assert, not one of gmprof's checks


def test_only_launch_failed(tmp_path, need_gxx):
    (tmp_path / "b.cu").write_text(
        "#include <cassert>\n__global__ void k(int n) { assert(threadIdx.x < n); }\n"
        "int main() { k<<<1, 32>>>(8); return cudaDeviceSynchronize() == cudaSuccess ? 0 : 4; }\n")
    p = gmprof("run", "b.cu", cwd=tmp_path, check=False)
    assert p.returncode == 4 and "Traceback" not in p.stderr
    assert "no launch was profiled: 1 selected launch(es) failed" in p.stdout
    assert "launch 0 of k (grid (1, 1, 1), block (32, 1, 1)) failed (device-side assert " \
        "triggered)" in p.stdout + p.stderr
