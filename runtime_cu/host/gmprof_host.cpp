// gmprof host runtime for whole programs (see gmprof_host.h for the interface and the flow).
//
// Stage: runtime, host side. Input: the modules' tables (registered before main), every kernel
// launch of the program, the options (build-time defaults, then GMPROF_* variables). Output: the
// launches run (original or instrumented), and at exit one report file of raw records that
// gmprof's Python decoder reads (gmprof/program/records.py):
//   groups of selected launches with one layout (kernel, allocations, where the block's counters
//   live): per launch its shape and parameter bytes (what the static formulas need), its number
//   in the process and the out-of-range accesses its counters caught (which launches failed
//   the check; the static sites' are found when the file is decoded); per group the counters'
//   64-bit totals (per-site executions, shared words, device elements, out-of-range counts;
//   with --gmprof-access-stats, the sites' per-warp statistics).
//
// Nothing waits for the device per launch (issue 25: scan paid about 11 ms a launch on an H100
// when the runtime synchronised, zeroed and copied back whole allocations' counters and summed
// them on the host at every launch). A group's
// counter buffers and totals live on the device; the runtime fills the module's description
// (from a device copy, only when it changes, after the other streams' launches that read the
// old one), launches on the user's stream, and enqueues a fold of the launch's counters into the
// totals behind it (gmprof_host_fold.h). The totals are read back once, at exit or before
// cudaDeviceReset. A launch into a CUDA graph (stream capture, cudaGraphAddKernelNode) stays the
// kernel node the program built; gmprof instruments a private copy of the graph when it is
// instantiated (gmprof_host_graphs.h), so that each replay counts.
//
// Built by nvcc (as CUDA: the fold is a kernel) for the GPU, and by g++ against gmprof's CUDA
// runtime emulation for the CPU backend (GMPROF_CPU). One translation unit, in files for
// reading: the options (gmprof_host_options.h), the report file (gmprof_host_report.h), the
// counts file (_counts.h), the fold (_fold.h), packing (_pack.h), graphs (_graphs.h,
// _in_place.h), each included where its code stands.
#include "gmprof_host.h"
#if !defined(GMPROF_CPU)
#include <cuda.h>  // cuKernelGetName's types (count_unseen_launch)
#endif
#include "gmprof_host_counts.h"
#include "gmprof_host_fold.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <regex>
#include <set>
#include <string>
#include <vector>

#if defined(GMPROF_CPU)
extern "C" int gmprof_cudart_address_range(const void *p, void **base, size_t *bytes);
extern "C" void gmprof_cpu_set_cooperative(int on);
extern "C" cudaError_t gmprof_cudart_launch(void (*entry)(void **), void **args, dim3 grid,
                                           dim3 block, size_t shared_mem, cudaStream_t stream,
                                           const char *name);
// stream capture on the CPU backend (runtime_cu/cpu/gmprof_cudart_graph.cpp)
int gmprof_cudart_capturing(cudaStream_t stream);
cudaError_t gmprof_cudart_capture_kernel(cudaStream_t stream, const void *func,
                                         void (*invoker)(void **), void **args,
                                         const size_t *sizes, int n, dim3 grid, dim3 block,
                                         size_t shared, int cooperative, const char *name);
void gmprof_cudart_set_kernel_hooks(
    cudaError_t (*run)(const void *, void (*)(void **), void **, dim3, dim3, size_t, int,
                       const char *),
    int (*info)(const void *, void (**)(void **), size_t *, int, const char **));
#endif

