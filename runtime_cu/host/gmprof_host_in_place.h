// gmprof host runtime: profiling the kernel nodes of a graph that CUDA cannot clone, in place
// (included by gmprof_host_graphs.h only, inside its unnamed namespace, after profiled_child).
//
// Stage: runtime, host side of whole programs. A graph with memory allocation, free or
// conditional nodes cannot be cloned, and must not be rebuilt (an allocation node's address is
// fixed when the node is made: the program's kernels already hold it). gmprof instantiates the
// program's graph itself, changed for the length of the instantiation only: each marked kernel
// node (in the graph, or in the body graphs of its conditional nodes, which gmprof learns from
// cudaGraphAddNode) takes the instrumented kernel's parameters (its function, its arguments,
// its shared memory with the counters') and a child graph of the fold after it: pieces of the
// child graph that profiled_child captures, around the program's own node. No node of gmprof's
// precedes a program's node where it can be helped: a node added before one would delay it, and
// change what a racy program computes (graphConditionalNodes sets a condition in a kernel with
// no edge to its conditional node: natively the kernel wins; behind a fill, the conditional
// node evaluated first and saw the previous replay's value). So the description's fill is
// enqueued on the launch's stream before each cudaGraphLaunch (ExecGraph::fills, graph_launch),
// one a module, and a node gets a child graph of the fill before it (after its dependencies)
// only where its module's description can have changed in the replay before it runs: it reads
// another description than the one filled at launch, or a node of its module reading another
// may run before it (other_before). The description is one per module (gmprof.cuh
// __gmprof_launch): nodes reading different ones cannot all be served before the launch, and
// such nodes with no order between them could run at once (the report's note says their counts
// may be mixed, rather than a fill delaying every node). The fold zeroes the counters
// it takes (fold::fold_range), as they were before the node ran: a node run again (a while
// body) counts each run exactly. The fold keeps an edge to a dependent of the node only where
// a node of the same module (whose counters the fold takes) follows that dependent; other
// dependents depend on the program's node alone. Once the executable exists the added nodes are
// destroyed and the node's parameters set back, so that the program's graph answers what it
// built (an added edge is appended to a node's list and removed with its node: the lists keep
// their order). The executable folds after every run of the node, so a node in a while loop's
// body counts each of its runs, and one in an if's body only the runs its condition allowed.
// A graph with allocation or free nodes is the exception: CUDA deletes none of its nodes or
// edges (on an H200 gmprof's nodes stayed in the program's graph: 7 nodes where it built 4), so
// gmprof adds none there. Its nodes take the instrumented kernel's parameters alone (set back
// after the instantiation), their folds run on the launch's stream after the graph
// (ExecGraph::after: the fold adds and zeroes, so one fold after several runs of a node counts
// them all), and a node that would need a fill inside runs unprofiled, with the report's note.

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
  if (ip.fill) cudaGraphDestroy(ip.fill);
  if (ip.fold) cudaGraphDestroy(ip.fold);
  if (ip.child) cudaGraphDestroy(ip.child);
  ip.fill = ip.fold = ip.child = nullptr;
  if (!ip.set) return;
  std::vector<void *> args;
  for (auto &b : ip.bytes) args.push_back(&b[0]);
  cudaKernelNodeParams p = ip.p;
  p.kernelParams = args.empty() ? nullptr : args.data();
  if (cudaGraphKernelNodeSetParams(ip.node, &p) != cudaSuccess) cudaGetLastError();
  ip.set = false;
}

// The instrumented kernel's node of a profiled child graph (null: none, it runs unprofiled).
cudaGraphNode_t instrumented_node(cudaGraph_t child, const void *func,
                                  cudaKernelNodeParams *kp) {
  for (cudaGraphNode_t c : graph_nodes(child)) {
    cudaGraphNodeType type;
    *kp = cudaKernelNodeParams();
    if (cudaGraphNodeGetType(c, &type) == cudaSuccess && type == cudaGraphNodeTypeKernel &&
        cudaGraphKernelNodeGetParams(c, kp) == cudaSuccess && kp->func == func)
      return c;
  }
  cudaGetLastError();
  return nullptr;
}

