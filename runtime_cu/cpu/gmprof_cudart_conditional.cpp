// gmprof CPU backend: conditional graph nodes (included at the end of gmprof_cudart_graph.cpp,
// whose graphs, nodes and operations it uses).
//
// Stage: runtime, CPU backend, whole programs. A conditional node (cudaGraphAddNode with
// cudaGraphNodeTypeConditional) owns its body graphs; a kernel sets the node's condition with
// cudaGraphSetConditional through the handle the program passed it. An `if` runs its first body
// when the condition is non-zero (its second, if any, when zero), a `while` runs its body while
// the condition is non-zero, testing it before each run, a `switch` runs body n when the
// condition is n. The bodies are instantiated with the graph (their operations copied then, as
// CUDA instantiates them). A handle created with cudaGraphCondAssignDefault takes its default
// value at the start of each launch of an executable graph that holds it. cudaGraphAddNode
// takes kernel, empty and conditional nodes; cudaStreamBeginCaptureToGraph captures into a
// program's graph (a conditional node's body).

// a condition: the value kernels set, and the default a launch assigns
struct CondVar {
  unsigned value = 0;
  unsigned dflt = 0;
  bool assign = false;
  cudaGraph_t graph = nullptr;  // the graph it was created for
};

namespace {

std::vector<std::unique_ptr<CondVar>> &cond_vars() {
  static auto *v = new std::vector<std::unique_ptr<CondVar>>();
  return *v;  // kept for the process (CUDA has no call that destroys a handle)
}

CondVar *cond_var(cudaGraphConditionalHandle h) {
  return reinterpret_cast<CondVar *>(static_cast<uintptr_t>(h));
}

cudaError_t run_ops(const std::vector<GraphOp> &ops) {
  for (auto &op : ops) {
    cudaError_t err = op();
    if (err != cudaSuccess) return err;
  }
  return cudaSuccess;
}

void conditional_ops(cudaGraphNode_t n, std::vector<GraphOp> &out) {
  std::vector<std::vector<GraphOp>> bodies(n->bodies.size());
  for (size_t i = 0; i < n->bodies.size(); ++i) graph_ops(n->bodies[i], bodies[i]);
  CondVar *v = cond_var(n->cond.handle);
  const cudaGraphConditionalNodeType type = n->cond.type;
  out.push_back([bodies, v, type]() {
    if (!v || bodies.empty()) return cudaErrorInvalidValue;
    if (type == cudaGraphCondTypeWhile) {
      while (v->value) {
        cudaError_t err = run_ops(bodies[0]);
        if (err != cudaSuccess) return err;
      }
      return cudaSuccess;
    }
    if (type == cudaGraphCondTypeIf) {
      if (v->value) return run_ops(bodies[0]);
      return bodies.size() > 1 ? run_ops(bodies[1]) : cudaSuccess;
    }
    return v->value < bodies.size() ? run_ops(bodies[v->value]) : cudaSuccess;
  });
}

// the handles created for the graph or for the bodies in it that take a default at each launch
void conditional_defaults(cudaGraph_t g, std::vector<CondVar *> *out) {
  for (auto &v : cond_vars())
    if (v->graph == g && v->assign) out->push_back(v.get());
  for (auto &n : g->nodes)
    for (cudaGraph_t b : n->bodies) conditional_defaults(b, out);
}

GraphOp assign_defaults(const std::vector<CondVar *> &vars) {
  return [vars]() {
    for (CondVar *v : vars) v->value = v->dflt;
    return cudaSuccess;
  };
}

}  // namespace

