// gmprof CPU backend: CUDA graphs and stream capture for whole programs (included at the end of
// gmprof_cudart.cpp, whose helpers it uses).
//
// Stage: runtime, CPU backend, whole programs. Streams are synchronous here, so a graph runs its
// nodes one after another, in a topological order of its edges (among the nodes ready, the one
// added first). While a stream captures (cudaStreamBeginCapture), the asynchronous operations
// enqueued on it (copies, sets, host functions, kernel launches routed by gmprof's host runtime)
// are recorded as nodes instead of running, each depending on the capture's previous node (a
// chain: one legal order of what the streams enqueued); cudaGraphInstantiate copies the
// operations in that order and cudaGraphLaunch runs them. A stream that waits on an event
// recorded in a capture joins that capture (fork and join), as on a GPU. Nodes are what the
// program built, as a GPU keeps them: their type, dependencies, a kernel node's parameters (its
// argument bytes copied; the sizes and the function that runs it come from gmprof's host runtime,
// gmprof_cudart_set_kernel_hooks), a graph allocation's address; graphs can be cloned, and an
// executable graph's kernel and child-graph nodes given new parameters. Conditional nodes (if,
// while, switch) are in gmprof_cudart_conditional.cpp.
#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

typedef std::function<cudaError_t()> GraphOp;

// a kernel node's launch: its parameters, with the argument bytes it owns
struct KernelLaunch {
  cudaKernelNodeParams p{};
  void (*invoker)(void **) = nullptr;
  int cooperative = 0;
  const char *name = nullptr;
  std::vector<std::vector<unsigned char>> bytes;
  std::vector<void *> args;
  void own() {  // args point at this launch's own copies
    args.clear();
    for (auto &b : bytes) args.push_back(b.data());
    args.push_back(nullptr);
    p.kernelParams = args.data();
  }
};

struct CUgraphNode_st {
  cudaGraphNodeType type = cudaGraphNodeTypeEmpty;
  cudaGraph_t owner = nullptr;
  std::vector<cudaGraphNode_t> deps;
  std::vector<GraphOp> ops;                // memcpy, memset, host nodes (and captured ones)
  std::shared_ptr<KernelLaunch> kernel;    // kernel nodes
  cudaGraph_t child = nullptr;             // child-graph nodes: the node's own copy
  cudaMemAllocNodeParams alloc{};          // graph allocations
  cudaConditionalNodeParams cond{};        // conditional nodes: their handle, type and size,
  std::vector<cudaGraph_t> bodies;         // and their body graphs (the node's own)
  ~CUgraphNode_st();
};
struct CUgraph_st {
  std::vector<std::unique_ptr<CUgraphNode_st>> nodes;
  std::map<cudaGraphNode_t, cudaGraphNode_t> cloned_from;  // original -> this graph's node
};
CUgraphNode_st::~CUgraphNode_st() {
  delete child;
  for (cudaGraph_t b : bodies) delete b;
}
// one node of an executable graph: the instantiated graph's node (a handle only: the graph may
// be gone), what it was, and its operations (a child graph's: all of them)
struct ExecStep {
  cudaGraphNode_t node;
  cudaGraphNodeType type;
  const void *func;    // a kernel node's function
  size_t child_nodes;  // a child-graph node's graph's nodes
  std::vector<GraphOp> ops;
};
struct CondVar;
struct CUgraphExec_st {
  std::vector<ExecStep> steps;
  std::vector<CondVar *> defaults;  // conditions given their default value at each launch
};

// gmprof's host runtime: how to run a kernel by its address, and its arguments' sizes
static cudaError_t (*g_run_kernel)(const void *func, void (*invoker)(void **), void **args,
                                   dim3 grid, dim3 block, size_t shared, int cooperative,
                                   const char *name) = nullptr;
static int (*g_kernel_info)(const void *func, void (**invoker)(void **), size_t *sizes, int max,
                            const char **name) = nullptr;

void gmprof_cudart_set_kernel_hooks(
    cudaError_t (*run)(const void *, void (*)(void **), void **, dim3, dim3, size_t, int,
                       const char *),
    int (*info)(const void *, void (**)(void **), size_t *, int, const char **)) {
  g_run_kernel = run;
  g_kernel_info = info;
}