// One marked node of `owner` prepared: its profiled child graph split into the fill (what comes
// before the instrumented kernel) and the fold (what comes after), its description known.
// Nothing is added to the program's graph yet (add_in_place).
cudaError_t prepare_in_place(State &s, cudaGraphNode_t n, cudaGraph_t owner, InPlace *ip) {
  const Mark mark = s.marks[n];
  cudaKernelNodeParams p = {};
  if (cudaGraphKernelNodeGetParams(n, &p) != cudaSuccess) return cudaGetLastError();
  const Kernel *k = node_kernel(s, mark, p);
  if (!k->desc->instrumented || p.extra || (!p.kernelParams && k->desc->n_params))
    return cudaErrorNotSupported;
  ip->node = n;
  ip->owner = owner;
  ip->p = p;
  ip->module = k->module;
  for (int i = 0; i < k->desc->n_params; ++i)
    ip->bytes.emplace_back(static_cast<const char *>(p.kernelParams[i]),
                           (size_t)k->desc->params[i].size);
  s.built_desc = nullptr;
  cudaError_t err = profiled_child(s, mark, p, &ip->child);
  ip->desc = s.built_desc;
  if (err != cudaSuccess) return err;
  cudaKernelNodeParams kp;
  const cudaGraphNode_t kn = instrumented_node(ip->child, k->desc->instrumented, &kp);
  if (!kn || !ip->desc) return cudaErrorNotSupported;  // (it runs unprofiled: no counters)
  std::set<cudaGraphNode_t> early;
  ancestors(kn, &early);
  ip->fill = part_of(ip->child, [&](cudaGraphNode_t c) { return early.count(c) != 0; });
  ip->fold = part_of(ip->child, [&](cudaGraphNode_t c) { return !early.count(c) && c != kn; });
  return ip->fill && ip->fold ? cudaSuccess : cudaErrorNotSupported;
}

// Whether `n`, or a node in its conditional bodies, is a prepared node of `module` reading
// another description than `other_than` (null: any description).
bool runs_module(State &s, cudaGraphNode_t n, const std::map<cudaGraphNode_t, InPlace *> &ips,
                 const ModuleDesc *module, const Desc *other_than) {
  auto it = ips.find(n);
  if (it != ips.end() && it->second->module == module && it->second->desc != other_than)
    return true;
  auto b = s.bodies.find(n);
  if (b == s.bodies.end()) return false;
  for (cudaGraph_t body : b->second)
    for (cudaGraphNode_t m : graph_nodes(body))
      if (runs_module(s, m, ips, module, other_than)) return true;
  return false;
}

void descendants(cudaGraphNode_t node, std::set<cudaGraphNode_t> *out) {
  for (cudaGraphNode_t d : node_deps(node, true))
    if (out->insert(d).second) descendants(d, out);
}

// Each body graph under `g`: its conditional node and the graph that node is in.
void body_parents(State &s, cudaGraph_t g,
                  std::map<cudaGraph_t, std::pair<cudaGraphNode_t, cudaGraph_t>> *out) {
  for (cudaGraphNode_t n : graph_nodes(g)) {
    auto b = s.bodies.find(n);
    if (b == s.bodies.end()) continue;
    for (cudaGraph_t body : b->second) {
      (*out)[body] = std::make_pair(n, g);
      body_parents(s, body, out);
    }
  }
}

// Whether a node of the prepared node's module reading another description may run before it
// in a replay: an ancestor in the graph itself, or, for a node in a body, any node of its body
// (a while body runs again after all of it; an if's is treated alike) and, up from its
// conditional node, the same in the graph that holds it. (Nodes with no order to it, which
// could run at once, get the report's note instead: profile_graph_in_place.)
bool other_before(State &s, const InPlace &ip, cudaGraph_t graph,
                  const std::map<cudaGraphNode_t, InPlace *> &ips,
                  const std::map<cudaGraph_t, std::pair<cudaGraphNode_t, cudaGraph_t>> &parents) {
  cudaGraphNode_t at = ip.node;
  cudaGraph_t in = ip.owner;
  for (int depth = 0; depth < 64; ++depth) {
    std::set<cudaGraphNode_t> before;
    if (in == graph) {
      ancestors(at, &before);
    } else {
      for (cudaGraphNode_t n : graph_nodes(in)) before.insert(n);
    }
    for (cudaGraphNode_t b : before)
      if (runs_module(s, b, ips, ip.module, ip.desc)) return true;
    auto up = parents.find(in);
    if (in == graph || up == parents.end()) return in != graph;
    at = up->second.first;
    in = up->second.second;
  }
  return true;
}

