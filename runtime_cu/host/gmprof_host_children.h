// gmprof host runtime: the groups of kernels launched from the device (dynamic parallelism),
// laid out with the group of the host's launch that launches them (included by
// gmprof_host.cpp only, inside its unnamed namespace).
//
// Stage: runtime, host side of whole programs. A module whose copies launch kernels from the
// device has child copies (gmprof/program/children.py), each taking a description as its last
// parameter (gmprof.cuh ChildDesc). For each group of host launches of such a module, each
// child kernel gets one group, set up with it: its counters in device memory (no block area in
// shared memory: a child's dynamic shared memory is the user's), one copy of the area that all
// its grids add into atomically, and for each pointer parameter one set of shadow counters per
// allocation of the host launch's group (a child's pointer argument is bound, per block, to
// the allocation that holds it: gmprof.cuh bind). The host launch's description names the
// children's descriptions (Launch::children), which name them again, so that a child's own
// launches (recursion, grandchildren) reach them. After each launch of the parent's group,
// each child's counters are folded into its totals on the launch's stream: a parent grid
// completes only after every grid it launched, so the fold sees all of them.
#ifndef GMPROF_HOST_CHILDREN_H
#define GMPROF_HOST_CHILDREN_H

// gmprof.cuh's ChildDesc, field for field
struct ChildDescHost {
  unsigned long long launch, cand, cand_slot, grids;
  unsigned n_cand, reserved;
};

// Copies host bytes to a new device buffer (null on failure).
void *device_copy(State &s, const void *src, size_t bytes) {
  void *p = zeroed(s, bytes ? bytes : 8);
  if (!p) return nullptr;
  cudaStream_t side = side_stream(s);
  if (bytes && (cudaMemcpyAsync(p, src, bytes, cudaMemcpyHostToDevice, side) != cudaSuccess ||
                cudaStreamSynchronize(side) != cudaSuccess)) {
    cudaGetLastError();
    return nullptr;
  }
  return p;
}

