// gmprof CPU backend, part 1 of 3: fibers (context switch and stacks).
//
// Included by gmprof_cpu.h. Gives the scheduler (gmprof_cpu_sched.h) three things: a Context
// that a fiber's state lives in, `ctx_start` (make a context that will run `fiber_entry` on a
// given stack) and `ctx_switch` (save the current context, resume another), plus a pool of
// mmap'd stacks with a guard page below each one.
//
// On x86-64 the switch is fifteen instructions of hand-written assembly: it saves the System V
// callee-saved registers and swaps the stack pointer (the FP control words: see below).
// Everything else is caller-saved, so the compiler has already spilled it around the call. swapcontext
// would also save and restore the signal mask, one rt_sigprocmask system call per switch: about
// 30x slower, and a tiled matrix product switches about two million times. Other machines (and
// x86-64 with -DGMPROF_CPU_UCONTEXT, which the tests use to keep the fallback honest) use
// ucontext.
#ifndef GMPROF_CPU_FIBER_H
#define GMPROF_CPU_FIBER_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__x86_64__) && !defined(GMPROF_CPU_UCONTEXT)
#define GMPROF_CPU_ASM_SWITCH 1
#else
#define GMPROF_CPU_ASM_SWITCH 0
#include <ucontext.h>
#endif