namespace {

struct Capture {
  cudaGraph_t graph;
  unsigned long long id;
  cudaStream_t origin;
  bool invalidated;
  cudaGraphNode_t last = nullptr;  // the capture's latest node: the next one depends on it
  bool to_graph = false;           // cudaStreamBeginCaptureToGraph: the graph is the program's
};

std::mutex g_capture_lock;
std::map<cudaStream_t, std::shared_ptr<Capture>> &captures() {
  static auto *m = new std::map<cudaStream_t, std::shared_ptr<Capture>>();
  return *m;
}
std::map<cudaEvent_t, std::shared_ptr<Capture>> &capture_events() {
  static auto *m = new std::map<cudaEvent_t, std::shared_ptr<Capture>>();
  return *m;
}
unsigned long long g_capture_ids = 0;
thread_local cudaStreamCaptureMode g_capture_mode = cudaStreamCaptureModeGlobal;

std::shared_ptr<Capture> capture_of(cudaStream_t stream) {
  std::lock_guard<std::mutex> g(g_capture_lock);
  auto it = captures().find(stream);
  return it == captures().end() ? nullptr : it->second;
}

cudaGraphNode_t add_node(cudaGraph_t graph, cudaGraphNodeType type, const cudaGraphNode_t *deps,
                         size_t n_deps) {
  graph->nodes.emplace_back(new CUgraphNode_st());
  cudaGraphNode_t n = graph->nodes.back().get();
  n->type = type;
  n->owner = graph;
  for (size_t i = 0; deps && i < n_deps; ++i) n->deps.push_back(deps[i]);
  return n;
}

// a node added to the capture's graph, after the capture's latest
cudaGraphNode_t capture_node(Capture &c, cudaGraphNodeType type) {
  cudaGraphNode_t n = add_node(c.graph, type, c.last ? &c.last : nullptr, c.last ? 1 : 0);
  c.last = n;
  return n;
}

// Kahn's algorithm, the ready node added first going first, where a node counts as added when
// the first node it leads to was (a node added later with an edge to an earlier one, as gmprof's
// fill before a program's node, runs where that node would have: a program's unordered nodes
// keep their order)
std::vector<cudaGraphNode_t> topological(cudaGraph_t graph) {
  const size_t n = graph->nodes.size();
  std::map<cudaGraphNode_t, size_t> index;
  for (size_t i = 0; i < n; ++i) index[graph->nodes[i].get()] = i;
  std::vector<size_t> waiting(n, 0);
  std::vector<std::vector<size_t>> after(n);
  for (size_t i = 0; i < n; ++i)
    for (cudaGraphNode_t d : graph->nodes[i]->deps) {
      auto it = index.find(d);
      if (it == index.end()) continue;
      ++waiting[i];
      after[it->second].push_back(i);
    }
  std::vector<size_t> rank(n, n);  // the earliest node among it and those after it
  std::function<size_t(size_t)> rank_of = [&](size_t i) {
    if (rank[i] < n) return rank[i];
    rank[i] = i;  // (a cycle, which this API cannot build, stops here)
    size_t r = i;
    for (size_t j : after[i]) r = std::min(r, rank_of(j));
    return rank[i] = r;
  };
  std::set<std::pair<size_t, size_t>> ready;
  for (size_t i = 0; i < n; ++i)
    if (!waiting[i]) ready.insert(std::make_pair(rank_of(i), i));
  std::vector<cudaGraphNode_t> order;
  while (!ready.empty()) {
    const size_t i = ready.begin()->second;
    ready.erase(ready.begin());
    order.push_back(graph->nodes[i].get());
    for (size_t j : after[i])
      if (--waiting[j] == 0) ready.insert(std::make_pair(rank_of(j), j));
  }
  return order;  // (short of n: a cycle, which this API cannot build)
}

GraphOp kernel_op(std::shared_ptr<KernelLaunch> k) {
  return [k]() {
    if (!g_run_kernel || !k->invoker) return cudaErrorInvalidDeviceFunction;
    return g_run_kernel(k->p.func, k->invoker, k->args.data(), k->p.gridDim, k->p.blockDim,
                        k->p.sharedMemBytes, k->cooperative, k->name);
  };
}

void node_ops(cudaGraphNode_t n, std::vector<GraphOp> &out);
// (gmprof_cudart_conditional.cpp)
void conditional_ops(cudaGraphNode_t n, std::vector<GraphOp> &out);
void conditional_defaults(cudaGraph_t g, std::vector<CondVar *> *out);
GraphOp assign_defaults(const std::vector<CondVar *> &vars);

void graph_ops(cudaGraph_t g, std::vector<GraphOp> &out) {
  for (cudaGraphNode_t n : topological(g)) node_ops(n, out);
}

void node_ops(cudaGraphNode_t n, std::vector<GraphOp> &out) {
  if (n->kernel) out.push_back(kernel_op(n->kernel));
  if (n->child) graph_ops(n->child, out);
  if (n->type == cudaGraphNodeTypeConditional) conditional_ops(n, out);
  out.insert(out.end(), n->ops.begin(), n->ops.end());
}

// a kernel launch from the node parameters a program passes (arguments copied now, as CUDA does)
cudaError_t kernel_launch(const cudaKernelNodeParams *p, std::shared_ptr<KernelLaunch> *out) {
  if (!p || !p->func) return cudaErrorInvalidValue;
  auto k = std::make_shared<KernelLaunch>();
  size_t sizes[256];
  const int n = g_kernel_info ? g_kernel_info(p->func, &k->invoker, sizes, 256, &k->name) : -1;
  if (n < 0) return cudaErrorInvalidDeviceFunction;
  if (n > 0 && !p->kernelParams) return cudaErrorInvalidValue;
  k->p = *p;
  for (int i = 0; i < n; ++i) {
    const unsigned char *b = static_cast<const unsigned char *>(p->kernelParams[i]);
    k->bytes.emplace_back(b, b + sizes[i]);
  }
  k->own();
  *out = k;
  return cudaSuccess;
}

cudaGraph_t clone_graph(cudaGraph_t g, std::map<cudaGraphNode_t, cudaGraphNode_t> *map) {
  cudaGraph_t c = new CUgraph_st();
  for (auto &n : g->nodes) {
    c->nodes.emplace_back(new CUgraphNode_st());
    cudaGraphNode_t m = c->nodes.back().get();
    (*map)[n.get()] = m;
    m->type = n->type;
    m->owner = c;
    m->ops = n->ops;
    if (n->kernel) {
      m->kernel = std::make_shared<KernelLaunch>(*n->kernel);
      m->kernel->own();
    }
    std::map<cudaGraphNode_t, cudaGraphNode_t> inner;
    if (n->child) m->child = clone_graph(n->child, &inner);
    m->alloc = n->alloc;
  }
  for (size_t i = 0; i < g->nodes.size(); ++i)
    for (cudaGraphNode_t d : g->nodes[i]->deps) c->nodes[i]->deps.push_back((*map)[d]);
  return c;
}

}  // namespace