// One child kernel's group under the parent group `pg` (its key `key`): its objects, counters,
// description and fold job; the device ChildDesc, or null. A sink (below) binds no pointer
// parameter (every access of one counts under its unknown out-of-range counter).
void *setup_child(State &s, Group &pg, const std::string &key, const ChildKernelDesc &ck,
                  unsigned csize, bool sink = false) {
  Relaxed relaxed;
  const ModuleDesc *m = pg.module;
  Group &g = s.groups[key];
  // laid out once: after a cudaDeviceReset freed it, the parent's launches run unprofiled
  // (its sums so far are kept and reported)
  if (g.module) return nullptr;
  g.module = m;
  g.device = pg.device;
  g.sm = false;
  g.why = "device memory (a kernel launched from the device: one area for all its grids)";
  g.device_child = true;
  g.sink = sink;
  g.shadow_prefix = (sink ? "sink:" : "dp:") + std::string(ck.name) + ":";
  // the allocations of the parent's group, each once
  std::vector<std::pair<unsigned long long, unsigned long long>> allocs;
  for (const ObjState &o : pg.objects)
    if (!sink && (o.kind == OBJ_PARAM || o.kind == OBJ_GLOBAL) && o.known && o.bytes &&
        std::find(allocs.begin(), allocs.end(), std::make_pair(o.base, o.bytes)) == allocs.end())
      allocs.push_back(std::make_pair(o.base, o.bytes));
  std::vector<ObjectDesc> descs;
  unsigned offset = 0;
  for (int i = 0; i < ck.n_objects; ++i) {
    const ObjectDesc &od = ck.objects[i];
    ObjState o = object_state(od);
    if (od.kind == OBJ_PARAM) {
      for (auto &a : allocs) {
        ObjState c = o;
        c.base = a.first;
        c.bytes = a.second;
        c.n = ceil_div(c.bytes, c.unit);
        if (c.n > 0xffffffffull) continue;
        g.objects.push_back(c);
        descs.push_back(od);
      }
      continue;
    }
    if (od.kind == OBJ_GLOBAL) {
      bind_global(m, od, o);
    } else if (od.kind == OBJ_SHARED) {
      o.bytes = od.bytes;
      o.n = ceil_div(o.bytes, 4);
      o.area_offset = offset;
      offset += (unsigned)o.n;
    } else {
      return nullptr;  // (a dynamic shared array: children.py profiles no such child)
    }
    g.objects.push_back(o);
    descs.push_back(od);
  }
  ObjectDesc *table = new ObjectDesc[descs.size() + 1];  // (kept for the process: the group's)
  for (size_t i = 0; i < descs.size(); ++i) table[i] = descs[i];
  KernelDesc *kd = new KernelDesc();
  kd->name = ck.name;
  kd->n_objects = (int)descs.size();
  kd->objects = table;
  kd->module = m;
  g.kernel = kd;
  const unsigned sites_end = kAreaHeader + kSiteWords * (unsigned)m->n_sites;
  unsigned words = sites_end + (unsigned)ceil_div((unsigned long long)offset * csize, 4);
  words += words & 1u;
  g.area_words = words;
  g.obj_counters = offset;
  g.lr_offset = 0;
  g.sites_end = sites_end;
  g.replicas = 1;
  g.area.assign(words, 0);
  g.shared.assign(offset, 0);
  s.group_order.push_back(key);
  if (!setup_group(s, g, kd, csize)) return nullptr;
  g.grids = static_cast<unsigned long long *>(zeroed(s, 8));
  unsigned long long *log = log_slot(s, g);
  if (!g.grids || !log) return nullptr;
  // the description's template: everything but the pointer parameters, bound per block
  Desc *D = new Desc();
  g.child_desc = D;
  Launch &L = D->L;
  memset(&L, 0, sizeof L);
  L.area_words = g.area_words;
  L.n_sites = (unsigned)m->n_sites;
  L.obj_counters = g.obj_counters;
  L.area_replicas = 1;
  L.area_global = (unsigned long long)(uintptr_t)g.scratch;
  L.unknown_oor = (unsigned long long)(uintptr_t)(g.scratch + g.area_bytes);
  fold::FoldJob &j = D->job;
  memset(&j, 0, sizeof j);
  j.area = L.area_global;
  j.totals = (unsigned long long)(uintptr_t)g.totals;
  j.oor = L.unknown_oor;
  j.words = g.area_words;
  j.sites_end = g.sites_end;
  j.n_shared = g.obj_counters;
  j.replicas = 1;
  j.csize = csize;
  j.threshold = m->threshold;
  j.n_oor = (unsigned)(1 + g.objects.size());
  j.log = (unsigned long long)(uintptr_t)log;
  // (a fold job holds kMaxFoldObjects objects: the rest go to more jobs, with no area)
  std::vector<fold::FoldObj> folds;
  std::vector<Object> cand;
  std::vector<unsigned> cand_slot;
  for (size_t i = 0; i < g.objects.size(); ++i) {
    ObjState &o = g.objects[i];
    if (o.slot < 0 || o.slot >= kMaxObjects) return nullptr;
    Object obj;
    memset(&obj, 0, sizeof obj);
    if ((unsigned)o.slot + 1u > L.n_objects) L.n_objects = (unsigned)o.slot + 1u;
    fold::FoldObj f;
    if (describe_object(g, kd, i, L.unknown_oor, obj, f)) folds.push_back(f);
    if (o.kind == OBJ_PARAM) {
      cand.push_back(obj);
      cand_slot.push_back((unsigned)o.slot);
    } else {
      L.obj[o.slot] = obj;
    }
  }
  g.child_jobs.assign(1, j);
  for (size_t i = 0; i < folds.size(); ++i) {
    if (g.child_jobs.back().n_objects == fold::kMaxFoldObjects) {
      g.child_jobs.push_back(j);
      fold::FoldJob &more = g.child_jobs.back();
      more.words = more.n_shared = more.n_oor = 0;
    }
    fold::FoldJob &to = g.child_jobs.back();
    to.obj[to.n_objects++] = folds[i];
  }
  ChildDescHost cd;
  memset(&cd, 0, sizeof cd);
  cd.grids = (unsigned long long)(uintptr_t)g.grids;
  cd.n_cand = (unsigned)cand.size();
  void *c1 = device_copy(s, cand.data(), cand.size() * sizeof(Object));
  void *c2 = device_copy(s, cand_slot.data(), cand_slot.size() * sizeof(unsigned));
  if (!c1 || !c2) return nullptr;
  cd.cand = (unsigned long long)(uintptr_t)c1;
  cd.cand_slot = (unsigned long long)(uintptr_t)c2;
  // (the template's `children` is set once every child of the parent is laid out)
  D->dev = zeroed(s, sizeof(Launch));
  if (!D->dev) return nullptr;
  cd.launch = (unsigned long long)(uintptr_t)D->dev;
  g.child_cd = device_copy(s, &cd, sizeof cd);
  return g.child_cd;
}

// Sets the children table of each template in `keys` to `dev` and copies it to the device.
bool set_children(State &s, const std::vector<std::string> &keys, void *dev) {
  Relaxed relaxed;
  bool ok = true;
  for (size_t c = 0; ok && c < keys.size(); ++c) {
    Desc *D = s.groups[keys[c]].child_desc;
    D->L.children = (unsigned long long)(uintptr_t)dev;
    cudaStream_t side = side_stream(s);
    ok = cudaMemcpyAsync(D->dev, &D->L, sizeof(Launch), cudaMemcpyHostToDevice, side) ==
             cudaSuccess &&
         cudaStreamSynchronize(side) == cudaSuccess;
  }
  return ok;
}