namespace gmprof_host {

const void *g_running;

namespace {

// ---------------------------------------------------------------- the launch description
// gmprof.cuh's Launch and Object, field for field (gmprof/runtime/layout.py has the same)
// kSiteWords: a site's execution count is a u64 (gmprof.cuh site_count_t)
enum { kMaxObjects = 64, kAreaHeader = 2, kSiteWords = 2, kLrStride = 14, kMaxReplicas = 32 };
enum { FLAG_WARP_UNIFORM_OK = 1, FLAG_AREA_SHARED = 2, FLAG_DEVICE_DISJOINT = 4 };
enum { KIND_DEVICE = 1, KIND_SHARED = 2 };
enum { kClockCapacity = 1 << 16, kLogChunk = 4096, kMergeAfter = 1000 };
// --gmprof-access-stats: u64 words of a site's per-warp statistics (gmprof.cuh WS_STRIDE)
enum { kWarpStride = 36 };

struct Object {
  unsigned long long base, bytes, counters, oor;
  unsigned kind, n_counters, area_offset, lr_offset, unit, unit_shift, reserved[2];
};

struct Launch {
  unsigned flags, area_words, dyn_user_bytes, n_sites, obj_counters, lr_offset, area_replicas,
      n_objects;  // slots in use: the device's object scans stop there (0: all)
  unsigned long long sample_state, area_global, unknown_oor, trace, trace_capacity, trace_count,
      sample_seq;
  unsigned sample_seq_len, sample_threshold, sampler, seed;
  unsigned long long clock_log, clock_capacity, clock_count;
  unsigned long long warp_stats;  // per-warp access statistics (gmprof.cuh GMPROF_WARPS)
  unsigned long long tally;  // per-element records (gmprof.cuh, passes/tallies.py; unused here)
  unsigned tally_words, stats_sampling;  // (0: every block measured, exact: gmprof.cuh)
  unsigned long long sample_sq;   // sampling's clusters (gmprof.cuh sample_clusters; unused)
  // deferred walks' records (gmprof.cuh, passes/defer.py: the Python runtime's; unused here)
  unsigned long long defer, defer_ticket;
  unsigned defer_capacity, defer_walks;
  unsigned long long block_rows;  // measured blocks' statistics rows (unused here)
  unsigned long long children;    // the child kernels' descriptions (gmprof_host_children.h)
  Object obj[kMaxObjects];
};

#include "gmprof_host_options.h"

#include "gmprof_host_report.h"

// ---------------------------------------------------------------- memory

bool address_range(const void *p, unsigned long long *base, unsigned long long *bytes) {
#if defined(GMPROF_CPU)
  void *b = nullptr;
  size_t n = 0;
  if (!gmprof_cudart_address_range(p, &b, &n)) return false;
  *base = (unsigned long long)(uintptr_t)b;
  *bytes = n;
  return true;
#else
  // the driver API's cuMemGetAddressRange (device and managed allocations), found at run time
  // so that programs need not link libcuda themselves
  typedef int (*RangeFn)(unsigned long long *, size_t *, unsigned long long);
  static RangeFn fn = [] {
    void *f = dlsym(RTLD_DEFAULT, "cuMemGetAddressRange_v2");
    if (!f) {
      void *lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
      if (!lib) lib = dlopen("libcuda.so.1", RTLD_LAZY);
      if (lib) f = dlsym(lib, "cuMemGetAddressRange_v2");
    }
    return (RangeFn)f;
  }();
  if (!fn || !p) return false;
  size_t n = 0;
  unsigned long long b = 0;
  if (fn(&b, &n, (unsigned long long)(uintptr_t)p) != 0) return false;
  *base = b;
  *bytes = n;
  return true;
#endif
}

// While a stream captures in global mode, this thread may not allocate or synchronise; gmprof's
// own setup (its buffers, on its own stream) is not part of the capture, so it runs relaxed.
struct Relaxed {
  cudaStreamCaptureMode old = cudaStreamCaptureModeRelaxed;
  Relaxed() {
    if (cudaThreadExchangeStreamCaptureMode(&old) != cudaSuccess) cudaGetLastError();
  }
  ~Relaxed() {
    if (cudaThreadExchangeStreamCaptureMode(&old) != cudaSuccess) cudaGetLastError();
  }
};

int current_device() {
  int d = 0;
  if (cudaGetDevice(&d) != cudaSuccess) cudaGetLastError();
  return d;
}

// gmprof's own stream on the current device (never captured)
cudaStream_t side_stream(State &s) {
  cudaStream_t &side = s.sides[current_device()];
  if (!side && cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking) != cudaSuccess) {
    cudaGetLastError();
    side = nullptr;
  }
  return side;
}

// A zeroed device buffer of gmprof's own (null: no memory; the error is not the program's).
void *zeroed(State &s, size_t bytes) {
  void *p = nullptr;
  if (cudaMalloc(&p, bytes < 256 ? 256 : bytes) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  cudaStream_t side = side_stream(s);
  if (cudaMemsetAsync(p, 0, bytes, side) != cudaSuccess ||
      cudaStreamSynchronize(side) != cudaSuccess) {
    cudaGetLastError();
    cudaFree(p);
    return nullptr;
  }
  s.timing.zeroed += bytes;
  return p;
}

void *shadow_buffer(State &s, Shadow &sh, size_t bytes) {
  if (sh.bytes >= bytes && sh.ptr) return sh.ptr;
  // a larger one replaces it: the old one's counters were folded (each fold zeroes them), and
  // launches still in flight on it are waited for by cudaFree
  if (sh.ptr) cudaFree(sh.ptr);
  sh.ptr = zeroed(s, bytes);
  sh.bytes = sh.ptr ? bytes : 0;
  return sh.ptr;
}

// Host copies of device memory (on the CPU backend the memory is the host's: read directly, so
// that a kernel fault's sticky error does not hide the counters of the launches before it).
bool read_device(void *dst, const void *src, size_t bytes) {
#if defined(GMPROF_CPU)
  memcpy(dst, src, bytes);
  return true;
#else
  // Large read-backs go through two pinned buffers in turn, the copy of one chunk from the
  // device overlapping the host's copy of the last out of the other: a pageable cudaMemcpy
  // into a fresh vector ran at 1.3 GB/s on an H100 host (NV12toBGRandResize: 1.9 GB, 1.46 s)
  enum : size_t { kChunk = (size_t)16 << 20 };
  static char *stage[2] = {nullptr, nullptr};
  // (the legacy default stream, as cudaMemcpy's: ordered after the program's blocking streams)
  const cudaStream_t stream = 0;
  static cudaEvent_t done[2] = {nullptr, nullptr};
  static bool unavailable = false;
  if (bytes >= 2 * kChunk && !stage[0] && !unavailable) {
    unavailable = cudaMallocHost(&stage[0], kChunk) != cudaSuccess ||
                  cudaMallocHost(&stage[1], kChunk) != cudaSuccess ||
                  cudaEventCreateWithFlags(&done[0], cudaEventDisableTiming) != cudaSuccess ||
                  cudaEventCreateWithFlags(&done[1], cudaEventDisableTiming) != cudaSuccess;
    if (unavailable) cudaGetLastError();
  }
  if (bytes < 2 * kChunk || unavailable) {
    if (cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost) != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    return true;
  }
  bool ok = true;
  size_t last_at = 0, last_n = 0;
  for (size_t at = 0, k = 0; at < bytes || last_n; ++k) {
    const size_t n = at < bytes ? (bytes - at < kChunk ? bytes - at : kChunk) : 0;
    if (n) {
      ok = cudaMemcpyAsync(stage[k % 2], static_cast<const char *>(src) + at, n,
                           cudaMemcpyDeviceToHost, stream) == cudaSuccess &&
           cudaEventRecord(done[k % 2], stream) == cudaSuccess && ok;
    }
    if (last_n) {
      ok = cudaEventSynchronize(done[(k + 1) % 2]) == cudaSuccess && ok;
      memcpy(static_cast<char *>(dst) + last_at, stage[(k + 1) % 2], last_n);
    }
    last_at = at;
    last_n = n;
    at += n;
  }
  if (!ok) cudaGetLastError();
  return ok;
#endif
}

// ---------------------------------------------------------------- running a launch

#if defined(GMPROF_CPU)
// The CPU backend's kernel nodes run through here (gmprof_cudart_graph.cpp), and ask the
// registry for a kernel's invoker and argument sizes.
cudaError_t run_node(const void *fn, void (*invoker)(void **), void **args, dim3 grid, dim3 block,
                     size_t shared, int cooperative, const char *name) {
  g_running = fn;
  gmprof_cpu_set_cooperative(cooperative);
  cudaError_t err = gmprof_cudart_launch(invoker, args, grid, block, shared, 0, name);
  gmprof_cpu_set_cooperative(0);
  return err;
}

std::map<const void *, std::pair<const KernelDesc *, bool>> &functions() {
  static auto *m = new std::map<const void *, std::pair<const KernelDesc *, bool>>();
  return *m;  // a kernel's native and instrumented addresses -> its description, instrumented
}

int node_kernel_info(const void *fn, void (**invoker)(void **), size_t *sizes, int max,
                     const char **name) {
  auto it = functions().find(fn);
  if (it == functions().end()) return -1;
  const KernelDesc *d = it->second.first;
  *invoker = it->second.second ? d->invoke_instrumented : d->invoke_native;
  *name = d->name;
  for (int i = 0; i < d->n_params && i < max; ++i) sizes[i] = (size_t)d->params[i].size;
  return d->n_params;
}
#endif

cudaError_t run_kernel(const void *fn, Invoker invoker, const Config &c, void **args,
                       const char *name, const KernelDesc *d = nullptr) {
#if defined(GMPROF_CPU)
  if (gmprof_cudart_capturing(c.stream)) {
    // a kernel node with the launch's parameters (runs through run_node below)
    if (!d || !invoker) return cudaErrorStreamCaptureUnsupported;
    std::vector<size_t> sizes;
    for (int i = 0; i < d->n_params; ++i) sizes.push_back((size_t)d->params[i].size);
    return gmprof_cudart_capture_kernel(c.stream, fn, invoker, args, sizes.data(), d->n_params,
                                        c.grid, c.block, c.shared_mem, c.cooperative ? 1 : 0,
                                        name);
  }
  g_running = fn;
  // a cooperative launch runs its blocks in phases between grid barriers (gmprof_cpu_launch.h)
  gmprof_cpu_set_cooperative(c.cooperative ? 1 : 0);
  cudaError_t err =
      gmprof_cudart_launch(invoker, args, c.grid, c.block, c.shared_mem, c.stream, name);
  gmprof_cpu_set_cooperative(0);
  return err;
#else
  (void)invoker;
  (void)name;
  (void)d;
  if (c.cooperative)
    return cudaLaunchCooperativeKernel(fn, c.grid, c.block, args, c.shared_mem, c.stream);
  if (c.ex) {
    // cudaLaunchKernelEx: keep the caller's attributes (clusters, priorities, ...)
    cudaLaunchConfig_t config = *c.ex;
    config.dynamicSmemBytes = c.shared_mem;
    return cudaLaunchKernelExC(&config, fn, args);
  }
  return cudaLaunchKernel(fn, c.grid, c.block, args, c.shared_mem, c.stream);
#endif
}

std::string params_json(const KernelDesc *k, void **args) {
  std::string out = "[";
  for (int i = 0; i < k->n_params; ++i) {
    if (i) out += ", ";
    out += "\"" + hex(args[i], (size_t)k->params[i].size) + "\"";
  }
  return out + "]";
}

unsigned long long ceil_div(unsigned long long a, unsigned long long b) { return (a + b - 1) / b; }

// A selected launch that failed: recorded (the report lists it as failed, its counters are not
// in the report); the error goes back to the program, which sees what it would natively.
cudaError_t failed(State &s, const KernelDesc *d, const Config &c, cudaError_t err) {
  s.failed.push_back(FailedRec{d->name, s.seen - 1, {c.grid.x, c.grid.y, c.grid.z},
                               {c.block.x, c.block.y, c.block.z}, cudaGetErrorString(err)});
  return err;
}

// Is the stream capturing into a graph, and which capture? (An error asking is taken as a
// capture: the legacy stream answers cudaErrorStreamCaptureImplicit while another stream
// captures in global mode; such a launch runs unprofiled, see dispatch.)
bool capture_of(cudaStream_t stream, unsigned long long *id, bool *unknown) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  *id = 0;
  *unknown = false;
  if (cudaStreamGetCaptureInfo(stream, &status, id) != cudaSuccess) {
    cudaGetLastError();
    *unknown = true;
    return true;
  }
  return status != cudaStreamCaptureStatusNone;
}

// an event of the current device (events and streams of one device go together)
cudaEvent_t pooled_event(State &s) {
  std::vector<cudaEvent_t> &pool = s.pools[current_device()];
  if (!pool.empty()) {
    cudaEvent_t e = pool.back();
    pool.pop_back();
    return e;
  }
  cudaEvent_t e = nullptr;
  if (cudaEventCreate(&e) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return e;
}

// Reads the times of the launches whose events completed (all of them when `wait`), in order.
void reap_times(State &s, bool wait) {
  size_t done = 0;
  for (; done < s.pending.size(); ++done) {
    Pending &p = s.pending[done];
    cudaError_t q = wait ? cudaEventSynchronize(p.e1) : cudaEventQuery(p.e1);
    if (q != cudaSuccess) {
      if (q != cudaErrorNotReady) cudaGetLastError();
      if (wait) continue;  // a fault: no time for it
      break;
    }
    float ms = 0;
    if (cudaEventElapsedTime(&ms, p.e0, p.e1) == cudaSuccess) p.g->launches[p.rec].ms = ms;
    else cudaGetLastError();
  }
  for (size_t i = 0; i < done; ++i) {
    s.pools[s.pending[i].device].push_back(s.pending[i].e0);
    s.pools[s.pending[i].device].push_back(s.pending[i].e1);
  }
  s.pending.erase(s.pending.begin(), s.pending.begin() + done);
}

// The group's device buffers: zeroed once, then kept zero by each launch's fold.
// The entries of an object's counters: its n counters, then where range sites count into it
// (ObjectDesc::ranges) the difference array of n + 1 entries (gmprof.cuh dm_range).
// Where the objects' touched flags start in a group's totals (one u64 per object, last).
static size_t touched_flags(const Group &g) { return g.n_totals - g.objects.size(); }

static size_t entries_of(const KernelDesc *d, size_t i, const ObjState &o) {
  return d->objects[i].ranges ? 2 * (size_t)o.n + 1 : (size_t)o.n;
}

// An object of a kernel's description, not yet bound to memory (its group lays it out).
static ObjState object_state(const ObjectDesc &od) {
  ObjState o;
  o.slot = od.slot;
  o.kind = od.kind;
  o.param = od.param;
  o.unit = od.unit;
  o.elem = od.elem;
  o.base = o.bytes = o.offset = o.n = 0;
  o.area_offset = o.lr_offset = 0;
  o.known = true;
  return o;
}

// A __device__ or __constant__ variable's object: where the module holds it (as many bytes
// as the description says, else the variable's).
static void bind_global(const ModuleDesc *m, const ObjectDesc &od, ObjState &o) {
  void *addr = nullptr;
  size_t bytes = 0;
  m->global(od.global, &addr, &bytes);
  cudaGetLastError();
  o.base = (unsigned long long)(uintptr_t)addr;
  o.bytes = od.bytes ? od.bytes : bytes;
  o.known = addr != nullptr;
  o.n = ceil_div(o.bytes, o.unit);
}

// Object i of group g in a launch description (a host launch's, or a child kernel's template,
// gmprof_host_children.h): a device array, with its shadow counters' fold into the group's
// totals in *fold (true: it has shadow counters to fold), or a shared array's counters in the
// block's area. unknown_oor: the description's out-of-range counters (object i's at i + 1).
static bool describe_object(const Group &g, const KernelDesc *d, size_t i,
                            unsigned long long unknown_oor, Object &obj, fold::FoldObj &fold) {
  const ObjState &o = g.objects[i];
  obj.oor = unknown_oor + 8 * (i + 1);
  if (o.kind != OBJ_PARAM && o.kind != OBJ_GLOBAL) {
    obj.kind = KIND_SHARED;
    obj.unit = 4;
    obj.unit_shift = 2;
    obj.n_counters = (unsigned)o.n;
    obj.bytes = o.bytes;  // the hooks' range check: past the last byte is out of range
    obj.area_offset = o.area_offset;
    obj.lr_offset = o.lr_offset;
    return false;
  }
  obj.kind = KIND_DEVICE;
  obj.unit = (unsigned)o.unit;
  obj.unit_shift = (o.unit & (o.unit - 1)) == 0 ? (unsigned)__builtin_ctzll(o.unit) : 255u;
  obj.base = o.base;
  obj.bytes = o.known ? o.bytes : 0;
  // no shadow: every site of it is counted from its formula (its counters would stay zero)
  obj.n_counters = o.shadow ? (unsigned)o.n : 0;
  if (!o.shadow) return false;
  obj.counters = (unsigned long long)(uintptr_t)o.shadow;
  fold.shadow = obj.counters;
  fold.total = (unsigned long long)(uintptr_t)o.total;
  fold.n = o.n;
  fold.n_diff = entries_of(d, i, o) - o.n;
  fold.touched = (unsigned long long)(uintptr_t)(g.totals + touched_flags(g) + i);
  return true;
}

bool setup_group(State &s, Group &g, const KernelDesc *d, unsigned csize) {
  const double t0 = now_s();
  Relaxed relaxed;
  const size_t n_oor = 1 + g.objects.size();
  const bool enhanced = g.module->enhanced;
  g.area_bytes = (size_t)g.area_words * 4 * (g.sm ? kMaxReplicas : 1);
  const size_t clock_bytes = enhanced ? (2 * kClockCapacity + 1) * 8 : 0;
  g.scratch_bytes = g.area_bytes + n_oor * 8 + 8 + clock_bytes;
  // ... + 1 (clock records) + the sites' largest per-launch counts
  g.n_totals = (size_t)g.area_words + g.obj_counters + n_oor + 1 + g.module->n_sites;
  // ... + each object's touched flag (fold::FoldObj::touched, last: touched_flags)
  g.n_totals += g.objects.size();
  // GMPROF_TEST_TOTALS_ORIGIN=N (tests): each device object's totals start at N, as the Python
  // runtime's test builds start counters near 2^32 (runtime/widen.py counter_origin)
  const char *origin_env = getenv("GMPROF_TEST_TOTALS_ORIGIN");
  const unsigned long long origin = origin_env ? strtoull(origin_env, nullptr, 0) : 0;
  g.scratch = static_cast<char *>(zeroed(s, g.scratch_bytes));
  g.totals = static_cast<unsigned long long *>(zeroed(s, g.n_totals * 8));
  bool ok = g.scratch && g.totals;
  g.n_warps = g.module->warps ? (size_t)g.module->n_sites * kWarpStride : 0;
  g.warps = nullptr;
  if (ok && g.n_warps) {
    g.warps = static_cast<unsigned long long *>(zeroed(s, g.n_warps * 8));
    ok = g.warps != nullptr;
  }
  for (size_t i = 0; ok && i < g.objects.size(); ++i) {
    ObjState &o = g.objects[i];
    o.shadow = nullptr;
    o.total = nullptr;
    if (!(o.kind == OBJ_PARAM || o.kind == OBJ_GLOBAL) || !o.n || d->objects[i].static_only)
      continue;
    // shared by the groups of one module (a launch of another group waits for the launches
    // and folds before it, fill_for), never between modules, whose launches may overlap
    std::string sk = g.shadow_prefix + g.module->id + ":" + std::to_string(o.slot) + ":" +
                     std::to_string(o.base) + ":" +
                     std::to_string(o.bytes) + ":" + std::to_string(o.unit) + ":" +
                     std::to_string(csize);
    // (range sites: a difference array of n + 1 entries after the counters, gmprof.cuh
    // dm_range; folded into totals of its own, prefix-summed at harvest)
    const size_t entries = entries_of(d, i, o);
    o.shadow = shadow_buffer(s, s.shadows[sk], entries * csize);
    o.total = static_cast<unsigned long long *>(zeroed(s, entries * 8));
    ok = o.shadow && o.total;
    if (ok && origin) {
      // tests only: the totals start near 2^32, so that a few launches carry them past it
      std::vector<unsigned long long> start(o.n, origin);
      cudaStream_t side = side_stream(s);
      static const unsigned long long one = 1;  // (read back even if never touched)
      ok = cudaMemcpyAsync(o.total, start.data(), o.n * 8, cudaMemcpyHostToDevice, side) ==
               cudaSuccess &&
           cudaMemcpyAsync(g.totals + touched_flags(g) + i, &one, 8, cudaMemcpyHostToDevice,
                           side) == cudaSuccess &&
           cudaStreamSynchronize(side) == cudaSuccess;
    }
  }
  ++s.timing.setups;
  s.timing.setup += now_s() - t0;
  return ok;
}

// --gmprof-access-stats on a large grid (passes/block_sample.py's rule): s the largest with
// blocks / 2^s >= GMPROF_ACCESS_STATS_BLOCKS (0: every block), the measured blocks' statistics
// weighted by 2^s on the device (gmprof.cuh STATS_WEIGHT; seed 0); the group keeps the rates.
unsigned stats_sampling(State &s, Group &g, const Config &c) {
  if (!g.module->warps) return 0u;
  const unsigned long long blocks =
      (unsigned long long)c.grid.x * c.grid.y * c.grid.z;
  const long long least = s.options.warp_blocks;
  unsigned sh = 0;
  if (least > 0 && blocks >= 2ull * (unsigned long long)least)
    for (unsigned long long q = blocks / (unsigned long long)least; q > 1 && sh < 31; q >>= 1)
      ++sh;
  g.warp_shifts |= 1u << sh;
  return sh ? (sh | 32u) : 0u;  // (32: gmprof.cuh STATS_WEIGHT)
}

// One description of the group for this launch's variable fields, on the device.
Desc *desc_for(State &s, Group &g, const KernelDesc *d, const Config &c, unsigned csize,
               unsigned replicas) {
  const unsigned flags = (c.block.x % 32 == 0 ? FLAG_WARP_UNIFORM_OK : 0) |
                         (g.sm ? FLAG_AREA_SHARED : 0);
  const unsigned stats = stats_sampling(s, g, c);
  std::string dk = std::to_string(flags) + ":" + std::to_string(c.shared_mem) + ":" +
                   std::to_string(replicas) + ":" + std::to_string(stats);
  auto it = g.descs.find(dk);
  if (it != g.descs.end()) return &it->second;
  const double t0 = now_s();
  Relaxed relaxed;
  Desc &D = g.descs[dk];
  Launch &L = D.L;
  memset(&L, 0, sizeof L);
  const ModuleDesc *m = g.module;
  L.flags = flags;
  L.area_words = g.area_words;
  L.dyn_user_bytes = (unsigned)c.shared_mem;
  L.n_sites = (unsigned)m->n_sites;
  L.obj_counters = g.obj_counters;
  L.lr_offset = g.lr_offset;
  L.area_replicas = replicas;
  L.area_global = (unsigned long long)(uintptr_t)g.scratch;
  L.unknown_oor = (unsigned long long)(uintptr_t)(g.scratch + g.area_bytes);
  L.warp_stats = (unsigned long long)(uintptr_t)g.warps;  // (flags: no area rows)
  L.children = (unsigned long long)(uintptr_t)g.children_dev;
  L.stats_sampling = stats;
  const size_t n_oor = 1 + g.objects.size();
  if (m->enhanced) {
    char *clock = g.scratch + g.area_bytes + n_oor * 8 + 8;
    clock = reinterpret_cast<char *>(((uintptr_t)clock + 7) & ~(uintptr_t)7);
    L.clock_count = (unsigned long long)(uintptr_t)clock;
    L.clock_log = L.clock_count + 8;
    L.clock_capacity = kClockCapacity;
  }
  fold::FoldJob &j = D.job;
  memset(&j, 0, sizeof j);
  j.area = L.area_global;
  j.totals = (unsigned long long)(uintptr_t)g.totals;
  j.oor = L.unknown_oor;
  j.clock = L.clock_count;
  j.words = g.area_words;
  j.sites_end = g.sites_end;
  j.lr_offset = g.lr_offset;
  j.n_shared = g.obj_counters;
  j.replicas = replicas;
  j.csize = csize;
  j.threshold = m->threshold;
  j.n_oor = (unsigned)n_oor;
  for (size_t i = 0; i < g.objects.size(); ++i) {
    ObjState &o = g.objects[i];
    if (o.slot < 0 || o.slot >= kMaxObjects) continue;
    if ((unsigned)o.slot + 1u > L.n_objects) L.n_objects = (unsigned)o.slot + 1u;
    if (describe_object(g, d, i, L.unknown_oor, L.obj[o.slot], j.obj[j.n_objects]))
      ++j.n_objects;
  }
  // no two device objects overlap (a group's bases are its key, so this holds for its every
  // launch): a site's last device object may be tried first (gmprof.cuh find_device_object_at)
  {
    std::vector<std::pair<unsigned long long, unsigned long long>> ranges;
    for (unsigned k = 0; k < L.n_objects && k < (unsigned)kMaxObjects; ++k)
      if (L.obj[k].kind == KIND_DEVICE && L.obj[k].bytes)
        ranges.emplace_back(L.obj[k].base, L.obj[k].bytes);
    std::sort(ranges.begin(), ranges.end());
    bool disjoint = true;
    for (size_t k = 1; k < ranges.size(); ++k)
      if (ranges[k - 1].first + ranges[k - 1].second > ranges[k].first) disjoint = false;
    if (disjoint) L.flags |= FLAG_DEVICE_DISJOINT;
  }
  (void)d;
  D.dev = nullptr;
  if (cudaMalloc(&D.dev, sizeof(Launch)) != cudaSuccess) {
    cudaGetLastError();
    D.dev = nullptr;
  } else {
    cudaStream_t side = side_stream(s);
    if (cudaMemcpyAsync(D.dev, &L, sizeof L, cudaMemcpyHostToDevice, side) != cudaSuccess ||
        cudaStreamSynchronize(side) != cudaSuccess) {
      cudaGetLastError();
      cudaFree(D.dev);
      D.dev = nullptr;
    }
  }
  s.timing.setup += now_s() - t0;
  if (!D.dev) {
    g.descs.erase(dk);
    return nullptr;
  }
  return &D;
}

// Fills the module's description for this launch, unless it holds this one already. A launch
// with another description first waits (on the device) for the other streams' launches that
// read the current one.
cudaError_t fill_for(State &s, const ModuleDesc *m, const Desc &D, cudaStream_t stream,
                     bool captured, unsigned long long capture) {
  ModState &ms = s.mods[std::make_pair(m, current_device())];
  if (!captured && !ms.graphs && ms.current == &D) {
    // it holds this description, or will once the fill enqueued on another stream has run
    if (ms.fill_stream != stream && ms.fill_ev &&
        cudaStreamWaitEvent(stream, ms.fill_ev, 0) != cudaSuccess)
      cudaGetLastError();
    return cudaSuccess;
  }
  const double t0 = now_s();
  for (auto &u : ms.users) {
    if (u.first.first == stream || u.first.second != capture) continue;
    if (cudaStreamWaitEvent(stream, u.second.ev, 0) != cudaSuccess) cudaGetLastError();
    ++s.timing.waits;
  }
  // those waited for are done with; a capture's fill leaves the launches outside it (which it
  // could not wait for: graph_launch does, when the graph runs)
  for (auto it = ms.users.begin(); it != ms.users.end();) {
    if (it->first.first != stream && (capture == 0 || it->first.second == capture)) {
      if (it->second.ev) s.pools[current_device()].push_back(it->second.ev);
      it = ms.users.erase(it);
    } else {
      ++it;
    }
  }
  cudaError_t err = m->fill(D.dev, sizeof(Launch), stream);
  if (!captured) {
    if (!ms.fill_ev) ms.fill_ev = pooled_event(s);
    if (ms.fill_ev && cudaEventRecord(ms.fill_ev, stream) != cudaSuccess) cudaGetLastError();
    ms.fill_stream = stream;
  }
  ms.current = captured ? nullptr : &D;
  if (captured) ms.graphs = true;
  ++s.timing.fills;
  s.timing.fill += now_s() - t0;
  return err;
}

void note_user(State &s, const ModuleDesc *m, cudaStream_t stream, unsigned long long capture) {
  User &u = s.mods[std::make_pair(m, current_device())].users[UserKey(stream, capture)];
  if (!u.ev) u.ev = pooled_event(s);
  if (u.ev && cudaEventRecord(u.ev, stream) != cudaSuccess) cudaGetLastError();
}

unsigned long long *log_slot(State &s, Group &g) {
  if (g.logs.empty() || g.log_used == kLogChunk) {
    Relaxed relaxed;
    void *p = zeroed(s, (size_t)kLogChunk * 16);
    if (!p) return nullptr;
    g.logs.push_back(static_cast<unsigned long long *>(p));
    g.log_used = 0;
  }
  return g.logs.back() + 2 * g.log_used++;
}

void harvest_at_exit();

#include "gmprof_host_children.h"

cudaError_t unprofiled(State &s, const KernelDesc *d, const Config &c, void **args, Invoker typed,
                       const std::string &why) {
  cudaError_t err =
      run_kernel(d->native, d->invoke_native ? d->invoke_native : typed, c, args, d->name, d);
  // a launch that fails (a sticky fault before it, which also failed gmprof's allocations) is
  // a failed launch, not one that ran unprofiled
  if (err != cudaSuccess) return failed(s, d, c, err);
  if (std::find(s.notes.begin(), s.notes.end(), why) == s.notes.end()) s.notes.push_back(why);
  return err;
}

// A graph allocation's range (gmprof learns them when it instantiates a graph: a GPU's address
// range query does not know one before its graph runs).
bool graph_alloc_range(State &s, const void *p, unsigned long long *base,
                       unsigned long long *bytes) {
  const unsigned long long a = (unsigned long long)(uintptr_t)p;
  auto it = s.graph_allocs.upper_bound(a);
  if (it == s.graph_allocs.begin()) return false;
  --it;
  if (a >= it->first + it->second) return false;
  *base = it->first;
  *bytes = it->second;
  return true;
}

// The capture's latest node and its graph (the node a launch just captured).
bool capture_tail(cudaStream_t stream, cudaGraph_t *graph, cudaGraphNode_t *node) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  const cudaGraphNode_t *deps = nullptr;
  size_t n = 0;
#if defined(GMPROF_CPU) || CUDART_VERSION >= 13000
  cudaError_t e = cudaStreamGetCaptureInfo(stream, &status, nullptr, graph, &deps, nullptr, &n);
#else
  cudaError_t e = cudaStreamGetCaptureInfo(stream, &status, nullptr, graph, &deps, &n);
#endif
  if (e != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  if (status != cudaStreamCaptureStatusActive || n != 1 || !deps) return false;
  *node = deps[0];
  return true;
}

// A selected launch made while its stream captures: the original kernel is captured, as the
// program asked, and its node marked for the graph's instantiation to profile.
cudaError_t mark_captured(State &s, const Kernel &k, const Config &c, void **args,
                          Invoker typed) {
  const KernelDesc *d = k.desc;
  cudaError_t err =
      run_kernel(d->native, d->invoke_native ? d->invoke_native : typed, c, args, d->name, d);
  if (err != cudaSuccess) return err;
  cudaGraph_t graph = nullptr;
  cudaGraphNode_t node = nullptr;
  // (a launch with cudaLaunchKernelEx's attributes keeps them only in the program's node)
  const bool attributes = c.ex && c.ex->numAttrs;
  if (!attributes && capture_tail(c.stream, &graph, &node))
    s.marks[node] = Mark{&k, s.seen - 1, graph, c.cooperative, false};
  else
    ++s.captured[d->name];  // its node is not known: it runs unprofiled
  return err;
}

cudaError_t profile_launch(State &s, const Kernel &k, const Config &c, void **args,
                           Invoker typed) {
  const double t_start = now_s();
  const KernelDesc *d = k.desc;
  const ModuleDesc *m = k.module;
  const unsigned csize = (unsigned)m->counter_bits / 8;
  if (m->launch_bytes != sizeof(Launch))
    return unprofiled(s, d, c, args, typed, "gmprof's launch description differs between the "
                      "runtime and a module (mixed gmprof versions?): launches ran unprofiled");
  unsigned long long capture = 0;
  bool unknown = false;
  const bool captured = capture_of(c.stream, &capture, &unknown);
  if (unknown || (captured && !s.graphs)) {
    ++s.captured[d->name];
    return run_kernel(d->native, d->invoke_native ? d->invoke_native : typed, c, args, d->name, d);
  }
  // the program's capture records the kernel node it launches; its graph's instantiation
  // profiles it (the node is marked)
  if (captured && !s.building) return mark_captured(s, k, c, args, typed);
  // inside a capture, gmprof's own calls (events, allocations on its side stream) must not be
  // refused as unsafe: relaxed mode for this thread until the launch is enqueued; what goes on
  // the capturing stream (the fill, the kernel, the fold) is captured all the same
  std::unique_ptr<Relaxed> relaxed(captured ? new Relaxed() : nullptr);
  int device = 0;
  cudaGetDevice(&device);
  if (!s.device_names.count(device)) {
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, device) == cudaSuccess) s.device_names[device] = prop.name;
    else cudaGetLastError();
  }
  // layout: the objects, then the block's area (as gmprof/runtime/session.py lays it out)
  std::vector<ObjState> objs;
  std::string key = std::string(m->id) + "|" + d->name + "|" + std::to_string(device);
  unsigned offset = 0;
  for (int i = 0; i < d->n_objects; ++i) {
    const ObjectDesc &od = d->objects[i];
    ObjState o = object_state(od);
    if (od.kind == OBJ_PARAM) {
      const void *p = *static_cast<void *const *>(args[od.param]);
      unsigned long long base = 0, bytes = 0;
      if (p && (graph_alloc_range(s, p, &base, &bytes) || address_range(p, &base, &bytes))) {
        o.base = base;
        o.bytes = bytes;
        o.offset = (unsigned long long)(uintptr_t)p - base;
      } else {
        // not memory the runtime allocated (a host pointer, a symbol's address): its
        // accesses are counted as out of range, and the report says why
        o.known = false;
        o.base = (unsigned long long)(uintptr_t)p;
      }
      o.n = ceil_div(o.bytes, o.unit);
    } else if (od.kind == OBJ_GLOBAL) {
      bind_global(m, od, o);
    } else {
      o.bytes = od.kind == OBJ_SHARED_DYNAMIC ? c.shared_mem : od.bytes;
      o.n = ceil_div(o.bytes, 4);
      o.area_offset = offset;
      offset += (unsigned)o.n;
    }
    if (o.n > 0xffffffffull) {
      o.known = false;
      o.n = 0;
    }
    key += "|" + std::to_string(o.base) + ":" + std::to_string(o.bytes) + ":" +
           std::to_string(o.offset) + ":" + std::to_string(o.n);
    objs.push_back(o);
  }
  const unsigned sites_end = kAreaHeader + kSiteWords * (unsigned)m->n_sites;
  unsigned words = sites_end + (unsigned)ceil_div((unsigned long long)offset * csize, 4);
  words += words & 1u;  // copies of the area stay 8-byte aligned (u64 site counts)
  unsigned lr_offset = 0;
  if (m->enhanced) {
    lr_offset = words;
    for (int i = 0; i < d->n_objects; ++i)
      if ((objs[i].kind == OBJ_SHARED || objs[i].kind == OBJ_SHARED_DYNAMIC) &&
          d->objects[i].live_ranges) {
        objs[i].lr_offset = words;
        words += kLrStride;
      }
    if (words == lr_offset) lr_offset = 0;
    words += words & 1u;
  }
  // where the block's counters live: shared memory after the user's dynamic bytes when it fits
  // (the function's attributes asked once per device)
  bool sm = m->sm == 2;
  std::string why = sm ? "SM mode: the block's counters live in shared memory"
                       : "device memory (no SM in this mode)";
  const size_t dyn_user = (c.shared_mem + 15) & ~(size_t)15;
  size_t dyn = c.shared_mem;
  if (sm) {
    auto fk = std::make_pair(d->instrumented, device);
    auto fit = s.funcs.find(fk);
    if (fit == s.funcs.end()) {
      FuncInfo fi;
      cudaFuncAttributes attr;
      memset(&attr, 0, sizeof attr);
      if (cudaFuncGetAttributes(&attr, d->instrumented) != cudaSuccess) cudaGetLastError();
      fi.static_shared = attr.sharedSizeBytes;
      if (cudaDeviceGetAttribute(&fi.optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) !=
          cudaSuccess) {
        cudaGetLastError();
        fi.optin = 48 * 1024;
      }
      fi.dyn_set = 48 * 1024 > fi.static_shared ? 48 * 1024 - fi.static_shared : 0;
      fit = s.funcs.emplace(fk, fi).first;
    }
    FuncInfo &fi = fit->second;
    const size_t need = fi.static_shared + dyn_user + (size_t)words * 4;
    if (need > (size_t)fi.optin) {
      sm = false;
      why = "device memory: the kernel's " + std::to_string(fi.static_shared + c.shared_mem) +
            " bytes of shared memory plus " + std::to_string(words * 4) +
            " bytes of counters exceed the " + std::to_string(fi.optin) + "-byte limit per block";
    } else {
      dyn = dyn_user + (size_t)words * 4;
      if (dyn > fi.dyn_set) {
        if (cudaFuncSetAttribute(d->instrumented, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)dyn) != cudaSuccess) {
          cudaGetLastError();
          sm = false;
          dyn = c.shared_mem;
          why = "device memory: raising the kernel's dynamic shared memory limit failed";
        } else {
          fi.dyn_set = dyn;
        }
      }
    }
  }
  const unsigned long long blocks = (unsigned long long)c.grid.x * c.grid.y * c.grid.z;
