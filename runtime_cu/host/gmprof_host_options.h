// gmprof host runtime: the options (build-time defaults, then GMPROF_* variables and the
// options file) and which launches they select (included by gmprof_host.cpp only, inside its
// unnamed namespace, where it was: one translation unit, split for reading).

// ---------------------------------------------------------------- options

struct Options {
  std::string kernel;   // "" all, a name, or "regex:..."
  long long skip = 0;
  long long count = -1;  // -1: all
  std::string output = "gmprof-report-%p.json";
  bool quiet = false;
  bool loaded = false;
  // --gmprof-access-stats: the fewest blocks a launch measures its hooked sites in (a larger
  // grid measures 1 block in 2^s, gmprof.cuh block_measured); 0: every block
  // (GMPROF_ACCESS_STATS_BLOCKS; passes/block_sample.py's rule)
  long long warp_blocks = 2048;
};

struct Kernel {
  KernelDesc *desc;
  const ModuleDesc *module;
};

struct ObjState {
  int slot, kind, param;
  unsigned long long unit, elem, base, bytes, offset, n;
  unsigned area_offset, lr_offset;
  bool known;
  // its totals, packed (gmprof_host_pack.h): narrowed on the device at the first harvest and
  // read back so; n == 0 until a harvest read anything
  pack::Packed packed;
  unsigned long long oor = 0;
  void *shadow = nullptr;              // the device counters a launch counts into (shared)
  unsigned long long *total = nullptr;  // the group's u64 totals of them (device)
};

struct LaunchRec {
  unsigned grid[3], block[3];
  size_t shared_mem;
  double ms;
  long long index;         // the process's launch number (0: its first launch of any kernel)
  unsigned long long oor;  // accesses out of range that this launch's counters caught
  std::string params;      // JSON array
  unsigned long long *log = nullptr;  // device: [oor, runs] (the fold adds them)
  unsigned long long runs = 0;        // times it ran (a graph's launch: once per replay)
  bool captured = false;              // made during a stream capture (into a graph)
};

// A kernel node that holds a selected launch of an instrumented kernel (captured or added to a
// graph): instantiating its graph profiles it (gmprof_host_graphs.h).
struct Mark {
  const Kernel *k;
  long long index;      // the process's launch number of the launch it holds
  cudaGraph_t graph;    // the graph it is a node of
  bool cooperative;     // captured from cudaLaunchCooperativeKernel
  bool profiled;        // an instantiation profiled it (else, when its graph goes or at exit,
                        // it counts under `captured`: it ran unprofiled, or never ran)
};

struct Desc;

// A marked node of a graph CUDA cannot clone, profiled in place while its graph is instantiated
// (gmprof_host_in_place.h): its parameters as the program set them (the argument bytes copied),
// the description its instrumented kernel reads (of its module), and the nodes gmprof added
// after it (the fold) and, only where another description of its module may run before it in
// a replay, before it (the fill), removed once the executable exists.
struct InPlace {
  cudaGraphNode_t node = nullptr;
  cudaGraph_t owner = nullptr;  // the graph it is a node of (the program's, or a body)
  cudaKernelNodeParams p;
  std::vector<std::string> bytes;
  std::vector<void *> args;
  const ModuleDesc *module = nullptr;
  const Desc *desc = nullptr;
  cudaGraph_t child = nullptr;  // profiled_child's graph, and its fill and fold parts
  cudaGraph_t fill = nullptr, fold = nullptr;
  cudaGraphNode_t before = nullptr, after = nullptr;
  bool set = false;  // the node holds the instrumented kernel's parameters
};

// An executable graph that gmprof instantiated from its own copy of the program's graph: the
// copy (kept while the executable lives: its nodes name the executable's), and for each of the
// program's nodes the copy's, where the profiled ones are child graphs (fill, instrumented
// kernel, fold). Or one instantiated from the program's graph profiled in place (in_place: no
// copy, the nodes are the program's; `undo` restores the graph after the instantiation).
struct ExecGraph {
  bool in_place = false;
  std::vector<InPlace> undo;
  // in place: the descriptions filled on the launch's stream before each cudaGraphLaunch (one a
  // module: the one its nodes that no other description can precede read), in stream order, so
  // that no node of gmprof's precedes the program's nodes in the graph
  std::vector<std::pair<const ModuleDesc *, const void *>> fills;
  // in place, in a graph with allocation or free nodes (whose nodes and edges CUDA cannot
  // delete, so gmprof adds none): the folds of its profiled nodes, launched on the launch's
  // stream after each cudaGraphLaunch
  std::vector<cudaGraphExec_t> after;
  cudaGraph_t copy = nullptr;
  std::map<cudaGraphNode_t, cudaGraphNode_t> nodes;
  std::map<cudaGraphNode_t, Mark> profiled;
  // a profiled node's child graphs, by parameters: parameters set again reuse theirs (and its
  // launch record), so that a program alternating two sets keeps two records
  std::map<std::pair<cudaGraphNode_t, std::string>, cudaGraph_t> children;
};

