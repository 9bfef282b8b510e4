// gmprof host runtime: launches into CUDA graphs (included by gmprof_host.cpp only, inside its
// namespace, after the launch path it uses).
//
// Stage: runtime, host side of whole programs. A program's graph keeps the nodes the program
// built: a selected launch of an instrumented kernel made during a stream capture, or added with
// cudaGraphAddKernelNode, is the original kernel node, marked (State::marks), so that
// cudaGraphGetNodes, cudaGraphNodeGetType, cudaGraphKernelNodeGetParams and the like answer what
// the program built. When the graph is instantiated, gmprof clones it and replaces each marked
// node of the copy by a child graph captured on its own stream (the description's fill, the
// instrumented kernel, the fold of its counters, profile_launch), and instantiates the copy: each
// replay counts. The executable's node operations name the program's nodes; gmprof translates
// them to its copy's (ExecGraph), and cudaGraphExecKernelNodeSetParams on a profiled node
// profiles the new parameters into a new child graph. Graph allocations (memory allocation nodes,
// cudaMallocAsync during a capture) are known objects from the instantiation on. A graph CUDA
// cannot clone (allocation, free or conditional nodes) is profiled in place instead
// (gmprof_host_in_place.h); one launched from the device runs as the program built it: its
// launches run unprofiled, counted under `captured`.
//
// The CUDA 12 and 13 signatures of the dependency queries differ (edge data): both are spelled.

namespace {

#if defined(GMPROF_CPU) || CUDART_VERSION >= 13000
#define GMPROF_EDGES nullptr,
#else
#define GMPROF_EDGES
#endif

std::vector<cudaGraphNode_t> graph_nodes(cudaGraph_t g) {
  size_t n = 0;
  if (cudaGraphGetNodes(g, nullptr, &n) != cudaSuccess) return {};
  std::vector<cudaGraphNode_t> out(n);
  if (n && cudaGraphGetNodes(g, out.data(), &n) != cudaSuccess) return {};
  out.resize(n);
  return out;
}

std::vector<cudaGraphNode_t> node_deps(cudaGraphNode_t node, bool dependents) {
  size_t n = 0;
  cudaError_t e = dependents ? cudaGraphNodeGetDependentNodes(node, nullptr, GMPROF_EDGES & n)
                             : cudaGraphNodeGetDependencies(node, nullptr, GMPROF_EDGES & n);
  if (e != cudaSuccess || !n) return {};
  std::vector<cudaGraphNode_t> out(n);
  e = dependents ? cudaGraphNodeGetDependentNodes(node, out.data(), GMPROF_EDGES & n)
                 : cudaGraphNodeGetDependencies(node, out.data(), GMPROF_EDGES & n);
  if (e != cudaSuccess) return {};
  out.resize(n);
  return out;
}

// The kernel a marked node holds now (the program may have set another function on it).
const Kernel *node_kernel(State &s, const Mark &mark, const cudaKernelNodeParams &p) {
  auto it = s.kernels.find(p.func);
  return it != s.kernels.end() ? &it->second : mark.k;
}

// A node's parameters as bytes (its arguments' by the kernel's parameter sizes).
std::string params_key(const Kernel *k, const cudaKernelNodeParams &p) {
  std::string key = hex(&p.func, sizeof p.func) + hex(&p.gridDim, sizeof p.gridDim) +
                    hex(&p.blockDim, sizeof p.blockDim) + std::to_string(p.sharedMemBytes);
  for (int i = 0; p.kernelParams && i < k->desc->n_params; ++i)
    key += ":" + hex(p.kernelParams[i], (size_t)k->desc->params[i].size);
  return key;
}

void release(ExecGraph &eg) {
  for (auto &kv : eg.children) cudaGraphDestroy(kv.second);
  eg.children.clear();
  for (cudaGraphExec_t x : eg.after) cudaGraphExecDestroy(x);
  eg.after.clear();
  if (eg.copy) cudaGraphDestroy(eg.copy);
  eg.copy = nullptr;
}

// The marked node's launch with these parameters, captured on gmprof's own stream into a new
// graph (the fill, the instrumented kernel, the fold; the original kernel where it cannot be
// profiled), counted under the launch number of the launch the node holds.
cudaError_t profiled_child(State &s, const Mark &mark, const cudaKernelNodeParams &p,
                           cudaGraph_t *child) {
  *child = nullptr;
  const Kernel *k = node_kernel(s, mark, p);
  if (!p.kernelParams && k->desc->n_params) return cudaErrorInvalidValue;
  Relaxed relaxed;
  cudaStream_t cs = nullptr;
  if (cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking) != cudaSuccess)
    return cudaGetLastError();
  cudaError_t err = cudaStreamBeginCapture(cs, cudaStreamCaptureModeRelaxed);
  if (err == cudaSuccess) {
    const Config c{p.gridDim, p.blockDim, p.sharedMemBytes, cs, nullptr, mark.cooperative};
    s.building = true;
    s.build_index = mark.index;
    if (k->desc->instrumented)
      err = profile_launch(s, *k, c, p.kernelParams, nullptr);
    else
      err = run_kernel(k->desc->native, k->desc->invoke_native, c, p.kernelParams, k->desc->name,
                       k->desc);
    s.building = false;
    cudaError_t end = cudaStreamEndCapture(cs, child);
    if (err == cudaSuccess) err = end;
    if (err != cudaSuccess && *child) {
      cudaGraphDestroy(*child);
      *child = nullptr;
    }
  }
  cudaStreamDestroy(cs);
  return err;
}