#if !defined(GMPROF_CPU)
  if (sm && c.cooperative) {
    // a cooperative grid must be resident at once: the counters in shared memory take room
    // the program sized its grid without (it asks the occupancy of the original kernel), so
    // where they would leave fewer blocks resident than the grid, they go to device memory
    int per_sm = 0, sms = 0;
    const int threads = (int)(c.block.x * c.block.y * c.block.z);
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, d->instrumented, threads, dyn) !=
            cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
      cudaGetLastError();
      per_sm = 0;
    }
    if ((unsigned long long)per_sm * (unsigned long long)sms < blocks) {
      sm = false;
      dyn = c.shared_mem;
      why = "device memory: a cooperative launch's grid must be resident at once, and the "
            "counters in shared memory would leave too few blocks resident";
    }
  }
#endif
  const unsigned replicas = sm ? (unsigned)(blocks < kMaxReplicas ? (blocks ? blocks : 1) : kMaxReplicas) : 1;
  key += sm ? "|sm" : "|dm";
  const double t_mapped = now_s();
  s.timing.map += t_mapped - t_start;

  Group &g = s.groups[key];
  if (!g.module) {
    g.module = m;
    g.kernel = d;
    g.device = device;
    g.sm = sm;
    g.why = why;
    g.area_words = words;
    g.obj_counters = offset;
    g.lr_offset = lr_offset;
    g.sites_end = sites_end;
    g.replicas = replicas;
    g.objects = objs;
    g.area.assign(words, 0);
    g.shared.assign(offset, 0);
    s.group_order.push_back(key);
  }
  if (!g.scratch && !setup_group(s, g, d, csize))
    return unprofiled(s, d, c, args, typed, std::string("launches of ") + d->name +
                      " ran unprofiled: no device memory for their counters");
  if (!setup_children(s, g, key, csize))
    return unprofiled(s, d, c, args, typed, std::string("launches of ") + d->name +
                      " ran unprofiled: the counters of the kernels its file's copies launch "
                      "from the device could not be laid out");
  if (!s.harvest_registered) {
    // registered once the CUDA runtime has allocated (it registered its own exit handler by
    // then), so that it runs before that handler: the counters are read while the context lives
    s.harvest_registered = true;
    atexit(harvest_at_exit);
  }
  Desc *D = desc_for(s, g, d, c, csize, replicas);
  // past kMergeAfter records, a launch like an earlier one (shape, shared memory, arguments)
  // adds to that one's record (its runs and accesses out of range: `repeat` in the report),
  // so that a program's millions of launches keep a report of bounded size
  std::string params = params_json(d, args);
  std::string alike_key;
  size_t merged = (size_t)-1;
  if (!captured) {
    alike_key = std::to_string(c.grid.x) + "," + std::to_string(c.grid.y) + "," +
                std::to_string(c.grid.z) + "," + std::to_string(c.block.x) + "," +
                std::to_string(c.block.y) + "," + std::to_string(c.block.z) + "," +
                std::to_string(c.shared_mem) + params;
    auto al = g.alike.find(alike_key);
    if (al != g.alike.end() && g.launches.size() >= kMergeAfter) merged = al->second;
    // (not into a record read back and released by cudaDeviceReset: its log is gone)
    if (merged != (size_t)-1 && !g.launches[merged].log) {
      g.alike.erase(al);
      merged = (size_t)-1;
    }
  }
  unsigned long long *log =
      !D ? nullptr : merged != (size_t)-1 ? g.launches[merged].log : log_slot(s, g);
  if (!D || !log)
    return unprofiled(s, d, c, args, typed, std::string("launches of ") + d->name +
                      " ran unprofiled: no device memory for their counters");
  cudaError_t err = fill_for(s, m, *D, c.stream, captured, capture);
  if (err != cudaSuccess) return failed(s, d, c, err);
  if (s.building) s.built_desc = D;
  double t0 = now_s();
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  if (!captured && merged == (size_t)-1) {
    e0 = pooled_event(s);
    e1 = pooled_event(s);
    if (e0) cudaEventRecord(e0, c.stream);
  }
  Config ci = c;
  ci.shared_mem = dyn;
  err = run_kernel(d->instrumented, d->invoke_instrumented ? d->invoke_instrumented : typed, ci,
                   args, d->name, d);
  if (err == cudaErrorCooperativeLaunchTooLarge && c.cooperative) {
    // the instrumented copy (more registers, its counters in shared memory) leaves fewer
    // blocks resident than the grid needs: the launch runs as it was, unprofiled
    cudaGetLastError();
    if (e0) s.pools[device].push_back(e0);
    if (e1) s.pools[device].push_back(e1);
    return unprofiled(s, d, c, args, typed, std::string("a cooperative launch of ") + d->name +
                      " ran unprofiled: its instrumented copy cannot have the whole grid "
                      "resident at once");
  }
  if (e1) cudaEventRecord(e1, c.stream);
  const double t1 = now_s();
  s.timing.launch += t1 - t0;
  if (err != cudaSuccess) {
    if (e0) s.pools[device].push_back(e0);
    if (e1) s.pools[device].push_back(e1);
    return failed(s, d, c, err);
  }
  // the fold: this launch's counters into the group's totals, on its stream
  fold::FoldJob *job = &D->job;
  job->log = (unsigned long long)(uintptr_t)log;