extern "C" {

cudaError_t cudaGraphConditionalHandleCreate(cudaGraphConditionalHandle *handle, cudaGraph_t graph,
                                             unsigned int default_value, unsigned int flags) {
  if (!handle || !graph || (flags & ~(unsigned)cudaGraphCondAssignDefault))
    return record(cudaErrorInvalidValue);
  std::unique_ptr<CondVar> v(new CondVar());
  v->dflt = default_value;
  v->value = default_value;
  v->assign = (flags & cudaGraphCondAssignDefault) != 0;
  v->graph = graph;
  *handle = static_cast<cudaGraphConditionalHandle>(reinterpret_cast<uintptr_t>(v.get()));
  cond_vars().push_back(std::move(v));
  return cudaSuccess;
}

// (called by a kernel: the CPU backend runs one thread at a time)
void cudaGraphSetConditional(cudaGraphConditionalHandle handle, unsigned int value) {
  if (CondVar *v = cond_var(handle)) v->value = value;
}

cudaError_t cudaGraphAddNode(cudaGraphNode_t *node, cudaGraph_t graph, const cudaGraphNode_t *deps,
                             const cudaGraphEdgeData *, size_t n_deps,
                             struct cudaGraphNodeParams *p) {
  if (!node || !graph || !p) return record(cudaErrorInvalidValue);
  if (p->type == cudaGraphNodeTypeKernel) {
    cudaKernelNodeParams k;
    k.func = p->kernel.func;
    k.gridDim = p->kernel.gridDim;
    k.blockDim = p->kernel.blockDim;
    k.sharedMemBytes = p->kernel.sharedMemBytes;
    k.kernelParams = p->kernel.kernelParams;
    k.extra = p->kernel.extra;
    return cudaGraphAddKernelNode(node, graph, deps, n_deps, &k);
  }
  if (p->type == cudaGraphNodeTypeEmpty) return cudaGraphAddEmptyNode(node, graph, deps, n_deps);
  if (p->type != cudaGraphNodeTypeConditional) return record(cudaErrorNotSupported);
  cudaConditionalNodeParams &c = p->conditional;
  const unsigned size = c.size;
  if (!cond_var(c.handle) || !size || (c.type == cudaGraphCondTypeWhile && size != 1) ||
      (c.type == cudaGraphCondTypeIf && size > 2) || c.type > cudaGraphCondTypeSwitch)
    return record(cudaErrorInvalidValue);
  cudaGraphNode_t n = add_node(graph, cudaGraphNodeTypeConditional, deps, n_deps);
  n->cond = c;
  for (unsigned i = 0; i < size; ++i) n->bodies.push_back(new CUgraph_st());
  n->cond.phGraph_out = n->bodies.data();
  c.phGraph_out = n->bodies.data();  // the node's own array, valid while it lives
  *node = n;
  return cudaSuccess;
}

// a capture into the program's graph (a conditional node's body), after `deps` (none or one)
cudaError_t cudaStreamBeginCaptureToGraph(cudaStream_t stream, cudaGraph_t graph,
                                          const cudaGraphNode_t *deps, const cudaGraphEdgeData *,
                                          size_t n_deps, enum cudaStreamCaptureMode) {
  STICKY();
  if ((uintptr_t)stream <= 2 || !graph) return record(cudaErrorStreamCaptureUnsupported);
  if (n_deps > 1 || (n_deps && (!deps || !deps[0] || deps[0]->owner != graph)))
    return record(cudaErrorNotSupported);
  std::lock_guard<std::mutex> g(g_capture_lock);
  if (captures().count(stream)) return record(cudaErrorIllegalState);
  auto c = std::make_shared<Capture>();
  c->graph = graph;
  c->id = ++g_capture_ids;
  c->origin = stream;
  c->invalidated = false;
  c->to_graph = true;
  c->last = n_deps ? deps[0] : nullptr;
  captures()[stream] = c;
  return cudaSuccess;
}

// the capture's chain continues after the node given (one; the chain holds one latest node)
cudaError_t cudaStreamUpdateCaptureDependencies(cudaStream_t stream, cudaGraphNode_t *deps,
                                                const cudaGraphEdgeData *, size_t n_deps,
                                                unsigned int flags) {
  std::shared_ptr<Capture> c = capture_of(stream);
  if (!c) return record(cudaErrorIllegalState);
  if (n_deps > 1 || (n_deps && (!deps || !deps[0] || deps[0]->owner != c->graph)) ||
      (flags == cudaStreamAddCaptureDependencies && n_deps && c->last))
    return record(cudaErrorNotSupported);
  std::lock_guard<std::mutex> g(g_capture_lock);
  c->last = n_deps ? deps[0] : nullptr;
  return cudaSuccess;
}

}  // extern "C"