// the hooks gmprof_cudart.cpp's stream operations call
bool gmprof_capture_event_record(cudaEvent_t event, cudaStream_t stream) {
  std::shared_ptr<Capture> c = capture_of(stream);
  std::lock_guard<std::mutex> g(g_capture_lock);
  if (c)
    capture_events()[event] = c;
  else
    capture_events().erase(event);
  return (bool)c;
}

void gmprof_capture_wait(cudaStream_t stream, cudaEvent_t event) {
  std::lock_guard<std::mutex> g(g_capture_lock);
  auto it = capture_events().find(event);
  if (it == capture_events().end()) return;
  auto &m = captures();
  if (!m.count(stream) && it->second->origin && m.count(it->second->origin))
    m[stream] = it->second;  // the stream joins the capture
}

// Is the stream capturing? (gmprof's host runtime asks before it runs a kernel.)
int gmprof_cudart_capturing(cudaStream_t stream) { return capture_of(stream) ? 1 : 0; }

// Records an operation into the graph the stream captures into.
cudaError_t gmprof_cudart_capture_add(cudaStream_t stream, std::function<cudaError_t()> op) {
  std::shared_ptr<Capture> c = capture_of(stream);
  if (!c) return op();
  capture_node(*c, cudaGraphNodeTypeHost)->ops.push_back(std::move(op));
  return cudaSuccess;
}

// Records a kernel launch into the graph the stream captures into: a kernel node with the
// launch's parameters (the argument bytes copied) that runs through `invoker`.
cudaError_t gmprof_cudart_capture_kernel(cudaStream_t stream, const void *func,
                                         void (*invoker)(void **), void **args,
                                         const size_t *sizes, int n, dim3 grid, dim3 block,
                                         size_t shared, int cooperative, const char *name) {
  std::shared_ptr<Capture> c = capture_of(stream);
  if (!c) return cudaErrorIllegalState;
  auto k = std::make_shared<KernelLaunch>();
  k->p.func = const_cast<void *>(func);
  k->p.gridDim = grid;
  k->p.blockDim = block;
  k->p.sharedMemBytes = (unsigned)shared;
  k->invoker = invoker;
  k->cooperative = cooperative;
  k->name = name;
  for (int i = 0; i < n; ++i) {
    const unsigned char *b = static_cast<const unsigned char *>(args[i]);
    k->bytes.emplace_back(b, b + sizes[i]);
  }
  k->own();
  capture_node(*c, cudaGraphNodeTypeKernel)->kernel = k;
  return cudaSuccess;
}

// A synchronous call on a capturing stream invalidates the capture, as on a GPU.
cudaError_t gmprof_capture_forbid(cudaStream_t stream) {
  std::shared_ptr<Capture> c = capture_of(stream);
  if (!c) return cudaSuccess;
  c->invalidated = true;
  return record(cudaErrorStreamCaptureUnsupported);
}

cudaError_t gmprof_cudart_symbol_copy_async(void *symbol, size_t symbol_bytes, void *dst,
                                            const void *src, size_t count, size_t offset, int to,
                                            cudaStream_t stream) {
  if (!gmprof_cudart_capturing(stream))
    return gmprof_cudart_symbol_copy(symbol, symbol_bytes, dst, src, count, offset, to);
  return gmprof_cudart_capture_add(stream, [=]() {
    return gmprof_cudart_symbol_copy(symbol, symbol_bytes, dst, src, count, offset, to);
  });
}

