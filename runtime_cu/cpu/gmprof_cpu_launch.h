// gmprof CPU backend, runtime part 2: faults, running the blocks of a launch, and the entry
// point Python calls (gmprof_cpu_launch).
//
// Included once, inside namespace gmprof_cpu, by gmprof_cpu_runtime.cpp, whose scheduler it
// drives: for each block it resets the fibers and the warps, switches to the first thread, and
// gets control back when every thread has exited or none can run (a deadlock report). Faults in
// kernel code (SIGSEGV, SIGBUS, SIGFPE, SIGILL) are caught on an alternate signal stack and
// siglongjmp back here: the launch's own stack is intact, since the threads run on theirs.
#ifndef GMPROF_CPU_LAUNCH_H
#define GMPROF_CPU_LAUNCH_H

// ---------------------------------------------------------------- faults

static const int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
enum { kNumSignals = sizeof kSignals / sizeof kSignals[0] };
static struct sigaction g_old_act[kNumSignals];
static sigjmp_buf g_jmp;
static volatile sig_atomic_t g_in_launch;
static pthread_t g_launch_thread;
static int g_fault_sig, g_fault_code;
static void *g_fault_addr;
static uintptr_t g_fault_pc;
static Fiber *g_fault_fiber;
alignas(64) static char g_altstack[1 << 16];

// SIGINT (Ctrl-C) and SIGTERM (`kill`, a job control stop of a background job) during a launch
// abandon it, so that a kernel that spins forever without a yield point (a plain
// `while (flag == 0);`) can be stopped; Python then raises KeyboardInterrupt or re-raises
// SIGTERM. A signal that was ignored before the launch stays ignored.
static const int kStopSignals[] = {SIGINT, SIGTERM};
enum { kNumStopSignals = sizeof kStopSignals / sizeof kStopSignals[0] };
static struct sigaction g_old_stop[kNumStopSignals];
static bool g_took_stop[kNumStopSignals];

// The time limit: a POSIX timer aimed at the launching thread alone, with a real-time signal
// that Python and the C library leave alone (SIGALRM belongs to the program).
static timer_t g_timer;
static bool g_timer_armed;
static double g_timeout_seconds;

static int timeout_signal() { return SIGRTMIN + 3; }

static void on_stop(int sig, siginfo_t *si, void *ucv) {
  if (!g_in_launch || !pthread_equal(pthread_self(), g_launch_thread)) {
    // for another thread of the process: what would have happened without us
    const struct sigaction *old = nullptr;
    for (int i = 0; i < kNumStopSignals; ++i)
      if (kStopSignals[i] == sig) old = &g_old_stop[i];
    if (!old) return;
    if (old->sa_flags & SA_SIGINFO) {
      if (old->sa_sigaction) old->sa_sigaction(sig, si, ucv);
    } else if (old->sa_handler == SIG_DFL) {
      sigaction(sig, old, nullptr);
      raise(sig);
    } else if (old->sa_handler != SIG_IGN) {
      old->sa_handler(sig);
    }
    return;
  }
  g_in_launch = 0;
  g_fault_sig = sig;
  g_fault_code = 0;
  g_fault_addr = nullptr;
  g_fault_pc = 0;
  g_fault_fiber = g_cur;
  siglongjmp(g_jmp, 1);
}

static uintptr_t context_pc(void *ucv) {
  ucontext_t *uc = (ucontext_t *)ucv;
#if defined(__x86_64__)
  return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
  return (uintptr_t)uc->uc_mcontext.pc;
#else
  (void)uc;
  return 0;
#endif
}

static void on_timeout(int sig, siginfo_t *, void *ucv) {
  // a late expiry (the launch already ended) is dropped
  if (!g_in_launch || !pthread_equal(pthread_self(), g_launch_thread)) return;
  g_in_launch = 0;
  g_fault_sig = sig;
  g_fault_code = 0;
  g_fault_addr = nullptr;
  g_fault_pc = context_pc(ucv);  // where the kernel was: its line in the report
  g_fault_fiber = g_cur;
  siglongjmp(g_jmp, 1);
}

