"""Launches gmprof did not rewrite, on a GPU (gmprof_host.cpp count_unseen_launch: the link
wraps __cudaLaunchKernel): a kernel launched three times from a file compiled by plain nvcc,
and Thrust's kernels (thrust::device_vector and thrust::sort launch CUB's from CUDA's headers).
Each is counted among the launches not instrumented, by kernel name, with the report's note;
the program's own kernel is profiled as before (counts by hand) and the output is unchanged."""
from __future__ import annotations

import subprocess

import pytest

from conftest import GMPROF, env, report_json

pytestmark = pytest.mark.gpu

PLAIN = r"""
__global__ void plain(int *p) { p[threadIdx.x] += 1; }
void run_plain(int *d, int times) { for (int i = 0; i < times; ++i) plain<<<1, 32>>>(d); }
"""

MAIN = r"""
#include <cstdio>
#include <thrust/device_vector.h>
#include <thrust/sort.h>

__global__ void mine(int *p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = n - i;
}

void run_plain(int *d, int times);

int main() {
    const int n = 1 << 12;
    thrust::device_vector<int> v(n);
    mine<<<n / 256, 256>>>(thrust::raw_pointer_cast(v.data()), n);
    thrust::sort(v.begin(), v.end());
    run_plain(thrust::raw_pointer_cast(v.data()), 3);
    int first = v[0];
    printf("first %d\n", first);
    return 0;
}
"""

GPU = {"GMPROF_BACKEND": "gpu"}


def _sh(cmd, cwd):
    p = subprocess.run(cmd, cwd=cwd, env=env(**GPU), capture_output=True, text=True,
                       shell=isinstance(cmd, str))
    assert p.returncode == 0, p.stdout + p.stderr
    return p


def test_launches_gmprof_did_not_rewrite_are_counted_by_kernel(tmp_path):
    (tmp_path / "plain.cu").write_text(PLAIN)
    (tmp_path / "main.cu").write_text(MAIN)
    _sh(["nvcc", "-O2", "-arch=sm_90", "-c", "plain.cu", "-o", "plain.o"], tmp_path)
    _sh(["nvcc", "-O2", "-arch=sm_90", "main.cu", "plain.o", "-o", "native"], tmp_path)
    _sh(f"{GMPROF} nvcc -O2 -arch=sm_90 main.cu plain.o -o app", tmp_path)
    native = _sh(["./native"], tmp_path).stdout
    run = subprocess.run(["./app"], cwd=tmp_path, capture_output=True, text=True,
                         env=env(**GPU, GMPROF_OUTPUT=str(tmp_path / "r.json")))
    assert run.returncode == 0, run.stderr
    # sorted n..1 ascending, then plain added 1 to the first 32 elements three times
    assert run.stdout == native == "first 4\n"
    doc = report_json(tmp_path, "r.json")
    (proc,) = doc["processes"]
    unseen = proc["not_instrumented"]
    assert unseen.get("plain") == 3, unseen
    library = {k: n for k, n in unseen.items() if "cub" in k or "thrust" in k}
    assert library and all(n >= 1 for n in library.values()), unseen
    assert all("<" not in k and "(" not in k for k in unseen)  # names without their arguments
    assert any("did not translate" in note for note in doc["notes"]), doc["notes"]
    # the program's own kernel, profiled: each of its n elements written once
    arrays = {a["name"]: a for a in doc["kernels"]["mine"]["arrays"]}
    assert arrays["p"]["writes"] == 1 << 12
