"""Graphs profiled in place leave the program's nodes where they were: no node of gmprof's is
added before a program's node that has no other description of its module to wait for, and a
fold after a node keeps no edge to a dependent that no node of the node's module follows.

graphConditionalNodes (cuda-samples) sets a condition in a kernel that has no edge to its
conditional node: natively the kernel starts first and wins; with gmprof's fill added before
the kernel, a GPU evaluated the conditional node first (the previous replay's value). The fill
of the description the kernel reads is now enqueued on the launch's stream before the graph
(runtime_cu/host/gmprof_host_in_place.h). The CPU backend orders a graph's unordered nodes so
that such a fill would not change the output here, so the test reads the graph as instantiated
(GMPROF_CPU_GRAPH_DUMP=1: a line per node, its type and its dependencies by index; gmprof's
nodes are added after the program's, so the program's keep their indices). Counts by hand."""
from __future__ import annotations

import json
import re

from conftest import gmprof

RACE = r"""
#include <cstdio>
__global__ void setter(const int *flag, cudaGraphConditionalHandle h) {
  cudaGraphSetConditional(h, flag[0] ? 1 : 0);
}
__global__ void countdown(int *left, cudaGraphConditionalHandle h) {
  int v = *left - 1;
  *left = v;
  cudaGraphSetConditional(h, v > 0 ? 1 : 0);
}
__global__ void body(int *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] = b[i] + 1;
}
int main() {
  const int n = 64;
  int *b, *flag, *left;
  cudaMalloc(&b, n * sizeof(int));
  cudaMalloc(&flag, sizeof(int));
  cudaMalloc(&left, sizeof(int));
  cudaMemset(b, 0, n * sizeof(int));
  int nn = n;
  void *b_args[] = {&b, &nn};
  cudaKernelNodeParams p = {};
  p.func = (void *)body;
  p.gridDim = dim3(2);
  p.blockDim = dim3(32);
  p.kernelParams = b_args;
  // graph 1, as graphConditionalNodes builds its if graph: the setter and the if node are both
  // roots (the if node is added with the setter as its dependency array but a count of 0); an
  // empty node depends on the setter
  cudaGraph_t g;
  cudaGraphCreate(&g, 0);
  cudaGraphConditionalHandle h;
  cudaGraphConditionalHandleCreate(&h, g, 0, 0);
  void *set_args[] = {&flag, &h};
  cudaGraphNodeParams kp = {cudaGraphNodeTypeKernel};
  kp.kernel.func = (void *)setter;
  kp.kernel.gridDim = dim3(1);
  kp.kernel.blockDim = dim3(1);
  kp.kernel.kernelParams = set_args;
  cudaGraphNode_t sn, in, en, bn, b1, b2;
  cudaGraphAddNode(&sn, g, nullptr, nullptr, 0, &kp);
  cudaGraphNodeParams cp = {cudaGraphNodeTypeConditional};
  cp.conditional.handle = h;
  cp.conditional.type = cudaGraphCondTypeIf;
  cp.conditional.size = 1;
  cudaGraphAddNode(&in, g, &sn, nullptr, 0, &cp);
  cudaGraphAddKernelNode(&bn, cp.conditional.phGraph_out[0], nullptr, 0, &p);
  cudaGraphAddEmptyNode(&en, g, &sn, 1);
  cudaGraphExec_t x;
  cudaGraphInstantiate(&x, g, 0);
  const int flags[] = {1, 0, 1};
  for (int r = 0; r < 3; ++r) {
    cudaMemcpy(flag, &flags[r], sizeof(int), cudaMemcpyHostToDevice);
    cudaGraphLaunch(x, 0);
    cudaStreamSynchronize(0);
  }
  // graph 2: an if whose condition's default (1) is assigned at each launch, its body two runs
  // of body in a row (one description of the file's in this graph)
  cudaGraph_t g2;
  cudaGraphCreate(&g2, 0);
  cudaGraphConditionalHandle h2;
  cudaGraphConditionalHandleCreate(&h2, g2, 1, cudaGraphCondAssignDefault);
  cudaGraphNodeParams cp2 = {cudaGraphNodeTypeConditional};
  cp2.conditional.handle = h2;
  cp2.conditional.type = cudaGraphCondTypeIf;
  cp2.conditional.size = 1;
  cudaGraphNode_t in2;
  cudaGraphAddNode(&in2, g2, nullptr, nullptr, 0, &cp2);
  cudaGraphAddKernelNode(&b1, cp2.conditional.phGraph_out[0], nullptr, 0, &p);
  cudaGraphAddKernelNode(&b2, cp2.conditional.phGraph_out[0], &b1, 1, &p);
  cudaGraphExec_t x2;
  cudaGraphInstantiate(&x2, g2, 0);
  cudaGraphLaunch(x2, 0);
  cudaStreamSynchronize(0);
  // graph 3, as graphConditionalNodes' capturedWhileGraph: countdown, then a while whose body
  // is countdown again (same arguments), then body; left = 3: countdown runs 3 times
  cudaGraph_t g3;
  cudaGraphCreate(&g3, 0);
  cudaGraphConditionalHandle h3;
  cudaGraphConditionalHandleCreate(&h3, g3, 0, 0);
  void *count_args[] = {&left, &h3};
  cudaKernelNodeParams cd = {};
  cd.func = (void *)countdown;
  cd.gridDim = dim3(1);
  cd.blockDim = dim3(1);
  cd.kernelParams = count_args;
  cudaGraphNode_t an, wn, cn, dn;
  cudaGraphAddKernelNode(&an, g3, nullptr, 0, &cd);
  cudaGraphNodeParams cp3 = {cudaGraphNodeTypeConditional};
  cp3.conditional.handle = h3;
  cp3.conditional.type = cudaGraphCondTypeWhile;
  cp3.conditional.size = 1;
  cudaGraphAddNode(&wn, g3, &an, nullptr, 1, &cp3);
  cudaGraphAddKernelNode(&cn, cp3.conditional.phGraph_out[0], nullptr, 0, &cd);
  cudaGraphAddKernelNode(&dn, g3, &wn, 1, &p);
  cudaGraphExec_t x3;
  cudaGraphInstantiate(&x3, g3, 0);
  const int three = 3;
  cudaMemcpy(left, &three, sizeof(int), cudaMemcpyHostToDevice);
  cudaGraphLaunch(x3, 0);
  cudaStreamSynchronize(0);
  int hb[n];
  cudaMemcpy(hb, b, sizeof hb, cudaMemcpyDeviceToHost);
  printf("b %d %d\n", hb[0], hb[63]);
  return 0;
}
"""


