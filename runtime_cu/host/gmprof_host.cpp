// gmprof host runtime for whole programs (see gmprof_host.h for the interface and the flow).
//
// Stage: runtime, host side. Input: the modules' tables (registered before main), every kernel
// launch of the program, the options (build-time defaults, then GMPROF_* variables). Output: the
// launches run (original or instrumented), and at exit one report file of raw records that
// gmprof's Python decoder reads (gmprof/program/records.py):
//   groups of selected launches with one layout (kernel, allocations, where the block's counters
//   live): per launch its shape and parameter bytes (what the static formulas need), its number
//   in the process and the out-of-range accesses its counters caught (which launches failed
//   the check; the static sites' are found when the file is decoded); per group
//   the counters read back after each launch and summed (per-site executions, shared words,
//   device elements, out-of-range counts).
//
// Selected launches are serialised (one lock) and synchronous: the runtime fills the module's
// launch description, launches on the user's stream, waits for that stream and reads back. So
// two streams never race on a description, and the counters of a launch are its own.
//
// Built by nvcc/g++ for the GPU, and by g++ against gmprof's CUDA runtime emulation for the CPU
// backend (GMPROF_CPU).
#include "gmprof_host.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <regex>
#include <string>
#include <vector>

#if defined(GMPROF_CPU)
extern "C" int gmprof_cudart_address_range(const void *p, void **base, size_t *bytes);
extern "C" void gmprof_cpu_set_cooperative(int on);
extern "C" cudaError_t gmprof_cudart_launch(void (*entry)(void **), void **args, dim3 grid,
                                           dim3 block, size_t shared_mem, cudaStream_t stream,
                                           const char *name);
#endif

namespace gmprof_host {

const void *g_running;

namespace {

// ---------------------------------------------------------------- the launch description
// gmprof.cuh's Launch and Object, field for field (gmprof/runtime/layout.py has the same)
// kSiteWords: a site's execution count is a u64 (gmprof.cuh site_count_t)
enum { kMaxObjects = 64, kAreaHeader = 2, kSiteWords = 2, kLrStride = 14, kMaxReplicas = 32 };
enum { FLAG_WARP_UNIFORM_OK = 1, FLAG_AREA_SHARED = 2 };
enum { KIND_DEVICE = 1, KIND_SHARED = 2 };
enum { kClockCapacity = 1 << 16 };

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
  unsigned long long warp_stats;  // per-warp access statistics (gmprof.cuh GMPROF_WARPS; unused)
  Object obj[kMaxObjects];
};

// ---------------------------------------------------------------- options

struct Options {
  std::string kernel;   // "" all, a name, or "regex:..."
  long long skip = 0;
  long long count = -1;  // -1: all
  std::string output = "gmprof-report-%p.json";
  bool quiet = false;
  bool loaded = false;
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
  std::vector<unsigned long long> sum;
  unsigned long long oor = 0;
};

struct LaunchRec {
  unsigned grid[3], block[3];
  size_t shared_mem;
  double ms;
  long long index;         // the process's launch number (0: its first launch of any kernel)
  unsigned long long oor;  // accesses out of range that this launch's counters caught
  std::string params;      // JSON array
};

// A selected launch that failed (a device-side assert, a fault): listed in the report as failed,
// with the error, so that the other launches' counts are still reported (issue 25).
struct FailedRec {
  std::string kernel;
  long long index;  // the process's launch number
  unsigned grid[3], block[3];
  std::string error;
};

struct Group {
  const ModuleDesc *module;
  const KernelDesc *kernel;
  int device;
  bool sm;
  std::string why;
  unsigned area_words, obj_counters, lr_offset, replicas;
  std::vector<ObjState> objects;
  // header + sites (+ live-range words), summed; a site's u64 count at its first word
  std::vector<unsigned long long> area;
  std::vector<unsigned long long> shared;   // the shared objects' counters, summed
  unsigned long long unknown_oor = 0;
  unsigned long long clock_records = 0;
  std::vector<LaunchRec> launches;
};

struct Shadow {
  void *ptr = nullptr;
  size_t bytes = 0;
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
  std::vector<FailedRec> failed;
  std::map<std::string, Group> groups;
  std::vector<std::string> group_order;
  std::map<std::string, Shadow> shadows;
  Shadow scratch;
  std::map<int, std::string> device_names;
  std::vector<std::string> notes;
  bool registered_exit = false;
};

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
  s.options.output = env_or("GMPROF_OUTPUT", s.options.output);
  s.options.quiet = getenv("GMPROF_QUIET") != nullptr;
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

// ---------------------------------------------------------------- JSON and base64

std::string json_string(const std::string &s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += (char)c;
    } else if (c < 0x20) {
      char buf[8];
      snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += (char)c;
    }
  }
  return out + "\"";
}

