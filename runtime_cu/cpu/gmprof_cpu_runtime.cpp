// gmprof CPU backend: the runtime. Stage: runtime (device side, CPU). Input: a kernel entry (the
// generated glue that unpacks `void **args`) and a launch shape, from gmprof/runtime/cpu.py.
// Output: every block run, one after another, on the calling OS thread, with one fiber per CUDA
// thread; a Status (mirrored by cpu.py) holding the first error.
//
//   this file             thread state, printf, the run queue, block barriers, warp collectives,
//                         __activemask, thread exit, deadlock and livelock reports
//   gmprof_cpu_launch.h   faults, running the blocks, gmprof_cpu_launch
//   gmprof_cpu_fiber.h    context switch and stacks
//
// Compiled once per header version and flags into an object that every module links (cpu.py
// caches it; a kernel's own translation unit then compiles in a third of the time), or, when a
// translation unit is compiled with gmprof_cpu.h alone, included by that header.
//
// Why one OS thread: a static `__shared__` array is a function-local `static` (one object per
// module), which is one object per block only when blocks do not overlap; and with a single
// thread, atomics are plain read-modify-writes (a fiber never switches inside one). Why not
// fork a child per launch to survive faults: the kernel writes numpy arrays in place, and a
// child's writes would land in its copy-on-write pages; instead faults are caught on an
// alternate signal stack and siglongjmp'd back to the launch, whose stack is intact (the fibers
// run on their own stacks), and the block is abandoned.
//
// Scheduling. A fiber runs until it waits (block barrier, warp collective, __activemask) or
// exits; then the next runnable fiber in a FIFO queue runs (a direct fiber-to-fiber switch).
// The last thread to arrive at a barrier releases the others and carries on without switching.
// When the queue is empty the launch's own context gets control back: either every thread has
// exited, or the block is deadlocked and the report names what each group of threads waits at.
#ifndef GMPROF_CPU_H
// compiled on its own: the kernel-side declarations first
#define GMPROF_CPU_SEPARATE_RUNTIME 1
#include "gmprof_cpu.h"
#endif
#include "gmprof_cpu_env.h"
#include "gmprof_cpu_fiber.h"

#ifndef GMPROF_CPU_DYNAMIC_SHARED_MAX
// A GPU block has at most 227 KiB of shared memory; gmprof's SM mode puts its counters after the
// user's dynamic bytes, so the CPU allows more. Untouched .bss pages cost nothing.
#define GMPROF_CPU_DYNAMIC_SHARED_MAX (4u << 20)
#endif

#pragma GCC visibility push(hidden)

// The built-in variables. threadIdx is rewritten at every switch (12 bytes), which makes a read
// a plain RIP-relative load; a pointer to the current fiber would add a dependent load to every
// index computation. The compiler cannot cache them across a switch (an opaque call), and a
// fiber's own values are the same before and after one anyway.
uint3 threadIdx;
uint3 blockIdx;
dim3 blockDim;
dim3 gridDim;

