"""A CMake project built through gmprof, as docs/whole-programs.md says: the compiler launcher
instruments each .cu, and the runtime goes into every CUDA link through
CMAKE_CUDA_STANDARD_LIBRARIES (CMake links CUDA programs with the host compiler, not through the
launcher). CMake's CUDA support needs a real nvcc to identify; the program runs on the CPU
backend."""
from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from conftest import env, gmprof, report_json

pytestmark = pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("nvcc") is None,
                                reason="needs cmake and nvcc")

LISTS = """cmake_minimum_required(VERSION 3.20)
project(twice LANGUAGES CXX CUDA)
add_executable(twice main.cu)
"""

MAIN = r"""#include <cstdio>
__global__ void twice(int *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = 2 * a[i];
}
int main() {
  const int n = 100;
  int h[n], *d;
  for (int i = 0; i < n; ++i) h[i] = i;
  cudaMalloc(&d, sizeof h);
  cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
  twice<<<4, 32>>>(d, n);
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  printf("%d %d\n", h[1], h[99]);
  return 0;
}
"""


def test_cmake_launcher(tmp_path, need_gxx):
    (tmp_path / "CMakeLists.txt").write_text(LISTS)
    (tmp_path / "main.cu").write_text(MAIN)
    launcher = tmp_path / "gmprof"
    launcher.write_text(f"#!/bin/sh\nexec {sys.executable} -m gmprof.cli \"$@\"\n")
    launcher.chmod(0o755)
    flags = gmprof("nvcc", "--gmprof-link-flags").stdout.strip()
    build = tmp_path / "build"
    for cmd in (["cmake", "-S", str(tmp_path), "-B", str(build), "-DCMAKE_CUDA_ARCHITECTURES=90",
                 f"-DCMAKE_CUDA_COMPILER_LAUNCHER={launcher}", "-DCMAKE_CUDA_RUNTIME_LIBRARY=None",
                 f"-DCMAKE_CUDA_STANDARD_LIBRARIES={flags}"],
                ["cmake", "--build", str(build)]):
        p = subprocess.run(cmd, env=env(), capture_output=True, text=True)
        assert p.returncode == 0, p.stdout + p.stderr
    out = tmp_path / "r.json"
    p = subprocess.run([str(build / "twice")], env=env(GMPROF_OUTPUT=out), capture_output=True,
                       text=True)
    assert p.returncode == 0 and p.stdout == "2 198\n"
    rep = report_json(tmp_path, out)
    a = {x["name"]: x for x in rep["kernels"]["twice"]["arrays"]}["a"]
    # 100 threads in range each read and write their element once
    assert (a["reads"], a["writes"], a["shape"]) == (100, 100, [100])