static void arm_timeout(double seconds) {
  g_timer_armed = false;
  g_timeout_seconds = seconds;
  if (!(seconds > 0)) return;
  if (seconds > 1e9) seconds = 1e9;  // (time_t) of a larger double is undefined; 31 years
  struct sigevent sev;
  memset(&sev, 0, sizeof sev);
  sev.sigev_notify = SIGEV_THREAD_ID;
  sev.sigev_signo = timeout_signal();
#ifdef sigev_notify_thread_id
  sev.sigev_notify_thread_id = (pid_t)syscall(SYS_gettid);
#else
  sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
#endif
  if (timer_create(CLOCK_MONOTONIC, &sev, &g_timer) != 0) return;
  struct itimerspec its;
  memset(&its, 0, sizeof its);
  its.it_value.tv_sec = (time_t)seconds;
  its.it_value.tv_nsec = (long)((seconds - (double)(time_t)seconds) * 1e9);
  if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0) its.it_value.tv_nsec = 1;
  if (timer_settime(g_timer, 0, &its, nullptr) != 0) {
    timer_delete(g_timer);
    return;
  }
  g_timer_armed = true;
}

static void disarm_timeout() {
  // a signal still pending for this thread is delivered (to on_timeout, which drops it) when
  // timer_delete returns, before the handler is taken away
  if (g_timer_armed) timer_delete(g_timer);
  g_timer_armed = false;
}

static void on_fault(int sig, siginfo_t *si, void *ucv) {
  if (!g_in_launch || !pthread_equal(pthread_self(), g_launch_thread)) {
    // not our kernel's fault (another thread of the process): put the previous handler back
    // and return, so that the instruction faults again under it
    for (int i = 0; i < kNumSignals; ++i)
      if (kSignals[i] == sig) sigaction(sig, &g_old_act[i], nullptr);
    return;
  }
  g_in_launch = 0;
  g_fault_sig = sig;
  g_fault_code = si->si_code;
  g_fault_addr = si->si_addr;
  g_fault_fiber = g_cur;
  g_fault_pc = context_pc(ucv);
  siglongjmp(g_jmp, 1);
}

extern "C" GMPROF_CPU_EXPORT int gmprof_cpu_launch(void (*entry)(void **), void **args,
                                                  const unsigned *grid, const unsigned *block,
                                                  unsigned long long shmem,
                                                  unsigned long long stack_bytes, double timeout_s,
                                                  Status *st);

