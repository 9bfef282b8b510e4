// gmprof CPU backend: CUDA device code compiled as C++17 by g++ and run on the CPU.
//
// Stage: runtime (the CPU twin of the device runtime). Input: a translation unit of CUDA device
// code (gmprof's frontend has stripped host code and rewritten `extern __shared__ T s[];` to
// `GMPROF_DYNAMIC_SHARED(T, s);`), compiled with this header force-included
// (`g++ -include gmprof_cpu.h`). Output: a shared library whose `gmprof_cpu_launch` runs a kernel
// over a grid (gmprof/runtime/cpu.py drives it).
//
// What CUDA means here: blocks run one after another on the calling OS thread; the threads of a
// block are cooperative fibers that switch at __syncthreads(), at warp collectives, at
// __activemask() and at spin-wait points (gmprof_cpu_runtime.cpp). `__shared__` is `static`: one
// object per block because blocks do not overlap. Warps are 32 consecutive linear thread ids.
//
//   this file                qualifiers, built-in types, the runtime's interface, and the
//                            macros that give the intrinsics their call site
//   gmprof_cpu_math.h        vector types, math and integer intrinsics, atomics
//   gmprof_cpu_runtime.cpp   scheduler, barriers, warp collectives, faults, the launch
//   gmprof_cpu_fiber.h       context switch and stacks (the runtime's)
#ifndef GMPROF_CPU_H
#define GMPROF_CPU_H

// Every C/C++ header a kernel may include comes first: the macros below (__noinline__, printf,
// clock, assert's helper) would break these headers if they were included after them, and
// their include guards make the kernel's own #include a no-op.
#include <assert.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cassert>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <limits>
#include <new>
#include <tuple>
#include <type_traits>
#include <utility>
#if defined(GMPROF_CPU_PROGRAM)
// whole programs include the C++ library after this header: libstdc++'s shared_ptr spells
// __attribute__((__noinline__)), which the macro below would break
#include <memory>
#endif
// the runtime's (gmprof_cpu_runtime.cpp), here for the same reason
#include <dlfcn.h>
#include <fenv.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#define GMPROF_CPU 1
// CUDA-aware host compilation, as nvcc's host pass: helper headers (cuda-samples' helper_math.h)
// use it to skip their own host copies of fminf, rsqrtf, min and max. __CUDA_ARCH__ stays
// undefined: there is no PTX here.
#ifndef __CUDACC__
#define __CUDACC__ 1
#endif

// ---------------------------------------------------------------- qualifiers
#define __global__
#define __device__
#define __host__
#define __constant__
#define __managed__
#define __grid_constant__
#define __shared__ static
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __align__(n) __attribute__((aligned(n)))
#define __builtin_align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
#define __maxnreg__(...)
#define __cluster_dims__(...)
#define __device_builtin__
#define __cudart_builtin__
// __restrict__ is already a g++ keyword

// ---------------------------------------------------------------- shifts, as a GPU shifts
//
// A GPU's shift by a variable amount clamps it (PTX shl and shr: an amount at least the
// operand's width gives 0, or the sign's bits for an arithmetic right shift); x86 masks it
// (x << 32 is x) and C++ leaves it undefined. Device code on the CPU backend shifts through
// these (gmprof/passes/targets.py writes `a << b` as `gmprof_shl(a, b)`), so that a program
// computes what it computes on a GPU (Rodinia's huffman packs bits with `dw << 32 - bit`).
template <class A, class B>
constexpr auto gmprof_shl(A a, B b) -> decltype(a << b) {
  using R = decltype(a << b);
  if constexpr (std::is_integral<R>::value && std::is_integral<B>::value) {
    // (a negative amount is a huge one to the GPU)
    using U = typename std::make_unsigned<typename std::common_type<B, int>::type>::type;
    return (U)b >= (U)(sizeof(R) * 8) ? R(0) : R(a << b);
  } else {
    return a << b;
  }
}

template <class A, class B>
constexpr auto gmprof_shr(A a, B b) -> decltype(a >> b) {
  using R = decltype(a >> b);
  if constexpr (std::is_integral<R>::value && std::is_integral<B>::value) {
    using U = typename std::make_unsigned<typename std::common_type<B, int>::type>::type;
    if ((U)b >= (U)(sizeof(R) * 8)) return std::is_signed<R>::value && a < 0 ? R(-1) : R(0);
    return R(a >> b);
  } else {
    return a >> b;
  }
}

template <class L, class B>
inline L &gmprof_shl_assign(L &l, B b) {
  return l = static_cast<typename std::remove_cv<L>::type>(gmprof_shl(l, b));
}

template <class L, class B>
inline L &gmprof_shr_assign(L &l, B b) {
  return l = static_cast<typename std::remove_cv<L>::type>(gmprof_shr(l, b));
}

// ---------------------------------------------------------------- built-in types