#if defined(GMPROF_CPU)
  if (captured) {
    g.kept_jobs.push_back(*job);  // each replay folds with this launch's own log entry
    job = &g.kept_jobs.back();
  }
#endif
  cudaError_t ferr = fold::enqueue(job, c.stream);
  if (ferr != cudaSuccess) cudaGetLastError();
  fold_children(s, g, c.stream);
  // after the fold: a launch of another group that shares these counters waits for both (a
  // graph's launch: graph_launch waits and notes its stream)
  if (!s.building) note_user(s, m, c.stream, capture);
  KernelTiming &kt = s.timing.kernels[d->name];
  unsigned long long folded = (unsigned long long)g.area_words * 4 * replicas;
  for (unsigned i = 0; i < job->n_objects; ++i) folded += job->obj[i].n * csize;
  kt.folded += folded;
  s.timing.folded += folded;
  const double t2 = now_s();
  s.timing.fold += t2 - t1;
  if (merged != (size_t)-1) {
    if (s.sync_each) {
      cudaError_t e = cudaStreamSynchronize(c.stream);
      if (e != cudaSuccess) return failed(s, d, c, e);
    }
    if (!captured) ++s.profiled;
    ++kt.launches;
    kt.seconds += now_s() - t_start;
    return cudaSuccess;
  }
  LaunchRec rec;
  rec.grid[0] = c.grid.x;
  rec.grid[1] = c.grid.y;
  rec.grid[2] = c.grid.z;
  rec.block[0] = c.block.x;
  rec.block[1] = c.block.y;
  rec.block[2] = c.block.z;
  rec.shared_mem = c.shared_mem;
  rec.ms = 0;
  rec.index = s.building ? s.build_index : s.seen - 1;
  rec.oor = 0;  // the fold logs it; the static sites' are added when the file is decoded
  rec.params = params;
  rec.log = log;
  rec.captured = captured;
  g.launches.push_back(rec);
  if (!captured) g.alike.emplace(alike_key, g.launches.size() - 1);
  if (e0 && e1) s.pending.push_back(Pending{device, &g, g.launches.size() - 1, e0, e1});
  if (s.pending.size() >= 256) reap_times(s, false);
  if (s.sync_each && !captured) {
    // GMPROF_SYNC=1: wait for each launch, so that a fault names its launch
    const double ts = now_s();
    cudaError_t e = cudaStreamSynchronize(c.stream);
    s.timing.sync += now_s() - ts;
    if (e != cudaSuccess) {
      g.launches.pop_back();
      g.alike.erase(alike_key);
      if (!s.pending.empty() && s.pending.back().g == &g) s.pending.pop_back();
      return failed(s, d, c, e);
    }
  }
  if (!captured) ++s.profiled;
  ++kt.launches;
  kt.seconds += now_s() - t_start;
  return cudaSuccess;
}