static void report_fault() {
  Fiber *f = g_fault_fiber;
  char who[160];
  block_thread_text(who, sizeof who, f);
  Dl_info self, at;
  if (g_fault_pc && dladdr((void *)&gmprof_cpu_launch, &self) && dladdr((void *)g_fault_pc, &at) &&
      at.dli_fbase == self.dli_fbase)
    g_status->pc_offset = g_fault_pc - (uintptr_t)self.dli_fbase;
  if (g_fault_sig == SIGINT || g_fault_sig == SIGTERM) {
    set_error(INTERRUPTED, nullptr, 0, "kernel launch interrupted (%s) in %s",
              g_fault_sig == SIGINT ? "SIGINT" : "SIGTERM", who);
    g_status->signal = g_fault_sig;
    return;
  }
  if (g_fault_sig == timeout_signal()) {
    set_error(TIMEOUT, nullptr, 0,
              "did not finish within %g s (the time limit; --timeout SECONDS, 0 for none): "
              "stopped in %s",
              g_timeout_seconds, who);
    return;
  }
  if (!f) {
    set_error(INTERNAL, nullptr, 0, "gmprof's CPU scheduler faulted (signal %d at address %p)",
              g_fault_sig, g_fault_addr);
    return;
  }
  const int overflow = g_fault_sig == SIGSEGV ? stack_overflow_thread(g_fault_addr) : -1;
  if (overflow >= 0) {
    set_error(STACK_OVERFLOW, nullptr, 0,
              "stack overflow in %s: a thread used more than its %llu KiB stack (large local "
              "arrays or deep recursion); set GMPROF_CPU_STACK_KB to give each thread more",
              who, (unsigned long long)(g_stacks.stack_bytes >> 10));
    return;
  }
  switch (g_fault_sig) {
    case SIGSEGV:
    case SIGBUS:
      if (g_fault_sig == SIGSEGV && g_fault_code == SI_KERNEL)
        // x86-64 reports no address for a general-protection fault
        set_error(INVALID_ADDRESS, nullptr, 0,
                  "invalid memory access in %s: an address outside the address space (SIGSEGV)",
                  who);
      else
        set_error(INVALID_ADDRESS, nullptr, 0, "invalid memory access in %s: address %p %s (%s)",
                  who, g_fault_addr,
                  g_fault_sig == SIGBUS ? "cannot be accessed"
                  : g_fault_code == SEGV_ACCERR ? "is not writable (or not readable)"
                                                : "is not mapped",
                  g_fault_sig == SIGBUS ? "SIGBUS" : "SIGSEGV");
      break;
    case SIGFPE:
      set_error(ARITHMETIC, nullptr, 0, "arithmetic exception in %s: %s (SIGFPE)", who,
                g_fault_code == FPE_INTDIV ? "integer division by zero"
                : g_fault_code == FPE_INTOVF ? "integer overflow (INT_MIN / -1)"
                                             : "floating-point trap");
      break;
    default:
      set_error(ILLEGAL_INSTRUCTION, nullptr, 0,
                "illegal instruction in %s (__builtin_trap, or code the compiler found "
                "unreachable, e.g. a path with undefined behaviour) (SIGILL)",
                who);
  }
}

// ---------------------------------------------------------------- the launch

// Runs the block's runnable threads until none can run: all have exited, or (a cooperative
// launch) every thread that has not exited waits at the grid barrier; anything else is a
// deadlock.
static void schedule() {
  Fiber *first = &g_fib[g_queue[g_qhead++ & kQueueMask]];
  first->state = RUNNING;
  g_cur = first;
  threadIdx = first->tid;
  ctx_switch(&g_main, &first->ctx);
  g_cur = nullptr;
  if (!g_status->code && g_alive && g_grid_n != g_alive) report_stuck(DEADLOCK);
}

static void run_block(unsigned bx, unsigned by, unsigned bz) {
  blockIdx.x = bx;
  blockIdx.y = by;
  blockIdx.z = bz;
  const unsigned n = g_nthreads;
  for (unsigned wi = 0; wi * 32 < n; ++wi) {
    const unsigned lanes = n - wi * 32 < 32 ? n - wi * 32 : 32;
    Warp &w = g_warp[wi];
    // lanes past the end of a partial warp never existed: they count as exited
    w.alive = lanes == 32 ? 0xffffffffu : (1u << lanes) - 1u;
    w.waiting = w.am = 0;
    w.running = (int)lanes;
    w.mixed = false;
  }
  for (unsigned i = 0; i < n; ++i) {
    Fiber &f = g_fib[i];
    f.state = RUNNABLE;
    f.what = nullptr;
    ctx_start(&f.ctx, stack_lo(i), g_stacks.stack_bytes);
    g_queue[i] = i;
  }
  g_qhead = 0;
  g_qtail = n;
  g_alive = n;
  g_bar_n = 0;
  g_grid_n = 0;
  g_spins = 0;
  schedule();
}

