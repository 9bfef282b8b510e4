"""A CMake project built through gmprof with the recipe of docs/whole-programs.md, run as
written there (`-DCMAKE_PROJECT_INCLUDE="$(gmprof nvcc --gmprof-cmake)"`): the compiler launcher
instruments each .cu, and the runtime goes into every CUDA link. CMake's CUDA support needs a
real nvcc to identify; the program runs on the CPU backend."""
from __future__ import annotations

import shutil
import subprocess
import sys

from pathlib import Path

import pytest

from conftest import env, report_json

ROOT = Path(__file__).resolve().parents[2]

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


def _recipe() -> str:
    """The CMake recipe of docs/whole-programs.md, as written there."""
    doc = (ROOT / "docs" / "whole-programs.md").read_text()
    section = doc[doc.index("### CMake"):]
    block = section[section.index("```\n") + 4:]
    return block[:block.index("```")]


def test_cmake_recipe_as_documented(tmp_path, need_gxx):
    (tmp_path / "CMakeLists.txt").write_text(LISTS)
    (tmp_path / "main.cu").write_text(MAIN)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "gmprof"  # `gmprof` as the installed console script would be
    shim.write_text(f"#!/bin/sh\nexec {sys.executable} -m gmprof.cli \"$@\"\n")
    shim.chmod(0o755)
    recipe = _recipe()
    assert "--gmprof-cmake" in recipe and recipe.count("cmake ") == 2
    e = env()
    e["PATH"] = f"{bin_dir}:{e.get('PATH', '')}"
    p = subprocess.run(["bash", "-ec", recipe], cwd=tmp_path, env=e, capture_output=True,
                       text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    out = tmp_path / "r.json"
    p = subprocess.run([str(tmp_path / "build" / "twice")], env=env(GMPROF_OUTPUT=out),
                       capture_output=True, text=True)
    assert p.returncode == 0 and p.stdout == "2 198\n", p.stderr
    rep = report_json(tmp_path, out)
    a = {x["name"]: x for x in rep["kernels"]["twice"]["arrays"]}["a"]
    # 100 threads in range each read and write their element once
    assert (a["reads"], a["writes"], a["shape"]) == (100, 100, [100])