void harvest(State &s, bool release);

// The copies' counts of the launches they made from the device (dynamic parallelism), on every
// device with counters: each module's own __device__ array, added up and zeroed.
void read_device_launches(State &s, const std::map<int, bool> &devices) {
  const int home = current_device();
  for (const ModuleDesc *m : s.modules) {
    if (m->n_device_launches <= 0 || !m->device_launches) continue;
    std::vector<unsigned long long> counts(m->n_device_launches, 0);
    for (auto &dv : devices) {
      if (cudaSetDevice(dv.first) != cudaSuccess || m->device_launches(counts.data()) != cudaSuccess)
        cudaGetLastError();
    }
    for (int i = 0; i < m->n_device_launches; ++i)
      if (counts[i]) s.device_launches[m->device_launch_names[i]] += counts[i];
  }
  if (cudaSetDevice(home) != cudaSuccess) cudaGetLastError();
}

void harvest_at_exit() {
  State &s = state();
  if (s.refused) return;
  std::lock_guard<std::mutex> guard(s.lock);
  harvest(s, false);
}

// Reads every group's totals back and adds them to the host's sums (at exit, and before
// cudaDeviceReset frees gmprof's buffers with everything else); `release` frees the device
// buffers (the next launch sets up new ones).
void harvest(State &s, bool release) {
  if (s.group_order.empty()) return;
  double t0 = now_s();
  // every device with counters (a device's synchronise waits for its own work only)
  const int home = current_device();
  cudaError_t e = cudaSuccess;
  std::map<int, bool> devices;
  for (auto &kv : s.groups) devices[kv.second.device] = true;
  for (auto &dv : devices) {
    if (dv.first != home && cudaSetDevice(dv.first) != cudaSuccess) continue;
    cudaError_t ed = cudaDeviceSynchronize();
    if (e == cudaSuccess) e = ed;
  }
  if (cudaSetDevice(home) != cudaSuccess) cudaGetLastError();
  s.timing.sync += now_s() - t0;
#if !defined(GMPROF_CPU)
  if (e != cudaSuccess) {
    // the context is gone (a kernel fault): the counters gmprof kept on the device with it
    if (!s.lost) {
      s.lost = true;
      s.notes.push_back(std::string("the device failed (") + cudaGetErrorString(e) + ") before "
                        "gmprof read its counters back: the counts kept on the device are lost "
                        "(GMPROF_SYNC=1 waits for each profiled launch, so that the report names "
                        "the launch that failed and keeps the others' counts)");
      if (!s.pending.empty()) {
        const Pending &p = s.pending.front();
        const LaunchRec &r = p.g->launches[p.rec];
        s.failed.push_back(FailedRec{p.g->kernel->name, r.index,
                                     {r.grid[0], r.grid[1], r.grid[2]},
                                     {r.block[0], r.block[1], r.block[2]},
                                     cudaGetErrorString(e)});
      }
    }
    for (auto &kv : s.groups) kv.second.launches.clear();
    s.pending.clear();
    return;
  }
#else
  (void)e;  // the CPU backend's memory is readable after a fault
#endif
  reap_times(s, true);
  read_device_launches(s, devices);
  for (const std::string &key : s.group_order) {
    Group &g = s.groups[key];
    if (!g.scratch) continue;
    if (cudaSetDevice(g.device) != cudaSuccess) cudaGetLastError();
    t0 = now_s();
    std::vector<unsigned long long> tot(g.n_totals);
    bool ok = read_device(tot.data(), g.totals, g.n_totals * 8);
    // an object's first harvest reads its totals back packed (narrowed per chunk on the
    // device, gmprof_host_pack.h: the bytes read back and written are what the values need,
    // not 8 an element); a later one (after a cudaDeviceReset), or one whose range sites'
    // difference array must be prefix-summed, reads its u64 totals into objs[i], adds them to
    // what it kept and packs the sum on the host
    std::vector<counts::Sums> objs(g.objects.size());
    std::vector<bool> direct(g.objects.size(), false);
    unsigned long long copied = 0;
    // GMPROF_TEST_PACK_BATCH=BYTES (tests): the packed read-back's batch, to cross batches
    const char *batch_env = getenv("GMPROF_TEST_PACK_BATCH");
    const unsigned long long batch =
        batch_env ? strtoull(batch_env, nullptr, 0) : (unsigned long long)pack::kBatch;
    for (size_t i = 0; i < g.objects.size(); ++i) {
      ObjState &o = g.objects[i];
      // nothing folded into it since the last harvest: nothing to read (a never-touched
      // object keeps no sums and is written as zeros)
      if (!o.total || !tot[touched_flags(g) + i]) continue;
      const size_t entries = entries_of(g.kernel, i, o);
      if (!o.packed.n && entries == o.n &&
          pack::read_back(o.total, o.n, o.packed, batch, read_device, copied)) {
        direct[i] = true;
        continue;
      }
      // (the device had no room to pack it: read whole)
      copied += entries * 8;
      objs[i].resize(entries);
      ok = read_device(objs[i].data(), o.total, objs[i].size() * 8) && ok;
    }
    std::vector<unsigned long long> logs(g.logs.size() * 2 * kLogChunk);
    for (size_t i = 0; i < g.logs.size(); ++i)
      ok = read_device(logs.data() + i * 2 * kLogChunk, g.logs[i], 2 * kLogChunk * 8) && ok;
    std::vector<unsigned long long> warps(g.n_warps);
    if (g.warps) ok = read_device(warps.data(), g.warps, g.n_warps * 8) && ok;
    unsigned long long grids = 0;  // a child's group: the grids that ran
    if (g.grids) ok = read_device(&grids, g.grids, 8) && ok;
    copied += (tot.size() + logs.size() + warps.size()) * 8;
    s.timing.copied += copied;
    s.timing.kernels[g.kernel->name].copied += copied;
    const double t1 = now_s();
    s.timing.readback += t1 - t0;
    if (!ok) {
      // (a cudaDeviceReset that gmprof did not see, in a file it did not translate, freed them)
      s.notes.push_back(std::string("the counters of ") + g.kernel->name + " could not be read "
                        "back from the device: its launches are left out of the report");
      g.launches.clear();
      g.scratch = nullptr;
      for (size_t i = 0; i < g.objects.size(); ++i)
        if (direct[i]) g.objects[i].packed = pack::Packed();
      continue;
    }
    g.grids_total += grids;
    for (unsigned w = 0; w < g.area_words; ++w) g.area[w] += tot[w];
    for (unsigned i = 0; i < g.obj_counters; ++i) g.shared[i] += tot[g.area_words + i];
    const size_t oor0 = (size_t)g.area_words + g.obj_counters;
    g.unknown_oor += tot[oor0];
    for (size_t i = 0; i < g.objects.size(); ++i) {
      g.objects[i].oor += tot[oor0 + 1 + i];
      if (objs[i].empty()) continue;  // read back packed, or nothing to read
      const size_t n = g.objects[i].n;
      std::vector<unsigned long long> sum(n, 0);
      if (g.objects[i].packed.n == n) pack::unpack_add(g.objects[i].packed, sum.data());
      unsigned long long run = 0;  // the difference array's prefix sum (mod 2^64: signed)
      for (size_t j = 0; j < n && j < objs[i].size(); ++j) {
        if (objs[i].size() > n) run += objs[i][n + j];
        sum[j] += objs[i][j] + run;
      }
      pack::pack_host(sum.data(), n, g.objects[i].packed);
    }
    g.clock_records += tot[oor0 + 1 + g.objects.size()];
    const size_t max0 = oor0 + 2 + g.objects.size();
    g.site_max.resize(g.module->n_sites, 0);
    for (int i = 0; i < g.module->n_sites; ++i)
      g.site_max[i] = std::max(g.site_max[i], tot[max0 + i]);
    g.warp_stats.resize(g.n_warps, 0);
    for (size_t i = 0; i < warps.size(); ++i) g.warp_stats[i] += warps[i];
    // each launch's log entry: where in the chunks it lies
    for (LaunchRec &r : g.launches) {
      if (!r.log) continue;
      for (size_t i = 0; i < g.logs.size(); ++i) {
        if (r.log < g.logs[i] || r.log >= g.logs[i] + 2 * kLogChunk) continue;
        const size_t at = i * 2 * kLogChunk + (size_t)(r.log - g.logs[i]);
        r.oor += logs[at];
        r.runs += logs[at + 1];
        break;
      }
    }
    s.timing.sum += now_s() - t1;
    if (release) {
      cudaFree(g.scratch);
      cudaFree(g.totals);
      if (g.warps) cudaFree(g.warps);
      g.warps = nullptr;
      for (ObjState &o : g.objects) {
        cudaFree(o.total);
        o.total = nullptr;
        o.shadow = nullptr;
      }
      for (auto &dv : g.descs) cudaFree(dv.second.dev);
      g.descs.clear();
      for (auto &x : s.execs) x.second.fills.clear();  // (their descriptions are gone)
      for (unsigned long long *p : g.logs) cudaFree(p);
      for (LaunchRec &r : g.launches) r.log = nullptr;
      g.logs.clear();
      g.log_used = 0;
      g.scratch = nullptr;
      g.totals = nullptr;
      // (laid out again with the parent's group, at its next launch)
      if (g.grids) cudaFree(g.grids);
      g.grids = nullptr;
      g.child_desc = nullptr;
      g.child_jobs.clear();
      g.children_dev = nullptr;
      g.child_keys.clear();
    } else {
      // zero what was read, so that a later harvest adds only what came after
      Relaxed relaxed;
      cudaStream_t side = side_stream(s);
      cudaMemsetAsync(g.totals, 0, g.n_totals * 8, side);
      if (g.warps) cudaMemsetAsync(g.warps, 0, g.n_warps * 8, side);
      for (size_t i = 0; i < g.objects.size(); ++i)
        if (g.objects[i].total)
          cudaMemsetAsync(g.objects[i].total, 0, entries_of(g.kernel, i, g.objects[i]) * 8, side);
      for (unsigned long long *p : g.logs) cudaMemsetAsync(p, 0, 2 * kLogChunk * 8, side);
      if (g.grids) cudaMemsetAsync(g.grids, 0, 8, side);
      cudaStreamSynchronize(side);
      cudaGetLastError();
    }
  }
  if (cudaSetDevice(home) != cudaSuccess) cudaGetLastError();
  if (release) {
    for (auto &sh : s.shadows) cudaFree(sh.second.ptr);
    s.shadows.clear();
    for (auto &ms : s.mods) {
      for (auto &u : ms.second.users) cudaEventDestroy(u.second.ev);
      if (ms.second.fill_ev) cudaEventDestroy(ms.second.fill_ev);
    }
    s.mods.clear();
    for (auto &pool : s.pools)
      for (cudaEvent_t ev : pool.second) cudaEventDestroy(ev);
    s.pools.clear();
    for (auto &side : s.sides)
      if (side.second) cudaStreamDestroy(side.second);
    s.sides.clear();
    s.funcs.clear();
    cudaGetLastError();
  }
}

}  // namespace

