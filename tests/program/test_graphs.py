"""Launches in CUDA graphs are profiled by default, each replay counted: kernels launched during a
stream capture (cudaStreamBeginCapture ... cudaGraphLaunch) and kernel nodes added with
cudaGraphAddKernelNode. The CPU backend emulates capture and graphs
(runtime_cu/cpu/gmprof_cudart_graph.cpp). The program's graph keeps the nodes it built; gmprof
instantiates its own copy, where the kernel node is a child graph of the fill, the instrumented
launch and its fold, so every replay adds its counts (runtime_cu/host/gmprof_host_graphs.h).
Counts derived by hand."""
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
    p = gmprof("run", "--json", "--mode", mode, "g.cu", cwd=tmp_path)  # graphs: on by default
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
    # the process ran 6 profiled launches (2 kernels x 3 replays); `never` was made into a
    # graph and not profiled
    (proc,) = doc["program"]["processes"]
    assert proc["profiled"] == 6 and proc["captured"] == {"never": 1}
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
    # GMPROF_GRAPHS=0: launches into graphs run unprofiled, counted per kernel
    (tmp_path / "g.cu").write_text(CAPTURE)
    p = gmprof("run", "--json", "g.cu", cwd=tmp_path, GMPROF_GRAPHS=0)
    assert "a[5] 3 b[5] 6" in p.stderr
    doc = json.loads(p.stdout)
    assert doc["kernels"] == []
    assert doc["program"]["processes"][0]["captured"] == {"dbl": 1, "inc": 1, "never": 1}


