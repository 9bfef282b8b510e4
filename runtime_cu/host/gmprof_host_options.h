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
  // launches gmprof did not rewrite (gmprof_host.cpp count_unseen_launch): kernel -> its name
  std::map<const void *, std::string> unseen_names;
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
  bool refused = false;  // a bad option value: exiting (options.h refuse), no report
  bool exiting = false;  // in at_exit (a value the program set and never launched after)
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

// ---------------------------------------------------------------- the options' values

// A bad value stops the program before it runs any kernel: one line naming the variable (or the
// option built in with gmprof nvcc) and the value, status 2 (a usage error, as on gmprof's
// command line), no report. atoll read `abc` as 0 and `12x` as 12, and GMPROF_GRAPHS=off
// profiled graphs: a slip selected other launches, silently. gmprof run and gmprof nvcc check
// the same rules before they build (gmprof/program/run_options.py).
[[noreturn]] void refuse(const std::string &name, const std::string &value,
                         const std::string &expected, const char *where = "") {
  fprintf(stderr, "gmprof: error: %s=%s%s: %s\n", name.c_str(), value.c_str(), where,
          expected.c_str());
  State &s = state();
  s.refused = true;  // at_exit writes no report (and takes no lock: we may hold it)
  if (s.exiting) {  // exit() again from an atexit handler is undefined
    fflush(nullptr);
    _exit(2);
  }
  exit(2);
}

const char *const kNonNegative = "expected a non-negative integer";
const char *const kCountAll = "expected a non-negative integer, or -1 for all";

// Decimal digits, a '-' before them only where `minimum` is below 0 (GMPROF_LAUNCH_COUNT's -1);
// no '+', space or suffix; a value past long long is refused, not clamped (strtoll's ERANGE).
void read_integer(const std::string &name, const std::string &text, long long minimum,
                  const char *expected, long long *out, const char *where = "") {
  const size_t sign = minimum < 0 && !text.empty() && text[0] == '-' ? 1 : 0;
  bool ok = text.size() > sign;
  for (size_t i = sign; ok && i < text.size(); ++i) ok = text[i] >= '0' && text[i] <= '9';
  if (!ok) refuse(name, text, expected, where);
  errno = 0;
  const long long v = strtoll(text.c_str(), nullptr, 10);
  if (errno == ERANGE)
    refuse(name, text, std::string(expected) + ", at most 9223372036854775807", where);
  if (v < minimum) refuse(name, text, expected, where);
  *out = v;
}

// GMPROF_SYNC, GMPROF_GRAPHS, GMPROF_QUIET: 1 on, 0 off; unset or empty: the default
bool read_switch(const char *name, bool fallback) {
  const char *v = getenv(name);
  if (!v || !*v) return fallback;
  if (strcmp(v, "0") && strcmp(v, "1")) refuse(name, v, "expected 0 or 1");
  return v[0] == '1';
}

// "" (every kernel), a name, or regex:RE with RE a regular expression (ECMAScript, as
// name_matches reads it: one that does not compile matched nothing, silently)
void check_kernel(const std::string &name, const std::string &text, const char *where = "") {
  if (text.compare(0, 6, "regex:") != 0) return;
  try {
    std::regex re(text.substr(6));
  } catch (const std::regex_error &e) {
    refuse(name, text, std::string("expected a kernel name, or regex:RE with RE a regular "
                                   "expression (") + e.what() + ")", where);
  }
}

// the report file's name: not empty, each %q{ closed (expand_output)
void check_output(const std::string &name, const std::string &text, const char *where = "") {
  bool ok = !text.empty();
  for (size_t i = 0; ok && i + 1 < text.size(); ++i) {
    if (text[i] != '%') continue;
    if (text[i + 1] == 'q' && i + 2 < text.size() && text[i + 2] == '{')
      ok = text.find('}', i + 3) != std::string::npos;
    ++i;  // %% is one %
  }
  if (!ok) refuse(name, text, "expected a file name pattern (%p, %h, %q{ENV}, %%)", where);
}