std::string base64(const unsigned char *p, size_t n) {
  static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((n + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < n; i += 3) {
    unsigned v = (p[i] << 16) | (p[i + 1] << 8) | p[i + 2];
    out += t[v >> 18];
    out += t[(v >> 12) & 63];
    out += t[(v >> 6) & 63];
    out += t[v & 63];
  }
  if (i < n) {
    unsigned v = p[i] << 16;
    if (i + 1 < n) v |= p[i + 1] << 8;
    out += t[v >> 18];
    out += t[(v >> 12) & 63];
    out += i + 1 < n ? t[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

// counters as {"dtype": "u4"|"u8", "data": base64 little-endian}, or {"dtype": "zero", "n": N}
// when every one is zero (an object whose sites are all counted from their formulas)
std::string counts_json(const std::vector<unsigned long long> &v) {
  bool narrow = true, zero = true;
  for (unsigned long long x : v) {
    if (x > 0xffffffffull) narrow = false;
    if (x) zero = false;
  }
  if (zero && !v.empty())
    return "{\"dtype\": \"zero\", \"n\": " + std::to_string((unsigned long long)v.size()) + "}";
  std::string data;
  if (narrow) {
    std::vector<uint32_t> w(v.begin(), v.end());
    data = base64(reinterpret_cast<const unsigned char *>(w.data()), w.size() * 4);
  } else {
    data = base64(reinterpret_cast<const unsigned char *>(v.data()), v.size() * 8);
  }
  return std::string("{\"dtype\": \"") + (narrow ? "u4" : "u8") + "\", \"data\": \"" + data + "\"}";
}

std::string hex(const void *p, size_t n) {
  static const char d[] = "0123456789abcdef";
  std::string out;
  const unsigned char *b = static_cast<const unsigned char *>(p);
  for (size_t i = 0; i < n; ++i) {
    out += d[b[i] >> 4];
    out += d[b[i] & 15];
  }
  return out;
}

// ---------------------------------------------------------------- the report file

std::string expand_output(const std::string &pattern) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c != '%' || i + 1 >= pattern.size()) {
      out += c;
      continue;
    }
    char n = pattern[++i];
    if (n == 'p') {
      out += std::to_string((long long)getpid());
    } else if (n == 'h') {
      char host[256] = "";
      gethostname(host, sizeof host - 1);
      out += host;
    } else if (n == 'q' && i + 1 < pattern.size() && pattern[i + 1] == '{') {
      size_t close = pattern.find('}', i + 2);
      if (close == std::string::npos) {
        out += "%q";
        continue;
      }
      const char *v = getenv(pattern.substr(i + 2, close - i - 2).c_str());
      out += v ? v : "";
      i = close;
    } else if (n == '%') {
      out += '%';
    } else {
      out += '%';
      out += n;
    }
  }
  return out;
}

void write_report() {
  State &s = state();
  std::lock_guard<std::mutex> guard(s.lock);
  load_options(s);
  std::string path = expand_output(s.options.output);
  std::string tmp = path + ".tmp." + std::to_string((long long)getpid());
  FILE *f = fopen(tmp.c_str(), "w");
  if (!f) {
    fprintf(stderr, "gmprof: error: cannot write the report file %s: %s\n", path.c_str(),
            strerror(errno));
    return;
  }
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  fprintf(f, "{\"schema\": \"gmprof.raw/1\", \"pid\": %lld, \"host\": %s, ", (long long)getpid(),
          json_string(host).c_str());
#if defined(GMPROF_CPU)
  fprintf(f, "\"backend\": \"cpu\", ");
#else
  fprintf(f, "\"backend\": \"gpu\", ");
#endif
  fprintf(f, "\"options\": {\"kernel\": %s, \"skip\": %lld, \"count\": %lld}, ",
          json_string(s.options.kernel).c_str(), s.options.skip, s.options.count);
  fprintf(f, "\"launches\": %lld, \"matching\": %lld, \"profiled\": %lld, ", s.seen, s.matching,
          s.profiled);
  fprintf(f, "\"devices\": {");
  bool first = true;
  for (auto &d : s.device_names) {
    fprintf(f, "%s\"%d\": %s", first ? "" : ", ", d.first, json_string(d.second).c_str());
    first = false;
  }
  fprintf(f, "}, \"not_instrumented\": {");
  first = true;
  for (auto &n : s.not_instrumented) {
    fprintf(f, "%s%s: %lld", first ? "" : ", ", json_string(n.first).c_str(), n.second);
    first = false;
  }
  fprintf(f, "}, \"captured\": {");
  first = true;
  for (auto &n : s.captured) {
    fprintf(f, "%s%s: %lld", first ? "" : ", ", json_string(n.first).c_str(), n.second);
    first = false;
  }
  fprintf(f, "}, \"failed\": [");
  for (size_t i = 0; i < s.failed.size(); ++i) {
    const FailedRec &r = s.failed[i];
    fprintf(f, "%s{\"kernel\": %s, \"index\": %lld, \"grid\": [%u, %u, %u], "
            "\"block\": [%u, %u, %u], \"error\": %s}", i ? ", " : "",
            json_string(r.kernel).c_str(), r.index, r.grid[0], r.grid[1], r.grid[2], r.block[0],
            r.block[1], r.block[2], json_string(r.error).c_str());
  }
  fprintf(f, "], \"notes\": [");
  for (size_t i = 0; i < s.notes.size(); ++i)
    fprintf(f, "%s%s", i ? ", " : "", json_string(s.notes[i]).c_str());
  fprintf(f, "],\n\"modules\": [");
  first = true;
  for (const ModuleDesc *m : s.modules) {
    fprintf(f, "%s\n{\"id\": %s, \"manifest\": %s, \"sizes\": {", first ? "" : ",",
            json_string(m->id).c_str(), m->manifest);
    for (int i = 0; i < m->n_sizes; ++i)
      fprintf(f, "%s%s: %llu", i ? ", " : "", json_string(m->size_names[i]).c_str(),
              m->sizes[i]);
    fprintf(f, "}}");
    first = false;
  }
  fprintf(f, "],\n\"groups\": [");
  first = true;
  for (const std::string &key : s.group_order) {
    Group &g = s.groups[key];
    fprintf(f, "%s\n{\"module\": %s, \"kernel\": %s, \"device\": %d, \"sm\": %s, \"why\": %s, ",
            first ? "" : ",", json_string(g.module->id).c_str(),
            json_string(g.kernel->name).c_str(), g.device, g.sm ? "true" : "false",
            json_string(g.why).c_str());
    first = false;
    fprintf(f, "\"area_words\": %u, \"obj_counters\": %u, \"lr_offset\": %u, \"replicas\": %u, ",
            g.area_words, g.obj_counters, g.lr_offset, g.replicas);
    fprintf(f, "\"unknown_oor\": %llu, \"clock_records\": %llu,\n \"area\": %s,\n \"shared\": %s,",
            g.unknown_oor, g.clock_records, counts_json(g.area).c_str(),
            counts_json(g.shared).c_str());
    fprintf(f, "\n \"objects\": [");
    for (size_t i = 0; i < g.objects.size(); ++i) {
      ObjState &o = g.objects[i];
      fprintf(f, "%s\n  {\"slot\": %d, \"kind\": %d, \"param\": %d, \"unit\": %llu, \"elem\": %llu, "
              "\"base\": %llu, \"bytes\": %llu, \"offset\": %llu, \"n\": %llu, "
              "\"area_offset\": %u, \"lr_offset\": %u, \"known\": %s, \"oor\": %llu",
              i ? "," : "", o.slot, o.kind, o.param, o.unit, o.elem, o.base, o.bytes, o.offset,
              o.n, o.area_offset, o.lr_offset, o.known ? "true" : "false", o.oor);
      if (o.kind == OBJ_PARAM || o.kind == OBJ_GLOBAL)
        fprintf(f, ", \"counts\": %s", counts_json(o.sum).c_str());
      fprintf(f, "}");
    }
    fprintf(f, "],\n \"launches\": [");
    for (size_t i = 0; i < g.launches.size(); ++i) {
      LaunchRec &l = g.launches[i];
      fprintf(f, "%s\n  {\"grid\": [%u, %u, %u], \"block\": [%u, %u, %u], \"shared_mem\": %zu, "
              "\"ms\": %.6f, \"index\": %lld, \"oor\": %llu, \"params\": %s}",
              i ? "," : "", l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1], l.block[2],
              l.shared_mem, l.ms, l.index, l.oor, l.params.c_str());
    }
    fprintf(f, "]}");
  }
  fprintf(f, "]}\n");
  bool ok = fflush(f) == 0;
  ok = (fclose(f) == 0) && ok;
  if (!ok || rename(tmp.c_str(), path.c_str()) != 0) {
    fprintf(stderr, "gmprof: error: cannot write the report file %s: %s\n", path.c_str(),
            strerror(errno));
    unlink(tmp.c_str());
    return;
  }
  if (!s.options.quiet)
    fprintf(stderr, "gmprof: %lld launch(es) profiled; report written to %s\n", s.profiled,
            path.c_str());
}