void register_module(const ModuleDesc *module, KernelDesc *kernels, int n) {
  State &s = state();
  std::lock_guard<std::mutex> guard(s.lock);
  check_options(module, s.modules.empty());  // a bad value: the program stops here
  s.modules.push_back(module);
  for (int i = 0; i < n; ++i) {
    if (!kernels[i].native) continue;
    kernels[i].module = module;
    // a template instantiated in several files is registered by each; any one will do
    if (!s.kernels.count(kernels[i].native) || (!s.kernels[kernels[i].native].desc->instrumented &&
                                                kernels[i].instrumented))
      s.kernels[kernels[i].native] = Kernel{&kernels[i], module};
#if defined(GMPROF_CPU)
    functions().emplace(kernels[i].native, std::make_pair(&kernels[i], false));
    if (kernels[i].instrumented)
      functions()[kernels[i].instrumented] = std::make_pair(&kernels[i], true);
#endif
  }
#if defined(GMPROF_CPU)
  gmprof_cudart_set_kernel_hooks(run_node, node_kernel_info);
#endif
  if (!s.registered_exit && module->instrumented) {
    s.registered_exit = true;
    atexit(at_exit);
  }
}

cudaError_t dispatch(const void *kernel, const Config &c, void **args, Invoker typed) {
  State &s = state();
  std::unique_lock<std::mutex> guard(s.lock);
  load_options(s);
  auto it = s.kernels.find(kernel);
  const Kernel *k = it == s.kernels.end() ? nullptr : &it->second;
  const char *name = k ? k->desc->name : nullptr;
  const bool selected = launch_selected(s, name);
  if (selected && k && k->desc->instrumented) return profile_launch(s, *k, c, args, typed);
  if (selected && s.registered_exit) ++s.not_instrumented[name ? name : "(a kernel gmprof did not translate)"];
  guard.unlock();
  Invoker inv = typed ? typed : (k ? k->desc->invoke_native : nullptr);
#if defined(GMPROF_CPU)
  if (!inv) {
    fprintf(stderr, "gmprof: error: a kernel launched through cudaLaunchKernel is not known to "
                    "the CPU backend (its file was not compiled with gmprof nvcc)\n");
    return cudaErrorInvalidDeviceFunction;
  }
  std::lock_guard<std::mutex> run(s.lock);  // one launch at a time on the CPU
#endif
  return run_kernel(kernel, inv, c, args, name, k ? k->desc : nullptr);
}