// The module's sinks on this device, by child index (a device array of ChildDescs; null: none).
// A parent's table names a child its kernel is not expected to launch (children.py _parents)
// by its sink, never by null: should the analysis have missed a path, such a grid runs its
// child copy into counters that are never folded or reported (the report says how many grids
// did, by their sinks' grid counts), rather than through a null description.
void *sinks(State &s, Group &pg, unsigned csize) {
  const ModuleDesc *m = pg.module;
  const std::string base = std::string("sink|") + m->id + "|" + std::to_string(pg.device) + "|";
  auto known = s.sink_tables.find(base);
  if (known != s.sink_tables.end()) return known->second;  // (null: they failed)
  void *&got = s.sink_tables[base];
  std::vector<std::string> keys;
  std::vector<unsigned long long> table(m->n_children, 0);
  bool ok = true;
  for (int c = 0; ok && c < m->n_children; ++c) {
    keys.push_back(base + m->children[c].name);
    void *cd = setup_child(s, pg, keys.back(), m->children[c], csize, true);
    table[c] = (unsigned long long)(uintptr_t)cd;
    ok = cd != nullptr;
  }
  void *dev = ok ? device_copy(s, table.data(), table.size() * 8) : nullptr;
  if (!dev || !set_children(s, keys, dev)) {
    cudaGetLastError();
    return nullptr;
  }
  got = dev;
  return dev;
}

// Lays out the children of the parent group `pg` (key `key`) once; false: they could not be
// (the parent's launches then run unprofiled: its copy would launch a child copy without one).
bool setup_children(State &s, Group &pg, const std::string &key, unsigned csize) {
  const ModuleDesc *m = pg.module;
  if (m->n_children <= 0 || pg.children_dev) return true;
  if (pg.children_failed) return false;
  // the children this kernel's copy may launch, itself or through them (children.py), get
  // groups with it; the others, its sinks
  std::string name = pg.kernel->name;
  name = name.substr(0, name.find('<')) + "\n";
  std::vector<unsigned long long> table(m->n_children, 0);
  std::vector<bool> expected(m->n_children, false);
  bool ok = true;
  // GMPROF_TEST_CHILD_SINKS=1 (tests): no child expected, every device-side launch to a sink
  const char *sinks_env = getenv("GMPROF_TEST_CHILD_SINKS");
  const bool only_sinks = sinks_env && *sinks_env && strcmp(sinks_env, "0") != 0;
  for (int c = 0; c < m->n_children; ++c) {
    const char *parents = m->children[c].parents;
    const std::string all = std::string("\n") + (parents ? parents : "");
    expected[c] = !only_sinks && all.find("\n" + name) != std::string::npos;
  }
  bool all = true;
  for (int c = 0; c < m->n_children; ++c) all = all && expected[c];
  void *sink = all ? nullptr : sinks(s, pg, csize);
  const unsigned long long *sink_cd = nullptr;
  std::vector<unsigned long long> sink_table(m->n_children, 0);
  if (sink) {
    for (int c = 0; c < m->n_children; ++c)
      sink_table[c] = (unsigned long long)(uintptr_t)s.groups[std::string("sink|") + m->id +
                                                             "|" + std::to_string(pg.device) +
                                                             "|" + m->children[c].name].child_cd;
    sink_cd = sink_table.data();
  }
  ok = all || sink != nullptr;
  for (int c = 0; ok && c < m->n_children; ++c) {
    if (!expected[c]) {
      table[c] = sink_cd[c];
      continue;
    }
    std::string ck = key + "|from the device|" + m->children[c].name;
    pg.child_keys.push_back(ck);
    void *cd = setup_child(s, pg, ck, m->children[c], csize);
    table[c] = (unsigned long long)(uintptr_t)cd;
    ok = cd != nullptr;
  }
  void *dev = ok ? device_copy(s, table.data(), table.size() * 8) : nullptr;
  ok = ok && dev && set_children(s, pg.child_keys, dev);
  if (!ok) {
    cudaGetLastError();
    // the children's groups stay out of the report (never folded: no grids counted)
    pg.children_failed = true;
    return false;
  }
  pg.children_dev = dev;
  return true;
}

// After a launch of the parent's group: each child's counters into its totals, on its stream.
void fold_children(State &s, Group &pg, cudaStream_t stream) {
  for (const std::string &ck : pg.child_keys) {
    Group &g = s.groups[ck];
    if (!g.child_desc) continue;
    for (fold::FoldJob &j : g.child_jobs)
      if (fold::enqueue(&j, stream) != cudaSuccess) cudaGetLastError();
  }
}

#endif  // GMPROF_HOST_CHILDREN_H