extern "C" {

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode) {
  STICKY();
  if ((uintptr_t)stream <= 2) return record(cudaErrorStreamCaptureUnsupported);
  std::lock_guard<std::mutex> g(g_capture_lock);
  if (captures().count(stream)) return record(cudaErrorIllegalState);
  auto c = std::make_shared<Capture>();
  c->graph = new CUgraph_st();
  c->id = ++g_capture_ids;
  c->origin = stream;
  c->invalidated = false;
  captures()[stream] = c;
  return cudaSuccess;
}

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *graph) {
  std::lock_guard<std::mutex> g(g_capture_lock);
  auto it = captures().find(stream);
  if (it == captures().end()) return record(cudaErrorIllegalState);
  std::shared_ptr<Capture> c = it->second;
  if (!graph && !c->to_graph) return record(cudaErrorInvalidValue);
  if (c->origin != stream) return record(cudaErrorStreamCaptureUnmatched);
  for (auto i = captures().begin(); i != captures().end();)
    i = i->second == c ? captures().erase(i) : std::next(i);
  for (auto i = capture_events().begin(); i != capture_events().end();)
    i = i->second == c ? capture_events().erase(i) : std::next(i);
  if (c->invalidated) {
    if (!c->to_graph) delete c->graph;
    if (graph) *graph = nullptr;
    return record(cudaErrorStreamCaptureInvalidated);
  }
  if (graph) *graph = c->graph;
  return cudaSuccess;
}

cudaError_t cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus *status) {
  if (!status) return record(cudaErrorInvalidValue);
  std::shared_ptr<Capture> c = capture_of(stream);
  *status = !c ? cudaStreamCaptureStatusNone
               : c->invalidated ? cudaStreamCaptureStatusInvalidated
                                : cudaStreamCaptureStatusActive;
  return cudaSuccess;
}

cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, enum cudaStreamCaptureStatus *status,
                                     unsigned long long *id, cudaGraph_t *graph,
                                     const cudaGraphNode_t **deps, const cudaGraphEdgeData **edges,
                                     size_t *n_deps) {
  if (!status) return record(cudaErrorInvalidValue);
  std::shared_ptr<Capture> c = capture_of(stream);
  cudaStreamIsCapturing(stream, status);
  if (id) *id = c ? c->id : 0;
  if (graph) *graph = c ? c->graph : nullptr;
  // the capture's latest node (the chain's end: what the next node depends on)
  if (deps) *deps = c && c->last ? &c->last : nullptr;
  if (edges) *edges = nullptr;
  if (n_deps) *n_deps = c && c->last ? 1 : 0;
  return cudaSuccess;
}

cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode) {
  if (!mode) return record(cudaErrorInvalidValue);
  cudaStreamCaptureMode old = g_capture_mode;
  g_capture_mode = *mode;
  *mode = old;
  return cudaSuccess;
}

cudaError_t cudaGraphCreate(cudaGraph_t *graph, unsigned int) {
  if (!graph) return record(cudaErrorInvalidValue);
  *graph = new CUgraph_st();
  return cudaSuccess;
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  delete graph;
  return cudaSuccess;
}

cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t *nodes, size_t *n) {
  if (!graph || !n) return record(cudaErrorInvalidValue);
  if (nodes)
    for (size_t i = 0; i < *n && i < graph->nodes.size(); ++i) nodes[i] = graph->nodes[i].get();
  *n = graph->nodes.size();
  return cudaSuccess;
}

cudaError_t cudaGraphGetRootNodes(cudaGraph_t graph, cudaGraphNode_t *nodes, size_t *n) {
  if (!graph || !n) return record(cudaErrorInvalidValue);
  size_t k = 0;
  for (auto &m : graph->nodes) {
    if (!m->deps.empty()) continue;
    if (nodes && k < *n) nodes[k] = m.get();
    ++k;
  }
  *n = k;
  return cudaSuccess;
}

cudaError_t cudaGraphNodeGetType(cudaGraphNode_t node, enum cudaGraphNodeType *type) {
  if (!node || !type) return record(cudaErrorInvalidValue);
  *type = node->type;
  return cudaSuccess;
}

cudaError_t cudaGraphNodeGetDependencies(cudaGraphNode_t node, cudaGraphNode_t *deps,
                                         cudaGraphEdgeData *edges, size_t *n) {
  if (!node || !n) return record(cudaErrorInvalidValue);
  for (size_t i = 0; i < *n && i < node->deps.size(); ++i) {
    if (deps) deps[i] = node->deps[i];
    if (edges) memset(&edges[i], 0, sizeof edges[i]);
  }
  *n = node->deps.size();
  return cudaSuccess;
}