namespace gmprof_cpu {

enum { kMaxThreads = 1024, kMaxWarps = 32, kQueueMask = 1023 };

enum State : unsigned char {
  RUNNABLE, RUNNING, AT_BARRIER, AT_WARP, AT_ACTIVEMASK, EXITED, AT_GRID
};


// Status codes (gmprof/runtime/cpu.py has the same table).
enum Code {
  OK = 0, DEADLOCK = 1, INVALID_ADDRESS = 2, STACK_OVERFLOW = 3, TRAP = 4, ASSERT_FAILED = 5,
  LIVELOCK = 6, BAD_LAUNCH = 7, ARITHMETIC = 8, ILLEGAL_INSTRUCTION = 9, INTERNAL = 10,
  INTERRUPTED = 11, TIMEOUT = 12
};

struct Status {
  int code;
  int line;                        // the first named user line (0: none)
  int signal;                      // INTERRUPTED: the signal (SIGINT or SIGTERM)
  int reserved;
  unsigned long long pc_offset;    // faults: faulting pc - this module's load address (0: unknown)
  unsigned long long divergent_barriers;  // barriers completed by threads at different lines
  int div_line_a, div_line_b;
  char file[512];
  char div_file_a[512];
  char div_file_b[512];
  char message[8192];
};

struct Fiber {
  Context ctx;
  uint3 tid;
  unsigned linear, warp, lane;
  unsigned char state, op;
  const char *file;                // where it waits or spins, for the reports
  int line;
  const char *what;
  unsigned mask;                   // warp collective: the lanes named
  int param, width;
  unsigned long long value;        // its contribution to a collective (or barrier predicate)
  unsigned long long result, result2;
  const void *am_key;              // __activemask: the call site
};

struct Warp {
  unsigned alive;     // lanes that exist and have not exited
  unsigned waiting;   // lanes waiting at a warp collective
  unsigned am;        // lanes waiting at __activemask
  int running;        // lanes running or runnable
  unsigned first_mask;  // the mask and operation of the lowest waiting lane
  unsigned char first_op;
  bool mixed;         // waiting lanes are at different operations or named different masks
};

static Fiber g_fib[kMaxThreads];
static Warp g_warp[kMaxWarps];
static unsigned g_queue[kMaxThreads];
static unsigned g_qhead, g_qtail;
static Fiber *g_cur;
static Context g_main;
static unsigned g_nthreads, g_alive;
static unsigned g_bar_n, g_bar_pred;
static unsigned g_bar_list[kMaxThreads];
static const char *g_bar_file;
static int g_bar_line;
static unsigned long long g_spins, g_spin_limit;  // spin yields since the block's last progress
// warp collectives and __activemask calls made, a lane's call each, since the library loaded:
// a cost proxy where no GPU is (gmprof_cpu_collectives; bench/stats_collectives.py)
static unsigned long long g_collectives;
static double g_spin_since, g_livelock_seconds;
static Status *g_status;
static void (*g_entry)(void **);
static void **g_args;

alignas(64) unsigned char g_dyn_smem[GMPROF_CPU_DYNAMIC_SHARED_MAX];

bool is_global(const void *p) {
  const uintptr_t a = (uintptr_t)p;
  const uintptr_t smem = (uintptr_t)g_dyn_smem;
  if (a >= smem && a < smem + GMPROF_CPU_DYNAMIC_SHARED_MAX) return false;
  const uintptr_t stacks = (uintptr_t)g_stacks.base;
  return !(g_stacks.base && a >= stacks && a < stacks + g_stacks.stride * g_stacks.count);
}

// ---------------------------------------------------------------- printf
//
// Kernel printf output is collected and written to file descriptor 1 when the launch ends (as
// CUDA prints at synchronisation), so a fault in the middle of a line cannot leave the C
// library's stdout lock held.
static char *g_pbuf;
static size_t g_plen, g_pcap;

static void print_append(const char *s, size_t n) {
  if (g_plen + n > g_pcap) {
    size_t cap = g_pcap ? g_pcap : 4096;
    while (cap < g_plen + n) cap *= 2;
    char *p = (char *)realloc(g_pbuf, cap);
    if (!p) return;
    g_pbuf = p;
    g_pcap = cap;
  }
  memcpy(g_pbuf + g_plen, s, n);
  g_plen += n;
}

static int device_vprintf(const char *fmt, va_list ap) {
  // outside a kernel (a whole program's host code shares the name): the C library's printf
  if (!g_cur) return vprintf(fmt, ap);
  char small[512];
  va_list again;
  va_copy(again, ap);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  if (n < 0 || (size_t)n < sizeof small) {
    va_end(again);
    if (n >= 0) print_append(small, (size_t)n);
    return n;
  }
  char *big = (char *)malloc((size_t)n + 1);
  if (!big) {
    va_end(again);
    return -1;
  }
  vsnprintf(big, (size_t)n + 1, fmt, again);
  va_end(again);
  print_append(big, (size_t)n);
  free(big);
  return n;
}

int device_printf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = device_vprintf(fmt, ap);
  va_end(ap);
  return n;
}