cudaError_t launch_kernel_untyped(const void *kernel, dim3 grid, dim3 block, void **args,
                                  size_t shared_mem, cudaStream_t stream) {
  return dispatch(kernel, Config{grid, block, shared_mem, stream, nullptr, false}, args, nullptr);
}

cudaError_t launch_cooperative_untyped(const void *kernel, dim3 grid, dim3 block, void **args,
                                       size_t shared_mem, cudaStream_t stream) {
  return dispatch(kernel, Config{grid, block, shared_mem, stream, nullptr, true}, args, nullptr);
}

cudaError_t launch_kernel_ex_untyped(const cudaLaunchConfig_t *config, const void *kernel,
                                     void **args, Invoker typed) {
  if (!config) return cudaErrorInvalidValue;
  return dispatch(kernel,
                  Config{config->gridDim, config->blockDim, config->dynamicSmemBytes,
                         config->stream, config, false},
                  args, typed);
}

#if !defined(GMPROF_CPU) && CUDART_VERSION >= 13000 && !defined(__NV_LEGACY_LAUNCH)
// Launches gmprof did not rewrite: `k<<<g, b>>>(args)` in code it did not translate, above all
// the templates of a library in CUDA's own headers (Thrust's algorithms launch CUB's kernels
// from there: radixSortThrust launches nothing else). nvcc compiles such a launch into a call of
// __cudaLaunchKernel, which gmprof nvcc's link wraps (-Xlinker --wrap, gmprof/program/build.py
// LAUNCH_WRAPS): each is counted as a selected launch that ran unprofiled, by its kernel's
// name, where before the report did not know it ran. gmprof's own launches go through
// cudaLaunchKernel and are not counted here.
std::string plain_kernel_name(const char *mangled) {
  int status = 0;
  char *d = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string full = status == 0 && d ? d : mangled;
  free(d);
  // `void ns::k<T, 4>(T*, int)` -> `ns::k`: the return type, template arguments and parameters
  // dropped (Thrust's and CUB's run to kilobytes)
  if (full.compare(0, 5, "void ") == 0) full = full.substr(5);
  std::string out;
  int depth = 0;
  for (char ch : full) {
    if (ch == '<') ++depth;
    else if (ch == '>' && depth > 0) --depth;
    else if (ch == '(' && depth == 0) break;
    else if (depth == 0) out += ch;
  }
  return out.empty() ? full : out;
}