#include "gmprof_host_in_place.h"

// gmprof's copy of `graph` with its marked nodes profiled (eg->copy stays null where the graph
// has none), or, for a graph CUDA cannot clone, the graph itself profiled in place until
// restore_in_place; learns the graph's allocations.
cudaError_t instrumented_copy(State &s, cudaGraph_t graph, unsigned long long flags,
                              ExecGraph *eg) {
  const std::vector<cudaGraphNode_t> nodes = graph_nodes(graph);
  std::vector<cudaGraphNode_t> marked;
  bool uncloneable = false;
  for (cudaGraphNode_t n : nodes) {
    cudaGraphNodeType type;
    if (cudaGraphNodeGetType(n, &type) != cudaSuccess) {
      cudaGetLastError();
      continue;
    }
    if (type == cudaGraphNodeTypeMemAlloc) {
      cudaMemAllocNodeParams a;
      memset(&a, 0, sizeof a);
      if (cudaGraphMemAllocNodeGetParams(n, &a) == cudaSuccess && a.dptr)
        s.graph_allocs[(unsigned long long)(uintptr_t)a.dptr] = a.bytesize;
      else
        cudaGetLastError();
    }
    if (type == cudaGraphNodeTypeKernel && s.marks.count(n)) marked.push_back(n);
    // CUDA clones no graph with allocation, free or conditional nodes
    uncloneable = uncloneable || type == cudaGraphNodeTypeMemAlloc ||
                  type == cudaGraphNodeTypeMemFree || (int)type == 13;
  }
#if !defined(GMPROF_CPU)
  // a graph launched from the device holds kernel, copy and set nodes only: it runs as built
  if (flags & cudaGraphInstantiateFlagDeviceLaunch) return cudaSuccess;
#else
  (void)flags;
#endif
  if (uncloneable) {
    profile_graph_in_place(s, graph, eg);
    return cudaSuccess;
  }
  if (marked.empty()) return cudaSuccess;
  cudaGraph_t copy = nullptr;
  cudaError_t err = cudaGraphClone(&copy, graph);
  if (err != cudaSuccess) return err;
  for (cudaGraphNode_t n : nodes) {
    cudaGraphNode_t c = nullptr;
    if (cudaGraphNodeFindInClone(&c, n, copy) == cudaSuccess) eg->nodes[n] = c;
    else cudaGetLastError();
  }
  for (cudaGraphNode_t n : marked) {
    const Mark mark = s.marks[n];
    cudaGraphNode_t c = eg->nodes[n];
    cudaKernelNodeParams p;
    memset(&p, 0, sizeof p);
    cudaGraph_t child = nullptr;
    if (!c || cudaGraphKernelNodeGetParams(c, &p) != cudaSuccess ||
        profiled_child(s, mark, p, &child) != cudaSuccess) {
      cudaGetLastError();
      continue;  // left as it was: it runs unprofiled
    }
    const std::vector<cudaGraphNode_t> deps = node_deps(c, false), after = node_deps(c, true);
    cudaGraphNode_t replaced = nullptr;
    err = cudaGraphAddChildGraphNode(&replaced, copy, deps.data(), deps.size(), child);
    eg->children[std::make_pair(n, params_key(node_kernel(s, mark, p), p))] = child;
    for (size_t i = 0; err == cudaSuccess && i < after.size(); ++i)
      err = cudaGraphAddDependencies(copy, &replaced, &after[i], GMPROF_EDGES 1);
    if (err == cudaSuccess) err = cudaGraphDestroyNode(c);
    if (err != cudaSuccess) break;
    eg->nodes[n] = replaced;
    eg->profiled[n] = mark;
  }
  if (err != cudaSuccess) {
    eg->copy = copy;
    release(*eg);
    eg->nodes.clear();
    eg->profiled.clear();
    return err;
  }
  eg->copy = copy;
  for (auto &kv : eg->profiled) s.marks[kv.first].profiled = true;
  return cudaSuccess;
}

