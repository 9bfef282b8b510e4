"""Graphs CUDA cannot clone, profiled in place (runtime_cu/host/gmprof_host_in_place.h): a graph
with memory allocation and free nodes, and ones with conditional nodes (a while loop whose body
runs a kernel until the kernel clears the condition, an if/else and a switch chosen by a
kernel). For the
instantiation only, each kernel node gmprof marked takes the instrumented kernel between a fill
and a fold; the program's graph is then restored. Each run of a node counts as a launch, so a
node in a while body counts every iteration, and an if's bodies only the runs taken. The CPU
backend emulates conditional nodes (runtime_cu/cpu/gmprof_cudart_conditional.cpp). Counts
derived by hand."""
from __future__ import annotations

import json

import pytest

from conftest import gmprof

MEMORY_NODES = r"""
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
  cudaMemset(out, 0, n * sizeof(int));
  // alloc -> fill -> copy -> free (graphMemoryFootprint's shape)
  cudaGraph_t g;
  cudaGraphCreate(&g, 0);
  cudaMemAllocNodeParams ap = {};
  ap.poolProps.allocType = cudaMemAllocationTypePinned;
  ap.poolProps.location.type = cudaMemLocationTypeDevice;
  ap.poolProps.location.id = 0;
  ap.bytesize = n * sizeof(int);
  cudaGraphNode_t an, fn, cn, frn;
  cudaGraphAddMemAllocNode(&an, g, nullptr, 0, &ap);
  int *tmp = (int *)ap.dptr;
  int nn = n;
  void *fill_args[] = {&tmp, &nn};
  void *copy_args[] = {&out, &tmp, &nn};
  cudaKernelNodeParams p = {};
  p.func = (void *)fill;
  p.gridDim = dim3(2);
  p.blockDim = dim3(32);
  p.kernelParams = fill_args;
  cudaGraphAddKernelNode(&fn, g, &an, 1, &p);
  p.func = (void *)copy;
  p.kernelParams = copy_args;
  cudaGraphAddKernelNode(&cn, g, &fn, 1, &p);
  cudaGraphAddMemFreeNode(&frn, g, &cn, 1, tmp);
  cudaGraphExec_t x;
  cudaGraphInstantiate(&x, g, 0);
  cudaStream_t s;
  cudaStreamCreate(&s);
  for (int r = 0; r < 3; ++r) cudaGraphLaunch(x, s);
  cudaStreamSynchronize(s);
  int h[n];
  cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
  // what the program sees of its graph after the instantiation
  size_t nodes = 0, fill_out = 0, copy_in = 0;
  cudaGraphGetNodes(g, nullptr, &nodes);
  cudaGraphNodeGetDependentNodes(fn, nullptr, nullptr, &fill_out);
  cudaGraphNode_t before = nullptr;
  cudaGraphNodeGetDependencies(cn, nullptr, nullptr, &copy_in);
  cudaGraphNodeGetDependencies(cn, &before, nullptr, &copy_in);
  cudaKernelNodeParams q;
  cudaGraphKernelNodeGetParams(cn, &q);
  const bool same = q.func == (void *)copy && q.sharedMemBytes == 0 && q.gridDim.x == 2 &&
                    *(int **)q.kernelParams[0] == out && *(int **)q.kernelParams[1] == tmp &&
                    *(int *)q.kernelParams[2] == n;
  printf("out %d %d nodes %d fill->%d ->copy %d %s %s\n", h[5], h[63], (int)nodes,
         (int)fill_out, (int)copy_in, before == fn ? "fill" : "other", same ? "same" : "changed");
  return 0;
}
"""