struct uint3 {
  unsigned int x, y, z;
};

struct dim3 {
  unsigned int x, y, z;
  constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1)
      : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  constexpr operator uint3() const { return uint3{x, y, z}; }
};

static constexpr int warpSize = 32;

// ---------------------------------------------------------------- the runtime's interface
//
// Defined in gmprof_cpu_runtime.cpp. Hidden: each module has its own runtime, and references
// from kernel code are direct (no GOT, no PLT) even under -fPIC.
#define GMPROF_CPU_EXPORT __attribute__((visibility("default")))
#pragma GCC visibility push(hidden)

extern uint3 threadIdx;
extern uint3 blockIdx;
extern dim3 blockDim;
extern dim3 gridDim;

namespace gmprof_cpu {

enum Op : unsigned char {
  OP_SYNCWARP, OP_SHFL_IDX, OP_SHFL_UP, OP_SHFL_DOWN, OP_SHFL_XOR, OP_BALLOT, OP_ANY, OP_ALL,
  OP_UNI, OP_MATCH_ANY, OP_MATCH_ALL, OP_RED_ADD, OP_RED_MIN_U, OP_RED_MAX_U, OP_RED_MIN_S,
  OP_RED_MAX_S, OP_RED_AND, OP_RED_OR, OP_RED_XOR
};

extern unsigned char g_dyn_smem[];  // the dynamic shared memory of the running block
// Whether an address is outside every thread's stack (CUDA's local memory) and the block's
// dynamic shared memory: the CPU's answer to CUDA's __isGlobal.
bool is_global(const void *p);

// __syncthreads and its _count/_and/_or forms: returns the number of threads whose predicate
// was true; *participants (if given) gets the number of threads that took part.
unsigned barrier(const char *file, int line, const char *what, int pred, unsigned *participants);
// Every warp collective: `value` is this lane's contribution (zero-extended), `param` the source
// lane, delta or lane mask of a shuffle. *result2 gets __match_all_sync's predicate.
unsigned long long warp_collective(const char *file, int line, const char *what, int op,
                                   unsigned mask, unsigned long long value, int param, int width,
                                   unsigned long long *result2);
// The call site is the return address, so this must stay a real call.
__attribute__((noinline)) unsigned activemask_at(const char *file, int line);
void spin_yield(const char *file, int line, const char *what);
// cooperative_groups' grid_group::sync(): a grid-wide barrier, in a cooperative launch only
// (gmprof_cpu_launch.h runs the blocks in phases between grid barriers).
void grid_sync(const char *file, int line);
// A static __shared__ variable, registered where it is declared when the file has a grid
// barrier (gmprof/runtime/cpu.py's register_static_shared): a cooperative launch keeps one copy
// of it per block across grid barriers. Returns 0.
int shared_seen(void *p, unsigned long long bytes);
[[noreturn]] void trap_at(const char *file, int line);
[[noreturn]] void assert_failed(const char *expr, const char *file, int line);
__attribute__((format(printf, 1, 2))) int device_printf(const char *fmt, ...);
bool in_kernel();  // whether a kernel's thread is running (whole programs' host code is not)

// ---------------------------------------------------------------- glue helpers
//
// The generated glue calls `invoke(&kernel<args>, argv)`: the kernel's own parameter types
// unpack the argument array, so no C type strings travel between Python and C++.

template <class... P, size_t... I>
static inline void invoke_impl(void (*k)(P...), void **a, std::index_sequence<I...>) {
  k(*static_cast<typename std::remove_reference<P>::type *>(a[I])...);
}

template <class... P>
static inline void invoke(void (*k)(P...), void **a) {
  invoke_impl(k, a, std::index_sequence_for<P...>{});
}

struct ParamInfo {
  unsigned long long size, align;
  int kind;          // 'p' pointer, 'f' floating, 'i' signed integer, 'u' unsigned, 'b' bool,
                     // 'e' enum, 's' anything else (struct, class)
  const char *type;  // __PRETTY_FUNCTION__ of type_name<T>: "... [with T = const float*]"
};

template <class T>
static const char *type_name() { return __PRETTY_FUNCTION__; }

template <class T>
static ParamInfo param_info() {
  typedef typename std::remove_cv<typename std::remove_reference<T>::type>::type U;
  int kind = std::is_pointer<U>::value          ? 'p'
             : std::is_floating_point<U>::value ? 'f'
             : std::is_same<U, bool>::value     ? 'b'
             : std::is_integral<U>::value       ? (std::is_signed<U>::value ? 'i' : 'u')
             : std::is_enum<U>::value           ? 'e'
                                                : 's';
  return ParamInfo{sizeof(U), alignof(U), kind, type_name<T>()};
}

template <class... P>
static int describe(void (*)(P...), ParamInfo *out, int cap) {
  const ParamInfo all[] = {param_info<P>()..., ParamInfo{0, 0, 0, nullptr}};
  const int n = (int)sizeof...(P);
  for (int i = 0; i < n && i < cap; ++i) out[i] = all[i];
  return n;
}

// ---------------------------------------------------------------- device-side launches
//
// Dynamic parallelism: the CPU target writes `k<<<g, b, s, st>>>(x)` in device code as
// `k * ::gmprof_cpu::DeviceLaunch(g, b, s, st)(x)` (passes/targets.py), which queues the child
// grid (its entry, its arguments converted to k's parameters and copied, its shape); the
// launching grid runs its queue after its own blocks, before the host's launch returns
// (gmprof_cpu_launch.h): CUDA lets a child run at any time before its parent grid completes.
void device_launch(void (*entry)(void **), void *pending, void (*release)(void *), dim3 grid,
                   dim3 block, unsigned long long shmem);

template <class... P>
struct PendingLaunch {
  void (*kernel)(P...);
  std::tuple<typename std::decay<P>::type...> args;
  template <size_t... I>
  void call(std::index_sequence<I...>) { kernel(std::get<I>(args)...); }
  static void run(void **a) {
    static_cast<PendingLaunch *>(a[0])->call(std::index_sequence_for<P...>());
  }
  static void release(void *p) { delete static_cast<PendingLaunch *>(p); }
};

template <class... A>
struct DeviceLaunchArgs {
  dim3 grid, block;
  unsigned long long shmem;
  std::tuple<A...> args;
};

struct DeviceLaunch {
  dim3 grid, block;
  unsigned long long shmem;
  template <class S = int>
  DeviceLaunch(dim3 g, dim3 b, unsigned long long sh = 0, S = S()) : grid(g), block(b), shmem(sh) {}
  template <class... A>
  DeviceLaunchArgs<typename std::decay<A>::type...> operator()(A &&...a) const {
    return {grid, block, shmem, std::tuple<typename std::decay<A>::type...>(std::forward<A>(a)...)};
  }
};

template <class... P, class... A>
void operator*(void (*k)(P...), DeviceLaunchArgs<A...> &&l) {
  static_assert(sizeof...(P) == sizeof...(A), "a device-side launch passes as many arguments "
                "as the kernel has parameters");
  auto *p = new PendingLaunch<P...>{k, std::tuple<typename std::decay<P>::type...>(l.args)};
  device_launch(&PendingLaunch<P...>::run, p, &PendingLaunch<P...>::release, l.grid, l.block,
                l.shmem);
}

}  // namespace gmprof_cpu