// ---------------------------------------------------------------- cooperative launches
//
// Blocks are not resident at once here (one OS thread; a static __shared__ array is one object),
// so a cooperative launch runs in phases: each block runs until every thread of it that has not
// exited waits at this_grid().sync(); then its state is put aside (its threads' contexts and
// the used part of their stacks, its warps, its dynamic shared memory and the static shared
// variables registered so far) and the next block runs on the same stacks and memory. When every
// block has arrived, each is brought back in turn, its threads released from the barrier, and
// run to the next grid barrier or to the end. Every block sees its own shared memory and
// stacks at the same addresses as before, as if it had stayed resident.

struct SavedBlock {
  bool done;
  unsigned alive;
  Fiber *fib;
  Warp *warp;
  unsigned char *bytes;   // the stacks' used parts, the dynamic and the static shared memory
  size_t *stack_from;     // each thread's saved stack range starts here (offset in its stack)
  size_t n_bytes;
};

static const size_t kRedZone = 256;  // below a saved stack pointer (the ABI's red zone is 128)

static bool save_block(SavedBlock &b, unsigned n, unsigned nwarps, size_t shmem) {
  b.alive = g_alive;
  b.fib = (Fiber *)malloc(n * sizeof(Fiber));
  b.warp = (Warp *)malloc(nwarps * sizeof(Warp));
  b.stack_from = (size_t *)malloc(n * sizeof(size_t));
  size_t total = shmem;
  for (unsigned i = 0; i < g_n_shared; ++i) total += g_shared_regions[i].bytes;
  for (unsigned i = 0; i < n; ++i) {
    size_t from = g_stacks.stack_bytes;
    if (g_fib[i].state != EXITED) {
#if GMPROF_CPU_ASM_SWITCH
      const char *sp = (const char *)g_fib[i].ctx.sp - kRedZone;
      from = sp > stack_lo(i) ? (size_t)(sp - stack_lo(i)) : 0;
#else
      from = 0;  // ucontext: the whole stack
#endif
    }
    b.stack_from[i] = from;
    total += g_stacks.stack_bytes - from;
  }
  b.bytes = (unsigned char *)malloc(total ? total : 1);
  if (!b.fib || !b.warp || !b.stack_from || !b.bytes) return false;
  memcpy(b.fib, g_fib, n * sizeof(Fiber));
  memcpy(b.warp, g_warp, nwarps * sizeof(Warp));
  unsigned char *at = b.bytes;
  for (unsigned i = 0; i < n; ++i) {
    size_t len = g_stacks.stack_bytes - b.stack_from[i];
    memcpy(at, stack_lo(i) + b.stack_from[i], len);
    at += len;
  }
  memcpy(at, g_dyn_smem, shmem);
  at += shmem;
  for (unsigned i = 0; i < g_n_shared; ++i) {
    memcpy(at, g_shared_regions[i].p, g_shared_regions[i].bytes);
    at += g_shared_regions[i].bytes;
  }
  b.n_bytes = (size_t)(at - b.bytes);
  return true;
}

static void free_block(SavedBlock &b) {
  free(b.fib);
  free(b.warp);
  free(b.stack_from);
  free(b.bytes);
  b.fib = nullptr;
  b.warp = nullptr;
  b.stack_from = nullptr;
  b.bytes = nullptr;
}

// Brings a block back and releases its threads from the grid barrier.
static void resume_block(SavedBlock &b, unsigned n, unsigned nwarps, size_t shmem) {
  memcpy(g_fib, b.fib, n * sizeof(Fiber));
  memcpy(g_warp, b.warp, nwarps * sizeof(Warp));
  const unsigned char *at = b.bytes;
  for (unsigned i = 0; i < n; ++i) {
    size_t len = g_stacks.stack_bytes - b.stack_from[i];
    memcpy(stack_lo(i) + b.stack_from[i], at, len);
    at += len;
  }
  memcpy(g_dyn_smem, at, shmem);
  at += shmem;
  // a static shared variable first registered after this block was put aside is one the block
  // had not reached: its bytes stay as they are (shared memory starts undefined)
  for (unsigned i = 0; i < g_n_shared && (size_t)(at - b.bytes) < b.n_bytes; ++i) {
    memcpy(g_shared_regions[i].p, at, g_shared_regions[i].bytes);
    at += g_shared_regions[i].bytes;
  }
  free_block(b);
  g_alive = b.alive;
  g_qhead = g_qtail = 0;
  g_bar_n = 0;
  g_grid_n = 0;
  g_spins = 0;
  for (unsigned i = 0; i < n; ++i)
    if (g_fib[i].state == AT_GRID) release(&g_fib[i]);
}