cudaError_t cudaGraphNodeGetDependentNodes(cudaGraphNode_t node, cudaGraphNode_t *nodes,
                                           cudaGraphEdgeData *edges, size_t *n) {
  if (!node || !n) return record(cudaErrorInvalidValue);
  size_t k = 0;
  for (auto &m : node->owner->nodes) {
    if (std::find(m->deps.begin(), m->deps.end(), node) == m->deps.end()) continue;
    if (k < *n) {
      if (nodes) nodes[k] = m.get();
      if (edges) memset(&edges[k], 0, sizeof edges[k]);
    }
    ++k;
  }
  *n = k;
  return cudaSuccess;
}

cudaError_t cudaGraphAddDependencies(cudaGraph_t graph, const cudaGraphNode_t *from,
                                     const cudaGraphNode_t *to, const cudaGraphEdgeData *,
                                     size_t n) {
  if (!graph || (n && (!from || !to))) return record(cudaErrorInvalidValue);
  for (size_t i = 0; i < n; ++i) {
    if (!from[i] || !to[i] || from[i]->owner != graph || to[i]->owner != graph)
      return record(cudaErrorInvalidValue);
    to[i]->deps.push_back(from[i]);
  }
  return cudaSuccess;
}

// CUDA's rule for graphs with allocation or free nodes: their nodes and edges cannot be
// deleted (cuGraphAddMemAllocNode's restrictions; on an H200 gmprof's in-place fill and fold
// nodes stayed in such a graph, where the emulation had let them go).
static bool has_memory_nodes(cudaGraph_t g) {
  for (auto &n : g->nodes)
    if (n->type == cudaGraphNodeTypeMemAlloc || n->type == cudaGraphNodeTypeMemFree) return true;
  return false;
}

cudaError_t cudaGraphDestroyNode(cudaGraphNode_t node) {
  if (!node) return record(cudaErrorInvalidValue);
  cudaGraph_t g = node->owner;
  if (has_memory_nodes(g)) return record(cudaErrorInvalidValue);
  for (auto &m : g->nodes) m->deps.erase(std::remove(m->deps.begin(), m->deps.end(), node),
                                         m->deps.end());
  for (auto i = g->cloned_from.begin(); i != g->cloned_from.end();)
    i = i->second == node ? g->cloned_from.erase(i) : std::next(i);
  for (auto i = g->nodes.begin(); i != g->nodes.end(); ++i)
    if (i->get() == node) {
      g->nodes.erase(i);
      break;
    }
  return cudaSuccess;
}

cudaError_t cudaGraphClone(cudaGraph_t *clone, cudaGraph_t graph) {
  if (!clone || !graph) return record(cudaErrorInvalidValue);
  // as CUDA: no clone of a graph with allocation, free or conditional nodes
  for (auto &n : graph->nodes)
    if (n->type == cudaGraphNodeTypeMemAlloc || n->type == cudaGraphNodeTypeMemFree ||
        n->type == cudaGraphNodeTypeConditional)
      return record(cudaErrorNotSupported);
  std::map<cudaGraphNode_t, cudaGraphNode_t> map;
  *clone = clone_graph(graph, &map);
  (*clone)->cloned_from = map;
  return cudaSuccess;
}

cudaError_t cudaGraphNodeFindInClone(cudaGraphNode_t *node, cudaGraphNode_t original,
                                     cudaGraph_t clone) {
  if (!node || !clone) return record(cudaErrorInvalidValue);
  auto it = clone->cloned_from.find(original);
  if (it == clone->cloned_from.end()) return record(cudaErrorInvalidValue);
  *node = it->second;
  return cudaSuccess;
}

cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t *node, cudaGraph_t graph,
                                  const cudaGraphNode_t *deps, size_t n_deps) {
  if (!node || !graph) return record(cudaErrorInvalidValue);
  *node = add_node(graph, cudaGraphNodeTypeEmpty, deps, n_deps);
  return cudaSuccess;
}

cudaError_t cudaGraphAddChildGraphNode(cudaGraphNode_t *node, cudaGraph_t graph,
                                       const cudaGraphNode_t *deps, size_t n_deps,
                                       cudaGraph_t child) {
  if (!node || !graph || !child) return record(cudaErrorInvalidValue);
  cudaGraphNode_t n = add_node(graph, cudaGraphNodeTypeGraph, deps, n_deps);
  std::map<cudaGraphNode_t, cudaGraphNode_t> map;
  n->child = clone_graph(child, &map);  // the node holds its own copy, as CUDA's does
  *node = n;
  return cudaSuccess;
}

cudaError_t cudaGraphChildGraphNodeGetGraph(cudaGraphNode_t node, cudaGraph_t *graph) {
  if (!node || !graph || !node->child) return record(cudaErrorInvalidValue);
  *graph = node->child;
  return cudaSuccess;
}

cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t *node, cudaGraph_t graph,
                                   const cudaGraphNode_t *deps, size_t n_deps,
                                   const struct cudaKernelNodeParams *p) {
  if (!node || !graph) return record(cudaErrorInvalidValue);
  std::shared_ptr<KernelLaunch> k;
  cudaError_t err = kernel_launch(p, &k);
  if (err != cudaSuccess) return record(err);
  *node = add_node(graph, cudaGraphNodeTypeKernel, deps, n_deps);
  (*node)->kernel = k;
  return cudaSuccess;
}