# What a program can see of its graphs (simpleCudaGraphs prints its node count; jacobiCudaGraphs
# gives an executable graph's kernel node new arguments, and updates an executable graph from a
# new capture; simpleCudaGraphs instantiates a clone). The program prints what it sees; the
# values are those CUDA gives for the graphs it builds.
OBSERVED = KERNELS + r"""
__global__ void bump(int *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] += 1;
}
int main() {
  const int n = 64;
  int *a, *b, *c;
  cudaMalloc(&a, n * sizeof(int));
  cudaMalloc(&b, n * sizeof(int));
  cudaMalloc(&c, n * sizeof(int));
  cudaMemset(a, 0, n * sizeof(int));
  cudaMemset(c, 0, n * sizeof(int));
  cudaStream_t s;
  cudaStreamCreate(&s);
  // a graph built node by node: memset(b) -> inc(a) -> dbl(b, a)
  cudaGraph_t g;
  cudaGraphCreate(&g, 0);
  cudaMemsetParams mp = {};
  mp.dst = b;
  mp.elementSize = 4;
  mp.width = n;
  mp.height = 1;
  cudaGraphNode_t ms, ki, kd;
  cudaGraphAddMemsetNode(&ms, g, nullptr, 0, &mp);
  int full = n, half = n / 2;
  void *inc_args[] = {&a, &full};
  void *inc_half[] = {&a, &half};
  void *dbl_args[] = {&b, &a, &full};
  cudaKernelNodeParams p = {};
  p.func = (void *)inc;
  p.gridDim = dim3(2);
  p.blockDim = dim3(32);
  p.kernelParams = inc_args;
  cudaGraphAddKernelNode(&ki, g, &ms, 1, &p);
  p.func = (void *)dbl;
  p.kernelParams = dbl_args;
  cudaGraphAddKernelNode(&kd, g, &ki, 1, &p);
  cudaGraphExec_t x;
  cudaError_t e = cudaGraphInstantiate(&x, g, 0);
  size_t count = 0, roots = 0, deps = 0;
  cudaGraphGetNodes(g, nullptr, &count);
  cudaGraphGetRootNodes(g, nullptr, &roots);
  cudaGraphNodeType type;
  cudaGraphNodeGetType(ki, &type);
  cudaKernelNodeParams q = {};
  cudaGraphKernelNodeGetParams(ki, &q);
#if CUDART_VERSION >= 13000
  cudaGraphNodeGetDependencies(kd, nullptr, nullptr, &deps);
#else
  cudaGraphNodeGetDependencies(kd, nullptr, &deps);
#endif
  printf("instantiate %d nodes %zu roots %zu type %d func %d grid %u args %d deps %zu\n", (int)e,
         count, roots, (int)type, q.func == (void *)inc, q.gridDim.x,
         *(int **)q.kernelParams[0] == a && *(int *)q.kernelParams[1] == n, deps);
  // three replays, the second with inc given n / 2 (then n again) on the executable graph
  for (int k = 0; k < 3; ++k) {
    cudaKernelNodeParams r = q;
    r.kernelParams = k == 1 ? inc_half : inc_args;
    e = cudaGraphExecKernelNodeSetParams(x, ki, &r);
    printf("set %d ", (int)e);
    cudaGraphLaunch(x, s);
  }
  // a clone of the graph (its own parameters: inc over n), instantiated and replayed once
  cudaGraph_t cl;
  cudaGraphClone(&cl, g);
  size_t cloned = 0;
  cudaGraphGetNodes(cl, nullptr, &cloned);
  cudaGraphExec_t cx;
  cudaGraphInstantiate(&cx, cl, 0);
  cudaGraphLaunch(cx, s);
  // each round captures a new graph and updates the executable graph from it
  cudaGraphExec_t ux = nullptr;
  for (int r = 0; r < 2; ++r) {
    cudaGraph_t cg;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    bump<<<2, 32, 0, s>>>(c, r == 0 ? n : n / 2);
    cudaStreamEndCapture(s, &cg);
    size_t captured = 0;
    cudaGraphGetNodes(cg, nullptr, &captured);
    if (!ux) {
      cudaGraphInstantiate(&ux, cg, 0);
    } else {
      cudaGraphExecUpdateResultInfo info = {};
      e = cudaGraphExecUpdate(ux, cg, &info);
      printf("update %d result %d ", (int)e, (int)info.result);
    }
    printf("captured %zu ", captured);
    cudaGraphLaunch(ux, s);
    cudaGraphDestroy(cg);
  }
  cudaStreamSynchronize(s);
  int ha[n], hb[n], hc[n];
  cudaMemcpy(ha, a, sizeof ha, cudaMemcpyDeviceToHost);
  cudaMemcpy(hb, b, sizeof hb, cudaMemcpyDeviceToHost);
  cudaMemcpy(hc, c, sizeof hc, cudaMemcpyDeviceToHost);
  printf("\nclone %zu a %d %d b %d %d c %d %d\n", cloned, ha[5], ha[40], hb[5], hb[40], hc[5],
         hc[40]);
  cudaGraphExecDestroy(x);
  cudaGraphExecDestroy(cx);
  cudaGraphExecDestroy(ux);
  cudaGraphDestroy(cl);
  cudaGraphDestroy(g);
  return 0;
}
"""

# what OBSERVED prints natively (CUDA's answers for the graphs it builds): three nodes, one root
# (the memset), inc's node a kernel node (type 0) with the function, grid and arguments it was
# added with, dbl's node depending on one node; every call succeeds; one node per capture
OBSERVED_LINE = ("instantiate 0 nodes 3 roots 1 type 0 func 1 grid 2 args 1 deps 1\n"
                 "set 0 set 0 set 0 captured 1 update 0 result 0 captured 1 ")


# jacobiCudaGraphs' spellings: the signatures cuda_runtime.h keeps from CUDA 11 (C++ overloads)
LEGACY = OBSERVED.replace("cudaGraphInstantiate(&ux, cg, 0)",
                          "cudaGraphInstantiate(&ux, cg, NULL, NULL, 0)").replace(
    "e = cudaGraphExecUpdate(ux, cg, &info);",
    "cudaGraphNode_t bad;\n      e = cudaGraphExecUpdate(ux, cg, &bad, &info.result);")