static void run_cooperative(const unsigned *grid, size_t shmem) {
  const unsigned gx = grid[0], gy = grid[1], n = g_nthreads, nwarps = (n + 31) / 32;
  const unsigned long long blocks = (unsigned long long)grid[0] * grid[1] * grid[2];
  SavedBlock *saved = (SavedBlock *)calloc(blocks, sizeof(SavedBlock));
  if (!saved) {
    set_error(BAD_LAUNCH, nullptr, 0, "cannot keep %llu blocks of a cooperative launch", blocks);
    return;
  }
  unsigned long long remaining = blocks;
  for (bool first = true; remaining && !g_status->code; first = false) {
    unsigned long long arrived = 0, waiting_line_block = blocks;
    for (unsigned long long k = 0; k < blocks && !g_status->code; ++k) {
      if (saved[k].done) continue;
      const unsigned bx = (unsigned)(k % gx), by = (unsigned)((k / gx) % gy),
                     bz = (unsigned)(k / ((unsigned long long)gx * gy));
      if (first) {
        run_block(bx, by, bz);
      } else {
        blockIdx.x = bx;
        blockIdx.y = by;
        blockIdx.z = bz;
        resume_block(saved[k], n, nwarps, shmem);
        schedule();
      }
      if (g_status->code) break;
      if (g_alive == 0) {
        saved[k].done = true;
        --remaining;
      } else {
        if (!save_block(saved[k], n, nwarps, shmem)) {
          set_error(BAD_LAUNCH, nullptr, 0, "out of memory keeping the blocks of a cooperative "
                    "launch");
          break;
        }
        ++arrived;
        if (waiting_line_block == blocks) waiting_line_block = k;
      }
    }
    if (!g_status->code && arrived && arrived < blocks) {
      // some blocks ended while others wait at the grid barrier: it can never complete
      const Fiber *w = nullptr;
      for (unsigned i = 0; i < n && !w; ++i)
        if (saved[waiting_line_block].fib[i].state == AT_GRID) w = &saved[waiting_line_block].fib[i];
      set_error(DEADLOCK, w ? w->file : nullptr, w ? w->line : 0,
                "deadlock at the grid barrier (this_grid().sync()): %llu of %llu blocks wait "
                "there, the others have exited without reaching it",
                arrived, blocks);
    }
  }
  for (unsigned long long k = 0; k < blocks; ++k) free_block(saved[k]);
  free(saved);
}

extern "C" GMPROF_CPU_EXPORT void gmprof_cpu_set_cooperative(int on) { g_cooperative = on; }

// ---------------------------------------------------------------- device-side launches
// A kernel's `child<<<g, b>>>(x)` (gmprof_cpu.h's DeviceLaunch) queues the child here; the
// launch that is running runs the queue after its own blocks, first in first out, children's
// children included (CUDA: a child grid completes before its parent does). Not cooperative.
struct ChildGrid {
  void (*entry)(void **);
  void *pending;
  void (*release)(void *);
  dim3 grid, block;
  unsigned long long shmem;
};
static ChildGrid *g_children;
static size_t g_nchildren, g_children_cap, g_children_head;

void device_launch(void (*entry)(void **), void *pending, void (*release)(void *), dim3 grid,
                   dim3 block, unsigned long long shmem) {
  if (g_nchildren == g_children_cap) {
    const size_t cap = g_children_cap ? 2 * g_children_cap : 64;
    ChildGrid *c = (ChildGrid *)realloc(g_children, cap * sizeof *c);
    if (!c) {
      release(pending);
      set_error(BAD_LAUNCH, nullptr, 0, "out of memory queueing a device-side launch");
      return;
    }
    g_children = c;
    g_children_cap = cap;
  }
  g_children[g_nchildren++] = ChildGrid{entry, pending, release, grid, block, shmem};
}