// A selected launch that failed (a device-side assert, a fault): listed in the report as failed,
// with the error, so that the other launches' counts are still reported (issue 25).
struct FailedRec {
  std::string kernel;
  long long index;  // the process's launch number
  unsigned grid[3], block[3];
  std::string error;
};

// One launch description of a group (the variable fields: the warp flag, the user's dynamic
// shared memory, the area's copies), kept on the device so that the fill before each launch is
// a device-to-device copy (a graph can capture it), and its fold's job.
struct Desc {
  Launch L;
  void *dev = nullptr;
  fold::FoldJob job;
};

struct Group {
  const ModuleDesc *module;
  const KernelDesc *kernel;
  int device;
  bool sm;
  std::string why;
  unsigned area_words, obj_counters, lr_offset, replicas, sites_end;
  std::vector<ObjState> objects;
  // header + sites (+ live-range words), summed; a site's u64 count at its first word
  std::vector<unsigned long long> area;
  std::vector<unsigned long long> shared;   // the shared objects' counters, summed
  unsigned long long unknown_oor = 0;
  unsigned long long clock_records = 0;
  std::vector<unsigned long long> site_max;  // per site, the most one launch executed it
  std::vector<unsigned long long> warp_stats;  // kWarpStride a site, summed (access stats)
  std::vector<LaunchRec> launches;
  // on the device (null: not yet, or freed by cudaDeviceReset after a harvest)
  char *scratch = nullptr;               // area copies, out-of-range words, clock records
  size_t area_bytes = 0, scratch_bytes = 0;
  unsigned long long *totals = nullptr;  // u64: area words, shared counters, oor words, clock
  size_t n_totals = 0;
  // --gmprof-access-stats: kWarpStride u64 a site (no area rows in whole programs). Sums only
  // (gmprof.cuh warp_record: atomic adds), so the group's launches add into it directly, on
  // any stream, with no fold; read back with the totals.
  unsigned long long *warps = nullptr;
  size_t n_warps = 0;
  unsigned warp_shifts = 0;  // bit s: a launch measured 1 block in 2^s (bit 0: every block)
  std::map<std::string, Desc> descs;
  std::vector<unsigned long long *> logs;  // chunks of kLogChunk [oor, runs] pairs
  size_t log_used = 0;
  std::deque<fold::FoldJob> kept_jobs;     // CPU backend: jobs a graph replays later
  std::map<std::string, size_t> alike;     // shape and arguments -> its record (not captured)
  // dynamic parallelism (gmprof_host_children.h). A group of host launches whose module has
  // profiled children: their groups' keys, by child index, and the device array of their
  // descriptions (Launch::children; null: not laid out yet). A child's group: the grids run
  // (device u64, and read back), its fold after each launch of its parent's group
  std::vector<std::string> child_keys;
  void *children_dev = nullptr;
  bool children_failed = false;
  bool device_child = false;
  unsigned long long *grids = nullptr;
  unsigned long long grids_total = 0;
  Desc *child_desc = nullptr;
  void *child_cd = nullptr;  // its ChildDesc on the device
  bool sink = false;         // a sink (gmprof_host_children.h sinks): never folded or reported
  std::vector<fold::FoldJob> child_jobs;  // its folds (kMaxFoldObjects objects each)
  std::string shadow_prefix;  // keeps a child's shadow counters apart from its parent's
};

struct Shadow {
  void *ptr = nullptr;
  size_t bytes = 0;
};

// A stream whose enqueued launches read the module's current description (an event after the
// latest); a launch with another description waits for them before its fill (two streams never
// race on a description). Keyed by stream and capture (0: none): an event recorded in a capture
// is a node of that graph, waited on only within it.
struct User {
  cudaEvent_t ev = nullptr;
};
typedef std::pair<cudaStream_t, unsigned long long> UserKey;

struct ModState {
  const Desc *current = nullptr;  // what the module's description holds (null: unknown)
  bool graphs = false;            // a graph holds a fill of it: fill before every launch
  std::map<UserKey, User> users;
  cudaEvent_t fill_ev = nullptr;  // after the latest fill (outside captures), on fill_stream
  cudaStream_t fill_stream = nullptr;
};

// a launch whose time is not yet read (its events complete later)
struct Pending {
  int device;
  Group *g;
  size_t rec;
  cudaEvent_t e0, e1;
};

// GMPROF_TIMING=1: where the host runtime's seconds go (printed at exit)
struct KernelTiming {
  long long launches = 0;
  double seconds = 0;
  unsigned long long zeroed = 0, folded = 0, copied = 0;
};

struct Timing {
  double map = 0, setup = 0, fill = 0, launch = 0, fold = 0, sync = 0, readback = 0, sum = 0,
         report = 0;
  unsigned long long zeroed = 0, folded = 0, copied = 0, setups = 0, fills = 0, waits = 0;
  unsigned long long written = 0;  // the counts file's bytes
  std::map<std::string, KernelTiming> kernels;
};