// The node of the executable's graph that stands for the program's node.
cudaGraphNode_t exec_node(State &s, cudaGraphExec_t exec, cudaGraphNode_t node) {
  auto it = s.execs.find(exec);
  if (it == s.execs.end()) return node;
  auto n = it->second.nodes.find(node);
  return n == it->second.nodes.end() ? node : n->second;
}

cudaGraphNode_t program_node(const ExecGraph &eg, cudaGraphNode_t node) {
  for (auto &kv : eg.nodes)
    if (kv.second == node) return kv.first;
  return node;
}

}  // namespace

// A graph replays fills of the descriptions of the modules it captured launches of: it waits,
// on the device, for the other streams' launches that read them, as a fill does (fill_for).
cudaError_t graph_launch(cudaGraphExec_t exec, cudaStream_t stream) {
  State &s = state();
  std::lock_guard<std::mutex> guard(s.lock);
  const int device = current_device();
  for (auto &kv : s.mods) {
    if (!kv.second.graphs || kv.first.second != device) continue;
    for (auto &u : kv.second.users)
      if (u.first.first != stream && u.first.second == 0 &&
          cudaStreamWaitEvent(stream, u.second.ev, 0) != cudaSuccess)
        cudaGetLastError();
  }
  // a graph profiled in place: its descriptions filled before it, in stream order, so that no
  // node of gmprof's precedes the program's nodes in the graph (launched into a capture, the
  // fills are captured before it; not on a stream whose capture status cannot be asked)
  auto eg = s.execs.find(exec);
  unsigned long long capture = 0;
  bool unknown = false;
  if (eg != s.execs.end() && !eg->second.fills.empty() &&
      (capture_of(stream, &capture, &unknown), !unknown))
    for (auto &f : eg->second.fills)
      if (f.first->fill(f.second, sizeof(Launch), stream) != cudaSuccess) cudaGetLastError();
  cudaError_t err = cudaGraphLaunch(exec, stream);
  // (a graph with allocation or free nodes: its profiled nodes' folds after it, gmprof_host_
  // in_place.h)
  if (err == cudaSuccess && eg != s.execs.end())
    for (cudaGraphExec_t x : eg->second.after)
      if (cudaGraphLaunch(x, stream) != cudaSuccess) cudaGetLastError();
  for (auto &kv : s.mods) {
    if (!kv.second.graphs || kv.first.second != device) continue;
    for (auto it = kv.second.users.begin(); it != kv.second.users.end();) {
      if (it->first.first != stream && it->first.second == 0) {
        s.pools[device].push_back(it->second.ev);
        it = kv.second.users.erase(it);
      } else {
        ++it;
      }
    }
    note_user(s, kv.first.first, stream, 0);
    kv.second.current = nullptr;
  }
  return err;
}