def check_observed(output: str, doc: dict) -> None:
    """OBSERVED's counts, shared with the GPU test (test_graphs_gpu.py)."""
    # inc ran 4 times (3 replays, then the clone's): over n, n / 2, n, n, so a[i < 32] = 4 and
    # a[i >= 32] = 3; b = 2 * a (dbl after each); bump over n, then n / 2: c = 2 and 1
    assert "clone 3 a 4 3 b 8 6 c 2 1" in output
    kernel, arrays = _arrays(doc, "inc")
    assert kernel["run"]["launches"] == 4
    # one record per parameters a profiled node held: the executable graph's n (replays 1 and 3:
    # setting them again reuses their record), its n / 2 (replay 2), the clone's n
    assert sorted(r.get("repeat", 1) for r in kernel["launches"]) == [1, 1, 2]
    # a read and a write of a[i] per launch that covers i: 4 launches cover i < 32, 3 the rest
    assert arrays["a"]["counts"] == [2 * 4] * 32 + [2 * 3] * 32
    kernel, arrays = _arrays(doc, "dbl")
    assert kernel["run"]["launches"] == 4
    assert (arrays["a"]["reads"], arrays["b"]["writes"]) == (4 * 64, 4 * 64)
    kernel, arrays = _arrays(doc, "bump")
    assert kernel["run"]["launches"] == 2
    # `c[i] += 1` is one site that reads and writes: one count an execution, a read and a write
    assert arrays["c"]["counts"] == [2] * 32 + [1] * 32
    assert (arrays["c"]["reads"], arrays["c"]["writes"]) == (64 + 32, 64 + 32)
    (proc,) = doc["program"]["processes"]
    assert proc["profiled"] == 10 and proc["captured"] == {}


@pytest.mark.parametrize("mode,text", [("default", OBSERVED), ("basic", OBSERVED),
                                       ("basic", LEGACY)], ids=["default", "basic", "legacy"])
def test_graphs_look_as_the_program_built_them(tmp_path, need_gxx, mode, text):
    (tmp_path / "o.cu").write_text(text)
    p = gmprof("run", "--json", "--mode", mode, "o.cu", cwd=tmp_path)
    assert OBSERVED_LINE in p.stderr, p.stderr
    check_observed(p.stderr, json.loads(p.stdout))


GRAPH_MEMORY = r"""
#include <cstdio>
__global__ void fill(int *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = i;
}
__global__ void copy(int *dst, const int *src, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src[i];
}
int main() {
  const int n = 64;
  int *out;
  cudaMalloc(&out, n * sizeof(int));
  cudaStream_t s;
  cudaStreamCreate(&s);
  // a graph allocation (not freed by the graph), filled in the graph
  cudaGraph_t g;
  cudaGraphCreate(&g, 0);
  cudaMemAllocNodeParams ap = {};
  ap.poolProps.allocType = cudaMemAllocationTypePinned;
  ap.poolProps.location.type = cudaMemLocationTypeDevice;
  ap.poolProps.location.id = 0;
  ap.bytesize = n * sizeof(int);
  cudaGraphNode_t an, fn;
  cudaGraphAddMemAllocNode(&an, g, nullptr, 0, &ap);
  int *tmp = (int *)ap.dptr;
  int nn = n;
  void *fill_args[] = {&tmp, &nn};
  cudaKernelNodeParams p = {};
  p.func = (void *)fill;
  p.gridDim = dim3(2);
  p.blockDim = dim3(32);
  p.kernelParams = fill_args;
  cudaGraphAddKernelNode(&fn, g, &an, 1, &p);
  cudaGraphExec_t x;
  cudaGraphInstantiate(&x, g, 0);
  cudaGraphLaunch(x, s);
  // the graph's memory read by a launch after it, and by a captured graph replayed twice
  copy<<<2, 32, 0, s>>>(out, tmp, n);
  cudaGraph_t cg;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  copy<<<2, 32, 0, s>>>(out, tmp, n);
  cudaStreamEndCapture(s, &cg);
  cudaGraphExec_t cx;
  cudaGraphInstantiate(&cx, cg, 0);
  cudaGraphLaunch(cx, s);
  cudaGraphLaunch(cx, s);
  // a stream-ordered allocation in a capture (graphMemoryNodes), read by a launch after
  int *t2;
  cudaGraph_t ag;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaMallocAsync(&t2, n * sizeof(int), s);
  fill<<<2, 32, 0, s>>>(t2, n);
  cudaStreamEndCapture(s, &ag);
  cudaGraphExec_t ax;
  cudaGraphInstantiate(&ax, ag, 0);
  cudaGraphLaunch(ax, s);
  copy<<<2, 32, 0, s>>>(out, t2, n);
  cudaStreamSynchronize(s);
  int h[n];
  cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
  // graph allocations freed outside their graphs
  cudaError_t e1 = cudaFree(tmp), e2 = cudaFree(t2);
  printf("out %d %d free %d %d\n", h[5], h[63], (int)e1, (int)e2);
  return 0;
}
"""