void at_exit() { write_report(); }

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

void *device_buffer(Shadow &sh, size_t bytes) {
  if (sh.bytes >= bytes && sh.ptr) return sh.ptr;
  if (sh.ptr) cudaFree(sh.ptr);
  sh.ptr = nullptr;
  sh.bytes = 0;
  size_t want = bytes < 256 ? 256 : bytes;
  if (cudaMalloc(&sh.ptr, want) != cudaSuccess) {
    sh.ptr = nullptr;
    cudaGetLastError();  // not the program's error
    return nullptr;
  }
  sh.bytes = want;
  return sh.ptr;
}

// ---------------------------------------------------------------- running a launch

cudaError_t run_kernel(const void *fn, Invoker invoker, const Config &c, void **args,
                       const char *name) {
#if defined(GMPROF_CPU)
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

// A selected launch of an instrumented kernel (the lock is held).
// A selected launch that failed: recorded (the report lists it as failed, its counters are not
// in the report); the error goes back to the program, which sees what it would natively.
cudaError_t failed(State &s, const KernelDesc *d, const Config &c, cudaError_t err) {
  s.failed.push_back(FailedRec{d->name, s.seen - 1, {c.grid.x, c.grid.y, c.grid.z},
                               {c.block.x, c.block.y, c.block.z}, cudaGetErrorString(err)});
  return err;
}

cudaError_t profile_launch(State &s, const Kernel &k, const Config &c, void **args,
                           Invoker typed) {
  const KernelDesc *d = k.desc;
  const ModuleDesc *m = k.module;
  const unsigned csize = (unsigned)m->counter_bits / 8;
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
    ObjState o;
    o.slot = od.slot;
    o.kind = od.kind;
    o.param = od.param;
    o.unit = od.unit;
    o.elem = od.elem;
    o.base = o.bytes = o.offset = o.n = 0;
    o.area_offset = o.lr_offset = 0;
    o.known = true;
    if (od.kind == OBJ_PARAM) {
      const void *p = *static_cast<void *const *>(args[od.param]);
      unsigned long long base = 0, bytes = 0;
      if (p && address_range(p, &base, &bytes)) {
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
      void *addr = nullptr;
      size_t bytes = 0;
      m->global(od.global, &addr, &bytes);
      cudaGetLastError();
      o.base = (unsigned long long)(uintptr_t)addr;
      o.bytes = od.bytes ? od.bytes : bytes;
      o.known = addr != nullptr;
      o.n = ceil_div(o.bytes, o.unit);
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
  bool sm = m->sm == 2;
  std::string why = sm ? "SM mode: the block's counters live in shared memory"
                       : "device memory (no SM in this mode)";
  const size_t dyn_user = (c.shared_mem + 15) & ~(size_t)15;
  size_t dyn = c.shared_mem;
  if (sm) {
    cudaFuncAttributes attr;
    memset(&attr, 0, sizeof attr);
    if (cudaFuncGetAttributes(&attr, d->instrumented) != cudaSuccess) cudaGetLastError();
    int optin = 0;
    if (cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) !=
        cudaSuccess) {
      cudaGetLastError();
      optin = 48 * 1024;
    }
    const size_t need = attr.sharedSizeBytes + dyn_user + (size_t)words * 4;
    if (need > (size_t)optin) {
      sm = false;
      why = "device memory: the kernel's " + std::to_string(attr.sharedSizeBytes + c.shared_mem) +
            " bytes of shared memory plus " + std::to_string(words * 4) +
            " bytes of counters exceed the " + std::to_string(optin) + "-byte limit per block";
    } else {
      dyn = dyn_user + (size_t)words * 4;
      if (attr.sharedSizeBytes + dyn > 48 * 1024 &&
          cudaFuncSetAttribute(d->instrumented, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               (int)dyn) != cudaSuccess) {
        cudaGetLastError();
        sm = false;
        dyn = c.shared_mem;
        why = "device memory: raising the kernel's dynamic shared memory limit failed";
      }
    }
  }
  const unsigned long long blocks = (unsigned long long)c.grid.x * c.grid.y * c.grid.z;
  const unsigned replicas = sm ? (unsigned)(blocks < kMaxReplicas ? (blocks ? blocks : 1) : kMaxReplicas) : 1;
  key += sm ? "|sm" : "|dm";

  // buffers: the area copies, the out-of-range words, each object's shadow counters
  const size_t area_bytes = (size_t)words * 4 * replicas;
  const size_t n_oor = 1 + objs.size();
  const size_t clock_bytes = m->enhanced ? (2 * kClockCapacity + 1) * 8 : 0;
  // out-of-range counts are u64 (gmprof.cuh out_of_range)
  char *scratch = static_cast<char *>(device_buffer(s.scratch, area_bytes + n_oor * 8 + 8 + clock_bytes));
  if (!scratch) {
    s.notes.push_back(std::string("a launch of ") + d->name + " ran unprofiled: no device memory "
                      "for its counters");
    return run_kernel(d->native, d->invoke_native ? d->invoke_native : typed, c, args, d->name);
  }
  cudaMemsetAsync(scratch, 0, area_bytes + n_oor * 8 + 8 + clock_bytes, c.stream);
  Launch L;
  memset(&L, 0, sizeof L);
  L.flags = (c.block.x % 32 == 0 ? FLAG_WARP_UNIFORM_OK : 0) | (sm ? FLAG_AREA_SHARED : 0);
  L.area_words = words;
  L.dyn_user_bytes = (unsigned)c.shared_mem;
  L.n_sites = (unsigned)m->n_sites;
  L.obj_counters = offset;
  L.lr_offset = lr_offset;
  L.area_replicas = replicas;
  L.area_global = (unsigned long long)(uintptr_t)scratch;
  L.unknown_oor = (unsigned long long)(uintptr_t)(scratch + area_bytes);
  if (m->enhanced) {
    char *clock = scratch + area_bytes + n_oor * 8 + 8;
    clock = reinterpret_cast<char *>(((uintptr_t)clock + 7) & ~(uintptr_t)7);
    L.clock_count = (unsigned long long)(uintptr_t)clock;
    L.clock_log = L.clock_count + 8;
    L.clock_capacity = kClockCapacity;
  }
  std::vector<void *> shadow_ptrs(objs.size(), nullptr);
  for (size_t i = 0; i < objs.size(); ++i) {
    ObjState &o = objs[i];
    if (o.slot < 0 || o.slot >= kMaxObjects) continue;
    Object &obj = L.obj[o.slot];
    if ((unsigned)o.slot + 1u > L.n_objects) L.n_objects = (unsigned)o.slot + 1u;
    obj.oor = L.unknown_oor + 8 * (i + 1);
    if (o.kind == OBJ_PARAM || o.kind == OBJ_GLOBAL) {
      obj.kind = KIND_DEVICE;
      obj.unit = (unsigned)o.unit;
      obj.unit_shift = (o.unit & (o.unit - 1)) == 0 ? (unsigned)__builtin_ctzll(o.unit) : 255u;
      obj.base = o.base;
      obj.bytes = o.known ? o.bytes : 0;
      obj.n_counters = (unsigned)o.n;
      if (o.n && d->objects[i].static_only) {
        // every site of it is counted from its formula: its counters would stay zero
        obj.n_counters = 0;
      } else if (o.n) {
        std::string sk = std::to_string(o.slot) + ":" + std::to_string(o.base) + ":" +
                         std::to_string(o.bytes) + ":" + std::to_string(o.unit) + ":" +
                         std::to_string(csize);
        // (range sites: the difference array after the counters, gmprof.cuh dm_range)
        const size_t entries = d->objects[i].ranges ? 2 * o.n + 1 : o.n;
        void *buf = device_buffer(s.shadows[sk], entries * csize);
        if (!buf) {
          o.known = false;
          obj.bytes = 0;
          obj.n_counters = 0;
          o.n = 0;
        } else {
          cudaMemsetAsync(buf, 0, entries * csize, c.stream);
          obj.counters = (unsigned long long)(uintptr_t)buf;
          shadow_ptrs[i] = buf;
        }
      }
    } else {
      obj.kind = KIND_SHARED;
      obj.unit = 4;
      obj.unit_shift = 2;
      obj.n_counters = (unsigned)o.n;
      obj.bytes = o.bytes;  // the hooks' range check: past the last byte is out of range
      obj.area_offset = o.area_offset;
      obj.lr_offset = o.lr_offset;
    }
  }
  if (m->launch_bytes != sizeof(Launch)) {
    s.notes.push_back("gmprof's launch description differs between the runtime and a module "
                      "(mixed gmprof versions?): launches ran unprofiled");
    return run_kernel(d->native, d->invoke_native ? d->invoke_native : typed, c, args, d->name);
  }
  cudaError_t err = m->fill(&L, sizeof L, c.stream);
  if (err != cudaSuccess) return failed(s, d, c, err);
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  cudaEventRecord(e0, c.stream);
  Config ci = c;
  ci.shared_mem = dyn;
  err = run_kernel(d->instrumented, d->invoke_instrumented ? d->invoke_instrumented : typed, ci,
                   args, d->name);
  if (err == cudaErrorCooperativeLaunchTooLarge && c.cooperative) {
    // the instrumented copy (more registers, its counters in shared memory) leaves fewer
    // blocks resident than the grid needs: the launch runs as it was, unprofiled
    cudaGetLastError();
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    s.notes.push_back(std::string("a cooperative launch of ") + d->name + " ran unprofiled: its "
                      "instrumented copy cannot have the whole grid resident at once");
    return run_kernel(d->native, d->invoke_native ? d->invoke_native : typed, c, args, d->name);
  }
  cudaEventRecord(e1, c.stream);
  cudaError_t sync = cudaStreamSynchronize(c.stream);
  if (err == cudaSuccess) err = sync;
  float ms = 0;
  cudaEventElapsedTime(&ms, e0, e1);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  if (err != cudaSuccess) return failed(s, d, c, err);
  // read back, fold the area's copies, sum into the group
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
    g.replicas = replicas;
    g.objects = objs;
    for (ObjState &o : g.objects) o.sum.assign((o.kind == OBJ_PARAM || o.kind == OBJ_GLOBAL) ? o.n : 0, 0);
    g.area.assign(words, 0);
    g.shared.assign(offset, 0);
    s.group_order.push_back(key);
  }
  std::vector<unsigned> area((size_t)words * replicas);
  std::vector<unsigned long long> oor(n_oor);
  cudaMemcpy(area.data(), scratch, area_bytes, cudaMemcpyDeviceToHost);
  cudaMemcpy(oor.data(), scratch + area_bytes, n_oor * 8, cudaMemcpyDeviceToHost);
  const size_t start = (size_t)sites_end * 4;
  for (unsigned r = 0; r < replicas; ++r) {
    const unsigned *a = area.data() + (size_t)r * words;
    for (unsigned w = 0; w < kAreaHeader; ++w) g.area[w] += a[w];
    for (unsigned w = kAreaHeader; w < sites_end; w += kSiteWords)
      g.area[w] += (unsigned long long)a[w] | ((unsigned long long)a[w + 1] << 32);
    if (lr_offset)
      for (unsigned w = lr_offset; w < words; ++w) g.area[w] += a[w];
  }
  // shared counters at their width, summed over the copies and saturated at the threshold per
  // launch (as one copy would have been)
  std::vector<unsigned long long> shared(offset, 0);
  for (unsigned r = 0; r < replicas; ++r) {
    const unsigned char *bytes = reinterpret_cast<const unsigned char *>(area.data() + (size_t)r * words) + start;
    for (unsigned i = 0; i < offset; ++i) {
      unsigned long long v = csize == 1 ? bytes[i]
                           : csize == 2 ? reinterpret_cast<const unsigned short *>(bytes)[i]
                           : csize == 8 ? reinterpret_cast<const unsigned long long *>(bytes)[i]
                                        : reinterpret_cast<const unsigned *>(bytes)[i];
      shared[i] += v;
    }
  }
  for (unsigned i = 0; i < offset; ++i) {
    if (m->threshold && shared[i] > m->threshold) shared[i] = m->threshold;
    g.shared[i] += shared[i];
  }
  g.unknown_oor += oor[0];
  std::vector<unsigned char> buf;
  for (size_t i = 0; i < objs.size(); ++i) {
    ObjState &o = g.objects[i];
    o.oor += oor[i + 1];
    if (!shadow_ptrs[i]) continue;
    const bool ranges = d->objects[i].ranges;
    const unsigned long long n = objs[i].n;
    buf.resize((size_t)(ranges ? 2 * n + 1 : n) * csize);
    cudaMemcpy(buf.data(), shadow_ptrs[i], buf.size(), cudaMemcpyDeviceToHost);
    for (unsigned long long j = 0; j < n; ++j)
      o.sum[j] += csize == 1 ? buf[j]
                : csize == 2 ? reinterpret_cast<const unsigned short *>(buf.data())[j]
                : csize == 8 ? reinterpret_cast<const unsigned long long *>(buf.data())[j]
                             : reinterpret_cast<const unsigned *>(buf.data())[j];
    if (ranges) {
      // plus the prefix sum of the difference array, wrapping at the counters' width as the
      // device's atomics did (ranges are planned with 32- and 64-bit counters only)
      const unsigned *d32 = reinterpret_cast<const unsigned *>(buf.data()) + n;
      const unsigned long long *d64 = reinterpret_cast<const unsigned long long *>(buf.data()) + n;
      unsigned long long run = 0;
      for (unsigned long long j = 0; j < n; ++j) {
        run = csize == 8 ? run + d64[j] : (unsigned)(run + d32[j]);
        o.sum[j] += run;
      }
    }
  }
  if (m->enhanced) {
    unsigned long long n = 0;
    cudaMemcpy(&n, reinterpret_cast<void *>((uintptr_t)L.clock_count), 8, cudaMemcpyDeviceToHost);
    g.clock_records += n;
  }
  LaunchRec rec;
  rec.grid[0] = c.grid.x;
  rec.grid[1] = c.grid.y;
  rec.grid[2] = c.grid.z;
  rec.block[0] = c.block.x;
  rec.block[1] = c.block.y;
  rec.block[2] = c.block.z;
  rec.shared_mem = c.shared_mem;
  rec.ms = ms;
  rec.index = s.seen - 1;
  rec.oor = 0;
  for (unsigned long long v : oor) rec.oor += v;  // the static sites' are added when the file is decoded
  rec.params = params_json(d, args);
  g.launches.push_back(rec);
  ++s.profiled;
  return cudaSuccess;
}

// Is the stream capturing into a graph? (An error asking is taken as yes: the legacy stream
// answers cudaErrorStreamCaptureImplicit while another stream captures in global mode.)
bool capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) != cudaSuccess) {
    cudaGetLastError();
    return true;
  }
  return status != cudaStreamCaptureStatusNone;
}

}  // namespace