// A kernel node added to a graph: the node the program asked for, marked when it holds a
// selected launch of an instrumented kernel.
namespace {
// A kernel node the program adds counts as a launch: the kernel to mark it with where it is a
// selected launch of an instrumented kernel and graphs are profiled (else null).
const Kernel *node_selected(State &s, const void *func) {
  auto it = s.kernels.find(func);
  const Kernel *k = it == s.kernels.end() ? nullptr : &it->second;
  const char *name = k ? k->desc->name : nullptr;
  const bool selected = launch_selected(s, name);
  const bool instrumented = k && k->desc->instrumented;
  if (selected && !instrumented && s.registered_exit)
    ++s.not_instrumented[name ? name : "(a kernel gmprof did not translate)"];
  if (selected && instrumented && !s.graphs) ++s.captured[name];
  return selected && instrumented && s.graphs ? k : nullptr;
}
}  // namespace

cudaError_t graph_add_kernel_node(cudaGraphNode_t *node, cudaGraph_t graph,
                                  const cudaGraphNode_t *deps, size_t n_deps,
                                  const cudaKernelNodeParams *p) {
  if (!p || !node) return cudaErrorInvalidValue;
  State &s = state();
  std::lock_guard<std::mutex> guard(s.lock);
  load_options(s);
  const Kernel *k = node_selected(s, p->func);
  cudaError_t err = cudaGraphAddKernelNode(node, graph, deps, n_deps, p);
  if (err == cudaSuccess && k) s.marks[*node] = Mark{k, s.seen - 1, graph, false, false};
  return err;
}

#if defined(GMPROF_CPU) || CUDART_VERSION >= 12020
namespace {
// cudaGraphAddNode's node: a kernel node marked as graph_add_kernel_node's, a conditional
// node's body graphs learnt (gmprof_host_in_place.h profiles the marked nodes in them).
cudaError_t add_node_marked(cudaGraphNode_t *node, cudaGraph_t graph, cudaGraphNodeParams *p,
                            const std::function<cudaError_t()> &add) {
  if (!p || !node) return add();
  State &s = state();
  std::lock_guard<std::mutex> guard(s.lock);
  load_options(s);
  const Kernel *k =
      p->type == cudaGraphNodeTypeKernel ? node_selected(s, p->kernel.func) : nullptr;
  cudaError_t err = add();
  if (err != cudaSuccess) return err;
  if (k) s.marks[*node] = Mark{k, s.seen - 1, graph, false, false};
#if defined(GMPROF_CPU) || CUDART_VERSION >= 12030
  if ((int)p->type == 13 && p->conditional.phGraph_out)
    s.bodies[*node].assign(p->conditional.phGraph_out,
                           p->conditional.phGraph_out + p->conditional.size);
#endif
  return err;
}
}  // namespace
#endif

#if defined(GMPROF_CPU) || CUDART_VERSION >= 12030
cudaError_t graph_add_node(cudaGraphNode_t *node, cudaGraph_t graph, const cudaGraphNode_t *deps,
                           const cudaGraphEdgeData *edges, size_t n_deps,
                           cudaGraphNodeParams *p) {
  return add_node_marked(node, graph, p, [&]() {
#if defined(GMPROF_CPU) || CUDART_VERSION >= 13000
    return cudaGraphAddNode(node, graph, deps, edges, n_deps, p);
#else
    return cudaGraphAddNode_v2(node, graph, deps, edges, n_deps, p);
#endif
  });
}
#endif

