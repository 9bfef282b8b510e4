// gmprof CPU backend: CUDA graphs and stream capture for whole programs (included at the end of
// gmprof_cudart.cpp, whose helpers it uses).
//
// Stage: runtime, CPU backend, whole programs. Streams are synchronous here, so a graph is the
// list of its nodes' operations in the order they were added: a node may only depend on nodes
// added before it, so that order is a topological order of the graph, and running the
// operations one after another is one legal schedule of it. While a stream captures
// (cudaStreamBeginCapture), the asynchronous operations enqueued on it (copies, sets, host
// functions, kernel launches routed by gmprof's host runtime) are recorded as nodes instead of
// running; cudaGraphInstantiate copies the list and cudaGraphLaunch runs it. A stream that waits
// on an event recorded in a capture joins that capture (fork and join), as on a GPU.
#include <functional>
#include <memory>
#include <vector>

struct CUgraphNode_st {
  std::vector<std::function<cudaError_t()>> ops;  // a child graph's node holds all of its ops
};
struct CUgraph_st {
  std::vector<std::unique_ptr<CUgraphNode_st>> nodes;
};
struct CUgraphExec_st {
  std::vector<std::function<cudaError_t()>> ops;
};

namespace {

struct Capture {
  cudaGraph_t graph;
  unsigned long long id;
  cudaStream_t origin;
  bool invalidated;
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

cudaGraphNode_t add_node(cudaGraph_t graph) {
  graph->nodes.emplace_back(new CUgraphNode_st());
  return graph->nodes.back().get();
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
  add_node(c->graph)->ops.push_back(std::move(op));
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
  if (!graph) return record(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> g(g_capture_lock);
  auto it = captures().find(stream);
  if (it == captures().end()) return record(cudaErrorIllegalState);
  std::shared_ptr<Capture> c = it->second;
  if (c->origin != stream) return record(cudaErrorStreamCaptureUnmatched);
  for (auto i = captures().begin(); i != captures().end();)
    i = i->second == c ? captures().erase(i) : std::next(i);
  for (auto i = capture_events().begin(); i != capture_events().end();)
    i = i->second == c ? capture_events().erase(i) : std::next(i);
  if (c->invalidated) {
    delete c->graph;
    *graph = nullptr;
    return record(cudaErrorStreamCaptureInvalidated);
  }
  *graph = c->graph;
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
                                     const cudaGraphNode_t **deps, size_t *n_deps) {
  if (!status) return record(cudaErrorInvalidValue);
  std::shared_ptr<Capture> c = capture_of(stream);
  cudaStreamIsCapturing(stream, status);
  if (id) *id = c ? c->id : 0;
  if (graph) *graph = c ? c->graph : nullptr;
  if (deps) *deps = nullptr;
  if (n_deps) *n_deps = 0;
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

cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t *node, cudaGraph_t graph,
                                  const cudaGraphNode_t *, size_t) {
  if (!node || !graph) return record(cudaErrorInvalidValue);
  *node = add_node(graph);
  return cudaSuccess;
}

cudaError_t cudaGraphAddChildGraphNode(cudaGraphNode_t *node, cudaGraph_t graph,
                                       const cudaGraphNode_t *, size_t, cudaGraph_t child) {
  if (!node || !graph || !child) return record(cudaErrorInvalidValue);
  cudaGraphNode_t n = add_node(graph);
  for (auto &c : child->nodes) n->ops.insert(n->ops.end(), c->ops.begin(), c->ops.end());
  *node = n;
  return cudaSuccess;
}

cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t *node, cudaGraph_t graph,
                                     const cudaGraphNode_t *, size_t, void *dst, const void *src,
                                     size_t count, enum cudaMemcpyKind kind) {
  if (!node || !graph) return record(cudaErrorInvalidValue);
  *node = add_node(graph);
  (*node)->ops.push_back([=]() { return cudaMemcpy(dst, src, count, kind); });
  return cudaSuccess;
}

cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t *node, cudaGraph_t graph,
                                   const cudaGraphNode_t *, size_t,
                                   const struct cudaMemsetParams *p) {
  if (!node || !graph || !p) return record(cudaErrorInvalidValue);
  if (p->elementSize != 1 && p->elementSize != 2 && p->elementSize != 4)
    return record(cudaErrorInvalidValue);
  const cudaMemsetParams q = *p;
  *node = add_node(graph);
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
                                 const cudaGraphNode_t *, size_t,
                                 const struct cudaHostNodeParams *p) {
  if (!node || !graph || !p) return record(cudaErrorInvalidValue);
  const cudaHostNodeParams q = *p;
  *node = add_node(graph);
  (*node)->ops.push_back([q]() {
    if (q.fn) q.fn(q.userData);
    return cudaSuccess;
  });
  return cudaSuccess;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph,
                                 unsigned long long) {
  if (!exec || !graph) return record(cudaErrorInvalidValue);
  CUgraphExec_st *e = new CUgraphExec_st();
  for (auto &n : graph->nodes) e->ops.insert(e->ops.end(), n->ops.begin(), n->ops.end());
  *exec = e;
  return cudaSuccess;
}

cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *exec, cudaGraph_t graph,
                                          unsigned long long flags) {
  return cudaGraphInstantiate(exec, graph, flags);
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
  STICKY();
  if (!exec) return record(cudaErrorInvalidResourceHandle);
  if (gmprof_cudart_capturing(stream)) {
    // a graph launched into a capture is a child of the graph being captured
    CUgraphExec_st *e = exec;
    return gmprof_cudart_capture_add(stream, [e]() {
      for (auto &op : e->ops) {
        cudaError_t err = op();
        if (err != cudaSuccess) return err;
      }
      return cudaSuccess;
    });
  }
  for (auto &op : exec->ops) {
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