void register_module(const ModuleDesc *module, KernelDesc *kernels, int n) {
  State &s = state();
  std::lock_guard<std::mutex> guard(s.lock);
  s.modules.push_back(module);
  for (int i = 0; i < n; ++i) {
    if (!kernels[i].native) continue;
    kernels[i].module = module;
    // a template instantiated in several files is registered by each; any one will do
    if (!s.kernels.count(kernels[i].native) || (!s.kernels[kernels[i].native].desc->instrumented &&
                                                kernels[i].instrumented))
      s.kernels[kernels[i].native] = Kernel{&kernels[i], module};
  }
  if (!s.registered_exit && module->instrumented) {
    s.registered_exit = true;
    atexit(at_exit);
  }
}

cudaError_t dispatch(const void *kernel, const Config &c, void **args, Invoker typed) {
  State &s = state();
  std::unique_lock<std::mutex> guard(s.lock);
  load_options(s);
  ++s.seen;
  auto it = s.kernels.find(kernel);
  const Kernel *k = it == s.kernels.end() ? nullptr : &it->second;
  const char *name = k ? k->desc->name : nullptr;
  bool selected = false;
  if (name_matches(s.options.kernel, name)) {
    const long long index = s.matching++;
    selected = index >= s.options.skip &&
               (s.options.count < 0 || index < s.options.skip + s.options.count);
  }
  if (selected && k && k->desc->instrumented && capturing(c.stream)) {
    // a launch into a CUDA graph (stream capture): the runtime may not synchronise, copy or
    // allocate inside a capture (that invalidates it), and the graph runs later, maybe many
    // times; the launch is captured as it was, unprofiled, and the report says so
    ++s.captured[name];
    selected = false;
  }
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
  return run_kernel(kernel, inv, c, args, name);
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

}  // namespace gmprof_host