cudaError_t cudaGraphKernelNodeGetParams(cudaGraphNode_t node, struct cudaKernelNodeParams *p) {
  if (!node || !p || !node->kernel) return record(cudaErrorInvalidValue);
  *p = node->kernel->p;  // kernelParams: the node's own copies of the arguments
  return cudaSuccess;
}

cudaError_t cudaGraphKernelNodeSetParams(cudaGraphNode_t node,
                                         const struct cudaKernelNodeParams *p) {
  if (!node || !node->kernel) return record(cudaErrorInvalidValue);
  std::shared_ptr<KernelLaunch> k;
  cudaError_t err = kernel_launch(p, &k);
  if (err != cudaSuccess) return record(err);
  k->cooperative = node->kernel->cooperative;  // (a node's attribute, kept as on a GPU)
  node->kernel = k;
  return cudaSuccess;
}

cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t *node, cudaGraph_t graph,
                                     const cudaGraphNode_t *deps, size_t n_deps, void *dst,
                                     const void *src, size_t count, enum cudaMemcpyKind kind) {
  if (!node || !graph) return record(cudaErrorInvalidValue);
  *node = add_node(graph, cudaGraphNodeTypeMemcpy, deps, n_deps);
  (*node)->ops.push_back([=]() { return cudaMemcpy(dst, src, count, kind); });
  return cudaSuccess;
}

// a pitched copy: extent.width bytes a row, height rows a slice, depth slices
cudaError_t cudaMemcpy3D(const struct cudaMemcpy3DParms *p) {
  STICKY();
  if (!p || p->srcArray || p->dstArray || !p->srcPtr.ptr || !p->dstPtr.ptr)
    return record(cudaErrorInvalidValue);
  const size_t h = p->extent.height ? p->extent.height : 1, d = p->extent.depth ? p->extent.depth : 1;
  const size_t sp = p->srcPtr.pitch, dp = p->dstPtr.pitch;
  const size_t sh = p->srcPtr.ysize ? p->srcPtr.ysize : h, dh = p->dstPtr.ysize ? p->dstPtr.ysize : h;
  for (size_t z = 0; z < d; ++z)
    for (size_t y = 0; y < h; ++y) {
      const char *src = (const char *)p->srcPtr.ptr +
                        ((p->srcPos.z + z) * sh + p->srcPos.y + y) * sp + p->srcPos.x;
      char *dst = (char *)p->dstPtr.ptr + ((p->dstPos.z + z) * dh + p->dstPos.y + y) * dp +
                  p->dstPos.x;
      memmove(dst, src, p->extent.width);
    }
  return cudaSuccess;
}

cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t *node, cudaGraph_t graph,
                                   const cudaGraphNode_t *deps, size_t n_deps,
                                   const struct cudaMemcpy3DParms *p) {
  if (!node || !graph || !p || p->srcArray || p->dstArray) return record(cudaErrorInvalidValue);
  const cudaMemcpy3DParms q = *p;
  *node = add_node(graph, cudaGraphNodeTypeMemcpy, deps, n_deps);
  (*node)->ops.push_back([q]() { return cudaMemcpy3D(&q); });
  return cudaSuccess;
}

cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t *node, cudaGraph_t graph,
                                   const cudaGraphNode_t *deps, size_t n_deps,
                                   const struct cudaMemsetParams *p) {
  if (!node || !graph || !p) return record(cudaErrorInvalidValue);
  if (p->elementSize != 1 && p->elementSize != 2 && p->elementSize != 4)
    return record(cudaErrorInvalidValue);
  const cudaMemsetParams q = *p;
  *node = add_node(graph, cudaGraphNodeTypeMemset, deps, n_deps);
  (*node)->ops.push_back([q]() {
    const size_t height = q.height ? q.height : 1;
    for (size_t r = 0; r < height; ++r) {
      char *row = (char *)q.dst + r * q.pitch;
      for (size_t i = 0; i < q.width; ++i) memcpy(row + i * q.elementSize, &q.value, q.elementSize);
    }
    return cudaSuccess;
  });
  return cudaSuccess;
}

cudaError_t cudaGraphAddHostNode(cudaGraphNode_t *node, cudaGraph_t graph,
                                 const cudaGraphNode_t *deps, size_t n_deps,
                                 const struct cudaHostNodeParams *p) {
  if (!node || !graph || !p) return record(cudaErrorInvalidValue);
  const cudaHostNodeParams q = *p;
  *node = add_node(graph, cudaGraphNodeTypeHost, deps, n_deps);
  (*node)->ops.push_back([q]() {
    if (q.fn) q.fn(q.userData);
    return cudaSuccess;
  });
  return cudaSuccess;
}

