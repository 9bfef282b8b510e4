"""The host runtime's device-resident counters on a GPU (marked gpu: the integrator runs them on
the H100): 1000 launches, graphs (captured and built node by node) counted per replay, and one
kernel and allocation launched on eight streams at once (the folds of concurrent launches of
one group take and add atomically: no count is lost), and --access-stats' statistics (one
buffer per group that every launch adds into, no fold). The programs and hand-derived counts are
those of the CPU tests (test_host_counters.py, test_graphs.py,
test_access_stats_program.py) where they are shared."""
from __future__ import annotations

import json

import pytest

from conftest import gmprof
from test_access_stats_program import ACROSS, PROGRAM, _check, _warps
from test_graphs import CAPTURE, NODES
from test_host_counters import MANY

pytestmark = pytest.mark.gpu

GPU = {"GMPROF_BACKEND": "gpu"}


def _run(tmp_path, name, text, *options, **extra):
    (tmp_path / name).write_text(text)
    p = gmprof("run", "--json", "--backend", "gpu", *options, name, "-arch=sm_90",
               cwd=tmp_path, **GPU, **extra)
    doc = json.loads(p.stdout)
    arrays = {k["kernel"]: (k, {a["name"]: a for a in k["arrays"]}) for k in doc["kernels"]}
    return p, doc, arrays


@pytest.mark.parametrize("mode", ["default", "basic"])
def test_a_thousand_launches(tmp_path, mode):
    p, doc, arrays = _run(tmp_path, "many.cu", MANY.replace("LAUNCHES", "1000"), "--mode", mode,
                          GMPROF_TIMING=1)
    assert "sum 64000" in p.stderr
    kernel, a = arrays["add"]
    assert kernel["run"]["launches"] == 1000
    # each launch: 64 threads read and write a[i] once
    assert (a["a"]["reads"], a["a"]["writes"]) == (64_000, 64_000)
    assert a["a"]["counts"] == [2000] * 64
    assert "gmprof timing: kernel add: 1000 launch(es)" in p.stderr


def test_graphs_counted_per_replay(tmp_path):
    p, doc, arrays = _run(tmp_path, "g.cu", CAPTURE, "--mode", "basic", GMPROF_GRAPHS=1)
    assert "a[5] 3 b[5] 6" in p.stderr
    assert sorted(arrays) == ["dbl", "inc"]  # `never` is in a graph that never ran
    kernel, a = arrays["inc"]
    assert kernel["run"]["launches"] == 3 and a["a"]["counts"] == [6] * 64
    kernel, a = arrays["dbl"]
    assert kernel["run"]["launches"] == 3 and a["b"]["counts"] == [3] * 64
    p, doc, arrays = _run(tmp_path, "n.cu", NODES, "--mode", "basic", GMPROF_GRAPHS=1)
    assert "b[5] 4" in p.stderr
    kernel, a = arrays["inc"]
    assert kernel["run"]["launches"] == 2 and a["a"]["counts"] == [4] * 64


STREAMS = r"""
#include <cstdio>
__global__ void copy1(int *b, const int *a, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    b[i] = a[i] + 1;
}
int main() {
  const int n = 1 << 16;
  int *a, *b;
  cudaMalloc(&a, n * sizeof(int));
  cudaMalloc(&b, n * sizeof(int));
  cudaMemset(a, 0, n * sizeof(int));
  cudaStream_t s[8];
  for (int k = 0; k < 8; ++k) cudaStreamCreateWithFlags(&s[k], cudaStreamNonBlocking);
  for (int r = 0; r < 100; ++r)
    for (int k = 0; k < 8; ++k) copy1<<<64, 128, 0, s[k]>>>(b, a, n);
  cudaDeviceSynchronize();
  int h = 0;
  cudaMemcpy(&h, b + 7, sizeof h, cudaMemcpyDeviceToHost);
  printf("b[7] %d\n", h);
  return 0;
}
"""


def test_one_kernel_on_eight_streams_at_once(tmp_path):
    p, doc, arrays = _run(tmp_path, "s.cu", STREAMS, "--mode", "basic")
    assert "b[7] 1" in p.stderr
    kernel, a = arrays["copy1"]
    assert kernel["run"]["launches"] == 800
    # each launch reads every a[i] once and writes every b[i] once (grid-stride loop)
    n = 1 << 16
    assert (a["a"]["reads"], a["b"]["writes"]) == (800 * n, 800 * n)
    assert a["a"]["counts"] == [800] * n and a["b"]["counts"] == [800] * n


def test_access_stats_per_group_buffer(tmp_path):
    # the CPU test's programs and hand-derived values (test_access_stats_program.py): the
    # group's one statistics buffer on the device, added to by every launch (two streams,
    # graph replays), read back before cudaDeviceReset and at exit
    p, doc, arrays = _run(tmp_path, "t.cu", PROGRAM, "--access-stats")
    _check({"kernels": {k["kernel"]: k for k in doc["kernels"]}})
    p, doc, arrays = _run(tmp_path, "a.cu", ACROSS, "--access-stats", GMPROF_GRAPHS=1)
    kernel, _ = arrays["strided"]
    assert _warps(kernel, "in[32 * t]") == ("device", 6, 6 * 32, 6 * 4, 6 * 32, "measured")
    assert _warps(kernel, "out[t]") == ("device", 6, 6 * 4, 6 * 4, 6, "measured")