def test_graph_allocation_is_a_known_object(tmp_path, need_gxx):
    """A graph allocation is memory the address-range query does not know (on a GPU, before its
    graph runs; on the CPU backend, ever): gmprof learns it from the graph's allocation node
    when it instantiates the graph, so that a kernel reading it counts into its elements and
    reports nothing out of range (CUDA clones no graph with an allocation node: its fill is
    profiled in place)."""
    (tmp_path / "m.cu").write_text(GRAPH_MEMORY)
    p = gmprof("run", "--json", "--mode", "basic", "m.cu", cwd=tmp_path)
    check_graph_memory(p.stderr, json.loads(p.stdout))


def check_graph_memory(output: str, doc: dict) -> None:
    """GRAPH_MEMORY's counts, shared with the GPU test (test_graphs_gpu.py)."""
    assert "out 5 63 free 0 0" in output
    kernel, arrays = _arrays(doc, "copy")
    # four launches (one outside graphs from tmp, two replays from tmp, one from t2), each
    # reading src[i] and writing dst[i] once per element
    assert kernel["run"]["launches"] == 4
    assert (arrays["src"]["reads"], arrays["dst"]["writes"]) == (4 * 64, 4 * 64)
    assert all(a["out_of_range"] == 0 for a in kernel["arrays"]), kernel["arrays"]
    assert not any("not in any allocation" in n for n in kernel.get("notes", []))
    # the two fills are in graphs with an allocation node, profiled in place: one replay each,
    # writing p[i] once per element
    kernel, arrays = _arrays(doc, "fill")
    assert kernel["run"]["launches"] == 2
    assert (arrays["p"]["reads"], arrays["p"]["writes"]) == (0, 2 * 64)
    assert all(a["out_of_range"] == 0 for a in kernel["arrays"]), kernel["arrays"]
    (proc,) = doc["program"]["processes"]
    assert proc["captured"] == {}


COOPERATIVE = r"""
#include <cstdio>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void rotate(int *a, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  a[i] = i;
  cg::this_grid().sync();
  out[i] = a[(i + 1) % n];
}
int main() {
  int n = 64;
  int *a, *out;
  cudaMalloc(&a, n * sizeof(int));
  cudaMalloc(&out, n * sizeof(int));
  cudaStream_t s;
  cudaStreamCreate(&s);
  void *args[] = {&a, &out, &n};
  cudaGraph_t g;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaLaunchCooperativeKernel((void *)rotate, 2, 32, args, 0, s);
  cudaStreamEndCapture(s, &g);
  cudaGraphExec_t x;
  cudaGraphInstantiate(&x, g, 0);
  cudaGraphLaunch(x, s);
  cudaError_t e = cudaGraphLaunch(x, s);
  int h[64];
  cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
  printf("%s: out %d %d\n", cudaGetErrorString(e), h[5], h[63]);
  return 0;
}
"""