bool in_kernel() { return g_cur != nullptr; }

static void print_flush() {
  fflush(stdout);
  size_t off = 0;
  while (off < g_plen) {
    ssize_t w = write(1, g_pbuf + off, g_plen - off);
    if (w <= 0) break;
    off += (size_t)w;
  }
  g_plen = 0;
}

// ---------------------------------------------------------------- the run queue

static inline void push(Fiber *f) {
  f->state = RUNNABLE;
  g_queue[g_qtail++ & kQueueMask] = f->linear;
}

// The current fiber waits or has exited: resume the next runnable one, or the scheduler.
static void run_next() {
  Fiber *self = g_cur;
  if (g_qhead != g_qtail) {
    Fiber *n = &g_fib[g_queue[g_qhead++ & kQueueMask]];
    n->state = RUNNING;
    if (n == self) return;
    g_cur = n;
    threadIdx = n->tid;
    ctx_switch(&self->ctx, &n->ctx);
  } else {
    ctx_switch(&self->ctx, &g_main);
  }
}

// Make a waiting fiber runnable; the current fiber just carries on.
static inline void release(Fiber *f) {
  f->what = nullptr;  // no longer waiting anywhere (for the livelock report)
  g_warp[f->warp].running++;
  if (f == g_cur) f->state = RUNNING;
  else push(f);
}

// ---------------------------------------------------------------- errors from kernel code

// whether the blocks running are a child grid's (a launch from device code: gmprof_cpu_launch.h)
static bool g_in_child;

static void block_thread_text(char *out, size_t n, const Fiber *f) {
  const char *of = g_in_child ? " of a grid launched from device code" : "";
  if (f)
    snprintf(out, n, "block (%u,%u,%u) thread (%u,%u,%u)%s", blockIdx.x, blockIdx.y, blockIdx.z,
             f->tid.x, f->tid.y, f->tid.z, of);
  else
    snprintf(out, n, "block (%u,%u,%u)%s", blockIdx.x, blockIdx.y, blockIdx.z, of);
}

static void set_error(int code, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void set_error(int code, const char *file, int line, const char *fmt, ...) {
  if (!g_status || g_status->code) return;  // the first error wins
  g_status->code = code;
  if (file) snprintf(g_status->file, sizeof g_status->file, "%s", file);
  g_status->line = line;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_status->message, sizeof g_status->message, fmt, ap);
  va_end(ap);
}

// Ends the launch from inside a fiber: the scheduler sees the error and stops.
[[noreturn]] static void abandon() {
  if (!g_status) abort();  // not inside a launch: nothing to go back to
  ctx_switch(&g_cur->ctx, &g_main);
  __builtin_unreachable();
}

void trap_at(const char *file, int line) {
  if (!g_cur) {  // host code of a whole program
    fprintf(stderr, "%s:%d: __trap() called outside a kernel\n", file, line);
    abort();
  }
  char who[160];
  block_thread_text(who, sizeof who, g_cur);
  set_error(TRAP, file, line, "__trap() called in %s", who);
  abandon();
}

void assert_failed(const char *expr, const char *file, int line) {
  if (!g_cur) {  // host code of a whole program: as the C library's assert
    fflush(stdout);
    fprintf(stderr, "%s:%d: Assertion `%s' failed.\n", file, line, expr);
    abort();
  }
  char who[160];
  block_thread_text(who, sizeof who, g_cur);
  set_error(ASSERT_FAILED, file, line, "assertion `%s` failed in %s", expr, who);
  abandon();
}

// ---------------------------------------------------------------- reports of stuck blocks