namespace gmprof_cpu {

static void fiber_entry();

#if GMPROF_CPU_ASM_SWITCH

struct Context {
  void *sp;
};

extern "C" void gmprof_cpu_switch(void **save_sp, void *load_sp);

// Stack layout of a saved context, from sp upwards: [x87 control word (at sp), MXCSR (at
// sp+8)], r15 r14 r13 r12 rbx rbp, return address. `hidden`: the symbol must not be exported,
// or two modules loaded in one process would bind to one copy.
//
// The FP control words (MXCSR, x87 control word) are callee-saved in the System V ABI, so they
// are saved per switch too, unless -DGMPROF_CPU_NO_FP_CONTROL: CUDA device code cannot change
// the rounding mode, so fibers never differ in them, but the cost is lost in the noise of
// the tiled product (measured), and the launch also restores the whole FP environment after
// the kernel.
#if !defined(GMPROF_CPU_NO_FP_CONTROL)
#define GMPROF_CPU_FP_SAVE "  subq $16, %rsp\n  stmxcsr 8(%rsp)\n  fnstcw (%rsp)\n"
#define GMPROF_CPU_FP_LOAD "  fldcw (%rsp)\n  ldmxcsr 8(%rsp)\n  addq $16, %rsp\n"
#define GMPROF_CPU_FP_WORDS 2
#else
#define GMPROF_CPU_FP_SAVE ""
#define GMPROF_CPU_FP_LOAD ""
#define GMPROF_CPU_FP_WORDS 0
#endif
__asm__(
    ".text\n"
    ".globl gmprof_cpu_switch\n"
    ".hidden gmprof_cpu_switch\n"
    ".type gmprof_cpu_switch,@function\n"
    ".p2align 4\n"
    "gmprof_cpu_switch:\n"
    "  pushq %rbp\n"
    "  pushq %rbx\n"
    "  pushq %r12\n"
    "  pushq %r13\n"
    "  pushq %r14\n"
    "  pushq %r15\n"
    GMPROF_CPU_FP_SAVE
    "  movq %rsp, (%rdi)\n"
    "  movq %rsi, %rsp\n"
    GMPROF_CPU_FP_LOAD
    "  popq %r15\n"
    "  popq %r14\n"
    "  popq %r13\n"
    "  popq %r12\n"
    "  popq %rbx\n"
    "  popq %rbp\n"
    "  ret\n"
    ".size gmprof_cpu_switch, .-gmprof_cpu_switch\n");

// A fresh context: the first switch to it "returns" into fiber_entry with the stack aligned as
// at a function's entry (rsp = 8 mod 16), zeroed registers (and default FP control words).
static inline void ctx_start(Context *c, char *stack_lo, size_t size) {
  uintptr_t top = ((uintptr_t)(stack_lo + size)) & ~(uintptr_t)15;
  uint64_t *sp = (uint64_t *)top;
  *--sp = 0;                               // fiber_entry's (never used) return address
  *--sp = (uint64_t)(uintptr_t)&fiber_entry;
  for (int i = 0; i < 6; ++i) *--sp = 0;   // rbp rbx r12 r13 r14 r15
#if GMPROF_CPU_FP_WORDS
  *--sp = 0x1f80;                          // MXCSR: all exceptions masked, round to nearest
  *--sp = 0x037f;                          // x87 control word: the Linux default
#endif
  c->sp = sp;
}

static inline void ctx_switch(Context *from, Context *to) { gmprof_cpu_switch(&from->sp, to->sp); }

#else  // ucontext fallback

struct Context {
  ucontext_t uc;
};

static void fiber_entry_uc() { fiber_entry(); }

static inline void ctx_start(Context *c, char *stack_lo, size_t size) {
  getcontext(&c->uc);
  c->uc.uc_stack.ss_sp = stack_lo;
  c->uc.uc_stack.ss_size = size;
  c->uc.uc_link = nullptr;
  makecontext(&c->uc, (void (*)())fiber_entry_uc, 0);
}

static inline void ctx_switch(Context *from, Context *to) { swapcontext(&from->uc, &to->uc); }

#endif

// ---------------------------------------------------------------- the stack pool
//
// One mapping for all the stacks of a block, reused by every block and launch of this module:
// [guard][stack 0][guard][stack 1]... The guard pages are PROT_NONE, so a thread that runs off
// its stack faults there (the fault handler tells this apart from a wild pointer by address).
// Kernels are compiled with -fstack-clash-protection, so a frame larger than the guard still
// touches it instead of jumping over it into the neighbour's stack.
static const size_t kGuardBytes = 16384;

struct StackPool {
  char *base = nullptr;
  size_t stride = 0;     // guard + stack
  size_t stack_bytes = 0;
  unsigned count = 0;
};

static StackPool g_stacks;

static inline void stacks_release() {
  if (g_stacks.base) munmap(g_stacks.base, g_stacks.stride * g_stacks.count);
  g_stacks = StackPool();
}

// Returns false when the memory cannot be had.
static inline bool stacks_reserve(unsigned n, size_t stack_bytes) {
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  stack_bytes = (stack_bytes + page - 1) & ~(page - 1);
  if (g_stacks.base && g_stacks.count >= n && g_stacks.stack_bytes == stack_bytes) return true;
  stacks_release();
  const size_t stride = kGuardBytes + stack_bytes;
  void *p = mmap(nullptr, stride * n, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (p == MAP_FAILED) return false;
  for (unsigned i = 0; i < n; ++i)
    if (mprotect((char *)p + i * stride, kGuardBytes, PROT_NONE) != 0) {
      munmap(p, stride * n);
      return false;
    }
  g_stacks.base = (char *)p;
  g_stacks.stride = stride;
  g_stacks.stack_bytes = stack_bytes;
  g_stacks.count = n;
  return true;
}

static inline char *stack_lo(unsigned i) { return g_stacks.base + i * g_stacks.stride + kGuardBytes; }

// The thread whose guard page holds `addr`, or -1.
static inline int stack_overflow_thread(const void *addr) {
  const uintptr_t a = (uintptr_t)addr, b = (uintptr_t)g_stacks.base;
  if (!g_stacks.base || a < b || a >= b + g_stacks.stride * g_stacks.count) return -1;
  const size_t off = a - b;
  if (off % g_stacks.stride >= kGuardBytes) return -1;
  // stack i grows down into guard i, which lies just below it
  return (int)(off / g_stacks.stride);
}

}  // namespace gmprof_cpu

#endif  // GMPROF_CPU_FIBER_H
