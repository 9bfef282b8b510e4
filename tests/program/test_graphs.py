"""Launches in CUDA graphs are profiled, each replay counted: kernels launched during a stream
capture (cudaStreamBeginCapture ... cudaGraphLaunch) and kernel nodes added with
cudaGraphAddKernelNode. The CPU backend emulates capture and graphs
(runtime_cu/cpu/gmprof_cudart_graph.cpp); the instrumented launch is captured with its fill and
its fold, so every replay adds its counts. Counts derived by hand."""
from __future__ import annotations

import json

import pytest

from conftest import gmprof

KERNELS = r"""
#include <cstdio>
__global__ void inc(int *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = a[i] + 1;
}
__global__ void dbl(int *b, const int *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] = 2 * a[i];
}
__global__ void never(int *a) { a[threadIdx.x] = 7; }
"""

CAPTURE = KERNELS + r"""
int main() {
  const int n = 64;
  int *a, *b;
  cudaMalloc(&a, n * sizeof(int));
  cudaMalloc(&b, n * sizeof(int));
  cudaMemset(a, 0, n * sizeof(int));
  cudaStream_t s;
  cudaStreamCreate(&s);
  cudaGraph_t graph, unused;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  inc<<<2, 32, 0, s>>>(a, n);
  dbl<<<2, 32, 0, s>>>(b, a, n);
  cudaStreamEndCapture(s, &graph);
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  never<<<1, 32, 0, s>>>(a);       // captured into a graph that never runs
  cudaStreamEndCapture(s, &unused);
  cudaGraphExec_t exec;
  cudaGraphInstantiate(&exec, graph, 0);
  for (int k = 0; k < 3; ++k) cudaGraphLaunch(exec, s);
  cudaStreamSynchronize(s);
  int ha[n], hb[n];
  cudaMemcpy(ha, a, sizeof ha, cudaMemcpyDeviceToHost);
  cudaMemcpy(hb, b, sizeof hb, cudaMemcpyDeviceToHost);
  printf("a[5] %d b[5] %d\n", ha[5], hb[5]);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  return 0;
}
"""

NODES = KERNELS + r"""
int main() {
  const int n = 64;
  int *a, *b;
  cudaMalloc(&a, n * sizeof(int));
  cudaMalloc(&b, n * sizeof(int));
  cudaMemset(a, 0, n * sizeof(int));
  cudaGraph_t graph;
  cudaGraphCreate(&graph, 0);
  int nn = n;
  void *inc_args[] = {&a, &nn};
  void *dbl_args[] = {&b, &a, &nn};
  cudaKernelNodeParams p = {};
  p.func = (void *)inc;
  p.gridDim = dim3(2);
  p.blockDim = dim3(32);
  p.kernelParams = inc_args;
  cudaGraphNode_t first, second;
  cudaGraphAddKernelNode(&first, graph, nullptr, 0, &p);
  p.func = (void *)dbl;
  p.kernelParams = dbl_args;
  cudaGraphAddKernelNode(&second, graph, &first, 1, &p);
  cudaGraphExec_t exec;
  cudaGraphInstantiate(&exec, graph, 0);
  cudaStream_t s;
  cudaStreamCreate(&s);
  for (int k = 0; k < 2; ++k) cudaGraphLaunch(exec, s);
  cudaStreamSynchronize(s);
  int hb[n];
  cudaMemcpy(hb, b, sizeof hb, cudaMemcpyDeviceToHost);
  printf("b[5] %d\n", hb[5]);
  return 0;
}
"""


def _arrays(doc, name):
    kernel = next(k for k in doc["kernels"] if k["kernel"] == name)
    return kernel, {a["name"]: a for a in kernel["arrays"]}


@pytest.mark.parametrize("mode", ["default", "basic"])
def test_captured_graph_of_two_kernels_launched_three_times(tmp_path, need_gxx, mode):
    (tmp_path / "g.cu").write_text(CAPTURE)
    p = gmprof("run", "--json", "--mode", mode, "g.cu", cwd=tmp_path, GMPROF_GRAPHS=1)
    # three replays: a[i] = 3, then b[i] = 2 * 3
    assert "a[5] 3 b[5] 6" in p.stderr
    doc = json.loads(p.stdout)
    # the graph that never ran ran no launch: `never` is not in the report
    assert sorted(k["kernel"] for k in doc["kernels"]) == ["dbl", "inc"]
    # one replay: inc reads and writes each of a's 64 elements once; dbl reads a once and
    # writes b once per element; three replays are 3x that
    kernel, arrays = _arrays(doc, "inc")
    assert kernel["run"]["launches"] == 3
    assert (arrays["a"]["reads"], arrays["a"]["writes"]) == (3 * 64, 3 * 64)
    assert arrays["a"]["counts"] == [3 * 2] * 64
    kernel, arrays = _arrays(doc, "dbl")
    assert kernel["run"]["launches"] == 3
    assert (arrays["a"]["reads"], arrays["a"]["writes"]) == (3 * 64, 0)
    assert (arrays["b"]["reads"], arrays["b"]["writes"]) == (0, 3 * 64)
    assert arrays["b"]["counts"] == [3] * 64
    # the process ran 6 profiled launches (2 kernels x 3 replays)
    (proc,) = doc["program"]["processes"]
    assert proc["profiled"] == 6
    # and the breakdown per process, device and kernel counts each kernel's 3 replays
    assert sorted((b["kernel"], b["launches"]) for b in doc["program"]["breakdown"]) == \
        [("dbl", 3), ("inc", 3)]