#if !defined(GMPROF_CPU) && CUDART_VERSION >= 12020 && CUDART_VERSION < 13000
cudaError_t graph_add_node(cudaGraphNode_t *node, cudaGraph_t graph, const cudaGraphNode_t *deps,
                           size_t n_deps, cudaGraphNodeParams *p) {
  return add_node_marked(node, graph, p,
                         [&]() { return cudaGraphAddNode(node, graph, deps, n_deps, p); });
}
#endif

// Instantiation: of gmprof's copy of the graph where it has marked nodes.
cudaError_t graph_instantiate_with(
    cudaGraphExec_t *exec, cudaGraph_t graph, unsigned long long flags,
    const std::function<cudaError_t(cudaGraphExec_t *, cudaGraph_t)> &instantiate) {
  if (!exec || !graph) return instantiate(exec, graph);
  State &s = state();
  std::lock_guard<std::mutex> guard(s.lock);
  load_options(s);
  ExecGraph eg;
  // (gmprof's copy failed: the program's graph, unprofiled)
  if (instrumented_copy(s, graph, flags, &eg) != cudaSuccess) cudaGetLastError();
  cudaError_t err = instantiate(exec, eg.copy ? eg.copy : graph);
  if (eg.in_place) restore_in_place(s, &eg, err == cudaSuccess);
  if (err == cudaSuccess && (eg.copy || !eg.profiled.empty())) s.execs[*exec] = eg;
  else release(eg);
  return err;
}

cudaError_t graph_instantiate(cudaGraphExec_t *exec, cudaGraph_t graph,
                              unsigned long long flags) {
  return graph_instantiate_with(exec, graph, flags, [flags](cudaGraphExec_t *e, cudaGraph_t g) {
    return cudaGraphInstantiate(e, g, flags);
  });
}

cudaError_t graph_instantiate_with_flags(cudaGraphExec_t *exec, cudaGraph_t graph,
                                         unsigned long long flags) {
  return graph_instantiate_with(exec, graph, flags, [flags](cudaGraphExec_t *e, cudaGraph_t g) {
    return cudaGraphInstantiateWithFlags(e, g, flags);
  });
}

#if !defined(GMPROF_CPU)
cudaError_t graph_instantiate_with_params(cudaGraphExec_t *exec, cudaGraph_t graph,
                                          cudaGraphInstantiateParams *params) {
  const unsigned long long flags = params ? params->flags : 0;
  return graph_instantiate_with(exec, graph, flags, [params](cudaGraphExec_t *e, cudaGraph_t g) {
    return cudaGraphInstantiateWithParams(e, g, params);
  });
}
#endif

// New parameters for a node of an executable graph: a profiled node's are profiled into a new
// child graph of the same shape.
cudaError_t graph_exec_kernel_node_set_params(cudaGraphExec_t exec, cudaGraphNode_t node,
                                              const cudaKernelNodeParams *p) {
  State &s = state();
  std::lock_guard<std::mutex> guard(s.lock);
  auto it = s.execs.find(exec);
  if (it == s.execs.end() || !p || !it->second.profiled.count(node))
    return cudaGraphExecKernelNodeSetParams(exec, exec_node(s, exec, node), p);
  ExecGraph &eg = it->second;
  if (eg.in_place) {
    // the fill and fold around the node cannot be changed (their nodes left the program's
    // graph): the node runs the program's parameters, unprofiled, and the note says so
    const std::string why = std::string("a kernel node of ") + eg.profiled[node].k->desc->name +
                            " in a graph profiled in place (allocation, free or conditional "
                            "nodes) was given new parameters in its executable graph: its later "
                            "runs ran unprofiled, yet count among its launches";
    if (std::find(s.notes.begin(), s.notes.end(), why) == s.notes.end()) s.notes.push_back(why);
    return cudaGraphExecKernelNodeSetParams(exec, node, p);
  }
  const Mark mark = eg.profiled[node];
  const auto key = std::make_pair(node, params_key(node_kernel(s, mark, *p), *p));
  auto known = eg.children.find(key);
  cudaGraph_t child = known == eg.children.end() ? nullptr : known->second;
  if (!child) {
    cudaError_t err = profiled_child(s, mark, *p, &child);
    if (err != cudaSuccess) return err;
    eg.children[key] = child;
  }
  return cudaGraphExecChildGraphNodeSetParams(exec, eg.nodes[node], child);
}