#pragma GCC visibility pop

#ifndef GMPROF_CPU_SEPARATE_RUNTIME
// compiled alone (not through gmprof/runtime/cpu.py, which links a cached runtime object)
#include "gmprof_cpu_runtime.cpp"
#endif

#include "gmprof_cpu_math.h"

// ---------------------------------------------------------------- dynamic shared memory
//
// One buffer, at a fixed address, for all blocks (they run one after another): so the
// declaration works in a kernel, in a __device__ function and at file scope (gmprof's own
// counter area is a file-scope one), and all of them alias, as `extern __shared__` arrays do.
#define GMPROF_DYNAMIC_SHARED(T, name) \
  T *const name = reinterpret_cast<T *>(::gmprof_cpu::g_dyn_smem)

// ---------------------------------------------------------------- call-site macros
//
// Everything that can wait records __FILE__/__LINE__ (the user's .cu line, through the #line
// directives gmprof emits), for deadlock reports.
#define __syncthreads() ((void)::gmprof_cpu::barrier(__FILE__, __LINE__, "__syncthreads()", 0, nullptr))
#define __syncthreads_count(pred) \
  ((int)::gmprof_cpu::barrier(__FILE__, __LINE__, "__syncthreads_count()", (pred), nullptr))
#define __syncthreads_and(pred) ::gmprof_cpu::syncthreads_and(__FILE__, __LINE__, (pred))
#define __syncthreads_or(pred) \
  ((int)(::gmprof_cpu::barrier(__FILE__, __LINE__, "__syncthreads_or()", (pred), nullptr) != 0))