def _graphs(stderr: str) -> list[dict]:
    """The dumped instantiations, in order: {graph path: [(type, [deps])]}."""
    out: list[dict] = []
    for m in re.finditer(r"gmprof-cpu graph (\S+) node (\d+) (\w+) deps \[([\d,]*)\]", stderr):
        at, i, kind, deps = m.group(1), int(m.group(2)), m.group(3), m.group(4)
        if at == "g" and i == 0:
            out.append({})
        nodes = out[-1].setdefault(at, [])
        assert len(nodes) == i
        nodes.append((kind, [int(d) for d in deps.split(",")] if deps else []))
    return out


def check_race(output: str, doc: dict) -> None:
    """RACE's counts, shared with the GPU test (test_graphs_gpu.py), where the program's own
    output says how often body ran (each run adds 1 to every b[i])."""
    runs = int(re.search(r"^b (\d+) \1$", output, re.M).group(1))
    kernels = {k["kernel"]: k for k in doc["kernels"]}
    # countdown: once before graph 3's loop and twice in it (left 3 -> 2 -> 1 -> 0), one read
    # and one write of *left each
    countdown = kernels["countdown"]
    assert countdown["run"]["launches"] == 3
    assert [(a["reads"], a["writes"]) for a in countdown["arrays"]
            if a["name"] == "left"] == [(3, 3)]
    # setter: one run a launch of graph 1, one read of flag[0] each
    setter = kernels["setter"]
    assert setter["run"]["launches"] == 3
    assert [(a["reads"], a["writes"]) for a in setter["arrays"] if a["name"] == "flag"] == [(3, 0)]
    # body: each run reads and writes b[i] once (n = 64, 2 blocks of 32 threads)
    body = kernels["body"]
    assert body["run"]["launches"] == runs
    arrays = {a["name"]: a for a in body["arrays"]}
    assert (arrays["b"]["reads"], arrays["b"]["writes"]) == (runs * 64, runs * 64)
    assert arrays["b"]["counts"] == [runs * 2] * 64


def test_in_place_nodes_keep_their_dependencies(tmp_path, need_gxx):
    (tmp_path / "r.cu").write_text(RACE)
    p = gmprof("run", "--json", "--mode", "basic", "r.cu", cwd=tmp_path, GMPROF_CPU_GRAPH_DUMP=1)
    # body ran in launches 1 and 3 of graph 1 (flag 1, 0, 1), twice in graph 2, once in graph 3:
    # b[i] = 5
    assert "b 5 5" in p.stderr
    g1, g2, g3 = _graphs(p.stderr)
    # graph 1: the program's setter and if node are still roots and the empty node depends on
    # the setter alone; gmprof added one node: the setter's fold, after it (nothing of the
    # file's follows the empty node, so no edge from the fold to it)
    assert g1["g"] == [("kernel", []), ("conditional", []), ("empty", [0]), ("graph", [0])]
    # the if body: body reads another description of the file than the setter (filled before the
    # launch), so its fill comes before it in the body (after the if node chose it), then its fold
    assert g1["g.1.0"] == [("kernel", [1]), ("graph", []), ("graph", [0])]
    # graph 2: body's two nodes read one description (filled before the launch): no fill; the
    # first's fold comes before the second (which counts into the counters it takes)
    assert g2["g"] == [("conditional", [])]
    assert g2["g.0.0"] == [("kernel", []), ("kernel", [0, 2]), ("graph", [0]), ("graph", [1])]
    # graph 3: countdown reads the description filled before the launch, and so does its copy
    # in the loop (no other description of the file can run before either): no fill; the
    # while node waits for the first countdown's fold (its body counts into the same
    # counters); body (another description) has its fill before it, after the while node
    assert g3["g"] == [("kernel", []), ("conditional", [0, 3]), ("kernel", [1, 4]),
                       ("graph", [0]), ("graph", [1]), ("graph", [2])]
    assert g3["g.1.0"] == [("kernel", []), ("graph", [0])]
    doc = json.loads(p.stdout)
    # graph 1's setter and if node have no order between them: the note says the counts of the
    # setter and the if body's kernel (another description) may be mixed where they ran at once;
    # graph 3's nodes are ordered: no note for countdown
    notes = doc["program"]["notes"]
    assert any("kernel nodes of setter and body" in n for n in notes), notes
    assert not any("countdown" in n for n in notes), notes
    check_race(p.stderr, doc)