static void drop_children() {
  for (size_t i = g_children_head; i < g_nchildren; ++i)
    g_children[i].release(g_children[i].pending);
  g_nchildren = g_children_head = 0;
}


// Sets the grid's shape and its threads' ids; false (with the error set) for a bad shape.
static bool start_grid(void (*entry)(void **), void **args, const unsigned *grid,
                       const unsigned *block, unsigned long long shmem,
                       unsigned long long stack_bytes) {
  const unsigned long long n = (unsigned long long)block[0] * block[1] * block[2];
  if (n == 0 || n > kMaxThreads || !grid[0] || !grid[1] || !grid[2]) {
    set_error(BAD_LAUNCH, nullptr, 0, "bad launch shape: grid (%u,%u,%u), block (%u,%u,%u)",
              grid[0], grid[1], grid[2], block[0], block[1], block[2]);
    return false;
  }
  if (shmem > GMPROF_CPU_DYNAMIC_SHARED_MAX) {
    set_error(BAD_LAUNCH, nullptr, 0,
              "%llu bytes of dynamic shared memory asked for; the CPU backend has %u "
              "(compile with -DGMPROF_CPU_DYNAMIC_SHARED_MAX=<bytes> for more)",
              shmem, (unsigned)GMPROF_CPU_DYNAMIC_SHARED_MAX);
    return false;
  }
  if (!stacks_reserve((unsigned)n, (size_t)stack_bytes)) {
    set_error(BAD_LAUNCH, nullptr, 0, "cannot map %llu stacks of %llu KiB for the threads", n,
              stack_bytes >> 10);
    return false;
  }
  g_entry = entry;
  g_args = args;
  blockDim = dim3(block[0], block[1], block[2]);
  gridDim = dim3(grid[0], grid[1], grid[2]);
  g_nthreads = (unsigned)n;
  g_spin_limit = 10000ull + 100ull * n;
  // (checked before the launch on both paths: gmprof/runtime/cpu_env.py, gmprof_cudart.cpp)
  const char *env = getenv("GMPROF_CPU_LIVELOCK_S");
  if (const char *expected = ::gmprof_cpu_env::livelock_s(env, &g_livelock_seconds)) {
    set_error(BAD_LAUNCH, nullptr, 0, "GMPROF_CPU_LIVELOCK_S=%s: %s", env, expected);
    return false;
  }
  for (unsigned i = 0; i < n; ++i) {
    Fiber &f = g_fib[i];
    f.linear = i;
    f.tid.x = i % block[0];
    f.tid.y = (i / block[0]) % block[1];
    f.tid.z = i / (block[0] * block[1]);
    f.warp = i / 32;
    f.lane = i % 32;
    f.file = nullptr;
    f.what = nullptr;
    f.line = 0;
  }

  return true;
}

