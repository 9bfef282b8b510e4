// gmprof host runtime: profiling the kernel nodes of a graph that CUDA cannot clone, in place
// (included by gmprof_host_graphs.h only, inside its unnamed namespace, after profiled_child).
//
// Stage: runtime, host side of whole programs. A graph with memory allocation, free or
// conditional nodes cannot be cloned, and must not be rebuilt (an allocation node's address is
// fixed when the node is made: the program's kernels already hold it). gmprof instantiates the
// program's graph itself, changed for the length of the instantiation only: each marked kernel
// node (in the graph, or in the body graphs of its conditional nodes, which gmprof learns from
// cudaGraphAddNode) takes the instrumented kernel's parameters (its function, its arguments,
// its shared memory with the counters'), a child graph of the description's fill is added
// before it (after the node's dependencies) and one of the fold after it (before its
// dependents): the three pieces of the child graph that profiled_child captures, around the
// program's own node. Once the executable exists the added nodes are destroyed and the node's
// parameters set back, so that the program's graph answers what it built (an added edge is
// appended to a node's list and removed with its node: the lists keep their order). The
// executable folds after every run of the node, so a node in a while loop's body counts each of
// its runs, and one in an if's body only the runs its condition allowed.

// The marked kernel nodes of a graph and of its conditional nodes' bodies, each with its graph.
void marked_nodes(State &s, cudaGraph_t g,
                  std::vector<std::pair<cudaGraphNode_t, cudaGraph_t>> *out) {
  for (cudaGraphNode_t n : graph_nodes(g)) {
    cudaGraphNodeType type;
    if (cudaGraphNodeGetType(n, &type) != cudaSuccess) {
      cudaGetLastError();
      continue;
    }
    if (type == cudaGraphNodeTypeKernel && s.marks.count(n)) out->push_back(std::make_pair(n, g));
    auto b = s.bodies.find(n);
    if (b == s.bodies.end()) continue;
    for (cudaGraph_t body : b->second) marked_nodes(s, body, out);
  }
}

void ancestors(cudaGraphNode_t node, std::set<cudaGraphNode_t> *out) {
  for (cudaGraphNode_t d : node_deps(node, false))
    if (out->insert(d).second) ancestors(d, out);
}

// A copy of `child` with only the nodes `keep` names (by the child's nodes).
cudaGraph_t part_of(cudaGraph_t child, const std::function<bool(cudaGraphNode_t)> &keep) {
  cudaGraph_t c = nullptr;
  if (cudaGraphClone(&c, child) != cudaSuccess) return nullptr;
  for (cudaGraphNode_t n : graph_nodes(child)) {
    if (keep(n)) continue;
    cudaGraphNode_t m = nullptr;
    if (cudaGraphNodeFindInClone(&m, n, c) != cudaSuccess ||
        cudaGraphDestroyNode(m) != cudaSuccess) {
      cudaGraphDestroy(c);
      return nullptr;
    }
  }
  return c;
}

// The program's node as it built it again: gmprof's nodes around it gone, its parameters back.
void restore(InPlace &ip) {
  if (ip.before && cudaGraphDestroyNode(ip.before) != cudaSuccess) cudaGetLastError();
  if (ip.after && cudaGraphDestroyNode(ip.after) != cudaSuccess) cudaGetLastError();
  ip.before = ip.after = nullptr;
  if (!ip.set) return;
  std::vector<void *> args;
  for (auto &b : ip.bytes) args.push_back(&b[0]);
  cudaKernelNodeParams p = ip.p;
  p.kernelParams = args.empty() ? nullptr : args.data();
  if (cudaGraphKernelNodeSetParams(ip.node, &p) != cudaSuccess) cudaGetLastError();
  ip.set = false;
}