CONDITIONAL = r"""
#include <cstdio>
__global__ void step(int *a, int *left, cudaGraphConditionalHandle h, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = a[i] + 1;
  if (i == 0) {
    int v = *left - 1;
    *left = v;
    cudaGraphSetConditional(h, v > 0 ? 1 : 0);
  }
}
__global__ void decide(const int *flag, cudaGraphConditionalHandle h) {
  cudaGraphSetConditional(h, flag[0] ? 1 : 0);
}
__global__ void add(int *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] = b[i] + 10;
}
__global__ void sub(int *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] = b[i] - 1;
}
int main() {
  const int n = 64;
  int *a, *b, *left, *flag;
  cudaMalloc(&a, n * sizeof(int));
  cudaMalloc(&b, n * sizeof(int));
  cudaMalloc(&left, sizeof(int));
  cudaMalloc(&flag, sizeof(int));
  cudaMemset(a, 0, n * sizeof(int));
  cudaMemset(b, 0, n * sizeof(int));
  cudaGraph_t g;
  cudaGraphCreate(&g, 0);
  // while (a do-while: the condition's default, 1, is assigned at each launch) ...
  cudaGraphConditionalHandle wh, ih;
  cudaGraphConditionalHandleCreate(&wh, g, 1, cudaGraphCondAssignDefault);
  cudaGraphConditionalHandleCreate(&ih, g, 0, 0);
  cudaGraphNodeParams cp = {cudaGraphNodeTypeConditional};
  cp.conditional.handle = wh;
  cp.conditional.type = cudaGraphCondTypeWhile;
  cp.conditional.size = 1;
  cudaGraphNode_t wn, dn, in;
  cudaGraphAddNode(&wn, g, nullptr, nullptr, 0, &cp);
  cudaGraph_t loop = cp.conditional.phGraph_out[0];
  cudaStream_t s, cs;
  cudaStreamCreate(&s);
  cudaStreamCreate(&cs);
  cudaStreamBeginCaptureToGraph(cs, loop, nullptr, nullptr, 0, cudaStreamCaptureModeGlobal);
  step<<<2, 32, 0, cs>>>(a, left, wh, n);
  cudaStreamEndCapture(cs, nullptr);
  // ... then decide -> if (flag) add else sub
  void *decide_args[] = {&flag, &ih};
  cudaGraphNodeParams kp = {cudaGraphNodeTypeKernel};
  kp.kernel.func = (void *)decide;
  kp.kernel.gridDim = dim3(1);
  kp.kernel.blockDim = dim3(1);
  kp.kernel.kernelParams = decide_args;
  cudaGraphAddNode(&dn, g, &wn, nullptr, 1, &kp);
  cudaGraphNodeParams ip = {cudaGraphNodeTypeConditional};
  ip.conditional.handle = ih;
  ip.conditional.type = cudaGraphCondTypeIf;
  ip.conditional.size = 2;
  cudaGraphAddNode(&in, g, &dn, nullptr, 1, &ip);
  cudaGraph_t then_body = ip.conditional.phGraph_out[0], else_body = ip.conditional.phGraph_out[1];
  int nn = n;
  void *b_args[] = {&b, &nn};
  cudaKernelNodeParams p = {};
  p.func = (void *)add;
  p.gridDim = dim3(2);
  p.blockDim = dim3(32);
  p.kernelParams = b_args;
  cudaGraphNode_t tn, en;
  cudaGraphAddKernelNode(&tn, then_body, nullptr, 0, &p);
  p.func = (void *)sub;
  cudaGraphAddKernelNode(&en, else_body, nullptr, 0, &p);
  cudaGraphExec_t x;
  cudaGraphInstantiate(&x, g, 0);
  // three launches: the loop runs 3, 2, then 1 time; the if takes then, else, then
  const int lefts[] = {3, 2, 1}, flags[] = {1, 0, 1};
  for (int r = 0; r < 3; ++r) {
    cudaMemcpy(left, &lefts[r], sizeof(int), cudaMemcpyHostToDevice);
    cudaMemcpy(flag, &flags[r], sizeof(int), cudaMemcpyHostToDevice);
    cudaGraphLaunch(x, s);
    cudaStreamSynchronize(s);
  }
  int ha[n], hb[n];
  cudaMemcpy(ha, a, sizeof ha, cudaMemcpyDeviceToHost);
  cudaMemcpy(hb, b, sizeof hb, cudaMemcpyDeviceToHost);
  // what the program sees of its graphs after the instantiation
  size_t top = 0, in_loop = 0, in_then = 0, decide_in = 0, decide_out = 0;
  cudaGraphGetNodes(g, nullptr, &top);
  cudaGraphNode_t sn = nullptr;
  cudaGraphGetNodes(loop, nullptr, &in_loop);
  cudaGraphGetNodes(loop, &sn, &in_loop);
  cudaGraphGetNodes(then_body, nullptr, &in_then);
  cudaGraphNodeGetDependencies(dn, nullptr, nullptr, &decide_in);
  cudaGraphNodeGetDependentNodes(dn, nullptr, nullptr, &decide_out);
  cudaKernelNodeParams q;
  cudaGraphKernelNodeGetParams(sn, &q);
  const bool same = q.func == (void *)step && q.sharedMemBytes == 0 && q.gridDim.x == 2 &&
                    *(int **)q.kernelParams[0] == a && *(int **)q.kernelParams[1] == left;
  printf("a %d %d b %d %d nodes %d %d %d decide %d %d %s\n", ha[0], ha[63], hb[0], hb[63],
         (int)top, (int)in_loop, (int)in_then, (int)decide_in, (int)decide_out,
         same ? "same" : "changed");
  return 0;
}
"""