extern "C" GMPROF_CPU_EXPORT int gmprof_cpu_launch(void (*entry)(void **), void **args,
                                                  const unsigned *grid, const unsigned *block,
                                                  unsigned long long shmem,
                                                  unsigned long long stack_bytes, double timeout_s,
                                                  Status *st) {
  memset(st, 0, sizeof *st);
  g_status = st;
  drop_children();
  if (!start_grid(entry, args, grid, block, shmem, stack_bytes)) {
    g_status = nullptr;
    return st->code;
  }
  stack_t ss, old_ss;
  ss.ss_sp = g_altstack;
  ss.ss_size = sizeof g_altstack;
  ss.ss_flags = 0;
  sigaltstack(&ss, &old_ss);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  for (int i = 0; i < kNumSignals; ++i) sigaction(kSignals[i], &sa, &g_old_act[i]);
  struct sigaction sa_stop = sa;
  sa_stop.sa_sigaction = on_stop;
  for (int i = 0; i < kNumStopSignals; ++i) {
    sigaction(kStopSignals[i], nullptr, &g_old_stop[i]);
    g_took_stop[i] = g_old_stop[i].sa_handler != SIG_IGN;  // an ignored signal stays ignored
    if (g_took_stop[i]) sigaction(kStopSignals[i], &sa_stop, nullptr);
  }
  struct sigaction sa_timeout = sa, old_timeout;
  sa_timeout.sa_sigaction = on_timeout;
  sigaction(timeout_signal(), &sa_timeout, &old_timeout);
  g_launch_thread = pthread_self();

  fenv_t fenv;  // a kernel that changed the FP environment must not leave it changed
  fegetenv(&fenv);
  if (sigsetjmp(g_jmp, 1) == 0) {
    g_in_launch = 1;
    arm_timeout(timeout_s);
    if (g_cooperative)
      run_cooperative(grid, (size_t)shmem);
    else
      for (unsigned bz = 0; bz < grid[2] && !st->code; ++bz)
        for (unsigned by = 0; by < grid[1] && !st->code; ++by)
          for (unsigned bx = 0; bx < grid[0] && !st->code; ++bx) run_block(bx, by, bz);
    const int cooperative = g_cooperative;  // then the grids launched from device code
    g_cooperative = 0;
    g_in_child = true;
    while (!st->code && g_children_head < g_nchildren) {
      const ChildGrid c = g_children[g_children_head];  // (the queue may move as it grows)
      void *cargs[1] = {c.pending};
      const unsigned cg[3] = {c.grid.x, c.grid.y, c.grid.z};
      const unsigned cb[3] = {c.block.x, c.block.y, c.block.z};
      if (start_grid(c.entry, cargs, cg, cb, c.shmem, stack_bytes))
        for (unsigned bz = 0; bz < cg[2] && !st->code; ++bz)
          for (unsigned by = 0; by < cg[1] && !st->code; ++by)
            for (unsigned bx = 0; bx < cg[0] && !st->code; ++bx) run_block(bx, by, bz);
      c.release(c.pending);  // (not on a fault: drop_children releases it from the head)
      ++g_children_head;
    }
    g_cooperative = cooperative;
    g_in_launch = 0;
  } else {
    report_fault();
  }
  g_in_launch = 0;
  g_in_child = false;
  drop_children();
  disarm_timeout();
  g_cur = nullptr;
  fesetenv(&fenv);

  for (int i = 0; i < kNumSignals; ++i) sigaction(kSignals[i], &g_old_act[i], nullptr);
  for (int i = 0; i < kNumStopSignals; ++i)
    if (g_took_stop[i]) sigaction(kStopSignals[i], &g_old_stop[i], nullptr);
  sigaction(timeout_signal(), &old_timeout, nullptr);
  // a disabled old stack may come back with ss_size 0, which sigaltstack refuses
  if (old_ss.ss_flags & SS_DISABLE) {
    old_ss.ss_size = MINSIGSTKSZ;
    old_ss.ss_sp = nullptr;
  }
  sigaltstack(&old_ss, nullptr);
  print_flush();
  g_status = nullptr;
  return st->code;
}

// Gives the module's stacks back (the Python object is being collected).
extern "C" GMPROF_CPU_EXPORT void gmprof_cpu_release() {
  stacks_release();
  free(g_pbuf);
  g_pbuf = nullptr;
  g_plen = g_pcap = 0;
}

extern "C" GMPROF_CPU_EXPORT unsigned long long gmprof_cpu_status_size() { return sizeof(Status); }

// The warp collectives made so far (g_collectives).
extern "C" GMPROF_CPU_EXPORT unsigned long long gmprof_cpu_collectives() { return g_collectives; }

#endif  // GMPROF_CPU_LAUNCH_H