static const char *state_text(const Fiber &f, bool one) {
  switch (f.state) {
    case RUNNABLE:
    case RUNNING:
      if (!f.what) return one ? "is runnable" : "are runnable";
      return one ? "spins at" : "spin at";
    case EXITED: return one ? "has exited" : "have exited";
    default: return one ? "waits at" : "wait at";
  }
}

static bool same_wait(const Fiber &a, const Fiber &b) {
  if ((a.state == RUNNING || a.state == RUNNABLE) != (b.state == RUNNING || b.state == RUNNABLE))
    return false;
  if ((a.state == RUNNING || a.state == RUNNABLE))
    return a.what == b.what && (!a.what || (a.line == b.line && a.file == b.file));
  if (a.state != b.state) return false;
  if (a.state == EXITED) return true;
  return a.line == b.line && a.what == b.what && a.mask == b.mask &&
         (a.file == b.file || strcmp(a.file, b.file) == 0);
}

// "threads 0-15, 32-47 (32 threads) wait at __syncthreads() at k.cu:12; ..."; groups are listed
// in the order of their first thread. Sets the status location to the first group's line.
static void describe_threads(char *out, size_t cap, const char **first_file, int *first_line) {
  static bool done[kMaxThreads];
  for (unsigned i = 0; i < g_nthreads; ++i) done[i] = false;
  size_t len = 0;
  *first_file = nullptr;
  *first_line = 0;
#define GMPROF_APPEND(...)                                                            \
  do {                                                                                \
    if (len < cap) {                                                                  \
      int k_ = snprintf(out + len, cap - len, __VA_ARGS__);                           \
      if (k_ > 0) len += (size_t)k_;                                                  \
    }                                                                                 \
  } while (0)
  int groups = 0;
  for (unsigned i = 0; i < g_nthreads; ++i) {
    if (done[i]) continue;
    const Fiber &lead = g_fib[i];
    unsigned count = 0;
    // "thread 7 waits" or "threads 0-15 (16 threads) wait"
    bool alone = true;
    for (unsigned j = i + 1; j < g_nthreads && alone; ++j)
      if (!done[j] && same_wait(g_fib[j], lead)) alone = false;
    GMPROF_APPEND("%s%s ", groups ? "; " : "", alone ? "thread" : "threads");
    bool first_range = true;
    for (unsigned j = i; j < g_nthreads;) {
      if (done[j] || !same_wait(g_fib[j], lead)) { ++j; continue; }
      unsigned k = j;
      while (k + 1 < g_nthreads && !done[k + 1] && same_wait(g_fib[k + 1], lead)) ++k;
      for (unsigned m = j; m <= k; ++m) done[m] = true;
      count += k - j + 1;
      if (j == k) GMPROF_APPEND("%s%u", first_range ? "" : ", ", j);
      else GMPROF_APPEND("%s%u-%u", first_range ? "" : ", ", j, k);
      first_range = false;
      j = k + 1;
    }
    if (alone) GMPROF_APPEND(" %s", state_text(lead, true));
    else GMPROF_APPEND(" (%u threads) %s", count, state_text(lead, false));
    if (lead.state != EXITED && lead.what) {
      if (lead.state == AT_WARP) GMPROF_APPEND(" %s (mask 0x%08x)", lead.what, lead.mask);
      else GMPROF_APPEND(" %s", lead.what ? lead.what : "?");
      GMPROF_APPEND(" at %s:%d", lead.file ? lead.file : "?", lead.line);
      if (!*first_file && lead.file) {
        *first_file = lead.file;
        *first_line = lead.line;
      }
    }
    ++groups;
  }
#undef GMPROF_APPEND
}