def test_kernel_nodes_launched_twice(tmp_path, need_gxx):
    (tmp_path / "n.cu").write_text(NODES)
    p = gmprof("run", "--json", "--mode", "basic", "n.cu", cwd=tmp_path, GMPROF_GRAPHS=1)
    assert "b[5] 4" in p.stderr  # two replays: a[i] = 2, b[i] = 4
    doc = json.loads(p.stdout)
    kernel, arrays = _arrays(doc, "inc")
    assert kernel["run"]["launches"] == 2
    assert arrays["a"]["counts"] == [2 * 2] * 64  # a read and a write per replay
    kernel, arrays = _arrays(doc, "dbl")
    assert kernel["run"]["launches"] == 2
    assert (arrays["a"]["reads"], arrays["b"]["writes"]) == (2 * 64, 2 * 64)


FORK_JOIN = KERNELS + r"""
int main() {
  const int n = 64;
  int *a, *b, *c;
  cudaMalloc(&a, n * sizeof(int));
  cudaMalloc(&b, n * sizeof(int));
  cudaMalloc(&c, n * sizeof(int));
  cudaMemset(a, 0, n * sizeof(int));
  cudaStream_t s1, s2;
  cudaStreamCreate(&s1);
  cudaStreamCreate(&s2);
  cudaEvent_t fork, join;
  cudaEventCreate(&fork);
  cudaEventCreate(&join);
  cudaGraph_t g;
  cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal);
  cudaMemsetAsync(b, 0, n * sizeof(int), s1);
  inc<<<2, 32, 0, s1>>>(a, n);
  cudaEventRecord(fork, s1);
  cudaStreamWaitEvent(s2, fork, 0);          // s2 joins the capture
  dbl<<<2, 32, 0, s2>>>(b, a, n);            // branch 1
  dbl<<<4, 16, 0, s1>>>(c, a, n);            // branch 2 (another description)
  cudaEventRecord(join, s2);
  cudaStreamWaitEvent(s1, join, 0);
  cudaError_t e = cudaStreamEndCapture(s1, &g);
  printf("end capture: %s\n", cudaGetErrorString(e));
  cudaGraphExec_t x;
  cudaGraphInstantiate(&x, g, 0);
  for (int k = 0; k < 4; ++k) cudaGraphLaunch(x, s1);
  cudaStreamSynchronize(s1);
  int hb[n], hc[n];
  cudaMemcpy(hb, b, sizeof hb, cudaMemcpyDeviceToHost);
  cudaMemcpy(hc, c, sizeof hc, cudaMemcpyDeviceToHost);
  printf("b[3] %d c[3] %d\n", hb[3], hc[3]);
  cudaDeviceReset();
  return 0;
}
"""


def test_capture_forked_on_two_streams(tmp_path, need_gxx):
    """A capture that forks onto a second stream (an event recorded in the capture, waited on)
    and joins back: both branches are in the graph, each replay counts them."""
    (tmp_path / "fj.cu").write_text(FORK_JOIN)
    p = gmprof("run", "--json", "--mode", "basic", "fj.cu", cwd=tmp_path, GMPROF_GRAPHS=1)
    # four replays: a[i] = 4, then b[i] = c[i] = 2 * 4
    assert "end capture: no error" in p.stderr and "b[3] 8 c[3] 8" in p.stderr
    doc = json.loads(p.stdout)
    kernel, arrays = _arrays(doc, "inc")
    assert kernel["run"]["launches"] == 4 and arrays["a"]["counts"] == [2 * 4] * 64
    # dbl runs twice a replay (into b on the forked stream, into c on the first), 64 threads
    # each reading a[i] once and writing its parameter b's element once
    kernel, arrays = _arrays(doc, "dbl")
    assert kernel["run"]["launches"] == 8
    assert (arrays["a"]["reads"], arrays["b"]["writes"]) == (8 * 64, 8 * 64)


def test_graphs_off_runs_captured_launches_unprofiled(tmp_path, need_gxx):
    # by default (GMPROF_GRAPHS unset or 0): launches into graphs run unprofiled, counted per kernel
    (tmp_path / "g.cu").write_text(CAPTURE)
    p = gmprof("run", "--json", "g.cu", cwd=tmp_path)
    assert "a[5] 3 b[5] 6" in p.stderr
    doc = json.loads(p.stdout)
    assert doc["kernels"] == []
    assert doc["program"]["processes"][0]["captured"] == {"dbl": 1, "inc": 1, "never": 1}