cudaError_t graph_exec_child_graph_node_set_params(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                   cudaGraph_t child) {
  State &s = state();
  std::lock_guard<std::mutex> guard(s.lock);
  return cudaGraphExecChildGraphNodeSetParams(exec, exec_node(s, exec, node), child);
}

// cudaGraphExecUpdate from a program's graph: from gmprof's copy of it, where it has marked nodes
// (the result names the program's nodes). The executable's nodes are still named by the graph it
// was instantiated from (CUDA's rule): its ExecGraph stays; the new copy goes once used.
cudaError_t graph_exec_update(cudaGraphExec_t exec, cudaGraph_t graph,
                              cudaGraphExecUpdateResultInfo *info) {
  State &s = state();
  std::lock_guard<std::mutex> guard(s.lock);
  ExecGraph eg;
  if (instrumented_copy(s, graph, 0, &eg) != cudaSuccess) cudaGetLastError();
  cudaError_t err = cudaGraphExecUpdate(exec, eg.copy ? eg.copy : graph, info);
  if (eg.in_place) restore_in_place(s, &eg, err == cudaSuccess);
  // (the descriptions filled at launch are the new graph's)
  auto it = s.execs.find(exec);
  if (eg.in_place && err == cudaSuccess && it != s.execs.end() && it->second.in_place) {
    it->second.fills = eg.fills;
    std::swap(it->second.after, eg.after);  // (the old folds go with eg, below)
  }
  if (info && eg.copy) {
    info->errorNode = program_node(eg, info->errorNode);
    info->errorFromNode = program_node(eg, info->errorFromNode);
  }
  release(eg);
  return err;
}

cudaError_t graph_exec_destroy(cudaGraphExec_t exec) {
  State &s = state();
  std::lock_guard<std::mutex> guard(s.lock);
  cudaError_t err = cudaGraphExecDestroy(exec);
  auto it = s.execs.find(exec);
  if (it != s.execs.end()) {
    release(it->second);
    s.execs.erase(it);
  }
  return err;
}

// A clone of a graph: its copies of marked nodes are marked.
cudaError_t graph_clone(cudaGraph_t *clone, cudaGraph_t graph) {
  State &s = state();
  std::lock_guard<std::mutex> guard(s.lock);
  cudaError_t err = cudaGraphClone(clone, graph);
  if (err != cudaSuccess) return err;
  for (cudaGraphNode_t n : graph_nodes(graph)) {
    auto m = s.marks.find(n);
    cudaGraphNode_t c = nullptr;
    if (m == s.marks.end()) continue;
    if (cudaGraphNodeFindInClone(&c, n, *clone) != cudaSuccess) {
      cudaGetLastError();
      continue;
    }
    Mark copy = m->second;
    copy.graph = *clone;
    copy.profiled = false;
    s.marks[c] = copy;
  }
  return err;
}