static void report_stuck(int code) {
  char threads[7000];
  const char *file;
  int line;
  describe_threads(threads, sizeof threads, &file, &line);
  if (code == DEADLOCK)
    set_error(DEADLOCK, file, line,
              "deadlock in block (%u,%u,%u): no thread can continue; %s (thread numbers are "
              "linear ids, x fastest; a barrier completes when every thread that has not exited "
              "reaches one, a warp collective when every lane it names that has not exited reaches "
              "the same collective with the same mask)",
              blockIdx.x, blockIdx.y, blockIdx.z, threads);
  else
    set_error(LIVELOCK, file, line,
              "livelock in block (%u,%u,%u): threads keep spinning and no thread makes "
              "progress; %s (thread numbers are linear ids, x fastest)",
              blockIdx.x, blockIdx.y, blockIdx.z, threads);
}

static void resolve_activemask(unsigned wi);

static double now_seconds() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

// A spin-wait point (a failed atomicCAS, an atomicExch that changed nothing, __nanosleep):
// let the other threads run, since on one OS thread the one we wait for can only run if we
// yield. Gives up when, since the block last made progress (a barrier or warp collective
// completed, a thread exited), threads have spun many times *and* for g_livelock_seconds: the
// count alone would also be reached by code that is working, not waiting (a hash insert whose
// CAS often fails, gmprof's live-range hooks exchanging a counter for the value it holds).
void spin_yield(const char *file, int line, const char *what) {
  Fiber *f = g_cur;
  if (!f) return;
  f->file = file;
  f->line = line;
  f->what = what;
  if (++g_spins >= g_spin_limit && (g_spins - g_spin_limit) % 4096 == 0) {
    const double t = now_seconds();
    if (g_spins == g_spin_limit) {
      g_spin_since = t;
    } else if (t - g_spin_since > g_livelock_seconds) {
      report_stuck(LIVELOCK);
      abandon();
    }
  }
  // a lane that spins is waiting: lanes of its warp waiting at __activemask must not wait for
  // it (the lock holder may be one of them)
  if (g_warp[f->warp].am) resolve_activemask(f->warp);
  if (g_qhead == g_qtail) return;  // nothing else can run
  push(f);
  run_next();
}

// ---------------------------------------------------------------- block barriers

static void note_divergent_barrier(const char *file, int line) {
  Status *s = g_status;
  if (!s) return;
  if (s->divergent_barriers++ == 0) {
    snprintf(s->div_file_a, sizeof s->div_file_a, "%s", g_bar_file);
    s->div_line_a = g_bar_line;
    snprintf(s->div_file_b, sizeof s->div_file_b, "%s", file);
    s->div_line_b = line;
  }
}

static void release_barrier() {
  const unsigned n = g_bar_n, count = g_bar_pred;
  g_bar_n = 0;
  g_spins = 0;
  for (unsigned k = 0; k < n; ++k) {
    Fiber *x = &g_fib[g_bar_list[k]];
    x->result = count;
    x->result2 = n;
    release(x);
  }
}

// __syncthreads and its _count/_and/_or forms. Returns the number of arriving threads whose
// predicate was true; *participants gets the number of threads that took part.
unsigned barrier(const char *file, int line, const char *what, int pred,
                 unsigned *participants) {
  Fiber *f = g_cur;
  if (g_bar_n == 0) {
    g_bar_file = file;
    g_bar_line = line;
    g_bar_pred = 0;
  } else if (line != g_bar_line || (file != g_bar_file && strcmp(file, g_bar_file) != 0)) {
    // legal on current GPUs (bar.sync 0 does not care where it is), but worth a warning
    note_divergent_barrier(file, line);
  }
  g_bar_pred += pred != 0;
  f->state = AT_BARRIER;
  f->file = file;
  f->line = line;
  f->what = what;
  g_bar_list[g_bar_n++] = f->linear;
  Warp &w = g_warp[f->warp];
  w.running--;
  if (g_bar_n == g_alive) {
    release_barrier();
  } else {
    if (w.running == 0 && w.am) resolve_activemask(f->warp);
    run_next();
  }
  if (participants) *participants = (unsigned)f->result2;
  return (unsigned)f->result;
}

// ---------------------------------------------------------------- the grid barrier

static int g_cooperative;   // this launch is cooperative (cudaLaunchCooperativeKernel)
static unsigned g_grid_n;   // threads of the running block waiting at the grid barrier