EXEC_PARAMS = r"""
#include <cstdio>
__global__ void inc(int *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = a[i] + 1;
}
int main() {
  const int n = 64;
  int *a, *b;
  cudaMalloc(&a, n * sizeof(int));
  cudaMalloc(&b, n * sizeof(int));
  cudaMemset(a, 0, n * sizeof(int));
  cudaMemset(b, 0, n * sizeof(int));
  cudaGraph_t g;
  cudaGraphCreate(&g, 0);
  cudaMemAllocNodeParams ap = {};
  ap.poolProps.allocType = cudaMemAllocationTypePinned;
  ap.poolProps.location.type = cudaMemLocationTypeDevice;
  ap.bytesize = 256;
  cudaGraphNode_t an, kn, fn;
  cudaGraphAddMemAllocNode(&an, g, nullptr, 0, &ap);
  int nn = n;
  void *args[] = {&a, &nn};
  cudaKernelNodeParams p = {};
  p.func = (void *)inc;
  p.gridDim = dim3(2);
  p.blockDim = dim3(32);
  p.kernelParams = args;
  cudaGraphAddKernelNode(&kn, g, &an, 1, &p);
  cudaGraphAddMemFreeNode(&fn, g, &kn, 1, ap.dptr);
  cudaGraphExec_t x;
  cudaGraphInstantiate(&x, g, 0);
  cudaStream_t s;
  cudaStreamCreate(&s);
  cudaGraphLaunch(x, s);
  void *args2[] = {&b, &nn};
  p.kernelParams = args2;
  cudaError_t e = cudaGraphExecKernelNodeSetParams(x, kn, &p);
  cudaGraphLaunch(x, s);
  cudaStreamSynchronize(s);
  int ha[n], hb[n];
  cudaMemcpy(ha, a, sizeof ha, cudaMemcpyDeviceToHost);
  cudaMemcpy(hb, b, sizeof hb, cudaMemcpyDeviceToHost);
  printf("e %d a %d b %d\n", (int)e, ha[0], hb[0]);
  return 0;
}
"""


def _arrays(doc, name):
    kernel = next(k for k in doc["kernels"] if k["kernel"] == name)
    return kernel, {a["name"]: a for a in kernel["arrays"]}


def check_memory_nodes(output: str, doc: dict) -> None:
    """MEMORY_NODES' counts, shared with the GPU test (test_graphs_gpu.py)."""
    # out[i] = i; the graph still has its 4 nodes, fill one dependent, copy one dependency
    # (fill), and copy's parameters are the program's: CUDA deletes no node or edge of a graph
    # with allocation or free nodes, so gmprof adds none to it (only the kernels' parameters,
    # set back after the instantiation; the folds run after the graph)
    assert "out 5 63 nodes 4 fill->1 ->copy 1 fill same" in output
    # three replays; per replay fill writes p[i] once
    kernel, arrays = _arrays(doc, "fill")
    assert kernel["run"]["launches"] == 3
    assert (arrays["p"]["reads"], arrays["p"]["writes"]) == (0, 3 * 64)
    assert arrays["p"]["counts"] == [3] * 64
    # the graph allocation is a known object: nothing out of range
    assert all(a["out_of_range"] == 0 for a in kernel["arrays"]), kernel["arrays"]
    # copy (same file) reads another launch description than fill's, filled before the launch:
    # only a node inside the graph could fill it between them, so it ran unprofiled, counted,
    # and the note says why
    assert all(k["kernel"] != "copy" for k in doc["kernels"])
    (proc,) = doc["program"]["processes"]
    assert proc["profiled"] == 3 and proc["captured"] == {"copy": 1}
    assert any("copy in a graph with allocation or free nodes" in n
               for n in doc["program"]["notes"]), doc["program"]["notes"]