// One marked node of `owner` profiled in place (left as it was where that fails).
cudaError_t profile_in_place(State &s, cudaGraphNode_t n, cudaGraph_t owner, InPlace *ip) {
  const Mark mark = s.marks[n];
  cudaKernelNodeParams p = {};
  if (cudaGraphKernelNodeGetParams(n, &p) != cudaSuccess) return cudaGetLastError();
  const Kernel *k = node_kernel(s, mark, p);
  if (!k->desc->instrumented || p.extra || (!p.kernelParams && k->desc->n_params))
    return cudaErrorNotSupported;
  ip->node = n;
  ip->p = p;
  for (int i = 0; i < k->desc->n_params; ++i)
    ip->bytes.emplace_back(static_cast<const char *>(p.kernelParams[i]),
                           (size_t)k->desc->params[i].size);
  cudaGraph_t child = nullptr;
  cudaError_t err = profiled_child(s, mark, p, &child);
  if (err != cudaSuccess) return err;
  // the instrumented kernel's node, and the nodes before it (the fill) and after it (the fold)
  cudaGraphNode_t kn = nullptr;
  cudaKernelNodeParams kp;
  for (cudaGraphNode_t c : graph_nodes(child)) {
    cudaGraphNodeType type;
    kp = cudaKernelNodeParams();
    if (cudaGraphNodeGetType(c, &type) == cudaSuccess && type == cudaGraphNodeTypeKernel &&
        cudaGraphKernelNodeGetParams(c, &kp) == cudaSuccess && kp.func == k->desc->instrumented) {
      kn = c;
      break;
    }
  }
  cudaGetLastError();
  if (!kn) {  // (it runs unprofiled: no counters)
    cudaGraphDestroy(child);
    return cudaErrorNotSupported;
  }
  std::set<cudaGraphNode_t> early;
  ancestors(kn, &early);
  cudaGraph_t fill = part_of(child, [&](cudaGraphNode_t c) { return early.count(c) != 0; });
  cudaGraph_t fold =
      part_of(child, [&](cudaGraphNode_t c) { return !early.count(c) && c != kn; });
  const std::vector<cudaGraphNode_t> deps = node_deps(n, false), outs = node_deps(n, true);
  err = fill && fold ? cudaSuccess : cudaErrorNotSupported;
  if (err == cudaSuccess)
    err = cudaGraphAddChildGraphNode(&ip->before, owner, deps.data(), deps.size(), fill);
  if (err == cudaSuccess) err = cudaGraphAddDependencies(owner, &ip->before, &n, GMPROF_EDGES 1);
  if (err == cudaSuccess) err = cudaGraphAddChildGraphNode(&ip->after, owner, &n, 1, fold);
  for (size_t i = 0; err == cudaSuccess && i < outs.size(); ++i)
    err = cudaGraphAddDependencies(owner, &ip->after, &outs[i], GMPROF_EDGES 1);
  if (err == cudaSuccess) err = cudaGraphKernelNodeSetParams(n, &kp);
  ip->set = err == cudaSuccess;
  if (fill) cudaGraphDestroy(fill);
  if (fold) cudaGraphDestroy(fold);
  cudaGraphDestroy(child);
  if (err != cudaSuccess) {
    cudaGetLastError();
    restore(*ip);
  }
  return err;
}

// The marked nodes of a graph CUDA cannot clone profiled in place, for its instantiation (or an
// update from it); restore_in_place undoes it right after.
void profile_graph_in_place(State &s, cudaGraph_t graph, ExecGraph *eg) {
  std::vector<std::pair<cudaGraphNode_t, cudaGraph_t>> marked;
  marked_nodes(s, graph, &marked);
  eg->in_place = true;
  for (auto &m : marked) {
    InPlace ip;
    if (profile_in_place(s, m.first, m.second, &ip) != cudaSuccess) {
      cudaGetLastError();
      continue;  // left as it was: it runs unprofiled
    }
    eg->profiled[m.first] = s.marks[m.first];
    eg->undo.push_back(ip);
  }
}

void restore_in_place(State &s, ExecGraph *eg, bool instantiated) {
  for (auto it = eg->undo.rbegin(); it != eg->undo.rend(); ++it) restore(*it);
  eg->undo.clear();
  if (!instantiated) eg->profiled.clear();
  for (auto &kv : eg->profiled) s.marks[kv.first].profiled = true;
}