// a call object, so that both __syncwarp() and __syncwarp(mask) work without the comma
// elision extension (which -std=c++17 turns off)
#define __syncwarp(...) ::gmprof_cpu::SyncwarpAt{__FILE__, __LINE__}(__VA_ARGS__)
#define __shfl_sync(...) ::gmprof_cpu::shfl(__FILE__, __LINE__, "__shfl_sync()", ::gmprof_cpu::OP_SHFL_IDX, __VA_ARGS__)
#define __shfl_up_sync(...) ::gmprof_cpu::shfl(__FILE__, __LINE__, "__shfl_up_sync()", ::gmprof_cpu::OP_SHFL_UP, __VA_ARGS__)
#define __shfl_down_sync(...) ::gmprof_cpu::shfl(__FILE__, __LINE__, "__shfl_down_sync()", ::gmprof_cpu::OP_SHFL_DOWN, __VA_ARGS__)
#define __shfl_xor_sync(...) ::gmprof_cpu::shfl(__FILE__, __LINE__, "__shfl_xor_sync()", ::gmprof_cpu::OP_SHFL_XOR, __VA_ARGS__)
#define __ballot_sync(mask, pred) \
  ((unsigned)::gmprof_cpu::warp_collective(__FILE__, __LINE__, "__ballot_sync()", ::gmprof_cpu::OP_BALLOT, (mask), (pred) != 0, 0, 32, nullptr))
#define __any_sync(mask, pred) \
  ((int)::gmprof_cpu::warp_collective(__FILE__, __LINE__, "__any_sync()", ::gmprof_cpu::OP_ANY, (mask), (pred) != 0, 0, 32, nullptr))
#define __all_sync(mask, pred) \
  ((int)::gmprof_cpu::warp_collective(__FILE__, __LINE__, "__all_sync()", ::gmprof_cpu::OP_ALL, (mask), (pred) != 0, 0, 32, nullptr))
#define __uni_sync(mask, pred) ::gmprof_cpu::uni_sync(__FILE__, __LINE__, (mask), (pred))
#define __match_any_sync(mask, value) ::gmprof_cpu::match_any(__FILE__, __LINE__, (mask), (value))
#define __match_all_sync(mask, value, pred) ::gmprof_cpu::match_all(__FILE__, __LINE__, (mask), (value), (pred))
#define __reduce_add_sync(mask, value) ::gmprof_cpu::reduce(__FILE__, __LINE__, "__reduce_add_sync()", ::gmprof_cpu::OP_RED_ADD, (mask), (value))
#define __reduce_min_sync(mask, value) ::gmprof_cpu::reduce_minmax(__FILE__, __LINE__, "__reduce_min_sync()", false, (mask), (value))
#define __reduce_max_sync(mask, value) ::gmprof_cpu::reduce_minmax(__FILE__, __LINE__, "__reduce_max_sync()", true, (mask), (value))
#define __reduce_and_sync(mask, value) ::gmprof_cpu::reduce(__FILE__, __LINE__, "__reduce_and_sync()", ::gmprof_cpu::OP_RED_AND, (mask), (value))
#define __reduce_or_sync(mask, value) ::gmprof_cpu::reduce(__FILE__, __LINE__, "__reduce_or_sync()", ::gmprof_cpu::OP_RED_OR, (mask), (value))
#define __reduce_xor_sync(mask, value) ::gmprof_cpu::reduce(__FILE__, __LINE__, "__reduce_xor_sync()", ::gmprof_cpu::OP_RED_XOR, (mask), (value))
#define __activemask() ::gmprof_cpu::activemask_at(__FILE__, __LINE__)
#define __trap() ::gmprof_cpu::trap_at(__FILE__, __LINE__)
#define __brkpt() ::gmprof_cpu::trap_at(__FILE__, __LINE__)
#define __nanosleep(ns) ::gmprof_cpu::nanosleep_at(__FILE__, __LINE__, (ns))
#define atomicCAS(...) ::gmprof_cpu::atomic_cas(__FILE__, __LINE__, __VA_ARGS__)
#define atomicCAS_block(...) ::gmprof_cpu::atomic_cas(__FILE__, __LINE__, __VA_ARGS__)
#define atomicCAS_system(...) ::gmprof_cpu::atomic_cas(__FILE__, __LINE__, __VA_ARGS__)
#define atomicExch(...) ::gmprof_cpu::atomic_exch(__FILE__, __LINE__, __VA_ARGS__)
#define atomicExch_block(...) ::gmprof_cpu::atomic_exch(__FILE__, __LINE__, __VA_ARGS__)
#define atomicExch_system(...) ::gmprof_cpu::atomic_exch(__FILE__, __LINE__, __VA_ARGS__)
#if defined(GMPROF_CPU_PROGRAM)
// Whole programs: host code is in the same translation unit and shares these names; outside a
// kernel they are the C library's, and `std::printf(...)` must still compile.
int gmprof_cpu_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
clock_t gmprof_cpu_clock();
namespace std {
using ::gmprof_cpu_clock;
using ::gmprof_cpu_printf;
}  // namespace std
#define printf(...) gmprof_cpu_printf(__VA_ARGS__)
#define clock() gmprof_cpu_clock()
#else
#define printf(...) ::gmprof_cpu::device_printf(__VA_ARGS__)
#define clock() ((clock_t)::gmprof_cpu::clock64_now())
#endif
#define clock64() ((long long)::gmprof_cpu::clock64_now())

#endif  // GMPROF_CPU_H