def check_conditional(output: str, doc: dict) -> None:
    """CONDITIONAL's counts, shared with the GPU test (test_graphs_gpu.py)."""
    # step ran 3 + 2 + 1 = 6 times: a[i] = 6; b[i] = +10 (then), -1 (else), +10 (then) = 19;
    # the program's graphs keep their nodes: 3 at the top (while, decide, if), 1 in the loop's
    # body, 1 in the then body; decide has one dependency and one dependent; step's parameters
    # are the program's
    assert "a 6 6 b 19 19 nodes 3 1 1 decide 1 1 same" in output
    # step: 6 runs, each reading and writing a[i] once per element (2 x 32 threads, n = 64),
    # and thread 0 reading *left once and writing it once
    kernel, arrays = _arrays(doc, "step")
    assert kernel["run"]["launches"] == 6
    assert (arrays["a"]["reads"], arrays["a"]["writes"]) == (6 * 64, 6 * 64)
    assert arrays["a"]["counts"] == [6 * 2] * 64
    assert (arrays["left"]["reads"], arrays["left"]["writes"]) == (6, 6)
    # decide: one thread, one read of flag[0], once per launch of the graph
    kernel, arrays = _arrays(doc, "decide")
    assert kernel["run"]["launches"] == 3
    assert (arrays["flag"]["reads"], arrays["flag"]["writes"]) == (3, 0)
    # add ran in launches 1 and 3, sub in launch 2: b[i] read and written once a run
    kernel, arrays = _arrays(doc, "add")
    assert kernel["run"]["launches"] == 2
    assert (arrays["b"]["reads"], arrays["b"]["writes"]) == (2 * 64, 2 * 64)
    kernel, arrays = _arrays(doc, "sub")
    assert kernel["run"]["launches"] == 1
    assert (arrays["b"]["reads"], arrays["b"]["writes"]) == (64, 64)
    (proc,) = doc["program"]["processes"]
    assert proc["profiled"] == 6 + 3 + 2 + 1 and proc["captured"] == {}


@pytest.mark.parametrize("mode", ["default", "basic"])
def test_graph_with_memory_nodes_profiled_in_place(tmp_path, need_gxx, mode):
    (tmp_path / "m.cu").write_text(MEMORY_NODES)
    p = gmprof("run", "--json", "--mode", mode, "m.cu", cwd=tmp_path)
    check_memory_nodes(p.stderr, json.loads(p.stdout))


@pytest.mark.parametrize("mode", ["default", "basic"])
def test_conditional_bodies_profiled_each_run(tmp_path, need_gxx, mode):
    (tmp_path / "c.cu").write_text(CONDITIONAL)
    p = gmprof("run", "--json", "--mode", mode, "c.cu", cwd=tmp_path)
    check_conditional(p.stderr, json.loads(p.stdout))


def test_in_place_graphs_unprofiled_when_graphs_are_off(tmp_path, need_gxx):
    """GMPROF_GRAPHS=0: the same program runs as built, every selected node counted under
    `captured` (step, decide, add, sub: one node each)."""
    (tmp_path / "c.cu").write_text(CONDITIONAL)
    p = gmprof("run", "--json", "--mode", "basic", "c.cu", cwd=tmp_path, GMPROF_GRAPHS=0,
               check=False)
    assert "a 6 6 b 19 19 nodes 3 1 1 decide 1 1 same" in p.stderr
    doc = json.loads(p.stdout)
    (proc,) = doc["program"]["processes"]
    assert proc["captured"] == {"step": 1, "decide": 1, "add": 1, "sub": 1}