// build-time defaults (gmprof nvcc --gmprof-kernel/-launch-skip/-launch-count/-output, which
// check them too), "key=value" lines
void read_defaults(const char *defaults, Options &o) {
  if (!defaults) return;
  const std::string text = defaults;
  const char *where = " (built in with gmprof nvcc)";
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    size_t eq = line.find('=');
    if (eq != std::string::npos) {
      std::string k = line.substr(0, eq), v = line.substr(eq + 1);
      if (k == "kernel") {
        check_kernel("--gmprof-kernel", v, where);
        o.kernel = v;
      } else if (k == "skip") {
        read_integer("--gmprof-launch-skip", v, 0, kNonNegative, &o.skip, where);
      } else if (k == "count") {
        read_integer("--gmprof-launch-count", v, -1, kCountAll, &o.count, where);
      } else if (k == "output") {
        check_output("--gmprof-output", v, where);
        o.output = v;
      }
    }
    pos = end + 1;
  }
}

// the GMPROF_* variables, over the defaults
void read_variables(Options &o, bool &sync_each, bool &graphs) {
  const char *v;
  if ((v = getenv("GMPROF_KERNEL"))) {
    check_kernel("GMPROF_KERNEL", v);
    o.kernel = v;
  }
  if ((v = getenv("GMPROF_LAUNCH_SKIP")))
    read_integer("GMPROF_LAUNCH_SKIP", v, 0, kNonNegative, &o.skip);
  if ((v = getenv("GMPROF_LAUNCH_COUNT")))
    read_integer("GMPROF_LAUNCH_COUNT", v, -1, kCountAll, &o.count);
  if ((v = getenv("GMPROF_ACCESS_STATS_BLOCKS")))
    read_integer("GMPROF_ACCESS_STATS_BLOCKS", v, 0, kNonNegative, &o.warp_blocks);
  if ((v = getenv("GMPROF_OUTPUT"))) {
    check_output("GMPROF_OUTPUT", v);
    o.output = v;
  }
  o.quiet = read_switch("GMPROF_QUIET", false);
  sync_each = read_switch("GMPROF_SYNC", false);
  graphs = read_switch("GMPROF_GRAPHS", true);
}

// At a module's registration (before main, before any launch): its defaults, and at the first
// the variables, so that a bad value stops the program before it does anything.
void check_options(const ModuleDesc *module, bool variables) {
  Options o;
  bool sync_each = false, graphs = true;
  read_defaults(module->defaults, o);
  if (variables) read_variables(o, sync_each, graphs);
}

void load_options(State &s) {
  if (s.options.loaded) return;
  s.options.loaded = true;
  // the first module that has defaults; the variables as they are now (a program may set them
  // before its first launch)
  for (const ModuleDesc *m : s.modules) {
    if (!m->defaults || !*m->defaults) continue;
    read_defaults(m->defaults, s.options);
    break;
  }
  read_variables(s.options, s.sync_each, s.graphs);
}

bool name_matches(const std::string &filter, const char *name) {
  if (filter.empty()) return true;
  if (!name) return false;
  if (filter.compare(0, 6, "regex:") == 0) {
    // compiled once per filter and thread (every launch asks: compiling a std::regex costs
    // microseconds, a launch of a small kernel a few); check_kernel refused one that does not
    // compile, so `ok` is false only for a filter set after the options were read
    thread_local std::string compiled_for;
    thread_local std::regex re;
    thread_local bool ok = false;
    if (compiled_for != filter) {
      compiled_for = filter;
      try {
        re = std::regex(filter.substr(6));
        ok = true;
      } catch (const std::regex_error &) {
        ok = false;
      }
    }
    return ok && std::regex_search(name, re);
  }
  std::string n = name;
  std::string base = n.substr(0, n.find('<'));
  return filter == n || filter == base;
}

// A launch of kernel NAME (null: one gmprof does not know), counted among those seen: whether
// it is selected (GMPROF_KERNEL, GMPROF_SKIP, GMPROF_COUNT); a matching name advances the
// selection's index. (A launch, a graph's kernel node, a launch gmprof did not rewrite.)
bool launch_selected(State &s, const char *name) {
  ++s.seen;
  if (!name_matches(s.options.kernel, name)) return false;
  const long long index = s.matching++;
  return index >= s.options.skip &&
         (s.options.count < 0 || index < s.options.skip + s.options.count);
}