// A destroyed graph's nodes are no longer marked (their addresses may come back); those no
// instantiation profiled count under `captured` (a conditional node's bodies go with it).
static void unmark(State &s, cudaGraphNode_t node) {
  auto b = s.bodies.find(node);
  if (b != s.bodies.end()) {
    const std::vector<cudaGraph_t> bodies = b->second;
    s.bodies.erase(b);
    for (cudaGraph_t body : bodies)
      for (cudaGraphNode_t n : graph_nodes(body)) unmark(s, n);
  }
  auto m = s.marks.find(node);
  if (m == s.marks.end()) return;
  if (!m->second.profiled) ++s.captured[m->second.k->desc->name];
  s.marks.erase(m);
}

cudaError_t graph_destroy(cudaGraph_t graph) {
  State &s = state();
  std::lock_guard<std::mutex> guard(s.lock);
  for (cudaGraphNode_t n : graph_nodes(graph)) unmark(s, n);
  return cudaGraphDestroy(graph);
}

cudaError_t graph_destroy_node(cudaGraphNode_t node) {
  State &s = state();
  std::lock_guard<std::mutex> guard(s.lock);
  unmark(s, node);
  return cudaGraphDestroyNode(node);
}

#if !defined(GMPROF_CPU)
// The executable's other node operations name the program's nodes: translated to gmprof's copy.
#define GMPROF_EXEC_NODE(name, real, ...)                                       \
  cudaError_t name(cudaGraphExec_t exec, cudaGraphNode_t node, __VA_ARGS__ a) { \
    State &s = state();                                                         \
    std::lock_guard<std::mutex> guard(s.lock);                                  \
    return real(exec, exec_node(s, exec, node), a);                             \
  }
GMPROF_EXEC_NODE(graph_exec_memcpy_node_set_params, cudaGraphExecMemcpyNodeSetParams,
                 const cudaMemcpy3DParms *)
GMPROF_EXEC_NODE(graph_exec_memset_node_set_params, cudaGraphExecMemsetNodeSetParams,
                 const cudaMemsetParams *)
GMPROF_EXEC_NODE(graph_exec_host_node_set_params, cudaGraphExecHostNodeSetParams,
                 const cudaHostNodeParams *)
GMPROF_EXEC_NODE(graph_exec_event_record_node_set_event, cudaGraphExecEventRecordNodeSetEvent,
                 cudaEvent_t)
GMPROF_EXEC_NODE(graph_exec_event_wait_node_set_event, cudaGraphExecEventWaitNodeSetEvent,
                 cudaEvent_t)
GMPROF_EXEC_NODE(graph_node_get_enabled, cudaGraphNodeGetEnabled, unsigned int *)
#undef GMPROF_EXEC_NODE

// (a node profiled in place keeps the fill and fold around it: disabled, its skipped runs still
// fold, and count among its launches: the note says so)
cudaError_t graph_node_set_enabled(cudaGraphExec_t exec, cudaGraphNode_t node, unsigned int on) {
  State &s = state();
  std::lock_guard<std::mutex> guard(s.lock);
  auto it = s.execs.find(exec);
  if (!on && it != s.execs.end() && it->second.in_place && it->second.profiled.count(node)) {
    const std::string why = std::string("a kernel node of ") +
                            it->second.profiled[node].k->desc->name +
                            " in a graph profiled in place was disabled in its executable graph "
                            "(cudaGraphNodeSetEnabled): the runs it skipped count among its "
                            "launches";
    if (std::find(s.notes.begin(), s.notes.end(), why) == s.notes.end()) s.notes.push_back(why);
  }
  return cudaGraphNodeSetEnabled(exec, exec_node(s, exec, node), on);
}

cudaError_t graph_exec_memcpy_node_set_params_1d(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                 void *dst, const void *src, size_t count,
                                                 cudaMemcpyKind kind) {
  State &s = state();
  std::lock_guard<std::mutex> guard(s.lock);
  return cudaGraphExecMemcpyNodeSetParams1D(exec, exec_node(s, exec, node), dst, src, count,
                                            kind);
}
#endif

#undef GMPROF_EDGES