// Whether two prepared nodes are ordered in a replay: in the lowest graph holding both (each
// lifted to its conditional node there), one leads to the other, or both are one conditional
// node (different bodies, or one body run again: never at once).
bool ordered(const InPlace &a, const InPlace &b,
             const std::map<cudaGraph_t, std::pair<cudaGraphNode_t, cudaGraph_t>> &parents) {
  std::vector<std::pair<cudaGraphNode_t, cudaGraph_t>> up_a, up_b;
  for (auto at = std::make_pair(a.node, a.owner); up_a.size() < 64;) {
    up_a.push_back(at);
    auto p = parents.find(at.second);
    if (p == parents.end()) break;
    at = p->second;
  }
  for (auto at = std::make_pair(b.node, b.owner); up_b.size() < 64;) {
    up_b.push_back(at);
    auto p = parents.find(at.second);
    if (p == parents.end()) break;
    at = p->second;
  }
  for (auto &x : up_a)
    for (auto &y : up_b) {
      if (x.second != y.second) continue;
      if (x.first == y.first) return true;
      std::set<cudaGraphNode_t> before;
      ancestors(x.first, &before);
      if (before.count(y.first)) return true;
      before.clear();
      ancestors(y.first, &before);
      return before.count(x.first) != 0;
    }
  return false;
}

// The prepared node's fill before it (where `filled`) and its fold after it, in the program's
// graph, and the instrumented kernel's parameters on it.
cudaError_t add_in_place(State &s, InPlace &ip, bool filled,
                         const std::map<cudaGraphNode_t, InPlace *> &ips) {
  const cudaGraphNode_t n = ip.node;
  const std::vector<cudaGraphNode_t> deps = node_deps(n, false), outs = node_deps(n, true);
  cudaError_t err = cudaSuccess;
  if (filled) {
    err = cudaGraphAddChildGraphNode(&ip.before, ip.owner, deps.data(), deps.size(), ip.fill);
    if (err == cudaSuccess)
      err = cudaGraphAddDependencies(ip.owner, &ip.before, &n, GMPROF_EDGES 1);
  }
  if (err == cudaSuccess) err = cudaGraphAddChildGraphNode(&ip.after, ip.owner, &n, 1, ip.fold);
  // a dependent waits for the fold only where a node of the module follows (or is) it: that
  // node counts into the counters the fold takes
  for (size_t i = 0; err == cudaSuccess && i < outs.size(); ++i) {
    std::set<cudaGraphNode_t> later;
    descendants(outs[i], &later);
    later.insert(outs[i]);
    bool needed = false;
    for (cudaGraphNode_t m : later) needed = needed || runs_module(s, m, ips, ip.module, nullptr);
    if (needed) err = cudaGraphAddDependencies(ip.owner, &ip.after, &outs[i], GMPROF_EDGES 1);
  }
  cudaKernelNodeParams kp;
  const Kernel *k = node_kernel(s, s.marks[n], ip.p);
  if (err == cudaSuccess && !instrumented_node(ip.child, k->desc->instrumented, &kp))
    err = cudaErrorNotSupported;
  if (err == cudaSuccess) err = cudaGraphKernelNodeSetParams(n, &kp);
  ip.set = err == cudaSuccess;
  return err;
}

// Whether `g`, or a body graph under it, holds an allocation or free node.
bool memory_nodes(State &s, cudaGraph_t g) {
  for (cudaGraphNode_t n : graph_nodes(g)) {
    cudaGraphNodeType type;
    if (cudaGraphNodeGetType(n, &type) != cudaSuccess) {
      cudaGetLastError();
      continue;
    }
    if (type == cudaGraphNodeTypeMemAlloc || type == cudaGraphNodeTypeMemFree) return true;
    auto b = s.bodies.find(n);
    if (b == s.bodies.end()) continue;
    for (cudaGraph_t body : b->second)
      if (memory_nodes(s, body)) return true;
  }
  return false;
}

// In a graph with allocation or free nodes: the prepared node takes the instrumented kernel's
// parameters, nothing else; its fold, instantiated, goes after the graph's launches.
cudaError_t params_in_place(State &s, InPlace &ip, ExecGraph *eg) {
  cudaKernelNodeParams kp;
  const Kernel *k = node_kernel(s, s.marks[ip.node], ip.p);
  if (!instrumented_node(ip.child, k->desc->instrumented, &kp)) return cudaErrorNotSupported;
  cudaGraphExec_t fold = nullptr;
  cudaError_t err = cudaGraphInstantiate(&fold, ip.fold, 0);
  if (err != cudaSuccess) return err;
  err = cudaGraphKernelNodeSetParams(ip.node, &kp);
  if (err != cudaSuccess) {
    cudaGraphExecDestroy(fold);
    return err;
  }
  ip.set = true;
  eg->after.push_back(fold);
  return cudaSuccess;
}