// Graph allocations: memory outside the runtime's allocation table (gmprof_cudart_address_range
// does not find it, as cuMemGetAddressRange does not before the graph runs), kept for the
// process (a freeing node leaves it: its address stays the graph's, as on a GPU).
static std::set<const void *> &graph_allocations() {
  static auto *s = new std::set<const void *>();
  return *s;
}

bool gmprof_graph_allocation(const void *p) {
  std::lock_guard<std::mutex> g(g_capture_lock);
  return graph_allocations().count(p) != 0;
}

cudaError_t cudaGraphAddMemAllocNode(cudaGraphNode_t *node, cudaGraph_t graph,
                                     const cudaGraphNode_t *deps, size_t n_deps,
                                     struct cudaMemAllocNodeParams *p) {
  if (!node || !graph || !p || !p->bytesize) return record(cudaErrorInvalidValue);
  void *mem = aligned_alloc(256, (p->bytesize + 255) & ~(size_t)255);
  if (!mem) return record(cudaErrorMemoryAllocation);
  {
    std::lock_guard<std::mutex> g(g_capture_lock);
    graph_allocations().insert(mem);
  }
  p->dptr = mem;
  *node = add_node(graph, cudaGraphNodeTypeMemAlloc, deps, n_deps);
  (*node)->alloc = *p;
  return cudaSuccess;
}

cudaError_t cudaGraphMemAllocNodeGetParams(cudaGraphNode_t node, struct cudaMemAllocNodeParams *p) {
  if (!node || !p || node->type != cudaGraphNodeTypeMemAlloc) return record(cudaErrorInvalidValue);
  *p = node->alloc;
  return cudaSuccess;
}

cudaError_t cudaGraphAddMemFreeNode(cudaGraphNode_t *node, cudaGraph_t graph,
                                    const cudaGraphNode_t *deps, size_t n_deps, void *) {
  if (!node || !graph) return record(cudaErrorInvalidValue);
  *node = add_node(graph, cudaGraphNodeTypeMemFree, deps, n_deps);
  return cudaSuccess;
}

// stream-ordered allocation: while capturing, an allocation node of the capture's graph
cudaError_t cudaMallocAsync(void **ptr, size_t size, cudaStream_t stream) {
  STICKY();
  if (!ptr) return record(cudaErrorInvalidValue);
  std::shared_ptr<Capture> c = capture_of(stream);
  if (!c) return cudaMalloc(ptr, size);
  cudaMemAllocNodeParams p;
  memset(&p, 0, sizeof p);
  p.bytesize = size;
  cudaGraphNode_t n = nullptr;
  cudaError_t err = cudaGraphAddMemAllocNode(&n, c->graph, c->last ? &c->last : nullptr,
                                             c->last ? 1 : 0, &p);
  if (err != cudaSuccess) return err;
  c->last = n;
  *ptr = p.dptr;
  return cudaSuccess;
}

cudaError_t cudaFreeAsync(void *ptr, cudaStream_t stream) {
  STICKY();
  std::shared_ptr<Capture> c = capture_of(stream);
  if (!c) return cudaFree(ptr);
  capture_node(*c, cudaGraphNodeTypeMemFree);
  return cudaSuccess;
}

// GMPROF_CPU_GRAPH_DUMP=1 (tests; 0, 1 or empty, as gmprof_cpu_env.h checks it): the graph
// being instantiated, on stderr, a line a node: its graph ("g", then ".node.body" into a
// conditional node's bodies), index, type and dependencies by index, so that a test sees what
// gmprof's host runtime added around the program's nodes.
static void dump_graph(cudaGraph_t g, const std::string &at) {
  static const std::map<int, const char *> names = {
      {cudaGraphNodeTypeKernel, "kernel"}, {cudaGraphNodeTypeMemcpy, "memcpy"},
      {cudaGraphNodeTypeMemset, "memset"}, {cudaGraphNodeTypeHost, "host"},
      {cudaGraphNodeTypeGraph, "graph"},   {cudaGraphNodeTypeEmpty, "empty"},
      {cudaGraphNodeTypeMemAlloc, "alloc"}, {cudaGraphNodeTypeMemFree, "free"},
      {cudaGraphNodeTypeConditional, "conditional"}};
  std::map<cudaGraphNode_t, size_t> index;
  for (size_t i = 0; i < g->nodes.size(); ++i) index[g->nodes[i].get()] = i;
  for (size_t i = 0; i < g->nodes.size(); ++i) {
    cudaGraphNode_t n = g->nodes[i].get();
    auto name = names.find((int)n->type);
    std::string deps;
    for (cudaGraphNode_t d : n->deps)
      deps += (deps.empty() ? "" : ",") + std::to_string(index.count(d) ? index[d] : (size_t)-1);
    fprintf(stderr, "gmprof-cpu graph %s node %zu %s deps [%s]\n", at.c_str(), i,
            name == names.end() ? "other" : name->second, deps.c_str());
    for (size_t b = 0; b < n->bodies.size(); ++b)
      dump_graph(n->bodies[b], at + "." + std::to_string(i) + "." + std::to_string(b));
  }
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph,
                                 unsigned long long) {
  if (!exec || !graph) return record(cudaErrorInvalidValue);
  if (gmprof_cpu_env::program_values().graph_dump) dump_graph(graph, "g");
  CUgraphExec_st *e = new CUgraphExec_st();
  conditional_defaults(graph, &e->defaults);
  for (cudaGraphNode_t n : topological(graph)) {
    e->steps.push_back(ExecStep{n, n->type, n->kernel ? n->kernel->p.func : nullptr,
                                n->child ? n->child->nodes.size() : 0, {}});
    node_ops(n, e->steps.back().ops);
  }
  *exec = e;
  return cudaSuccess;
}

cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *exec, cudaGraph_t graph,
                                          unsigned long long flags) {
  return cudaGraphInstantiate(exec, graph, flags);
}

static ExecStep *exec_step(cudaGraphExec_t exec, cudaGraphNode_t node) {
  if (!exec) return nullptr;
  for (auto &st : exec->steps)
    if (st.node == node) return &st;
  return nullptr;
}

cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                             const struct cudaKernelNodeParams *p) {
  ExecStep *st = exec_step(exec, node);
  if (!st || st->type != cudaGraphNodeTypeKernel) return record(cudaErrorInvalidValue);
  std::shared_ptr<KernelLaunch> k;
  cudaError_t err = kernel_launch(p, &k);
  if (err != cudaSuccess) return record(err);
  st->ops = {kernel_op(k)};
  return cudaSuccess;
}

cudaError_t cudaGraphExecChildGraphNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                 cudaGraph_t child) {
  ExecStep *st = exec_step(exec, node);
  if (!st || st->type != cudaGraphNodeTypeGraph || !child) return record(cudaErrorInvalidValue);
  if (child->nodes.size() != st->child_nodes) return record(cudaErrorInvalidValue);
  st->ops.clear();
  graph_ops(child, st->ops);
  return cudaSuccess;
}

// The executable graph takes the graph's parameters where the two have the same nodes, in the
// same order, of the same types (kernels of the same function); otherwise it is left as it was.
// Its nodes are still named by the nodes of the graph it was instantiated from.
cudaError_t cudaGraphExecUpdate(cudaGraphExec_t exec, cudaGraph_t graph,
                                cudaGraphExecUpdateResultInfo *info) {
  if (!exec || !graph) return record(cudaErrorInvalidValue);
  std::vector<cudaGraphNode_t> order = topological(graph);
  cudaGraphExecUpdateResult result = cudaGraphExecUpdateSuccess;
  cudaGraphNode_t bad = nullptr;
  if (order.size() != exec->steps.size()) result = cudaGraphExecUpdateErrorTopologyChanged;
  for (size_t i = 0; result == cudaGraphExecUpdateSuccess && i < order.size(); ++i) {
    const ExecStep &was = exec->steps[i];
    if (order[i]->type != was.type) result = cudaGraphExecUpdateErrorNodeTypeChanged;
    else if (was.type == cudaGraphNodeTypeKernel && order[i]->kernel->p.func != was.func)
      result = cudaGraphExecUpdateErrorFunctionChanged;
    else if (was.type == cudaGraphNodeTypeGraph && order[i]->child->nodes.size() != was.child_nodes)
      result = cudaGraphExecUpdateErrorTopologyChanged;
    if (result != cudaGraphExecUpdateSuccess) bad = order[i];
  }
  if (info) {
    info->result = result;
    info->errorNode = bad;
    info->errorFromNode = nullptr;
  }
  if (result != cudaGraphExecUpdateSuccess) return record(cudaErrorGraphExecUpdateFailure);
  // (its nodes are still named by the graph it was instantiated from, as on a GPU)
  for (size_t i = 0; i < order.size(); ++i) {
    exec->steps[i].ops.clear();
    node_ops(order[i], exec->steps[i].ops);
  }
  return cudaSuccess;
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
  STICKY();
  if (!exec) return record(cudaErrorInvalidResourceHandle);
  std::vector<GraphOp> ops;
  if (!exec->defaults.empty()) ops.push_back(assign_defaults(exec->defaults));
  for (auto &st : exec->steps) ops.insert(ops.end(), st.ops.begin(), st.ops.end());
  if (gmprof_cudart_capturing(stream)) {
    // a graph launched into a capture is a child of the graph being captured
    return gmprof_cudart_capture_add(stream, [ops]() {
      for (auto &op : ops) {
        cudaError_t err = op();
        if (err != cudaSuccess) return err;
      }
      return cudaSuccess;
    });
  }
  for (auto &op : ops) {
    cudaError_t err = op();
    if (err != cudaSuccess) return record(err);
  }
  return cudaSuccess;
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  delete exec;
  return cudaSuccess;
}

}  // extern "C"

#include "gmprof_cudart_conditional.cpp"