struct FuncInfo {
  size_t static_shared = 0;
  int optin = 48 * 1024;
  size_t dyn_set = 48 * 1024;  // the dynamic shared memory limit raised so far
};

struct State {
  std::mutex lock;
  std::map<const void *, Kernel> kernels;
  std::vector<const ModuleDesc *> modules;
  Options options;
  long long matching = 0;   // launches matching the kernel filter so far
  long long profiled = 0;
  long long seen = 0;
  std::map<std::string, long long> not_instrumented;  // selected, but no instrumented copy
  std::map<std::string, long long> captured;  // selected, but made during a stream capture
  // launches from device code by profiled copies ("parent\tchild"): the child ran unprofiled
  std::map<std::string, unsigned long long> device_launches;
  std::vector<FailedRec> failed;
  std::map<std::string, Group> groups;
  // per module and device, the children's sinks' table (gmprof_host_children.h sinks)
  std::map<std::string, void *> sink_tables;
  std::vector<std::string> group_order;
  std::map<std::string, Shadow> shadows;
  std::map<std::pair<const void *, int>, FuncInfo> funcs;
  // per module and device (each device has its own copy of a module's description)
  std::map<std::pair<const ModuleDesc *, int>, ModState> mods;
  std::vector<Pending> pending;
  std::map<int, std::vector<cudaEvent_t>> pools;  // events, per device
  std::map<int, cudaStream_t> sides;  // gmprof's own stream per device: zeroing, uploads
  std::map<int, std::string> device_names;
  std::vector<std::string> notes;
  bool registered_exit = false;
  bool harvest_registered = false;
  bool lost = false;  // the device faulted before the counters were read: they are gone
  bool sync_each = false;
  // launches into graphs are profiled (GMPROF_GRAPHS=0: they run unprofiled, counted under
  // `captured`); the program's graphs keep the nodes it built, gmprof's are in its own copies
  bool graphs = true;
  std::map<cudaGraphNode_t, Mark> marks;
  std::map<cudaGraphExec_t, ExecGraph> execs;
  // conditional nodes added with cudaGraphAddNode: their body graphs (marked nodes in them are
  // profiled in place)
  std::map<cudaGraphNode_t, std::vector<cudaGraph_t>> bodies;
  std::map<unsigned long long, unsigned long long> graph_allocs;  // graph allocations: base, bytes
  bool building = false;     // profiling a marked node into gmprof's copy of its graph
  long long build_index = 0;  // (the launch number of the launch the node holds)
  const Desc *built_desc = nullptr;  // the description the latest one built reads (null: none)
  Timing timing;
};

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

State &state() {
  static State *s = new State();  // never destroyed: the exit handler runs after statics die
  return *s;
}

std::string env_or(const char *name, const std::string &fallback) {
  const char *v = getenv(name);
  return v ? std::string(v) : fallback;
}

void load_options(State &s) {
  if (s.options.loaded) return;
  s.options.loaded = true;
  // build-time defaults (gmprof nvcc -k/-s/-c/-o), the first module that has them
  for (const ModuleDesc *m : s.modules) {
    if (!m->defaults || !*m->defaults) continue;
    std::string text = m->defaults;
    size_t pos = 0;
    while (pos < text.size()) {
      size_t end = text.find('\n', pos);
      if (end == std::string::npos) end = text.size();
      std::string line = text.substr(pos, end - pos);
      size_t eq = line.find('=');
      if (eq != std::string::npos) {
        std::string k = line.substr(0, eq), v = line.substr(eq + 1);
        if (k == "kernel") s.options.kernel = v;
        else if (k == "skip") s.options.skip = atoll(v.c_str());
        else if (k == "count") s.options.count = atoll(v.c_str());
        else if (k == "output") s.options.output = v;
      }
      pos = end + 1;
    }
    break;
  }
  s.options.kernel = env_or("GMPROF_KERNEL", s.options.kernel);
  const char *v;
  if ((v = getenv("GMPROF_LAUNCH_SKIP")) && *v) s.options.skip = atoll(v);
  if ((v = getenv("GMPROF_LAUNCH_COUNT")) && *v) s.options.count = atoll(v);
  if ((v = getenv("GMPROF_ACCESS_STATS_BLOCKS")) && *v) s.options.warp_blocks = atoll(v);
  s.options.output = env_or("GMPROF_OUTPUT", s.options.output);
  s.options.quiet = getenv("GMPROF_QUIET") != nullptr;
  s.sync_each = (v = getenv("GMPROF_SYNC")) && *v && strcmp(v, "0") != 0;
  s.graphs = !((v = getenv("GMPROF_GRAPHS")) && strcmp(v, "0") == 0);
}

bool name_matches(const std::string &filter, const char *name) {
  if (filter.empty()) return true;
  if (!name) return false;
  if (filter.compare(0, 6, "regex:") == 0) {
    try {
      return std::regex_search(name, std::regex(filter.substr(6)));
    } catch (const std::regex_error &) {
      return false;
    }
  }
  std::string n = name;
  std::string base = n.substr(0, n.find('<'));
  return filter == n || filter == base;
}