const char *unseen_kernel_name(State &s, cudaKernel_t kernel) {
  auto it = s.unseen_names.find((const void *)kernel);
  if (it != s.unseen_names.end()) return it->second.c_str();
  using GetName = CUresult (*)(const char **, CUkernel);
  static GetName get = [] {
    void *fn = nullptr;
    cudaDriverEntryPointQueryResult found;
    return cudaGetDriverEntryPointByVersion("cuKernelGetName", &fn, 12030, cudaEnableDefault,
                                            &found) == cudaSuccess &&
                   found == cudaDriverEntryPointSuccess
               ? reinterpret_cast<GetName>(fn)
               : nullptr;
  }();
  const char *mangled = nullptr;
  std::string name = get && get(&mangled, (CUkernel)kernel) == CUDA_SUCCESS && mangled
                         ? plain_kernel_name(mangled)
                         : std::string("(a kernel gmprof did not translate)");
  return s.unseen_names.emplace((const void *)kernel, name).first->second.c_str();
}

void count_unseen_launch(cudaKernel_t kernel) {
  State &s = state();
  std::lock_guard<std::mutex> guard(s.lock);
  load_options(s);
  const char *name = unseen_kernel_name(s, kernel);
  if (!launch_selected(s, name) || !s.registered_exit) return;
  ++s.not_instrumented[name];
  static const char *why =
      "launches made by code gmprof did not translate (`<<<...>>>` in a library's templates in "
      "CUDA's headers, such as Thrust's and CUB's, or in a file compiled without profiling) "
      "ran unprofiled; they are counted by kernel among the launches not instrumented";
  if (std::find(s.notes.begin(), s.notes.end(), why) == s.notes.end()) s.notes.push_back(why);
}
#endif

// Reads gmprof's counters back before the reset frees them with everything else.
cudaError_t device_reset() {
  State &s = state();
  {
    std::lock_guard<std::mutex> guard(s.lock);
    harvest(s, true);
    // the reset destroys every graph and executable graph (gmprof's copies with them)
    for (auto &kv : s.marks)
      if (!kv.second.profiled) ++s.captured[kv.second.k->desc->name];
    s.marks.clear();
    s.bodies.clear();
    s.execs.clear();
    s.graph_allocs.clear();
  }
  return cudaDeviceReset();
}

#include "gmprof_host_graphs.h"

}  // namespace gmprof_host

#if !defined(GMPROF_CPU) && CUDART_VERSION >= 13000 && !defined(__NV_LEGACY_LAUNCH)
// (weak: a link without the wraps, such as one whose flags CMake kept from before, still
// links; the wrappers are then never called)
extern "C" cudaError_t __real___cudaLaunchKernel(cudaKernel_t, dim3, dim3, void **, size_t,
                                                 cudaStream_t) __attribute__((weak));
extern "C" cudaError_t __real___cudaLaunchKernel_ptsz(cudaKernel_t, dim3, dim3, void **, size_t,
                                                      cudaStream_t) __attribute__((weak));
extern "C" cudaError_t __wrap___cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block,
                                                 void **args, size_t shared_mem,
                                                 cudaStream_t stream) {
  gmprof_host::count_unseen_launch(kernel);
  return __real___cudaLaunchKernel(kernel, grid, block, args, shared_mem, stream);
}
extern "C" cudaError_t __wrap___cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 grid, dim3 block,
                                                      void **args, size_t shared_mem,
                                                      cudaStream_t stream) {
  gmprof_host::count_unseen_launch(kernel);
  return __real___cudaLaunchKernel_ptsz(kernel, grid, block, args, shared_mem, stream);
}
#endif