// A thread reaches this_grid().sync(): it waits; when every thread of its block that has not
// exited waits there, the block is suspended and the launch runs the next block
// (gmprof_cpu_launch.h's run_cooperative), until every block has arrived.
void grid_sync(const char *file, int line) {
  Fiber *f = g_cur;
  if (!g_cooperative) {
    char who[96];
    block_thread_text(who, sizeof who, f);
    set_error(TRAP, file, line,
              "this_grid().sync() in %s, in a launch that is not cooperative (a grid barrier "
              "needs cudaLaunchCooperativeKernel)", who);
    abandon();
  }
  f->state = AT_GRID;
  f->file = file;
  f->line = line;
  f->what = "this_grid().sync()";
  g_grid_n++;
  g_spins = 0;
  Warp &w = g_warp[f->warp];
  w.running--;
  if (w.running == 0 && w.am) resolve_activemask(f->warp);
  run_next();
}

struct SharedRegion {
  void *p;
  unsigned long long bytes;
};
static SharedRegion *g_shared_regions;
static unsigned g_n_shared, g_cap_shared;

int shared_seen(void *p, unsigned long long bytes) {
  for (unsigned i = 0; i < g_n_shared; ++i)
    if (g_shared_regions[i].p == p) return 0;
  if (g_n_shared == g_cap_shared) {
    unsigned cap = g_cap_shared ? 2 * g_cap_shared : 16;
    void *grown = realloc(g_shared_regions, cap * sizeof(SharedRegion));
    if (!grown) abort();
    g_shared_regions = (SharedRegion *)grown;
    g_cap_shared = cap;
  }
  g_shared_regions[g_n_shared++] = SharedRegion{p, bytes};
  return 0;
}

// ---------------------------------------------------------------- warp collectives

static inline int ctz32(unsigned x) { return __builtin_ctz(x); }

static unsigned long long collective_result(Fiber *base, unsigned l, const Warp &w) {
  const Fiber &f = base[l];
  const unsigned group = f.mask & w.alive;
  switch (f.op) {
    case OP_SYNCWARP: return 0;
    case OP_SHFL_IDX:
    case OP_SHFL_UP:
    case OP_SHFL_DOWN:
    case OP_SHFL_XOR: {
      int width = f.width;
      if (width <= 0 || width > 32 || (width & (width - 1))) width = 32;
      const int lane = (int)l, start = lane & ~(width - 1);
      int src;
      if (f.op == OP_SHFL_IDX) src = start + (f.param & (width - 1));
      else if (f.op == OP_SHFL_UP) src = lane - (int)(unsigned)f.param;
      else if (f.op == OP_SHFL_DOWN) src = lane + (int)(unsigned)f.param;
      else src = lane ^ f.param;
      // outside the lane's segment, or a lane that does not take part: the lane's own value
      if (src < start || src >= start + width || src > 31 || !(group & (1u << src))) src = lane;
      return base[src].value;
    }
    case OP_BALLOT:
    case OP_ANY:
    case OP_ALL:
    case OP_UNI: {
      unsigned bits = 0;
      for (unsigned g = group; g; g &= g - 1)
        if (base[ctz32(g)].value) bits |= 1u << ctz32(g);
      if (f.op == OP_BALLOT) return bits;
      if (f.op == OP_ANY) return bits != 0;
      if (f.op == OP_UNI) return bits == 0 || bits == group;
      return bits == group;
    }
    case OP_MATCH_ANY:
    case OP_MATCH_ALL: {
      unsigned same = 0;
      for (unsigned g = group; g; g &= g - 1)
        if (base[ctz32(g)].value == f.value) same |= 1u << ctz32(g);
      if (f.op == OP_MATCH_ANY) return same;
      base[l].result2 = same == group;
      return same == group ? group : 0;
    }
    default: {
      unsigned long long acc = base[ctz32(group)].value;
      for (unsigned g = group & (group - 1); g; g &= g - 1) {
        const unsigned long long v = base[ctz32(g)].value;
        switch (f.op) {
          case OP_RED_ADD: acc = (unsigned)(acc + v); break;
          case OP_RED_MIN_U: acc = (unsigned)v < (unsigned)acc ? v : acc; break;
          case OP_RED_MAX_U: acc = (unsigned)v > (unsigned)acc ? v : acc; break;
          case OP_RED_MIN_S: acc = (int)(unsigned)v < (int)(unsigned)acc ? v : acc; break;
          case OP_RED_MAX_S: acc = (int)(unsigned)v > (int)(unsigned)acc ? v : acc; break;
          case OP_RED_AND: acc &= v; break;
          case OP_RED_OR: acc |= v; break;
          default: acc ^= v; break;
        }
      }
      return acc;
    }
  }
}