// The marked nodes of a graph CUDA cannot clone profiled in place, for its instantiation (or an
// update from it); restore_in_place undoes it right after.
void profile_graph_in_place(State &s, cudaGraph_t graph, ExecGraph *eg) {
  const bool fixed = memory_nodes(s, graph);  // (no node of gmprof's can leave it again)
  std::vector<std::pair<cudaGraphNode_t, cudaGraph_t>> marked;
  marked_nodes(s, graph, &marked);
  eg->in_place = true;
  std::vector<InPlace> prepared;
  for (auto &m : marked) {
    InPlace ip;
    if (prepare_in_place(s, m.first, m.second, &ip) != cudaSuccess) {
      cudaGetLastError();
      restore(ip);
      continue;  // left as it was: it runs unprofiled
    }
    prepared.push_back(ip);
  }
  std::map<cudaGraphNode_t, InPlace *> ips;
  for (InPlace &ip : prepared) ips[ip.node] = &ip;
  // each module's description filled at launch: its first node's in the graph itself (else in
  // a body), so that a kernel setting a condition before its conditional node runs unfilled
  std::map<const ModuleDesc *, const Desc *> at_launch;
  for (int top = 1; top >= 0; --top)
    for (InPlace &ip : prepared)
      if ((ip.owner == graph) == (top == 1) && !at_launch.count(ip.module))
        at_launch[ip.module] = ip.desc;
  for (auto &kv : at_launch) eg->fills.push_back(std::make_pair(kv.first, kv.second->dev));
  std::map<cudaGraph_t, std::pair<cudaGraphNode_t, cudaGraph_t>> parents;
  body_parents(s, graph, &parents);
  // nodes of one module reading different descriptions with no order between them: where they
  // run at once, one reads the other's (a fill is not added before every node for them: it
  // would delay the program's nodes), and the note says their counts may be mixed
  for (size_t i = 0; i < prepared.size(); ++i)
    for (size_t j = i + 1; j < prepared.size(); ++j) {
      const InPlace &a = prepared[i], &b = prepared[j];
      if (a.module != b.module || a.desc == b.desc || ordered(a, b, parents)) continue;
      const std::string why =
          std::string("kernel nodes of ") + node_kernel(s, s.marks[a.node], a.p)->desc->name +
          " and " + node_kernel(s, s.marks[b.node], b.p)->desc->name +
          " (one file, different launch descriptions) have no order between them in a graph "
          "profiled in place (allocation, free or conditional nodes): where they ran at once, "
          "their counts may be mixed";
      if (std::find(s.notes.begin(), s.notes.end(), why) == s.notes.end()) s.notes.push_back(why);
    }
  for (InPlace &ip : prepared) {
    bool mixed = false;
    for (InPlace &o : prepared) mixed = mixed || (o.module == ip.module && o.desc != ip.desc);
    const bool filled =
        ip.desc != at_launch[ip.module] || (mixed && other_before(s, ip, graph, ips, parents));
    if (fixed && filled) {
      const std::string why =
          std::string("a kernel node of ") + node_kernel(s, s.marks[ip.node], ip.p)->desc->name +
          " in a graph with allocation or free nodes reads another launch description than "
          "the one filled before the graph's launch (a node of the same file reading another "
          "may run before it), which only a node inside the graph could fill: it ran "
          "unprofiled, yet counts among its launches";
      if (std::find(s.notes.begin(), s.notes.end(), why) == s.notes.end()) s.notes.push_back(why);
      restore(ip);
      continue;
    }
    if ((fixed ? params_in_place(s, ip, eg) : add_in_place(s, ip, filled, ips)) != cudaSuccess) {
      cudaGetLastError();
      restore(ip);
      continue;  // left as it was: it runs unprofiled
    }
    eg->profiled[ip.node] = s.marks[ip.node];
  }
  for (InPlace &ip : prepared) {
    // (the added nodes hold copies of the fill and fold graphs)
    if (ip.fill) cudaGraphDestroy(ip.fill);
    if (ip.fold) cudaGraphDestroy(ip.fold);
    if (ip.child) cudaGraphDestroy(ip.child);
    ip.fill = ip.fold = ip.child = nullptr;
    if (ip.set || ip.before || ip.after) eg->undo.push_back(ip);
  }
}

void restore_in_place(State &s, ExecGraph *eg, bool instantiated) {
  for (auto it = eg->undo.rbegin(); it != eg->undo.rend(); ++it) restore(*it);
  eg->undo.clear();
  if (!instantiated) {
    eg->profiled.clear();
    eg->fills.clear();
  }
  for (auto &kv : eg->profiled) s.marks[kv.first].profiled = true;
}
