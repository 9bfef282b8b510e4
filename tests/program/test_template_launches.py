"""Template kernels launched from host templates (`k<T><<<...>>>` in `template <class T> void
run()`, `reduce<B><<<...>>>` in `template <int B> void launch()` behind a switch) and with their
template arguments deduced (`k<<<g, b>>>(d, n)`): each specialisation launched is profiled
(gmprof/program/instances.py finds them by compiling once). Counts derived by hand."""
from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest

from conftest import env, gmprof, report_json

PROGRAM = r"""
#include <cstdio>
template <class T>
__global__ void fill(T *d, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) d[i] = (T)i;
}
template <int B>
__global__ void reduce(const int *in, int *out) {
  __shared__ int s[B];
  s[threadIdx.x] = in[blockIdx.x * B + threadIdx.x];
  __syncthreads();
  if (threadIdx.x == 0) {
    int t = 0;
    for (int k = 0; k < B; ++k) t += s[k];
    out[blockIdx.x] = t;
  }
}
template <class T>
__global__ void twice(T *d, int n) {
  int i = threadIdx.x;
  if (i < n) d[i] = d[i] + d[i];
}
template <class T> void run(T *d, int n) { fill<T><<<(n + 31) / 32, 32>>>(d, n); }
template <int B> void launch(const int *in, int *out, int blocks) {
  reduce<B><<<blocks, B>>>(in, out);
}
void pick(int b, const int *in, int *out, int blocks) {
  switch (b) {
    case 32: launch<32>(in, out, blocks); break;
    case 64: launch<64>(in, out, blocks); break;
  }
}
int main() {
  float *f; int *i, *o;
  cudaMalloc(&f, 100 * sizeof(float));
  cudaMalloc(&i, 128 * sizeof(int));
  cudaMalloc(&o, 4 * sizeof(int));
  run(f, 100);          // fill<float>: implied by the call only
  run(i, 128);          // fill<int>
  pick(32, i, o, 4);    // reduce<32>
  pick(64, i, o, 2);    // reduce<64>
  twice<<<1, 64>>>(f, 50);   // twice<float>, deduced
  int h[2];
  cudaMemcpy(h, o, sizeof h, cudaMemcpyDeviceToHost);
  printf("%d %d\n", h[0], h[1]);
  return 0;
}
"""


@pytest.fixture(scope="module")
def report(tmp_path_factory, need_gxx):
    d = tmp_path_factory.mktemp("tmpl")
    (d / "tmpl.cu").write_text(PROGRAM)
    b = gmprof("nvcc", "tmpl.cu", "-o", "tmpl", cwd=d)
    assert "runs unprofiled" not in b.stderr, b.stderr
    p = subprocess.run([str(d / "tmpl")], cwd=d, env=env(GMPROF_OUTPUT=d / "r.json"),
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    # reduce<64> last: block 0 sums 0..63, block 1 sums 64..127 (fill<int> wrote i)
    assert p.stdout.split() == [str(sum(range(64))), str(sum(range(64, 128)))]
    return report_json(d, "r.json")


def _array(kernel, name):
    return next(a for a in kernel["arrays"] if a["name"] == name)


def test_each_specialisation_is_profiled(report):
    assert sorted(report["kernels"]) == ["fill<float>", "fill<int>", "reduce<32>",
                                         "reduce<64>", "twice<float>"]


def test_host_template_counts(report):
    k = report["kernels"]
    # fill<T><<<(n + 31) / 32, 32>>>: threads i < n write d[i] once
    for name, n in (("fill<float>", 100), ("fill<int>", 128)):
        d = _array(k[name], "d")
        assert (d["reads"], d["writes"]) == (0, n)
        assert d["counts"][:n] == [1] * n
    # reduce<B> over `blocks` blocks of B threads: each thread reads in[] once and writes s[]
    # once; thread 0 reads all B of s and writes out[block] once
    for name, b, blocks in (("reduce<32>", 32, 4), ("reduce<64>", 64, 2)):
        r = k[name]
        assert (_array(r, "in")["reads"], _array(r, "in")["writes"]) == (b * blocks, 0)
        assert (_array(r, "s")["reads"], _array(r, "s")["writes"]) == (b * blocks, b * blocks)
        out = _array(r, "out")
        assert (out["reads"], out["writes"]) == (0, blocks)
        assert out["counts"] == [1] * blocks + [0] * (4 - blocks)


def test_deduced_launch_counts(report):
    # twice<<<1, 64>>>(f, 50): threads 0..49 read d[i] twice and write it once
    d = _array(report["kernels"]["twice<float>"], "d")
    assert (d["reads"], d["writes"]) == (2 * 50, 50)
    assert np.array_equal(d["counts"], [3] * 50 + [0] * 50)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_gpu_build_registers_each_specialisation(tmp_path):
    """On a GPU the specialisations are read from nvcc's host stubs: the module's table then
    names the instrumented copy of each (built here without running: no GPU needed)."""
    (tmp_path / "tmpl.cu").write_text(PROGRAM)
    gmprof("nvcc", "-arch=sm_90", "-c", "tmpl.cu", "-o", "tmpl.o", cwd=tmp_path,
           GMPROF_BACKEND="gpu")
    nm = subprocess.run(["nm", "-C", str(tmp_path / "tmpl.o")], capture_output=True,
                        text=True).stdout
    # an instrumented copy's host stub exists only because the table takes its address
    for name in ("fill<float>", "fill<int>", "reduce<32>", "reduce<64>", "twice<float>"):
        assert re.search(rf"__gmprof_\w+::{re.escape(name)}\(", nm), name


def test_specialisations_read_from_symbols():
    from gmprof.program.instances import _demangled_instances

    nm = ("0000 W void fill<float>(float*, int)\n"
          "0000 W void fill<int>(int*, int)\n"
          "0000 t void __wrapper__device_stub_fill<float>(float*&, int&)\n"
          "0000 W void ns::reduce<256u, true>(int const*, int*)\n"
          "0000 W void other::reduce<8u, true>(int const*, int*)\n"
          "0000 W void (anonymous namespace)::k<Pair<int, 3> >(Pair<int, 3>*)\n"
          "0000 W void fill<(anonymous namespace)::T>((anonymous namespace)::T*, int)\n")
    found = _demangled_instances(nm, {"::fill": "fill", "::ns::reduce": "reduce", "::k": "k"})
    assert found == {"::fill": ["float", "int"], "::ns::reduce": ["256, true"],
                     "::k": ["Pair<int, 3>"]}
