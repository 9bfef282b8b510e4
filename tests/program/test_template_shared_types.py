"""A template kernel's shared variable whose type is written with the kernel's non-type
template parameter (`__shared__ Tile<B> t;`, as cuda-samples' reduction writes
`__shared__ cg::block_tile_memory<BlockSize> scratch;`): each specialisation's table gives the
variable's size with the parameter replaced by its argument (`sizeof(Tile<32>)`); the name
`B` does not exist where the tables are compiled. Counts derived by hand."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from conftest import env, gmprof, report_json

PROGRAM = r"""
#include <cstdio>
template <int N> struct Tile { int v[N]; };
template <int B>
__global__ void flip(const int *in, int *out) {
  __shared__ Tile<B> t;
  t.v[threadIdx.x] = in[blockIdx.x * B + threadIdx.x];
  __syncthreads();
  out[blockIdx.x * B + threadIdx.x] = t.v[B - 1 - threadIdx.x];
}
template <int B> void launch(const int *in, int *out, int blocks) {
  flip<B><<<blocks, B>>>(in, out);
}
int main() {
  int *i, *o;
  cudaMalloc(&i, 128 * sizeof(int));
  cudaMalloc(&o, 128 * sizeof(int));
  cudaMemset(i, 0, 128 * sizeof(int));
  launch<32>(i, o, 4);
  launch<64>(i, o, 2);
  int h[1];
  cudaMemcpy(h, o, sizeof h, cudaMemcpyDeviceToHost);
  printf("%d\n", h[0]);
  return 0;
}
"""


def _array(kernel, name):
    return next(a for a in kernel["arrays"] if a["name"] == name)


def test_shared_type_of_a_template_parameter(tmp_path, need_gxx):
    (tmp_path / "t.cu").write_text(PROGRAM)
    b = gmprof("nvcc", "t.cu", "-o", "t", cwd=tmp_path)
    assert "unprofiled" not in b.stderr, b.stderr
    p = subprocess.run([str(tmp_path / "t")], cwd=tmp_path, env=env(GMPROF_OUTPUT=tmp_path / "r.json"),
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    k = report_json(tmp_path, "r.json")["kernels"]
    # flip<B> over `blocks` blocks of B threads: each thread reads in[] once, writes t.v once,
    # reads t.v once and writes out[] once: B * blocks = 128 of each in both specialisations
    for name in ("flip<32>", "flip<64>"):
        r = k[name]
        assert (_array(r, "in")["reads"], _array(r, "in")["writes"]) == (128, 0)
        assert (_array(r, "out")["reads"], _array(r, "out")["writes"]) == (0, 128)
    # t: Tile<B> is B 4-byte words, each written once and read once per block (thread x
    # writes word x and reads word B - 1 - x): 2 * blocks accesses a word, 256 in all
    for name, b, blocks in (("flip<32>", 32, 4), ("flip<64>", 64, 2)):
        t = _array(k[name], "t")
        assert (t["elem_size"], t["counters"]) == (4 * b, b)
        assert t["counts"] == [2 * blocks] * b
        assert t["accesses"] == 256


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_gpu_tables_compile(tmp_path):
    """The GPU build (no GPU needed to compile) keeps the instrumented copies: before, nvcc
    refused the tables ('identifier "B" is undefined') and the file was built unprofiled."""
    (tmp_path / "t.cu").write_text(PROGRAM)
    b = gmprof("nvcc", "-arch=sm_90", "-c", "t.cu", "-o", "t.o", cwd=tmp_path,
               GMPROF_BACKEND="gpu")
    assert "without profiling" not in b.stderr, b.stderr