// Complete every waiting lane whose named lanes (those not exited) all wait at the same
// operation with the same mask. This is PTX's rule (shfl.sync, vote.sync, match.sync,
// redux.sync, bar.warp.sync: "wait until all non-exited threads corresponding to membermask
// have executed <op> with the same qualifiers and same membermask"), and it is what keeps
// gmprof's own collectives apart from the user's: a hook's collectives name the mask of the
// lanes that are inside the hook (its __activemask group), so lanes still in a loop whose trip
// count differs per lane complete their hook among themselves while the lanes that left the
// loop wait at the user's __shfl_down_sync(0xffffffff, ...) for them (issue 24). Completing a
// lane as soon as its named lanes waited at *any* collective paired the two, and the user's
// shuffle read the hook's values.
static void warp_try_complete(unsigned wi) {
  Warp &w = g_warp[wi];
  const unsigned missing = w.alive & ~w.waiting;
  Fiber *base = &g_fib[wi * 32];
  unsigned ready = 0;
  if (!w.mixed) {
    // the common case: every waiting lane is at the same operation with the same mask
    if (w.first_mask & missing) return;
    ready = w.waiting;
  } else {
    // one group per (operation, mask): ready when every named lane is in it
    for (unsigned rem = w.waiting; rem;) {
      const Fiber &lead = base[ctz32(rem)];
      unsigned group = 0;
      for (unsigned g = rem; g; g &= g - 1) {
        const Fiber &x = base[ctz32(g)];
        if (x.op == lead.op && x.mask == lead.mask) group |= 1u << ctz32(g);
      }
      if ((lead.mask & w.alive) == group) ready |= group;
      rem &= ~group;
    }
    if (!ready) return;
  }
  // results first: they read the values of lanes that are about to be released
  for (unsigned g = ready; g; g &= g - 1) base[ctz32(g)].result = collective_result(base, ctz32(g), w);
  w.waiting &= ~ready;
  for (unsigned g = ready; g; g &= g - 1) release(&base[ctz32(g)]);
  if (w.waiting) {
    const Fiber &first = base[ctz32(w.waiting)];
    w.first_mask = first.mask;
    w.first_op = first.op;
    w.mixed = false;
    for (unsigned g = w.waiting; g; g &= g - 1)
      if (base[ctz32(g)].mask != w.first_mask || base[ctz32(g)].op != w.first_op) w.mixed = true;
  }
  g_spins = 0;
}

unsigned long long warp_collective(const char *file, int line, const char *what, int op,
                                   unsigned mask, unsigned long long value, int param, int width,
                                   unsigned long long *result2) {
  g_collectives++;
  Fiber *f = g_cur;
  const unsigned wi = f->warp, bit = 1u << f->lane;
  Warp &w = g_warp[wi];
  f->op = (unsigned char)op;
  f->mask = mask | bit;  // a lane missing from its own mask is an error in CUDA; take it as named
  f->value = value;
  f->param = param;
  f->width = width;
  f->result2 = 0;
  f->state = AT_WARP;
  f->file = file;
  f->line = line;
  f->what = what;
  if (!w.waiting) {
    w.first_mask = f->mask;
    w.first_op = f->op;
    w.mixed = false;
  } else if (f->mask != w.first_mask || f->op != w.first_op) {
    w.mixed = true;
  }
  w.waiting |= bit;
  w.running--;
  warp_try_complete(wi);
  if (f->state == AT_WARP) {
    if (w.running == 0 && w.am) resolve_activemask(wi);
    run_next();
  }
  if (result2) *result2 = f->result2;
  return f->result;
}