def test_captured_cooperative_launch(tmp_path, need_gxx):
    """A cooperative launch captured into a graph stays cooperative in gmprof's copy (its grid
    barrier holds): each replay counts."""
    (tmp_path / "c.cu").write_text(COOPERATIVE)
    p = gmprof("run", "--json", "--mode", "basic", "c.cu", cwd=tmp_path)
    assert "no error: out 6 0" in p.stderr  # out[i] = a[i + 1] = i + 1, and out[63] = a[0]
    kernel, arrays = _arrays(json.loads(p.stdout), "rotate")
    assert kernel["run"]["launches"] == 2
    # each replay writes every a[i] once and reads it once (a[(i + 1) % n] over all i)
    assert arrays["a"]["counts"] == [2 * 2] * 64 and arrays["out"]["counts"] == [2] * 64


ORDER = r"""
#include <cstdio>
void CUDART_CB say(void *text) { printf("%s", (const char *)text); }
int main() {
  cudaGraph_t g;
  cudaGraphCreate(&g, 0);
  cudaHostNodeParams h = {say, (void *)"second "};
  cudaGraphNode_t second, first, gone;
  cudaGraphAddHostNode(&second, g, nullptr, 0, &h);
  h.userData = (void *)"first ";
  cudaGraphAddHostNode(&first, g, nullptr, 0, &h);
  h.userData = (void *)"gone ";
  cudaGraphAddHostNode(&gone, g, &first, 1, &h);
  cudaGraphAddDependencies(g, &first, &second, nullptr, 1);  // added after, runs before
  cudaGraphDestroyNode(gone);
  size_t n = 0, after = 0;
  cudaGraphGetNodes(g, nullptr, &n);
  cudaGraphNodeGetDependentNodes(first, nullptr, nullptr, &after);
  cudaGraphExec_t x;
  cudaGraphInstantiate(&x, g, 0);
  cudaGraphLaunch(x, 0);
  printf("| nodes %zu dependents %zu\n", n, after);
  return 0;
}
"""


def test_cpu_graphs_run_in_the_order_of_their_edges(tmp_path, need_gxx):
    """The CPU backend's graphs run a node after the nodes it depends on, whatever the order
    they were added in (gmprof's copies rely on it: a profiled node is added last)."""
    (tmp_path / "order.cu").write_text(ORDER)
    p = gmprof("run", "order.cu", cwd=tmp_path)
    assert "first second | nodes 2 dependents 1" in p.stdout + p.stderr


ADD_NODE = KERNELS + r"""
int main() {
  const int n = 64;
  int *a;
  cudaMalloc(&a, n * sizeof(int));
  cudaMemset(a, 0, n * sizeof(int));
  cudaGraph_t g;
  cudaGraphCreate(&g, 0);
  int nn = n;
  void *args[] = {&a, &nn};
  cudaGraphNodeParams p = {cudaGraphNodeTypeKernel};
  p.kernel.func = (void *)inc;
  p.kernel.gridDim = dim3(2);
  p.kernel.blockDim = dim3(32);
  p.kernel.kernelParams = args;
  cudaGraphNode_t node;
  cudaGraphAddNode(&node, g, nullptr, nullptr, 0, &p);
  cudaGraphExec_t x;
  cudaGraphInstantiate(&x, g, 0);
  cudaGraphLaunch(x, 0);
  cudaGraphLaunch(x, 0);
  int h[n];
  cudaMemcpy(h, a, sizeof h, cudaMemcpyDeviceToHost);
  printf("a %d %d\n", h[0], h[63]);
  return 0;
}
"""


def test_kernel_node_added_with_cuda_graph_add_node(tmp_path, need_gxx):
    """cudaGraphAddNode's kernel node is marked as cudaGraphAddKernelNode's: two replays of
    inc, each reading and writing a[i] once per element."""
    (tmp_path / "a.cu").write_text(ADD_NODE)
    p = gmprof("run", "--json", "--mode", "basic", "a.cu", cwd=tmp_path)
    assert "a 2 2" in p.stderr
    kernel, arrays = _arrays(json.loads(p.stdout), "inc")
    assert kernel["run"]["launches"] == 2
    assert (arrays["a"]["reads"], arrays["a"]["writes"]) == (2 * 64, 2 * 64)