def test_exec_params_of_an_in_place_node_run_unprofiled_and_say_so(tmp_path, need_gxx):
    """cudaGraphExecKernelNodeSetParams on a node profiled in place: the fill and fold around it
    left the program's graph and cannot change, so the node runs the program's new parameters
    unprofiled (the program computes what it asked: inc on a, then on b), a's counts are the
    first run's, and the report's note says the later runs count among the launches."""
    (tmp_path / "x.cu").write_text(EXEC_PARAMS)
    p = gmprof("run", "--json", "--mode", "basic", "x.cu", cwd=tmp_path)
    assert "e 0 a 1 b 1" in p.stderr
    doc = json.loads(p.stdout)
    kernel, arrays = _arrays(doc, "inc")
    # the first run, profiled: a[i] read and written once per element
    assert (arrays["a"]["reads"], arrays["a"]["writes"]) == (64, 64)
    assert any("inc in a graph profiled in place" in n and "ran unprofiled" in n
               for n in doc["program"]["notes"]), doc["program"]["notes"]


SWITCH = r"""
#include <cstdio>
__global__ void pick(const int *sel, cudaGraphConditionalHandle h) {
  cudaGraphSetConditional(h, (unsigned)sel[0]);
}
__global__ void add(int *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] = b[i] + 10;
}
__global__ void sub(int *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] = b[i] - 1;
}
int main() {
  const int n = 64;
  int *b, *sel;
  cudaMalloc(&b, n * sizeof(int));
  cudaMalloc(&sel, sizeof(int));
  cudaMemset(b, 0, n * sizeof(int));
  cudaGraph_t g;
  cudaGraphCreate(&g, 0);
  cudaGraphConditionalHandle h;
  cudaGraphConditionalHandleCreate(&h, g, 0, 0);
  void *pick_args[] = {&sel, &h};
  cudaGraphNodeParams kp = {cudaGraphNodeTypeKernel};
  kp.kernel.func = (void *)pick;
  kp.kernel.gridDim = dim3(1);
  kp.kernel.blockDim = dim3(1);
  kp.kernel.kernelParams = pick_args;
  cudaGraphNode_t pn, sn, an, un;
  cudaGraphAddNode(&pn, g, nullptr, nullptr, 0, &kp);
  cudaGraphNodeParams cp = {cudaGraphNodeTypeConditional};
  cp.conditional.handle = h;
  cp.conditional.type = cudaGraphCondTypeSwitch;
  cp.conditional.size = 3;  // body 2 stays empty
  cudaGraphAddNode(&sn, g, &pn, nullptr, 1, &cp);
  int nn = n;
  void *b_args[] = {&b, &nn};
  cudaKernelNodeParams p = {};
  p.func = (void *)add;
  p.gridDim = dim3(2);
  p.blockDim = dim3(32);
  p.kernelParams = b_args;
  cudaGraphAddKernelNode(&an, cp.conditional.phGraph_out[0], nullptr, 0, &p);
  p.func = (void *)sub;
  cudaGraphAddKernelNode(&un, cp.conditional.phGraph_out[1], nullptr, 0, &p);
  cudaGraphExec_t x;
  cudaGraphInstantiate(&x, g, 0);
  const int sels[] = {0, 1, 2, 5};
  for (int r = 0; r < 4; ++r) {
    cudaMemcpy(sel, &sels[r], sizeof(int), cudaMemcpyHostToDevice);
    cudaGraphLaunch(x, 0);
    cudaStreamSynchronize(0);
  }
  int hb[n];
  cudaMemcpy(hb, b, sizeof hb, cudaMemcpyDeviceToHost);
  printf("b %d %d\n", hb[0], hb[63]);
  return 0;
}
"""


def test_switch_bodies_profiled_each_run(tmp_path, need_gxx):
    """A switch over 3 bodies chosen 0, 1, 2 (empty), then 5 (none): add ran once, sub once."""
    (tmp_path / "s.cu").write_text(SWITCH)
    p = gmprof("run", "--json", "--mode", "basic", "s.cu", cwd=tmp_path)
    assert "b 9 9" in p.stderr  # +10 then -1
    doc = json.loads(p.stdout)
    kernel, arrays = _arrays(doc, "pick")
    assert kernel["run"]["launches"] == 4  # one read of sel[0] per launch of the graph
    assert (arrays["sel"]["reads"], arrays["sel"]["writes"]) == (4, 0)
    for name in ("add", "sub"):  # one run each: b[i] read and written once
        kernel, arrays = _arrays(doc, name)
        assert kernel["run"]["launches"] == 1
        assert (arrays["b"]["reads"], arrays["b"]["writes"]) == (64, 64)