// __activemask: the lanes of the warp that are converged with the caller, in the sense gmprof's
// warp-aggregated counters rely on: the lanes that call __activemask at the same call site
// together. A calling lane waits until no lane of its warp can run without waiting (each is at a
// barrier, a collective or an __activemask, or has exited); then the lanes waiting at each call
// site get the mask of that site's lanes. Lanes on the other side of a branch are not in it,
// so one leader per group counts exactly the lanes that executed the site.
static void resolve_activemask(unsigned wi) {
  Warp &w = g_warp[wi];
  Fiber *base = &g_fib[wi * 32];
  unsigned rem = w.am;
  w.am = 0;
  while (rem) {
    const void *key = base[ctz32(rem)].am_key;
    unsigned group = 0;
    for (unsigned g = rem; g; g &= g - 1)
      if (base[ctz32(g)].am_key == key) group |= 1u << ctz32(g);
    for (unsigned g = group; g; g &= g - 1) {
      base[ctz32(g)].result = group;
      release(&base[ctz32(g)]);
    }
    rem &= ~group;
  }
}

unsigned activemask_at(const char *file, int line) {
  // the call site is the return address: each textual use (and each inlined copy of a gmprof
  // hook) has its own
  const void *key = __builtin_return_address(0);
  g_collectives++;
  Fiber *f = g_cur;
  Warp &w = g_warp[f->warp];
  f->am_key = key;
  f->state = AT_ACTIVEMASK;
  f->file = file;
  f->line = line;
  f->what = "__activemask()";
  w.am |= 1u << f->lane;
  w.running--;
  if (w.running == 0) resolve_activemask(f->warp);
  else run_next();
  return (unsigned)f->result;
}

// ---------------------------------------------------------------- thread start and exit

[[noreturn]] static void thread_exit() {
  Fiber *f = g_cur;
  f->state = EXITED;
  g_alive--;
  g_spins = 0;
  Warp &w = g_warp[f->warp];
  w.alive &= ~(1u << f->lane);
  w.running--;
  // threads that have exited count as arrived at a block barrier, and are not waited for by
  // warp collectives
  if (g_bar_n && g_bar_n == g_alive) release_barrier();
  if (w.waiting) warp_try_complete(f->warp);
  if (w.running == 0 && w.am) resolve_activemask(f->warp);
  run_next();
  __builtin_unreachable();
}

static void fiber_entry() {
  g_entry(g_args);
  thread_exit();
}

#include "gmprof_cpu_launch.h"  // faults, running the blocks, the launch entry point

}  // namespace gmprof_cpu

// glibc's assert() calls __assert_fail, which aborts the process; this definition (hidden, so
// it binds inside this module only) turns a failed assert in a kernel into a launch error.
extern "C" [[noreturn]] void __assert_fail(const char *expr, const char *file, unsigned int line,
                                          const char *) noexcept {
  gmprof_cpu::assert_failed(expr, file, (int)line);
}

#if defined(GMPROF_CPU_PROGRAM)
int gmprof_cpu_printf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = gmprof_cpu::device_vprintf(fmt, ap);
  va_end(ap);
  return n;
}

clock_t gmprof_cpu_clock() {
  // (::clock): the name in parentheses is not the macro above
  return gmprof_cpu::in_kernel() ? (clock_t)gmprof_cpu::clock64_now() : (::clock)();
}
#endif

#pragma GCC visibility pop
