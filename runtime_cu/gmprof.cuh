// gmprof device runtime: the counters that instrumented kernels update.
//
// Included once at the top of every instrumented translation unit (GPU through NVRTC/nvcc, CPU
// through the CPU backend's header). Every hook is a template over the accessed type, so
// instrumented template kernels work for every instantiation, and over compile-time site and
// object numbers, so its common path compiles to straight-line code; rare and long paths are
// out of line (GMPROF_OUTLINE below).
//
// The launch's description lives in constant memory (`__gmprof_launch`): the host fills it
// before each launch with the objects' addresses, sizes and counter buffers. Counters are
//   * per 4-byte word of each shared array, per block, in a counter area that is either in
//     dynamic shared memory after the user's own dynamic bytes (SM mode: GMPROF_SM=1) or in
//     device memory (one counter per word for all blocks, as the paper's basic design);
//   * per element of each device object (per 4-byte word for elements smaller than 4 bytes),
//     in a shadow array in device memory, with an out-of-range counter per object: a counter is
//     never written outside its buffer, whatever address the kernel computes;
//   * per access site, in the block's counter area, for the per-site execution counts.
// Compile-time switches (the modes of the paper, set by gmprof):
//   GMPROF_SM            shared-memory counters live in shared memory (flushed at block exit);
//                        2: chosen per launch (Launch::flags & FLAG_AREA_SHARED; whole programs,
//                        whose code is compiled before the launch's shared memory is known)
//   GMPROF_ATOMIC        0: non-atomic updates (the paper's NA; approximate)
//   GMPROF_COUNTER_BITS  8, 16, 32 or 64 (8 and 16 need a threshold; 64: the host widens a
//                        launch whose counts could pass 2^32, runtime/widen.py)
//   GMPROF_THRESHOLD     saturate counters at this value (the paper's TH); 0: none
//   GMPROF_SAMPLING      1: count only sampled accesses (rate and sampler in the launch)
//   GMPROF_TRACE         1: log every access to a buffer instead of counting (the test oracle)
//   GMPROF_ENHANCED      1: live-range statistics per shared word (Algorithm 2)
//   GMPROF_WARPS         1: per-warp access statistics per site (--access-stats): shared
//                        wavefronts (bank conflicts), device sectors and lines (coalescing)
//   GMPROF_SHARING       1: blocks and warps per element of the device objects (--sharing)
//   GMPROF_WHOLE_PROGRAM 1: everything here is local to the translation unit (an unnamed
//                        namespace), so that instrumented files linked together with
//                        -rdc=true each keep their own launch description and helpers
// Included a second time with GMPROF_CHILD_PASS defined (whole programs whose copies launch
// kernels from the device, gmprof/program/children.py): everything below again, in namespace
// gmprof_dp, whose L() reads the description of a kernel launched from the device, bound by
// each of its blocks at entry (bind, at the end) instead of the file's constant memory.
// Included a second time with GMPROF_UNMEASURED_PASS defined (--access-stats on a sample of
// blocks, a kernel with two bodies: passes/dual.py): everything below again, in namespace
// gmprof_u, with GMPROF_WARPS 0 (hooks that measure nothing, for the body the unmeasured
// blocks run), on the first pass's launch description, counter area and shared bases.
#if !defined(GMPROF_CUH) || (defined(GMPROF_CHILD_PASS) && !defined(GMPROF_CUH_CHILD)) || \
    (defined(GMPROF_UNMEASURED_PASS) && !defined(GMPROF_CUH_UNMEASURED))
#if defined(GMPROF_CUH) && defined(GMPROF_UNMEASURED_PASS) && !defined(GMPROF_CUH_UNMEASURED)
#define GMPROF_CUH_UNMEASURED
#undef GMPROF_NS
#define GMPROF_NS gmprof_u
#undef GMPROF_WARPS
#define GMPROF_WARPS 0
#elif defined(GMPROF_CUH)
#define GMPROF_CUH_CHILD
#undef GMPROF_NS
#define GMPROF_NS gmprof_dp
#else
#define GMPROF_CUH
#define GMPROF_NS gmprof
#endif

#if defined(GMPROF_WHOLE_PROGRAM) && GMPROF_WHOLE_PROGRAM
#define GMPROF_TU_BEGIN namespace {
#define GMPROF_TU_END }
#else
#define GMPROF_TU_BEGIN
#define GMPROF_TU_END
#endif

#ifndef GMPROF_SM
#define GMPROF_SM 1
#endif
#ifndef GMPROF_ATOMIC
#define GMPROF_ATOMIC 1
#endif
#ifndef GMPROF_COUNTER_BITS
#define GMPROF_COUNTER_BITS 32
#endif
#ifndef GMPROF_THRESHOLD
#define GMPROF_THRESHOLD 0
#endif
#ifndef GMPROF_SAMPLING
#define GMPROF_SAMPLING 0
#endif
#ifndef GMPROF_TRACE
#define GMPROF_TRACE 0
#endif
#ifndef GMPROF_ENHANCED
#define GMPROF_ENHANCED 0
#endif
#ifndef GMPROF_WARPS
#define GMPROF_WARPS 0
#endif
#ifndef GMPROF_SHARING
#define GMPROF_SHARING 0
#endif
#ifndef GMPROF_MAX_OBJECTS
#define GMPROF_MAX_OBJECTS 64
#endif

#if GMPROF_COUNTER_BITS < 32 && GMPROF_THRESHOLD == 0
#error "gmprof: 8- and 16-bit counters need a threshold (GMPROF_THRESHOLD)"
#endif
#if GMPROF_COUNTER_BITS == 8 && GMPROF_THRESHOLD > 255
#error "gmprof: the threshold does not fit 8-bit counters"
#endif
#if GMPROF_COUNTER_BITS == 16 && GMPROF_THRESHOLD > 65535
#error "gmprof: the threshold does not fit 16-bit counters"
#endif

GMPROF_TU_BEGIN

namespace GMPROF_NS {

#if GMPROF_COUNTER_BITS == 8
typedef unsigned char counter_t;
#elif GMPROF_COUNTER_BITS == 16
typedef unsigned short counter_t;
#elif GMPROF_COUNTER_BITS == 64
typedef unsigned long long counter_t;
#else
typedef unsigned int counter_t;
#endif
// Per-site execution counts and out-of-range counts are 64-bit at every counter width: a site
// of a large launch runs past 2^32 times (bo_v1 at its large size: 2^33), and the host bounds
// every other counter by the sites' sums (runtime/widen.py).
typedef unsigned long long site_count_t;

// Object kinds, as the host writes them in Object::kind.
enum { KIND_NONE = 0, KIND_DEVICE = 1, KIND_SHARED = 2 };
// Launch::flags; flags >> FLAG_WS_ROWS_SHIFT: rows of per-warp statistics (GMPROF_WARPS) a
// measured block keeps (in Launch::block_rows, at its rank), one per measured site, flushed
// at block exit (the warp_stats buffer says which site each row is, warp_row below)
enum { FLAG_WARP_UNIFORM_OK = 1, FLAG_AREA_SHARED = 2, FLAG_DEVICE_DISJOINT = 4,
       FLAG_WS_ROWS_SHIFT = 8 };
// The leading words of the block's counter area (before the sites' and objects' counters).
// Each site's count takes SITE_WORDS 32-bit words (a site_count_t, 8-byte aligned: the area
// starts 16-byte aligned and the host keeps area_words even).
enum { AREA_EXITED = 0, AREA_CLOCK = 1, AREA_HEADER = 2, SITE_WORDS = 2 };
// Enhanced mode: per-array live-range statistics in the counter area (after the objects):
// [0] live ranges closed, [1] accesses in them, [2..2+LR_BINS) histogram of accesses per range
enum { LR_BINS = 12, LR_STRIDE = 2 + LR_BINS };

// Layout shared with the host (gmprof/runtime/layout.py): plain 4- and 8-byte fields only.
struct Object {
  unsigned long long base;        // device objects: address of the first byte
  unsigned long long bytes;       // size of the allocation (device) or the array (shared)
  unsigned long long counters;    // device objects: address of the shadow counters
  unsigned long long oor;         // address of this object's out-of-range counter (u64)
  unsigned int kind;              // KIND_*
  unsigned int n_counters;        // counters in the shadow / shared area
  unsigned int area_offset;       // shared objects: first counter in the block's area
  unsigned int lr_offset;         // shared objects (enhanced): their statistics' first word
  unsigned int unit;              // device objects: bytes per counter (the element size, >= 4)
  unsigned int unit_shift;        // log2(unit) when unit is a power of two, else 255
  unsigned int reserved[2];       // [0]: a gather's flags (dm_gather); [1]: the object's first
                                  // per-element record (Launch::tally)
};

// The block's counter area, in 32-bit words:
//   [0, AREA_HEADER)                      header (exited threads, logical clock)
//   [AREA_HEADER, + SITE_WORDS * n_sites) per-site execution counts (site_count_t each)
//   [.., + obj_words)                     shared objects' counters (counter_t each, packed)
//   [lr_offset, ..)                       enhanced mode: live-range statistics per array
struct Launch {
  unsigned int flags;
  unsigned int area_words;        // words in one block's area
  unsigned int dyn_user_bytes;    // the user's dynamic shared memory (our area follows it)
  unsigned int n_sites;
  unsigned int obj_counters;      // counter_t values for the shared objects
  unsigned int lr_offset;         // first word of the live-range statistics (0: none)
  unsigned int area_replicas;     // SM: copies of the area in device memory (>= 1)
  unsigned int n_objects;          // slots in use (obj[0, n_objects)); 0: all GMPROF_MAX_OBJECTS
  unsigned long long sample_state; // per-thread sampler state (device functions), u32 each
  unsigned long long area_global; // the area in device memory (SM: area_replicas copies)
  unsigned long long unknown_oor; // accesses whose object gmprof could not find (a u64)
  unsigned long long trace;       // trace buffer: 4 x u64 per access
  unsigned long long trace_capacity;
  unsigned long long trace_count; // address of a u64 counter of trace records (may exceed capacity)
  unsigned long long sample_seq;  // paper sampler: address of the 0/1 sequence (bytes)
  unsigned int sample_seq_len;    // its length (a power of two)
  unsigned int sample_threshold;  // rng sampler: sample when rng < threshold (rate * 2^32)
  unsigned int sampler;           // 0: rng, 1: the paper's sequence
  unsigned int seed;
  unsigned long long clock_log;   // enhanced: (block, array, clock, kind) records
  unsigned long long clock_capacity;
  unsigned long long clock_count; // address of a u64 counter of clock records
  unsigned long long warp_stats;  // GMPROF_WARPS: WS_STRIDE u64 per site (warp_row below)
  // the counter families' per-element records (gmprof/passes/tallies.py): tally_words u64 an
  // element, object k's first record at Object::reserved[1]; 0: no family per element is on
  unsigned long long tally;
  unsigned int tally_words;
  unsigned int stats_sampling;    // GMPROF_WARPS: the measured blocks (block_measured below):
                                  // low 5 bits s (0: every block), bit 5 STATS_WEIGHT (whole
                                  // programs), bits 8.. a per-launch seed
  unsigned long long sample_sq;   // sampling: a double per site, sum of c*c - c over the kept
                                  // draws that stood for c > 1 accesses (sample_clusters)
  // GMPROF_WARPS: deferred walks (passes/defer.py; below, defer_walk_dm): the records,
  // Deferred a thread a walk, for each of the defer_capacity measured blocks (0: nothing
  // deferred at this launch); a u32 ticket that ranks the measured blocks (block_rank)
  unsigned long long defer;
  unsigned long long defer_ticket;
  unsigned int defer_capacity;
  unsigned int defer_walks;       // records a thread (the kernel's deferred walks)
  // GMPROF_WARPS, rows (flags >> FLAG_WS_ROWS_SHIFT): the measured blocks' statistics rows,
  // rows x WS_STRIDE u64 a block, at its rank (block_rank; defer_capacity of them), emptied
  // by its flush for the next launch's block of that rank
  unsigned long long block_rows;
  // whole programs: the descriptions of the kernels this launch's copies launch from the
  // device (a device array of `const ChildDesc *`, one per child kernel of the file; 0: none)
  unsigned long long children;
  Object obj[GMPROF_MAX_OBJECTS];
};

}  // namespace GMPROF_NS

#if !defined(GMPROF_CUH_CHILD) && !defined(GMPROF_CUH_UNMEASURED)
namespace gmprof {
// A kernel launched from the device whose copy is profiled (whole programs): one per child
// kernel and group of the host's launch, shared by every grid of it the group's launches
// make, laid out by the host runtime (gmprof_host.cpp, children). The copy takes it as its
// last parameter; each block binds its description at entry (gmprof_dp::bind).
struct ChildDesc {
  unsigned long long launch;     // a Launch: header and the slots not bound per grid
  unsigned long long cand;       // Object[n_cand]: a pointer parameter's object in each of
                                 // the allocations of the host launch's group
  unsigned long long cand_slot;  // unsigned[n_cand]: the slot each candidate binds
  unsigned long long grids;      // u64: the grids that ran (atomic adds)
  unsigned int n_cand;
  unsigned int reserved;
};
}  // namespace gmprof

__constant__ gmprof::Launch __gmprof_launch;

#if defined(GMPROF_DEVICE_LAUNCHES) && GMPROF_DEVICE_LAUNCHES > 0
// Whole programs: launches made from device code (dynamic parallelism) by the instrumented
// copies, one counter per (parent, child) written in the file (gmprof/program/copies.py). The
// child runs its original kernel, unprofiled (the description above is its parent's); these
// counts let the report say how many such launches ran uncounted. The host reads them back with
// the groups' totals (ModuleDesc::device_launches).
__device__ unsigned long long __gmprof_device_launches[GMPROF_DEVICE_LAUNCHES];
#endif
#endif  // !GMPROF_CUH_CHILD && !GMPROF_CUH_UNMEASURED

namespace GMPROF_NS {

#ifdef GMPROF_CUH_CHILD
#ifndef GMPROF_DP_OBJECTS
#define GMPROF_DP_OBJECTS GMPROF_MAX_OBJECTS
#endif
// The block's copy of its grid's description: the header and the slots in use (a child
// copy's objects are its own slots, GMPROF_DP_OBJECTS of them at most), bound at entry.
__shared__ __align__(16) unsigned long long __gmprof_dp_desc[
    (sizeof(Launch) - sizeof(Object) * (GMPROF_MAX_OBJECTS - GMPROF_DP_OBJECTS) + 7) / 8];
__device__ __forceinline__ const Launch &L() {
  return *reinterpret_cast<const Launch *>(__gmprof_dp_desc);
}
#elif defined(GMPROF_CUH_UNMEASURED)
// (the same description, as this namespace's own type of the same layout)
__device__ __forceinline__ const Launch &L() {
  return *reinterpret_cast<const Launch *>(&__gmprof_launch);
}
#else
__device__ __forceinline__ const Launch &L() { return __gmprof_launch; }
#endif

// The description of child kernel C of the file for a launch made here (null: none laid out).
__device__ __forceinline__ const ::gmprof::ChildDesc *child_desc(int c) {
  return L().children ? reinterpret_cast<const ::gmprof::ChildDesc *const *>(L().children)[c]
                      : nullptr;
}

#if defined(GMPROF_DEVICE_LAUNCHES) && GMPROF_DEVICE_LAUNCHES > 0
// (__host__ too: a __host__ __device__ function's copy may launch; only its device side counts)
__host__ __device__ __forceinline__ void count_device_launch(int i) {
#if defined(__CUDA_ARCH__) || defined(GMPROF_CPU)
  atomicAdd(&__gmprof_device_launches[i], 1ull);
#else
  (void)i;
#endif
}
#endif

// The hooks' common path is inline (a few dozen SASS instructions a site); what is rare or long
// runs out of line, called (ptxas copies such a function into each kernel that calls it, once,
// rather than into each hook): finding and counting the object of a pointer gmprof could not
// resolve (inlined, its two unrolled 64-object scans were about 2,600 SASS instructions a hook,
// and files with a few hundred such hooks took ptxas minutes: Rodinia heartwall, cuda-samples
// reduction), an access wider than an element of its device array (a float4 of a float array)
// or spanning shared words unevenly, 64-bit division by an element size that is not a power of
// two. Out-of-line helpers take object numbers, not references into constant
// memory, and hold no warp collective. `inline` keeps one definition per program (-rdc)
// without an unused-function warning.
#define GMPROF_OUTLINE inline __device__ __noinline__
// a loop in an out-of-line helper stays a loop (g++, the CPU backend, has no such pragma)
#if defined(__CUDACC__) && !defined(GMPROF_CPU)
#define GMPROF_NO_UNROLL _Pragma("unroll 1")
#else
#define GMPROF_NO_UNROLL
#endif

__device__ __forceinline__ unsigned linear_tid() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

__device__ __forceinline__ unsigned n_threads() { return blockDim.x * blockDim.y * blockDim.z; }

__device__ __forceinline__ unsigned long long linear_bid() {
  return blockIdx.x + (unsigned long long)gridDim.x * (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);
}

__device__ __forceinline__ unsigned lane_id() {
#if defined(__CUDA_ARCH__) && !defined(GMPROF_CPU)
  unsigned lane;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
#else
  return linear_tid() & 31u;
#endif
}

// ---------------------------------------------------------------- the block's counter area

#if GMPROF_SM
#if defined(GMPROF_CUH_UNMEASURED)
using ::gmprof::__gmprof_dynamic_smem;
#elif defined(GMPROF_CPU)
// the CPU backend's dynamic shared buffer (one per block, at a fixed address)
GMPROF_DYNAMIC_SHARED(unsigned char, __gmprof_dynamic_smem);
#else
extern __shared__ __align__(16) unsigned char __gmprof_dynamic_smem[];
#endif
#endif

// Header words are 32-bit, site counts site_count_t; object counters are counter_t.
__device__ __forceinline__ unsigned *area_words() {
#if GMPROF_SM == 2
  if (!(L().flags & FLAG_AREA_SHARED)) return reinterpret_cast<unsigned *>(L().area_global);
#endif
#if GMPROF_SM
  return reinterpret_cast<unsigned *>(__gmprof_dynamic_smem + ((L().dyn_user_bytes + 15u) & ~15u));
#else
  return reinterpret_cast<unsigned *>(L().area_global);
#endif
}

// Where an object's counters start. The header and sites take whole 32-bit words; the shared
// objects' counters follow, counter_t each.
__device__ __forceinline__ counter_t *area_counters() {
  return reinterpret_cast<counter_t *>(area_words() + AREA_HEADER + SITE_WORDS * L().n_sites);
}

__device__ __forceinline__ site_count_t *site_counter(int site) {
  return reinterpret_cast<site_count_t *>(area_words() + AREA_HEADER) + site;
}

// ---------------------------------------------------------------- counter updates

// A 64-bit add into the block's counter area (site counts, per-warp statistics). sm_90 has no
// 64-bit add on shared memory: atomicAdd of a u64 there compiles to a compare-and-swap loop
// (ATOMS.CAST.SPIN.64 and a branch back, nvcc 13), which retries while the block's warps add to
// the same word. Two 32-bit atomics instead: the low word's add returns the word it found, and
// the add that carries out of it adds the carry to the high word with its own high part. Exact:
// the low word holds the sum mod 2^32 and each carry is added once; the 64-bit value is whole
// whenever no add is under way (the flush at block exit). An area in device memory keeps the
// native 64-bit add.
__device__ __forceinline__ void area_add64(unsigned long long *p, unsigned long long v) {
#if defined(__CUDA_ARCH__) && !defined(GMPROF_CPU)
  if (__isShared(p)) {
    unsigned *w = reinterpret_cast<unsigned *>(p);  // little-endian: w[0] the low word
    const unsigned lo = (unsigned)v;
    unsigned hi = (unsigned)(v >> 32);
    if (lo) {
      const unsigned old = atomicAdd(w, lo);
      hi += old + lo < old ? 1u : 0u;  // this add carried out of the low word
    }
    if (hi) atomicAdd(w + 1, hi);
    return;
  }
#endif
  atomicAdd(p, v);
}

#if GMPROF_COUNTER_BITS < 32
// Compare-and-swap of one narrow (8/16-bit) counter; returns its old value. Only the counter's
// own bytes are read or written where the hardware allows it: on the CPU backend (one OS thread,
// no fiber switch inside a hook: a plain read-modify-write) and for 16-bit counters on a GPU
// (atomicCAS on unsigned short, sm_70+). CUDA has no byte-wide CAS, so an 8-bit counter on a GPU
// goes through a CAS of its aligned 32-bit word, which leaves the neighbours' bytes as it found
// them and stays inside the buffer: every counter buffer is a whole number of 32-bit words (the
// block's area is words; device counter arrays are padded to a word, runtime/counters.py).
__device__ __forceinline__ unsigned counter_cas(counter_t *c, unsigned assumed, unsigned nv) {
#if defined(GMPROF_CPU)
  const unsigned old = *(volatile counter_t *)c;
  if (old == assumed) *(volatile counter_t *)c = (counter_t)nv;
  return old;
#elif GMPROF_COUNTER_BITS == 16 && (!defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 700)
  return atomicCAS((unsigned short *)c, (unsigned short)assumed, (unsigned short)nv);
#else
  unsigned *word = (unsigned *)((unsigned long long)c & ~3ull);
  const unsigned shift = (unsigned)((unsigned long long)c & 3ull) * 8u;
  const unsigned mask = ((1u << GMPROF_COUNTER_BITS) - 1u) << shift;
  unsigned old = *(volatile unsigned *)word;
  for (;;) {
    const unsigned cur = (old & mask) >> shift;
    if (cur != assumed) return cur;
    const unsigned prev = atomicCAS(word, old, (old & ~mask) | (nv << shift));
    if (prev == old) return cur;
    old = prev;
  }
#endif
}
#endif

template <class C>
__device__ __forceinline__ void add_to(C *c, unsigned inc) {
#if GMPROF_COUNTER_BITS >= 32
#if GMPROF_THRESHOLD
  // The paper's TH: stop updating once the threshold is reached (a read, then no atomic).
  if (*(volatile counter_t *)c >= (counter_t)GMPROF_THRESHOLD) return;
#endif
#if GMPROF_ATOMIC && GMPROF_COUNTER_BITS == 64 && !GMPROF_ENHANCED && !GMPROF_THRESHOLD
  // (no read of the counter before the flush: a 64-bit word in shared memory may be added to
  // as two 32-bit halves, area_add64)
  area_add64((unsigned long long *)c, (unsigned long long)inc);
#elif GMPROF_ATOMIC
  atomicAdd((counter_t *)c, (counter_t)inc);
#else
  *(volatile counter_t *)c = *(volatile counter_t *)c + (counter_t)inc;
#endif
#else
  // 8/16-bit saturating counters (a threshold is required), updated at their own width
  unsigned cur = *(volatile C *)c;
#if GMPROF_ATOMIC
  for (;;) {
    if (cur >= (unsigned)GMPROF_THRESHOLD) return;
    const unsigned nv = inc >= (unsigned)GMPROF_THRESHOLD - cur ? (unsigned)GMPROF_THRESHOLD
                                                                : cur + inc;
    const unsigned prev = counter_cas(c, cur, nv);
    if (prev == cur) return;
    cur = prev;
  }
#else
  if (cur >= (unsigned)GMPROF_THRESHOLD) return;
  *(volatile C *)c = (C)(inc >= (unsigned)GMPROF_THRESHOLD - cur ? (unsigned)GMPROF_THRESHOLD
                                                                 : cur + inc);
#endif
#endif
}

// Set a counter, returning its old value (a live range's start, enhanced mode), at its width: a
// 32-bit exchange on a narrow counter cleared its neighbours.
__device__ __forceinline__ unsigned exchange_counter(counter_t *c, unsigned v) {
#if GMPROF_COUNTER_BITS >= 32
  const counter_t old = atomicExch((counter_t *)c, (counter_t)v);
  return old > 0xffffffffull ? 0xffffffffu : (unsigned)old;
#else
  unsigned cur = *(volatile counter_t *)c;
  for (;;) {
    const unsigned prev = counter_cas(c, cur, v);
    if (prev == cur) return cur;
    cur = prev;
  }
#endif
}

__device__ __forceinline__ void add_word(unsigned *c, unsigned inc) {
  // header and live-range words: 32-bit, always atomic (exact)
  atomicAdd(c, inc);
}

// A device element's counter (add_device_element, the common case). Under GMPROF_COUNTER_L2
// the update carries an L2 evict_last policy: where a program set aside L2 for persisting
// accesses (simpleAttributes: its set-aside holds a 12.5 MB array, counted by random
// per-element updates over 212 MB of counters), its counters compete for the L2 as the
// program's hot lines do instead of missing to DRAM at every update: on an H100 21.5 s ->
// 12.4 s (native 6.9 s; evict_first 21.7 s). The default for whole programs (GMPROF_SM 2),
// where it was measured over the cuda-samples; kernels profiled alone keep the plain atomic.
// The same 32-bit add either way: only where the counter's line is kept changes.
#ifndef GMPROF_COUNTER_L2
#if GMPROF_SM == 2  // (decided at the first inclusion: a child's pass keeps it)
#define GMPROF_COUNTER_L2 1
#else
#define GMPROF_COUNTER_L2 0
#endif
#endif
template <class C>
__device__ __forceinline__ void add_to_element(C *c, unsigned inc) {
#if GMPROF_COUNTER_L2 && defined(__CUDA_ARCH__) && !defined(GMPROF_CPU) && \
    GMPROF_COUNTER_BITS == 32 && GMPROF_ATOMIC && !GMPROF_THRESHOLD && !GMPROF_ENHANCED
  unsigned long long policy;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
  asm volatile("red.global.add.L2::cache_hint.u32 [%0], %1, %2;" ::"l"(
                   __cvta_generic_to_global((const void *)c)), "r"(inc), "l"(policy));
#else
  add_to(c, inc);
#endif
}

// (GMPROF_ABLATE: below, at the access statistics)
#ifndef GMPROF_ABLATE
#define GMPROF_ABLATE 0
#endif
// A site's execution count: 64-bit, always atomic (exact).
__device__ __forceinline__ void add_site(int site, site_count_t inc) {
#if GMPROF_ABLATE & 16
  if (inc != ~0ull) return;
#endif
  area_add64(site_counter(site), inc);
}

// The count of a plain per-access hook (the rewriter's `::gmprof::One()`): 1, known from the
// type, so that a warp's lanes are summed by one popc of the active mask. A runtime 1 cannot
// skip the vote and the reduction below (nvcc folds neither `__any_sync(m, false)` nor a
// reduction of a constant), and in a latency-bound kernel (eigenvalues' single-block
// bisection) those collectives on every hooked access were much of the hooks' cost.
struct One {
  __host__ __device__ constexpr operator unsigned() const { return 1u; }
};

// Per-site execution counts, aggregated over the converged lanes of a warp: one shared atomic
// per warp instead of 32 on the same word (same-address contention is the real cost, see
// shared/notes/counter-costs-h100.md). The 32-bit reduction cannot overflow while every lane's
// increment is below 2^16 (32 x 65,535 < 2^21), the common case (1, or a short loop's trips);
// larger ones (a range over a long loop) reduce their high and low halves apart.
__device__ __forceinline__ void count_site(int site, unsigned inc) {
#if GMPROF_ABLATE & 16
  if (inc != ~0u) return;
#endif
#if !GMPROF_TRACE
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 && !defined(GMPROF_CPU)
  const unsigned mask = __activemask();
  site_count_t sum;
  if (!__any_sync(mask, inc > 0xffffu)) {
    sum = __reduce_add_sync(mask, inc);
  } else {
    sum = ((site_count_t)__reduce_add_sync(mask, inc >> 16) << 16) +
          __reduce_add_sync(mask, inc & 0xffffu);
  }
  if (lane_id() == (unsigned)(__ffs(mask) - 1)) add_site(site, sum);
#else
  add_site(site, inc);  // the CPU backend has no contention to avoid
#endif
#endif
}

__device__ __forceinline__ void count_site(int site, One) {
#if GMPROF_ABLATE & 16
  return;
#endif
#if !GMPROF_TRACE
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 && !defined(GMPROF_CPU)
  const unsigned mask = __activemask();
  if (lane_id() == (unsigned)(__ffs(mask) - 1)) add_site(site, (site_count_t)__popc(mask));
#else
  add_site(site, 1u);
#endif
#endif
}

// ---------------------------------------------------------------- sampling

__device__ __forceinline__ unsigned hash32(unsigned x) {
  x ^= x >> 16; x *= 0x7feb352dU; x ^= x >> 15; x *= 0x846ca68bU; x ^= x >> 16;
  return x;
}

// Per-thread sampler (section 6.2). In a kernel body the state lives in a register
// (`gmprof::Sampler __gmprof_sampler` declared at the top by the rewriter); in device functions
// it lives in a per-thread word in device memory. Two samplers: the paper's (a per-thread
// counter over a pre-generated random 0/1 sequence, read with __ldg) and a cheaper one (a
// xorshift generator in a register).
//
// Each thread's draws are its own: the host seeds every launch differently (runtime/counters.py:
// the same thread of two launches would otherwise keep the same accesses), and a thread's
// stream in device functions starts elsewhere than its kernel body's (SALT), or the two
// streams would keep their k-th accesses together. The report's confidence intervals
// (report/interval.py) rest on this independence.
struct Sampler {
  unsigned state;
  __device__ __forceinline__ explicit Sampler(unsigned salt = 0u) {
    const unsigned g = linear_tid() + n_threads() * (unsigned)linear_bid();
    state = hash32(L().seed ^ hash32(g + 0x9e3779b9u) ^ salt);
    if (L().sampler == 1) state &= (L().sample_seq_len - 1u);
    if (!state) state = 1u;
  }
  __device__ __forceinline__ bool take() { return step(state); }
  static __device__ __forceinline__ bool step(unsigned &st) {
    if (L().sampler == 1) {
      const unsigned char *seq = (const unsigned char *)L().sample_seq;
      return __ldg(seq + ((st++) & (L().sample_seq_len - 1u))) != 0;
    }
    st ^= st << 13; st ^= st >> 17; st ^= st << 5;  // xorshift32
    return st < L().sample_threshold;
  }
};

__device__ __forceinline__ bool sample_global() {
  unsigned *st = reinterpret_cast<unsigned *>(L().sample_state) +
                 (linear_tid() + n_threads() * (unsigned)linear_bid());
  unsigned v = *st;
  if (!v) { Sampler fresh(0x85ebca6bu); v = fresh.state; }
  const bool take = Sampler::step(v);
  *st = v;
  return take;
}

// ---------------------------------------------------------------- trace (the test oracle)

#if GMPROF_TRACE
__device__ __forceinline__ void trace(int site, int obj, const volatile void *addr, unsigned bytes) {
  unsigned long long *count = (unsigned long long *)L().trace_count;
  unsigned long long i = atomicAdd(count, 1ull);
  if (i >= L().trace_capacity) return;  // counted, not stored: the host reports the overflow
  unsigned long long *rec = (unsigned long long *)L().trace + 4 * i;
  rec[0] = ((unsigned long long)(unsigned)site << 32) | (unsigned)(obj & 0xffff) | ((unsigned long long)bytes << 16);
  rec[1] = (unsigned long long)addr;
  rec[2] = linear_bid();
  rec[3] = linear_tid();
}
#endif

// ---------------------------------------------------------------- finding the counter

// Bytes D into the object, in elements: element sizes are almost always powers of two (a
// shift); a 64-bit division (a 12-byte struct) is out of line.
GMPROF_OUTLINE unsigned long long divide_by_unit(unsigned long long d, unsigned unit) {
  return d / unit;
}

__device__ __forceinline__ unsigned long long element_of(const Object &o, unsigned long long d) {
  return o.unit_shift < 64u ? d >> o.unit_shift : divide_by_unit(d, o.unit);
}

// Device memory: the element (o.unit bytes each) holding `addr`, or null when outside.
__device__ __forceinline__ counter_t *device_counter(const Object &o, const volatile void *addr,
                                                     unsigned long long *elem_out) {
  const unsigned long long a = (unsigned long long)addr;
  if (a < o.base || a - o.base >= o.bytes) return nullptr;
  const unsigned long long e = element_of(o, a - o.base);
  *elem_out = e;
  return reinterpret_cast<counter_t *>(o.counters) + e;
}

__device__ __forceinline__ void out_of_range(int obj) {
  unsigned long long p = obj >= 0 ? L().obj[obj].oor : L().unknown_oor;
  if (p) atomicAdd(reinterpret_cast<unsigned long long *>(p), 1ull);
}

// Whether an address is in global memory: a pointer gmprof could not resolve may point into a
// thread's local memory (`&st` of a local struct passed to a device function) or shared
// memory, neither of which device-memory profiling counts (nor should it pay for them).
__device__ __forceinline__ bool in_global(const volatile void *p) {
#if defined(__CUDA_ARCH__) && !defined(GMPROF_CPU)
  return __isGlobal((const void *)p);
#elif defined(GMPROF_CPU)
  return ::gmprof_cpu::is_global((const void *)p);
#else
  (void)p;
  return true;
#endif
}

#ifndef GMPROF_SHARED_BASES
#define GMPROF_SHARED_BASES 0
#endif
#if GMPROF_SHARED_BASES
// Where each shared array starts, for accesses through pointers in device functions (the array
// itself is not in scope there). Every thread stores the same value: a benign write.
// GMPROF_SHARED_BASES: one past the last shared slot (passes/pipeline.py), not
// GMPROF_MAX_OBJECTS: 8 bytes a slot of the block's shared memory, which a cooperative grid
// sized by the original kernel's occupancy may not have to spare
#if defined(GMPROF_CUH_UNMEASURED)
using ::gmprof::__gmprof_shared_bases;  // (one array for both bodies: registered once)
using ::gmprof::__gmprof_shared_hints;
#else
__shared__ unsigned long long __gmprof_shared_bases[GMPROF_SHARED_BASES];
// Per site (hashed: SITE mod GMPROF_SHARED_HINTS), the shared slot its last search found in
// this block (find_shared_object_at); 0xff: none yet
#define GMPROF_SHARED_HINTS 32
__shared__ unsigned char __gmprof_shared_hints[GMPROF_SHARED_HINTS];
#endif
#endif

__device__ __forceinline__ void register_shared(int slot, const volatile void *p) {
#if GMPROF_SHARED_BASES
  __gmprof_shared_bases[slot] = (unsigned long long)p;
#else
  (void)slot; (void)p;
#endif
}

__device__ __forceinline__ const void *shared_base(int slot) {
#if GMPROF_SHARED_BASES
  return (const void *)__gmprof_shared_bases[slot];
#else
  (void)slot;
  return nullptr;
#endif
}

// The scans below run only for accesses through pointers gmprof could not resolve at compile
// time: out of line (GMPROF_OUTLINE; ptxas copies such a function into every kernel that calls
// it, so they are loops, not unrolled) and over the launch's slots in use only.
__device__ __forceinline__ int objects_in_use() {
  const unsigned n = L().n_objects;
#ifdef GMPROF_CUH_CHILD
  // (a child's block holds GMPROF_DP_OBJECTS slots, bind sets n_objects: 0 is none)
  return n > (unsigned)GMPROF_DP_OBJECTS ? GMPROF_DP_OBJECTS : (int)n;
#else
  return n == 0u || n > (unsigned)GMPROF_MAX_OBJECTS ? GMPROF_MAX_OBJECTS : (int)n;
#endif
}

#if GMPROF_SHARED_BASES
// The registered shared array (this block's base and the object's size) that holds address A,
// or -1; *off: the byte offset within it.
GMPROF_OUTLINE int scan_shared_objects(unsigned long long a, long long *off) {
  const int n = objects_in_use() < GMPROF_SHARED_BASES ? objects_in_use() : GMPROF_SHARED_BASES;
  GMPROF_NO_UNROLL
  for (int k = 0; k < n; ++k) {
    const Object &o = L().obj[k];
    if (o.kind != KIND_SHARED) continue;
    const unsigned long long b = __gmprof_shared_bases[k];
    if (b && a >= b && a - b < o.bytes) {
      *off = (long long)(a - b);
      return k;
    }
  }
  return -1;
}
#endif

// Find a shared array by address (pointers gmprof could not resolve at compile time, which may
// point into shared memory), at access site SITE: the slot whose registered base (this
// block's) and size hold it, or -1; *off: the byte offset within it. The slot this site found
// last in the block is tried first.
// A device function handed a shared array (eigenvalues' storeInterval, compactIntervals: 33
// such sites) searched the launch's whole object table at every access: on an H100 the scan
// took 24,500 of the 103,000 stall samples of bisectKernelLarge_MultIntervals (its other
// warps waiting at the next barrier for it, 51,000 more). A site meets the array its caller
// hands it again and again, so its last slot is tried first: its base (registered by this
// block) and size checked, the scan only where that misses. Static shared arrays never
// overlap (all `extern __shared__` declarations are one slot), so the slot that holds an
// address is the one the scan would find: a hint changes no count, only the time (H100:
// MultIntervals' stall samples 103,000 -> 58,000; eigenvalues 2.56 s -> 1.80 s, native
// 0.83-0.92 s; bench/program_variants.sh, docs/whole-programs.md "eighth session"). Threads
// write a site's hint concurrently, each a slot it found: any byte read is one of them, or
// 0xff (enter), and is checked before use.
template <int SITE>
__device__ __forceinline__ int find_shared_object_at(const volatile void *addr, long long *off) {
#if GMPROF_SHARED_BASES
#if defined(__CUDA_ARCH__) && !defined(GMPROF_CPU)
  if (!__isShared((const void *)addr)) return -1;
#endif
#if GMPROF_ABLATE & 128
  if (off) return -1;
#endif
  const unsigned long long a = (unsigned long long)addr;
  const unsigned h = __gmprof_shared_hints[(unsigned)SITE % GMPROF_SHARED_HINTS];
  if (h < (unsigned)GMPROF_SHARED_BASES) {
    const unsigned long long b = __gmprof_shared_bases[h];
    if (b && a >= b && a - b < L().obj[h].bytes) {
      *off = (long long)(a - b);
      return (int)h;
    }
  }
  const int k = scan_shared_objects(a, off);
  if (k >= 0 && k < 0xff) __gmprof_shared_hints[(unsigned)SITE % GMPROF_SHARED_HINTS] = (unsigned char)k;
  return k;
#else
  (void)addr; (void)off;
  return -1;
#endif
}

// Find a device object by address (pointers gmprof could not resolve at compile time).
GMPROF_OUTLINE int find_device_object(const volatile void *addr) {
  const unsigned long long a = (unsigned long long)addr;
  const int n = objects_in_use();
  GMPROF_NO_UNROLL
  for (int k = 0; k < n; ++k) {
    const Object &o = L().obj[k];
    if (o.kind == KIND_DEVICE && a >= o.base && a - o.base < o.bytes) return k;
  }
  return -1;
}

// find_device_object at access site SITE: the device object this site found last in the block
// tried first (as find_shared_object_at does for shared arrays). Where two device objects of
// the launch overlap (a kernel handed `a` and `a + n`) the scan's first match decides, so the
// hint is used only where the host found none do (FLAG_DEVICE_DISJOINT): then the object
// that holds an address is the scan's. The hints are not reset at the block's entry (that
// would allocate them in every kernel): any byte is checked (a slot in use, a device object,
// the address inside it) before use. eigenvalues' computeNumSmallerEigenvalsLarge, handed g_d
// and g_s by two kernels, scanned at each of its loads: 7,800 of MultIntervals' 58,000 stall
// samples on an H100 with the shared hints; with these, eigenvalues' own time 14.2 -> 13.3 ms
// (native 4.2), its wall time 1,706-1,731 -> 1,609-1,648 ms (bench/program_variants.sh).
#define GMPROF_DEVICE_HINTS 32
#if !defined(GMPROF_CUH_UNMEASURED)
__shared__ unsigned char __gmprof_device_hints[GMPROF_DEVICE_HINTS];
#else
using ::gmprof::__gmprof_device_hints;
#endif

template <int SITE>
__device__ __forceinline__ int find_device_object_at(const volatile void *addr) {
  if (!(L().flags & FLAG_DEVICE_DISJOINT)) return find_device_object(addr);
  const unsigned long long a = (unsigned long long)addr;
  const unsigned h = __gmprof_device_hints[(unsigned)SITE % GMPROF_DEVICE_HINTS];
  if (h < (unsigned)objects_in_use()) {
    const Object &o = L().obj[h];
    if (o.kind == KIND_DEVICE && a >= o.base && a - o.base < o.bytes) return (int)h;
  }
  const int k = find_device_object(addr);
  if (k >= 0 && k < 0xff) __gmprof_device_hints[(unsigned)SITE % GMPROF_DEVICE_HINTS] = (unsigned char)k;
  return k;
}

// ---------------------------------------------------------------- the access hooks
//
// Each returns its pointer argument unchanged, so the rewriter replaces an access E by
// (*gmprof::hook<...>(&(E))) and the program computes exactly what it did.
//
// MODE: how this site is counted (chosen by gmprof's planner from the static analysis):
//   EACH     every executing thread adds INC
//   WARP     warp-uniform address: one lane per converged group adds INC * lanes (falls back to
//            EACH when the launch's blockDim.x is not a multiple of 32)
//   UNIFORM  tid-invariant address: one lane per converged group adds INC * lanes
//   BLOCK    tid-invariant and executed by every thread of the block: thread 0 adds
//            INC * threads in the block
//   SCALAR   a scalar variable (`hit`, `num_threads_active`): as UNIFORM, but every lane is at
//            its one word by construction, so with a plain count of 1 (One) the converged
//            lanes are the group, no address compared (two shuffles and a vote less a hook:
//            eigenvalues' single-block kernels read a dozen such scalars an iteration)
enum { EACH = 0, WARP = 1, UNIFORM = 2, BLOCK = 3, SCALAR = 4 };

// The lanes counted by one leader must share its address and increment. Converged lanes
// need not: after a per-lane `continue` (`if (j < t) continue; s += c[j];`) the lanes that
// meet at the site are in different iterations, at different j. So the group is the lanes
// of the active mask with the same address and the same increment (the fast path: all of
// them, checked with one vote).
__device__ __forceinline__ unsigned same_lanes(unsigned long long a, unsigned inc) {
  unsigned mask = __activemask();
#if defined(GMPROF_CPU)
  // the CPU backend's lanes meet at a call site, not at an iteration: match directly (each
  // collective is a fiber switch, so one less than the vote's three)
  mask = __match_any_sync(mask, a) & __match_any_sync(mask, inc);
#else
  const int first = __ffs(mask) - 1;
  const unsigned long long a0 = __shfl_sync(mask, a, first);
  const unsigned inc0 = __shfl_sync(mask, inc, first);
  if (!__all_sync(mask, a == a0 && inc == inc0))
    mask = __match_any_sync(mask, a) & __match_any_sync(mask, inc);
#endif
  return mask;
}

template <class I> struct IsOne { static constexpr bool value = false; };
template <> struct IsOne<One> { static constexpr bool value = true; };

template <int MODE, class I = unsigned>
__device__ __forceinline__ bool leader(unsigned *lanes, const volatile void *p, I count) {
  const unsigned inc = count;
#if !defined(GMPROF_CPU)
  // (the CPU backend's lanes meet at a call site of the header: matched by address there)
  if (MODE == SCALAR && IsOne<I>::value) {
    const unsigned mask = __activemask();
    *lanes = (unsigned)__popc(mask);
    return lane_id() == (unsigned)(__ffs(mask) - 1);
  }
#endif
  if (MODE == BLOCK) {
    *lanes = n_threads();
    return linear_tid() == 0;
  }
  if (MODE == EACH || (MODE == WARP && !(L().flags & FLAG_WARP_UNIFORM_OK))) {
    *lanes = 1;
    return true;
  }
  const unsigned mask = same_lanes((unsigned long long)p, inc);
  *lanes = (unsigned)__popc(mask);
  return lane_id() == (unsigned)(__ffs(mask) - 1);
}

// ---------------------------------------------------------------- per-warp access statistics
//
// GMPROF_WARPS: each hooked access also describes the warp's request it belongs to (the lanes
// that reach the hook together): shared memory, the wavefronts its banks need; device memory,
// the 32-byte sectors and 128-byte lines its lanes touch. The model (docs/report.md): 32 banks
// of 4 bytes; lanes reading one word share it (broadcast); an access of 8 bytes is served a
// half-warp at a time and of 16 bytes a quarter-warp at a time, each phase needing as many
// wavefronts as its most used bank has distinct words; other sizes as their 4-byte words, one
// request each. One lane adds the request to the site's statistics: in the block's area (SM
// mode: shared-memory atomics, contended by the block's warps alone; flushed at block exit as
// the counts are), else in device memory (u64 atomics on the same few addresses for the whole
// grid: what made --access-stats 40-240x on an H100).
// GMPROF_ABLATE (bench/variant_timing.py --define, or NVCC_APPEND_FLAGS for whole programs;
// counts wrong by design): 1 computes a request's statistics but adds none; 2 adds constant
// statistics without computing them; 4 leaves hooks without the rejoin; 8 measures a walk's
// requests (walk_requests) but adds none; 16 counts no site's executions (count_site,
// add_site); 32 adds to no device element's counter; 64 to no shared word's counter; 128
// finds no shared array behind a pointer gmprof could not resolve (no scan). What a
// request's measure, and a count, costs, part by part.
enum { WS_REQUESTS = 0, WS_UNITS = 1, WS_IDEAL = 2, WS_LINES = 3, WS_HIST = 4, WS_BINS = 32,
       WS_STRIDE = WS_HIST + WS_BINS, WS_SQUARES = 3 };

// The sites whose statistics the block's area holds (0: none, all in device memory).
__device__ __forceinline__ unsigned warp_rows() {
#if GMPROF_SM && !GMPROF_TRACE
  return L().flags >> FLAG_WS_ROWS_SHIFT;
#else
  return 0u;
#endif
}

// --access-stats on a large grid measures 1 block in 2^s (s = stats_sampling's low 5 bits;
// 0: every block, exact): block b is measured where the top s bits of the 32-bit
// b * 0x9e3779b1 + seed * 0x9e3779b9 are 0 (multiplicative hashing, Fibonacci's constant: a
// run of blocks measures evenly spread ones, 1 in 2^s; seed: stats_sampling >> 8). The host
// computes the same set (passes/block_sample.py) and scales the measured sums by blocks /
// measured blocks. Block-uniform, so warp-uniform: a few uniform-datapath instructions a warp
// (MurmurHash3's finalizer before it took 25, in every warp of a kernel with two bodies:
// spmv's entry, 0.5x of its instructions' overhead on an H200). The counts are made in every
// block alike.
__device__ __forceinline__ bool block_hashed_in() {
  const unsigned v = L().stats_sampling, s = v & 31u;
  const unsigned h = (unsigned)linear_bid() * 0x9e3779b1u + (v >> 8) * 0x9e3779b9u;
  return !s || !(h >> (32u - s));
}

#if GMPROF_WARPS
// The block's answer, set by its thread 0 at the kernel's entry (enter's barrier publishes
// it), read by the hooks: nvcc kept no copy of the hash, so spmv's threads computed it about
// five times each (enter, each hook's rejoin, the flush: ~50 instructions a thread in a
// kernel whose threads run one or two iterations of their loop); then every thread once
// (~35 instructions a warp, in every block: 0.74x against 0.44x without the statistics on
// an H100, Nsight Compute counting 95 more instructions a warp); now one warp. (A kernel with
// two bodies, passes/dual.py, sets it in enter_measured instead, 0 at its entry.)
__shared__ unsigned __gmprof_measured;
#endif

__device__ __forceinline__ bool block_measured() {
#if GMPROF_WARPS
  return !(L().stats_sampling & 31u) || __gmprof_measured != 0u;
#else
  return true;
#endif
}

// Whole programs (stats_sampling bit 5, STATS_WEIGHT): a measured block adds its
// statistics 2^s times over, so that the group's sums over launches of differing rates are
// each launch's estimate (Horvitz-Thompson: a block is measured with probability 2^-s), with
// no per-launch read-back. The Python runtime scales on the host instead (block_sample.py).
enum { STATS_WEIGHT = 32 };
__device__ __forceinline__ unsigned stats_weight_shift() {
  const unsigned v = L().stats_sampling;
  return (v & STATS_WEIGHT) ? (v & 31u) : 0u;
}

#if GMPROF_WARPS
// A measured block's rank among the launch's (a ticket taken at its entry, modulo the
// count the host computed: the next launch's tickets start where this one's end, the host
// checks that they ended on a multiple of it), + 1: where its statistics rows (block_rows)
// and its deferred walks' records (defer_walk_dm) are. 0: an unmeasured block.
__shared__ unsigned __gmprof_slot;

__device__ __forceinline__ unsigned block_rank() {
  return atomicAdd(reinterpret_cast<unsigned *>(L().defer_ticket), 1u) % L().defer_capacity +
         1u;
}

// Row r of this measured block's statistics (device memory: in the block's shared area they
// took every block's zeroing and flush, measured or not; spmv's blocks are a few hundred
// instructions a warp).
__device__ __forceinline__ unsigned long long *block_row(unsigned r) {
  const unsigned slot = __gmprof_slot;
  if (!slot) return nullptr;
  return reinterpret_cast<unsigned long long *>(L().block_rows) +
         ((unsigned long long)(slot - 1u) * warp_rows() + r) * WS_STRIDE;
}

// Where a site's statistics go. The warp_stats buffer (u64): a row per site (n_sites rows),
// then, with area rows, one row per area row (the blocks' flushed sums) and the u32 area row
// of each site (>= rows: none, its own row in device memory).
__device__ __forceinline__ unsigned long long *warp_row(int site) {
  unsigned long long *ws = reinterpret_cast<unsigned long long *>(L().warp_stats);
  if (!ws) return nullptr;
  const unsigned rows = warp_rows();
  if (rows) {
    const unsigned *row_of = reinterpret_cast<const unsigned *>(
        ws + (unsigned long long)(L().n_sites + rows) * WS_STRIDE);
    const unsigned r = __ldg(row_of + site);
    if (r < rows) return block_row(r);
  }
  return ws + (unsigned long long)site * WS_STRIDE;
}

__device__ __forceinline__ void warp_record(int site, unsigned mask, unsigned units,
                                            unsigned ideal, unsigned lines) {
  if (lane_id() != (unsigned)(__ffs(mask) - 1)) return;
#if GMPROF_ABLATE & 1
  if (units + ideal + lines != 0xffffffffu) return;  // (keeps the measure's values live)
#endif
  unsigned long long *w = warp_row(site);
  if (!w) return;
  const unsigned sh = stats_weight_shift();
  area_add64(w + WS_REQUESTS, 1ull << sh);
  area_add64(w + WS_UNITS, (unsigned long long)units << sh);
  area_add64(w + WS_IDEAL, (unsigned long long)ideal << sh);
  area_add64(w + WS_LINES, (unsigned long long)lines << sh);
  area_add64(w + WS_HIST + (units < WS_BINS ? (units ? units : 1u) : WS_BINS) - 1, 1ull << sh);
}

// Distinct values of key among the lanes of mask (one per group of equal keys).
__device__ __forceinline__ unsigned distinct(unsigned mask, unsigned long long key) {
  const unsigned same = __match_any_sync(mask, key);
  return __popc(__ballot_sync(mask, lane_id() == (unsigned)(__ffs(same) - 1)));
}

// Wavefronts of the lanes of mask reading 4-byte words starting at word w (k words a lane,
// k = 1, 2 or 4, aligned), in phases of 32 / k lanes.
__device__ __forceinline__ unsigned wavefronts(unsigned mask, unsigned long long w, unsigned k) {
  const unsigned phase = lane_id() / (32u / k);
  unsigned most[4] = {0u, 0u, 0u, 0u};
  for (unsigned j = 0; j < k; ++j) {
    const unsigned long long word = w + j;
    // the lane that leads its (phase, word) group counts the distinct words of its bank
    const unsigned same = __match_any_sync(mask, (word << 2) | phase);
    const bool lead = lane_id() == (unsigned)(__ffs(same) - 1);
    const unsigned leaders = __ballot_sync(mask, lead);
    const unsigned bank = (unsigned)(word & 31u);
    unsigned c = 0u;
    if (lead) c = __popc(__match_any_sync(leaders, (bank << 2) | phase));
    for (unsigned p = 0; p < k; ++p) {
      const unsigned m = __reduce_max_sync(mask, phase == p ? c : 0u);
      most[p] = m > most[p] ? m : most[p];
    }
  }
  return most[0] + most[1] + most[2] + most[3];
}

// The cheap paths, without a match (slow on an H100): the key of the next lower lane of mask
// (its own for the lowest), one shuffle.
__device__ __forceinline__ unsigned long long lower_lane_key(unsigned mask,
                                                             unsigned long long key) {
  const unsigned below = mask & ((1u << lane_id()) - 1u);
  return __shfl_sync(mask, key, below ? 31 - __clz(below) : (int)lane_id());
}

// Whether no bank holds two distinct words of one phase (32 / k lanes): the steps between
// each lane's word and the lower lane's of its phase add up to less than 32 in every phase,
// so any two of its words are less than 32 apart. Then every phase with lanes is one
// wavefront, for each of a lane's k words (a stride, a broadcast, a row: the common case).
// One reduction: each phase's sum in its own 32 / k bits (at most (32 / k - 1) x 32 < 2^(32/k)).
__device__ __forceinline__ bool narrow_phases(unsigned mask, unsigned long long w, unsigned k) {
  const unsigned long long prev = lower_lane_key(mask, w);
  const unsigned per = 32u / k, lane = lane_id();
  const unsigned below = mask & ((1u << lane) - 1u);
  const bool same_phase = below && (31u - (unsigned)__clz(below)) / per == lane / per;
  const unsigned long long step = w > prev ? w - prev : prev - w;
  const unsigned part = same_phase ? (step < 32ull ? (unsigned)step : 32u) : 0u;
  const unsigned sums = __reduce_add_sync(mask, part << ((lane / per) * per));
  bool ok = true;
  for (unsigned ph = 0; ph < k; ++ph)
    ok = ok && ((per == 32u ? sums : (sums >> (ph * per)) & ((1u << per) - 1u)) < 32u);
  return ok;
}

// A shared request's wavefronts (units) and its ideal, for the lanes of mask at byte offset off.
__device__ __forceinline__ void shared_counts(unsigned mask, long long off, unsigned size,
                                              unsigned &units, unsigned &ideal) {
  const unsigned long long w = (unsigned long long)off >> 2;
  units = 0u;
  ideal = 0u;
  // (decided for the whole warp: the collectives below need every lane of mask)
  if ((size == 8u || size == 16u) && __all_sync(mask, (off & (long long)(size - 1u)) == 0)) {
    const unsigned k = size >> 2;
    // phases that have lanes
    for (unsigned p = 0; p < k; ++p)
      ideal += (mask >> (p * (32u / k))) & ((1u << (32u / k)) - 1u) ? 1u : 0u;
    units = narrow_phases(mask, w, k) ? ideal : wavefronts(mask, w, k);
  } else {
    const unsigned k = size <= 4u ? 1u : (size + 3u) >> 2;
    if (narrow_phases(mask, w, 1u)) {
      units = k;
    } else {
      for (unsigned j = 0; j < k; ++j) units += wavefronts(mask, w + j, 1u);
    }
    ideal = k;
  }
}

template <int SITE>
__device__ __forceinline__ void warp_shared(long long off, unsigned size) {
  const unsigned mask = __activemask();
  unsigned units, ideal;
  shared_counts(mask, off, size, units, ideal);
  warp_record(SITE, mask, units, ideal, 0u);
}

// A device request's sectors, lines and ideal sectors, for the lanes of mask at address a;
// more: how many lanes of mask have `flag` (a count the caller needs, in the same reduction);
// gap: the distance to the lower lane's address (the lowest lane's: ~0u), where the addresses
// rise or fall in lane order, else 0.
__device__ __forceinline__ void device_counts(unsigned mask, unsigned long long a, unsigned size,
                                              unsigned &sectors, unsigned &lines,
                                              unsigned &ideal, bool flag, unsigned &more,
                                              unsigned &gap) {
#if GMPROF_ABLATE & 2
  sectors = lines = ideal = 1u; more = 0u; gap = 0u;
  return;
#endif
  unsigned addresses;
  // addresses rising or falling in lane order (a stride, a broadcast): a key is new where it
  // differs from the lower lane's, and the lowest lane's is (the + 1s below). One reduction,
  // 5 bits each for the other lanes (at most 31): new sectors, lines and addresses, lanes
  // below their lower lane's address, lanes above it; 6 bits for the flags (at most 32)
  const unsigned long long prev = lower_lane_key(mask, a);
  const unsigned sums = __reduce_add_sync(
      mask, ((prev >> 5) != (a >> 5) ? 1u : 0u) | ((prev >> 7) != (a >> 7) ? 1u << 5 : 0u) |
                (prev != a ? 1u << 10 : 0u) | (prev > a ? 1u << 15 : 0u) |
                (prev < a ? 1u << 20 : 0u) | (flag ? 1u << 25 : 0u));
  more = sums >> 25;
  gap = 0u;
  if (!((sums >> 15) & 31u) || !((sums >> 20) & 31u)) {
    const unsigned long long step = a > prev ? a - prev : prev - a;
    gap = lane_id() == (unsigned)(__ffs(mask) - 1) ? ~0u
                                                   : (step < ~0u ? (unsigned)step : ~0u);
    sectors = (sums & 31u) + 1u;
    lines = ((sums >> 5) & 31u) + 1u;
    addresses = ((sums >> 10) & 31u) + 1u;
  } else {
    sectors = distinct(mask, a >> 5);
    lines = distinct(mask, a >> 7);
    addresses = distinct(mask, a);
  }
  // typed accesses are aligned to their size: one sector each up to 32 bytes
  sectors *= size > 32u ? (size + 31u) >> 5 : 1u;
  lines *= size > 128u ? (size + 127u) >> 7 : 1u;
  ideal = (unsigned)(((unsigned long long)addresses * size + 31u) >> 5);
  ideal = ideal ? ideal : 1u;
}

template <int SITE>
__device__ __forceinline__ void warp_device(const volatile void *p, unsigned size) {
  const unsigned mask = __activemask();
  unsigned sectors, lines, ideal, more, gap;
  device_counts(mask, (unsigned long long)p, size, sectors, lines, ideal, false, more, gap);
  warp_record(SITE, mask, sectors, ideal, lines);
}

// --access-stats of a walk counted once per loop entry (a range, a twin, a shared range): a
// lane's address (SHARED: byte offset in its array) at iteration k < n is a + k * s, and the
// lanes that start the loop together (this call, at the entry or in the first iteration) make
// iteration k's request together where n > k: the requests of the whole loop, here, once.
// Between two lanes' trip counts the request's lanes stay the same and every lane's address
// moves by s an iteration: a request's counts depend only on the shift modulo 128 bytes
// (sectors, lines; device) or 4 (words; shared: banks turn round with the words), so P
// iterations (P = 128 / gcd(s, 128), or 4 / gcd(s, 4); 1 for a row of 128 bytes, a
// broadcast or a shared walk of words) stand for the rest, each counted as many times as
// its residue recurs. Exact, as the per-access measure of the same requests; at most as many
// evaluations as the loop's longest walk has iterations (none at the accesses).
template <int SITE, bool SHARED>
__device__ __forceinline__ void walk_requests(unsigned long long a, unsigned n, long long s,
                                              unsigned size, unsigned lanes) {
  unsigned act = lanes;  // the lanes with n > k, k the segment's first iteration
  const unsigned mod = SHARED ? 4u : 128u;
  const unsigned r = (unsigned)(((s % (long long)mod) + (long long)mod) % (long long)mod);
  const unsigned P = r ? mod / (r & (0u - r)) : 1u;
  unsigned long long *w = warp_row(SITE);
  unsigned long long req = 0ull, units = 0ull, ideal = 0ull, lines = 0ull;
  unsigned k = 0u;
  for (;;) {
    // iteration k's request, and how many of its lanes go on after it (m; device: in the
    // same reduction): none, the walk ends; all, the segment runs to the lowest n (next);
    // some, it is this iteration alone (spmv's rows: one or two a lane)
    const bool lead = lane_id() == (unsigned)(__ffs(act) - 1);
    unsigned u, id, li = 0u, m, gap = 0u;
    if (SHARED) {
      shared_counts(act, (long long)(a + (unsigned long long)((long long)k * s)), size, u, id);
      m = __popc(__ballot_sync(act, n > k + 1u));
    } else {
      device_counts(act, a + (unsigned long long)((long long)k * s), size, u, li, id,
                    n > k + 1u, m, gap);
    }
    const unsigned next = m == (unsigned)__popc(act) ? __reduce_min_sync(act, n) : k + 1u;
    const unsigned len = next - k;
    unsigned evals = len < P ? len : P;
    // lanes' addresses a line or more apart in lane order (co's rows): at every shift each
    // lane has its own sector, line and address, the counts of this request
    if (!SHARED && evals > 1u && __reduce_min_sync(act, gap) >= 128u) evals = 1u;
    for (unsigned j = 0; j < evals; ++j) {
      if (j) {
        const unsigned long long at = a + (unsigned long long)((long long)(k + j) * s);
        unsigned more;
        if (SHARED) shared_counts(act, (long long)at, size, u, id);
        else device_counts(act, at, size, u, li, id, false, more, gap);
      }
      // iterations k + j + i P of [k, next) (all of them where one request stands for all)
      const unsigned times = evals == 1u ? len : (len - j + P - 1u) / P;
      if (lead) {
        req += times;
        units += (unsigned long long)u * times;
        ideal += (unsigned long long)id * times;
        lines += (unsigned long long)li * times;
        if (w && !(GMPROF_ABLATE & 8))
          area_add64(w + WS_HIST + (u < WS_BINS ? (u ? u : 1u) : WS_BINS) - 1,
                     (unsigned long long)times << stats_weight_shift());
      }
    }
    if (!m) break;
    act = __ballot_sync(act, n > next);
    if (n <= next) break;  // this lane's walk ends here
    k = next;
  }
  if (GMPROF_ABLATE & 8) {
    if (req + units + ideal + lines == ~0ull) area_add64(w, 1ull);  // (keeps them live)
  } else if (req && w) {
    const unsigned sh = stats_weight_shift();
    area_add64(w + WS_REQUESTS, req << sh);
    area_add64(w + WS_UNITS, units << sh);
    area_add64(w + WS_IDEAL, ideal << sh);
    area_add64(w + WS_LINES, lines << sh);
  }
}

// n requests of one warp, each of `units` units (and as many ideal), `lines` lines: added by
// the lowest lane of mask.
__device__ __forceinline__ void warp_record_n(int site, unsigned mask, unsigned long long n,
                                              unsigned units, unsigned ideal, unsigned lines) {
  if (!n || lane_id() != (unsigned)(__ffs(mask) - 1)) return;
  unsigned long long *w = warp_row(site);
  if (!w) return;
  n <<= stats_weight_shift();
  area_add64(w + WS_REQUESTS, n);
  area_add64(w + WS_UNITS, n * units);
  area_add64(w + WS_IDEAL, n * ideal);
  area_add64(w + WS_LINES, n * lines);
  area_add64(w + WS_HIST + (units < WS_BINS ? (units ? units : 1u) : WS_BINS) - 1, n);
}

// A shared request whose lanes all read one address (a BLOCK site: tid-invariant, run by the
// whole block alike): one wavefront a word, or a phase a wavefront for an aligned 8- or
// 16-byte access, as shared_counts finds without a collective (its narrow case); also its ideal.
__device__ __forceinline__ unsigned broadcast_units(unsigned mask, long long off, unsigned size) {
  if ((size == 8u || size == 16u) && (off & (long long)(size - 1u)) == 0) {
    const unsigned k = size >> 2;
    unsigned phases = 0u;
    for (unsigned p = 0; p < k; ++p)
      phases += (mask >> (p * (32u / k))) & ((1u << (32u / k)) - 1u) ? 1u : 0u;
    return phases;
  }
  return size <= 4u ? 1u : (size + 3u) >> 2;
}
#endif

// --access-stats on a GPU: a hook leaves the warp as converged as it found it. A hook's own
// branches (one lane adds a count, lanes walk their share of a range a different number of
// times) may leave its lanes split when it returns: nothing makes the compiler reconverge
// them there, and under independent thread scheduling they can stay split through the
// user's next loop, where each part then measures its own request (on an H100, co's small
// size once counted 2,328 requests where the hardware makes 2,304). The lanes that entered a
// hook together leave it through __syncwarp with their mask, every return path alike (the
// destructor). The user's own branches converge as the compiler makes them.
#if GMPROF_WARPS && !GMPROF_TRACE && defined(__CUDA_ARCH__) && !defined(GMPROF_CPU) && \
    !(GMPROF_ABLATE & 4)
// (a block that measures nothing, block_measured, needs no rejoin: mask 0, no __activemask)
struct Rejoin {
  unsigned mask;
  __device__ __forceinline__ ~Rejoin() {
    if (mask) __syncwarp(mask);
  }
};
#undef GMPROF_REJOIN
#undef GMPROF_REJOIN_LANES
#define GMPROF_REJOIN \
  const ::gmprof::Rejoin gmprof_rejoin_{::gmprof::block_measured() ? __activemask() : 0u}
#define GMPROF_REJOIN_LANES(m) const ::gmprof::Rejoin gmprof_rejoin_{m}
#else
#undef GMPROF_REJOIN
#undef GMPROF_REJOIN_LANES
#define GMPROF_REJOIN (void)0
#define GMPROF_REJOIN_LANES(m) (void)0
#endif

// A walk's statistics made after its loop (passes/rewrite.py: where the loop's registers are
// free): the lanes that start the loop with trips, asked at its entry in a measured block
// (0 elsewhere: no collective), are the ones that meet again after it (__syncwarp: lanes that
// left the loop at different iterations), and the walk's first requests are theirs.
__device__ __forceinline__ unsigned walk_lanes(unsigned n) {
#if GMPROF_WARPS && !GMPROF_TRACE
  return block_measured() ? __ballot_sync(__activemask(), n != 0u) : 0u;
#else
  (void)n;
  return 0u;
#endif
}

__device__ __forceinline__ unsigned meet(unsigned lanes) {
  if (!lanes) return __activemask();  // (made at the entry: the lanes here)
  __syncwarp(lanes);
  return lanes;
}

// Returns false when this access is not sampled (sampling mode only).
__device__ __forceinline__ bool sampled(Sampler *s) {
#if GMPROF_SAMPLING
  return s ? s->take() : sample_global();
#else
  (void)s;
  return true;
#endif
}

// Sampling: a kept draw that stands for C accesses at once (a loop-weighted site's first
// iteration, a BLOCK site's thread 0 for the whole block) is a cluster: the count's variance
// grows with C*C, not C. N draws of C each add N * (C*C - C) to the site's sum (a double: C*C
// passes 2^64), from which the host derives the intervals (report/interval.py).
__device__ __forceinline__ void sample_clusters(int site, unsigned c, unsigned n) {
#if GMPROF_SAMPLING
  if (c > 1u && L().sample_sq)
    atomicAdd(reinterpret_cast<double *>(L().sample_sq) + site,
              (double)n * ((double)c * (double)c - (double)c));
#else
  (void)site; (void)c; (void)n;
#endif
}

// Common part: decide who counts, count the site. Returns the increment this thread adds to
// the element's counter (0: nothing to do).
template <int SITE, int MODE, class I = unsigned>
__device__ __forceinline__ unsigned who_counts(I count, const volatile void *p) {
  const unsigned inc = count;
  if (inc == 0u) return 0u;  // a weighted site outside its loops' first iteration
  if (MODE == EACH || (MODE == WARP && !(L().flags & FLAG_WARP_UNIFORM_OK))) {
    count_site(SITE, count);
    sample_clusters(SITE, inc, 1u);
    return inc;
  }
  unsigned lanes;
  if (!leader<MODE>(&lanes, p, count)) return 0u;
  add_site(SITE, (site_count_t)inc * lanes);
  // BLOCK: thread 0's draw decided for the block; otherwise each lane counted drew for itself
  if (MODE == BLOCK) sample_clusters(SITE, inc * lanes, 1u);
  else sample_clusters(SITE, inc, lanes);
  return inc * lanes;
}

// Add `total` to each 4-byte word of shared object `obj` that an access of `size` bytes at byte
// offset `off` covers: out of line for an access that spans words (a float2, a misaligned int).
GMPROF_OUTLINE void add_shared_words_spanning(int obj, long long off, unsigned size,
                                              unsigned total) {
  const Object &o = L().obj[obj];
  const long long w0 = off >> 2;
  const long long w1 = (off + (long long)size - 1) >> 2;
  // an access starting past the array's last byte is outside it, even within its last
  // counter word (the padding bytes of a char array)
  const bool inside = off >= 0 && (unsigned long long)off < o.bytes;
  counter_t *area = area_counters() + o.area_offset;
  for (long long w = w0; w <= w1; ++w) {
    if (inside && w >= 0 && w < (long long)o.n_counters) add_to(area + w, total);
    else out_of_range(obj);
  }
}

// The common cases inline (what the loop above does for them): an access within one word (an
// int, a char), or whole aligned words, up to four (a double, a float4). SIZE is sizeof(T) at
// every hook, a constant, so the loop below is one or a few straight updates.
__device__ __forceinline__ void add_shared_words(int obj, long long off, unsigned size,
                                                 unsigned total) {
#if GMPROF_ABLATE & 64
  if (total != ~0u) return;
#endif
  const unsigned lead = (unsigned)off & 3u;
  const unsigned words = lead == 0u && (size & 3u) == 0u ? size >> 2 : lead + size <= 4u ? 1u : 0u;
  if (words == 0u || words > 4u) {
    add_shared_words_spanning(obj, off, size, total);
    return;
  }
  const Object &o = L().obj[obj];
  const long long w0 = off >> 2;
  const bool inside = off >= 0 && (unsigned long long)off < o.bytes;
  counter_t *area = area_counters() + o.area_offset;
  for (unsigned k = 0; k < words; ++k) {
    if (inside && w0 + k < (long long)o.n_counters) add_to(area + w0 + k, total);
    else out_of_range(obj);
  }
}

// An access of BYTES bytes wider than one element (a float4 load from a float array), from
// element E of device object OBJ on: the elements it covers, each TOTAL times.
GMPROF_OUTLINE void count_elements(int obj, unsigned long long e, unsigned bytes,
                                   unsigned total) {
  const Object &o = L().obj[obj];
  counter_t *c = reinterpret_cast<counter_t *>(o.counters) + e;
  const unsigned n = (bytes + o.unit - 1) / o.unit;
  for (unsigned k = 0; k < n; ++k) {
    if (e + k < o.n_counters) add_to(c + k, total);
    else out_of_range(obj);
  }
}

// dm's counting after who counts, out of line, for an access through a pointer gmprof could not
// resolve: into shared_obj, found at run time, or else the device object holding P.
GMPROF_OUTLINE void count_unresolved(int shared_obj, long long shared_off, const volatile void *p,
                                     unsigned bytes, unsigned total, int device_obj) {
  if (shared_obj >= 0) {
    add_shared_words(shared_obj, shared_off, bytes, total);
    return;
  }
  const int obj = device_obj;
  if (obj < 0) { out_of_range(-1); return; }
  const Object &o = L().obj[obj];
  unsigned long long e;
  counter_t *c = device_counter(o, p, &e);
  if (!c) { out_of_range(obj); return; }
  if (bytes <= 4u || bytes == o.unit) {
    add_to(c, total);
    return;
  }
  count_elements(obj, e, bytes, total);
}

// ---------------------------------------------------------------- sharing between blocks
//
// GMPROF_SHARING (--sharing, gmprof/passes/tallies.py Sharing): per element of each device
// object, how many blocks and warps touched it. The element's record (Launch::tally) holds
//   [SHARE_STATE]   (the last block to touch it + 1) << 32 | the mask of its warps that have
//   [SHARE_BLOCKS]  the times the element passed to another block
//   [SHARE_WARPS]   the times a warp touched it first in its block's turn
// the state changed by one 64-bit compare-and-swap, the counts after it. Exact when each
// block's accesses to the element come in one turn (the CPU backend runs blocks one after
// another); on a GPU blocks running at once may take turns: an upper bound (the host labels it).
#if GMPROF_SHARING
enum { SHARE_AT = 0, SHARE_STATE = 0, SHARE_BLOCKS = 1, SHARE_WARPS = 2, SHARE_WORDS = 3 };

__device__ __forceinline__ void share_element(const Object &o, unsigned long long e) {
  if (!L().tally || e >= o.n_counters) return;
  unsigned long long *r = reinterpret_cast<unsigned long long *>(L().tally) +
                          ((unsigned long long)o.reserved[1] + e) * L().tally_words + SHARE_AT;
  const unsigned long long block = (linear_bid() + 1ull) << 32;  // (the host checks it fits)
  const unsigned long long warp = 1ull << (linear_tid() >> 5);   // at most 32 warps a block
  unsigned long long old = *(volatile unsigned long long *)(r + SHARE_STATE);
  for (;;) {
    const bool same = (old >> 32) == (block >> 32);
    if (same && (old & warp)) return;  // this warp of this block has touched it this turn
    const unsigned long long nv = block | (same ? (old & 0xffffffffull) : 0ull) | warp;
    const unsigned long long prev = atomicCAS(r + SHARE_STATE, old, nv);
    if (prev == old) {
      if (!same) atomicAdd(r + SHARE_BLOCKS, 1ull);
      atomicAdd(r + SHARE_WARPS, 1ull);
      return;
    }
    old = prev;
  }
}

// An access of BYTES bytes at P, by object OBJ (< 0: found by address): each element it covers.
template <int OBJ>
__device__ __forceinline__ void share(const volatile void *p, unsigned bytes) {
  const int obj = OBJ >= 0 ? OBJ : find_device_object(p);
  if (obj < 0) return;
  const Object &o = L().obj[obj];
  const unsigned long long a = (unsigned long long)p;
  if (o.kind != KIND_DEVICE || a < o.base || a - o.base >= o.bytes) return;
  const unsigned long long e = element_of(o, a - o.base);
  const unsigned n = bytes <= o.unit ? 1u : (bytes + o.unit - 1u) / o.unit;
  for (unsigned k = 0; k < n; ++k) share_element(o, e + k);
}
#endif

// `total` added to the counters of the elements an access of T at p covers, in device object
// OBJ (known); outside it, `accesses` out-of-range accesses recorded (dm: 1, dm_pair: 2).
template <int OBJ, class T>
__device__ __forceinline__ void add_device_element(T *p, unsigned total, unsigned accesses) {
#if GMPROF_ABLATE & 32
  if (total != ~0u) return;
#endif
  const Object &o = L().obj[OBJ];
  unsigned long long e;
  counter_t *c = device_counter(o, p, &e);
  if (!c) {
    for (unsigned k = 0; k < accesses; ++k) out_of_range(OBJ);
    return;
  }
  // the common case: one element (units are >= 4 bytes; a double of a double array)
  if (sizeof(T) <= 4u || sizeof(T) == o.unit) add_to_element(c, total);
  else count_elements(OBJ, e, (unsigned)sizeof(T), total);
}

// Device memory, or (OBJ < 0: a pointer gmprof could not resolve) whatever the address holds: a
// shared array (counted as sm would), a device object, or local memory (not profiled).
// STATS false: the warp's request is measured elsewhere (warp_dm, beside a count made once
// per loop entry).
template <int SITE, int OBJ, int MODE, bool STATS = true, class T, class I = unsigned>
__device__ __forceinline__ T *dm(T *p, I inc = 1u, Sampler *s = nullptr) {
  GMPROF_REJOIN;
  long long shared_off = 0;
  const int shared_obj = OBJ < 0 ? find_shared_object_at<SITE>(p, &shared_off) : -1;
  if (OBJ < 0 && shared_obj < 0 && !in_global(p)) return p;  // local memory
#if GMPROF_TRACE
  if (shared_obj >= 0) trace(SITE, shared_obj, (const void *)shared_off, sizeof(T));
  else trace(SITE, OBJ, p, sizeof(T));
#else
#if GMPROF_SHARING
  if (shared_obj < 0) share<OBJ>(p, (unsigned)sizeof(T));  // every access, sampled or not
#endif
  if (!sampled(s)) return p;
#if GMPROF_WARPS
  if (STATS && block_measured()) {
    if (shared_obj >= 0) warp_shared<SITE>(shared_off, (unsigned)sizeof(T));
    else warp_device<SITE>(p, (unsigned)sizeof(T));
  }
#endif
  const unsigned total = who_counts<SITE, MODE>(inc, p);
  if (!total) return p;
  if (OBJ < 0) {
    count_unresolved(shared_obj, shared_off, p, (unsigned)sizeof(T), total,
                     shared_obj >= 0 ? -1 : find_device_object_at<SITE>(p));
    return p;
  }
  add_device_element<OBJ>(p, total, 1u);
#endif
  return p;
}

// Two sites of one statement at one element of a device object, each counted by every thread
// (`a[i] = a[i] + x`, `a[i] += x`: a read and a write hooked together before the statement,
// passes/rewrite.py): each site counted as dm counts it, the element's counter added 2 by one
// atomic instead of 1 by two (random per-element atomics are what such kernels pay for). What
// the plain path does not cover (tracing, sharing, statistics) goes through dm twice.
template <int S1, int S2, int OBJ, class T>
__device__ __forceinline__ T *dm_pair(T *p) {
#if GMPROF_TRACE || GMPROF_SHARING || GMPROF_WARPS
  dm<S1, OBJ, EACH>(p);
  return dm<S2, OBJ, EACH>(p);
#else
  static_assert(OBJ >= 0, "dm_pair: a known object");
  count_site(S1, One());
  count_site(S2, One());
  add_device_element<OBJ>(p, 2u, 2u);  // (out of range: two accesses, as dm counts them)
  return p;
#endif
}

// ---------------------------------------------------------------- range counting
//
// An access that walks p, p + D, ..., p + (N - 1) D (elements of T) over the N iterations of a
// counted loop (passes/ranges.py) is counted once, in the loop's first iteration (N > 0; the
// other iterations pass N = 0). A contiguous walk (D = +-1, one counter per element) is two
// updates of the object's difference array, which follows its counters (n_counters + 1
// entries; the host adds its prefix sum to the counters): +W at the first element, -W after the
// last, in 32-bit modular arithmetic. Lanes of a warp whose strided walks interleave into one
// contiguous run (D lanes starting at consecutive elements: `for (j = lo + lane; j < hi;
// j += 32)`) are merged into one such run. Anything else counts its N elements one by one.

// One access of BYTES bytes at A, W times (what dm() does after deciding who counts).
__device__ __forceinline__ void count_element(const Object &o, int obj, unsigned long long a,
                                              unsigned bytes, unsigned w) {
  if (a < o.base || a - o.base >= o.bytes) { atomicAdd((unsigned long long *)o.oor, (unsigned long long)w); return; }
  const unsigned long long e = element_of(o, a - o.base);
  counter_t *c = reinterpret_cast<counter_t *>(o.counters) + e;
  const unsigned n = bytes <= o.unit ? 1u : (bytes + o.unit - 1) / o.unit;
  for (unsigned k = 0; k < n; ++k) {
    if (e + k < o.n_counters) add_to(c + k, w);
    else atomicAdd((unsigned long long *)o.oor, (unsigned long long)w);
  }
  (void)obj;
}

// Elements [lo, hi) of the object, W times each, through the difference array (counter_t
// entries: ranges are planned at 32 and 64 bits only).
__device__ __forceinline__ void count_run(const Object &o, long long lo, long long hi, unsigned w) {
#if GMPROF_COUNTER_BITS >= 32
  counter_t *diff = reinterpret_cast<counter_t *>(o.counters) + o.n_counters;
  atomicAdd(diff + lo, (counter_t)w);
  atomicAdd(diff + hi, (counter_t)0 - (counter_t)w);
#else
  (void)o; (void)lo; (void)hi; (void)w;  // never planned with narrow counters (passes/plan.py)
#endif
}

template <int SITE, int OBJ, int MODE, class T>
__device__ __forceinline__ T *dm_range(T *p, unsigned n, long long d, Sampler *s = nullptr) {
#if GMPROF_TRACE
  trace(SITE, OBJ, p, sizeof(T));
  (void)n; (void)d; (void)s;
#else
  (void)s;
  if (n == 0u) return p;  // not the loop's first iteration
  GMPROF_REJOIN;  // (after: lanes passing 0 took no branch of the hook)
  const unsigned total = who_counts<SITE, MODE>(n, p);
  if (!total) return p;
  // the lanes this thread counts for (1 for EACH: no division in the common case)
  const unsigned w = total == n ? 1u : total / n;
  const Object &o = L().obj[OBJ];
  const unsigned long long a = (unsigned long long)p;
  // the walk in elements of the object, when T is one element at an element boundary: the
  // unit's shift, not a 64-bit division per lane (most of this hook's time on an H100 once it
  // ran per row of spmv)
  const bool in_object = sizeof(T) == o.unit && a >= o.base && a - o.base < o.bytes;
  const unsigned long long at = in_object ? element_of(o, a - o.base) : 0ull;
  const bool elements = in_object && at * o.unit == a - o.base;
  const long long e0 = elements ? (long long)at : -1;
  const long long last = e0 + (long long)(n - 1u) * d;
  const bool inside = elements && last >= 0 && last < (long long)o.n_counters;
#if (defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800) || defined(GMPROF_CPU)
  if (MODE == EACH || (MODE == WARP && !(L().flags & FLAG_WARP_UNIFORM_OK))) {
    const unsigned mask = __activemask();
    if (__any_sync(mask, d > 1 && d <= 32)) {
      // D is the same in every lane (ranges.py takes only strides known at launch), so
      // the lanes need not compare theirs
      bool ok = inside && d > 1 && d <= 32;
      const unsigned first = __reduce_min_sync(mask, ok ? (unsigned)e0 : 0xffffffffu);
      const unsigned elems = __reduce_add_sync(mask, n);
      const long long r = e0 - (long long)first;
      // (elems - r + d - 1) / d in 32 bits: 0 <= r < d <= 32 where it matters
      ok = ok && r >= 0 && r < d &&
           n == (elems - (unsigned)r + (unsigned)d - 1u) / (unsigned)d;
      const unsigned bits = __reduce_or_sync(mask, ok ? (1u << (unsigned)r) : 0u);
      if (__all_sync(mask, ok) && __popc(bits) == __popc(mask)) {
        // the lanes' walks are exactly [first, first + elems), each element once
        if (lane_id() == (unsigned)(__ffs(mask) - 1))
          count_run(o, first, (long long)first + elems, w);
        return p;
      }
    }
  }
#endif
  if (inside && (d == 1 || d == -1)) {
    count_run(o, d > 0 ? e0 : last, (d > 0 ? last : e0) + 1, w);
    return p;
  }
  for (unsigned k = 0; k < n; ++k)
    count_element(o, OBJ, a + (unsigned long long)((long long)k * d * (long long)sizeof(T)),
                  (unsigned)sizeof(T), w);
#endif
  return p;
}

// A gather x[idx[j]] whose index idx[j] walks a range (passes/gathers.py): the walk over idx is
// counted in the pseudo-object POBJ (idx's memory, counters of its own); the host turns it into
// x's counts from idx's contents. dm_walk is the walk alone: the Python runtime's plans for one
// launch use it where the host found idx's memory not aliased before compiling.
template <int SITE, int OBJ, int POBJ, int MODE, class T, class U>
__device__ __forceinline__ T *dm_walk(T *p, U *idx, unsigned n, long long d) {
#if GMPROF_TRACE
  (void)idx; (void)n; (void)d;
  return dm<SITE, OBJ, MODE>(p, 1u);
#else
  dm_range<SITE, POBJ, MODE>(idx, n, d);
  return p;
#endif
}

// dm_walk in code compiled for any launch: where the host found idx's memory shared with
// another array of the launch (Object::reserved[0] & 1), every access is counted into x instead.
template <int SITE, int OBJ, int POBJ, int MODE, class T, class U>
__device__ __forceinline__ T *dm_gather(T *p, U *idx, unsigned n, long long d) {
#if !GMPROF_TRACE
  // (its statistics too: warp_walk_gather leaves an aliased index to the access)
  if (L().obj[POBJ].reserved[0] & 1u) return dm<SITE, OBJ, MODE, true>(p, 1u);
#endif
  return dm_walk<SITE, OBJ, POBJ, MODE>(p, idx, n, d);
}

// A range site whose elements are a gather's index walk, one for one (passes/gathers.py twins),
// in code compiled for any launch (whole programs, `gmprof instrument`): where the host found
// its array alike to the index array (Object::reserved[0] & 2), decode adds the walk to it and
// this hook counts nothing; elsewhere it counts itself. (The Python runtime decides before
// compiling, and a twin there has no hook: its mere presence cost spmv 0.4x on an H100.)
template <int SITE, int OBJ, int MODE, class T>
__device__ __forceinline__ T *dm_twin(T *p, unsigned n, long long d) {
#if !GMPROF_TRACE
  if (L().obj[OBJ].reserved[0] & 2u) return p;
#endif
  return dm_range<SITE, OBJ, MODE>(p, n, d);
}

// A tid-invariant walk p, p + D, ..., p + (N - 1) D over the N iterations of its loop through a
// pointer gmprof could not follow to one array (UNIFORM: a device function handed one of
// several shared arrays, as eigenvalues' bisection does with its scratch arrays): in the
// loop's first iteration (N > 0; the others pass 0) the lanes at the same p and N, a group as
// leader() finds them, share the walk out: element k by the group's lane k mod its size,
// adding the group's size, each element found from its address as dm finds it. Per entry:
// N / lanes updates a lane on as many words, not three same-word shared atomics a warp at
// every iteration (what made eigenvalues' instrumented kernels 30x slower on an H100).
template <int SITE, class T>
__device__ __forceinline__ T *dm_range_uniform(T *p, unsigned n, long long d) {
#if !GMPROF_TRACE
  if (n == 0u) return p;
  GMPROF_REJOIN;  // (after: lanes passing 0 took no branch of the hook)
  const unsigned group = same_lanes((unsigned long long)p, n);
  const unsigned size = (unsigned)__popc(group);
  const unsigned rank = (unsigned)__popc(group & ((1u << lane_id()) - 1u));
  if (rank == 0u) add_site(SITE, (site_count_t)n * size);
  // the whole walk inside the shared array its first element is in (the common case): that
  // array found once, each element a shared atomic. A group of one lane (a condition picked
  // one lane of the warp) walks every element itself, so the search per element would cost
  // more than the user's loop
  long long off0 = 0;
  const int obj0 = find_shared_object_at<SITE>(p, &off0);
  if (obj0 >= 0) {
    const long long step = d * (long long)sizeof(T);
    const long long last = off0 + (long long)(n - 1u) * step;
    const long long lo = step < 0 ? last : off0;
    const long long hi = (step < 0 ? off0 : last) + (long long)sizeof(T);
    if (lo >= 0 && hi <= (long long)L().obj[obj0].bytes) {
      for (unsigned k = rank; k < n; k += size)
        add_shared_words(obj0, off0 + (long long)k * step, (unsigned)sizeof(T), size);
      return p;
    }
  }
  for (unsigned k = rank; k < n; k += size) {
    const T *q = p + (long long)k * d;
    long long off = 0;
    const int shared_obj = find_shared_object_at<SITE>(q, &off);
    if (shared_obj < 0 && !in_global(q)) continue;  // local memory
    count_unresolved(shared_obj, off, q, (unsigned)sizeof(T), size,
                     shared_obj >= 0 ? -1 : find_device_object_at<SITE>(q));
  }
#else
  (void)n; (void)d;
#endif
  return p;
}

// --access-stats of a walk, once per loop entry, with the arguments of its count's call
// (beside it; n: this lane's trips, 0 in the loop's other iterations): a device range or twin
// (warp_walk_dm: as dm_range), a BLOCK shared range (warp_range_sm: as sm_range_block) or
// spread (warp_spread_sm: as sm_spread_block). A BLOCK site's lanes all read one address, the
// whole warp at each of the n iterations: its requests need no collective; the others are
// costed by walk_requests.
// (At a loop's entry, a walk's collectives took spmv's kernel from 32 registers to 48,
// spilled under the occupancy cap in every block, measured or not: 1.11x against 0.78x
// without the walks on an H100; out of line, 60 registers and a 72-byte frame, 1.28x. So
// where the loop's first iteration can be set again after it, they are made there, with
// the lanes that entered it: passes/rewrite.py, walk_lanes.)
// lanes: walk_lanes at the loop's entry where the call is made after the loop (0: at the
// entry, the lanes here)
// (walk_dm: the walk of elements of `size` bytes, whatever their type: a deferred walk's record
// keeps the size, not the type)
template <int SITE, int OBJ, int MODE>
__device__ __forceinline__ void walk_dm(const volatile void *p, unsigned size, unsigned n,
                                        long long d, unsigned lanes) {
#if GMPROF_WARPS && !GMPROF_TRACE
  const unsigned act = meet(lanes);
  GMPROF_REJOIN_LANES(act);  // (after: lanes passing 0 took no branch of the hook)
  const long long s = d * (long long)size;
  long long off = 0;
  if (MODE == BLOCK && OBJ >= 0) {
    // one address a request: a sector (a line) a 32 (128) bytes of it, typed accesses aligned
    warp_record_n(SITE, act, n, size > 32u ? (size + 31u) >> 5 : 1u,
                  (size + 31u) >> 5, size > 128u ? (size + 127u) >> 7 : 1u);
  } else if (OBJ >= 0) {
    walk_requests<SITE, false>((unsigned long long)p, n, s, size, act);
  } else if (find_shared_object_at<SITE>(p, &off) >= 0) {
    walk_requests<SITE, true>((unsigned long long)off, n, s, size, act);
  } else if (in_global(p)) {
    walk_requests<SITE, false>((unsigned long long)p, n, s, size, act);
  }
#else
  (void)p; (void)size; (void)n; (void)d; (void)lanes;
#endif
}

template <int SITE, int OBJ, int MODE, class T>
__device__ __forceinline__ void warp_walk_dm(T *p, unsigned n, long long d, unsigned lanes = 0u) {
#if GMPROF_WARPS && !GMPROF_TRACE
  if (!n || !block_measured()) return;
  walk_dm<SITE, OBJ, MODE>(p, (unsigned)sizeof(T), n, d, lanes);
#else
  (void)p; (void)n; (void)d; (void)lanes;
#endif
}

// --access-stats of a gather x[idx[j]] whose index walks the loop (passes/gathers.py), once per
// loop entry beside its count, with the count's arguments (p: x's element at the first index,
// idx: the first index's address, n: this lane's trips, d: the index's stride): a lane's
// address at iteration k is x's element idx[j0 + k d], read here, and the lanes that start
// the loop together make iteration k's request together where n > k (walk_requests' model).
// One request measured an iteration, in the measured blocks only, so the loop's body keeps no
// statistics call: one there (warp_dm) cost spmv's inner loop 0.7x on an H100 even at 1 block
// in 256 measured. Where the host found the index memory aliased (POBJ's flag: the loop may
// write what it gathers through), dm_gather measures at each access instead.
// An index of the type that index_code<U> describes (its bytes, 32 where signed), read as
// the gather reads it: a deferred gather's record keeps the code, not the type.
template <class U>
__device__ __forceinline__ constexpr unsigned index_code() {
  return (unsigned)sizeof(U) | ((U)-1 < (U)0 ? 32u : 0u);
}

__device__ __forceinline__ long long read_index(const void *idx, long long k, unsigned code) {
  switch (code) {
    case 1u: return (long long)((const unsigned char *)idx)[k];
    case 33u: return (long long)((const signed char *)idx)[k];
    case 2u: return (long long)((const unsigned short *)idx)[k];
    case 34u: return (long long)((const short *)idx)[k];
    case 4u: return (long long)((const unsigned *)idx)[k];
    case 36u: return (long long)((const int *)idx)[k];
    case 8u: return (long long)((const unsigned long long *)idx)[k];
    default: return ((const long long *)idx)[k];
  }
}

template <int SITE>
__device__ __forceinline__ void walk_gather(const volatile void *p, unsigned size,
                                            const void *idx, unsigned code, unsigned n,
                                            long long d, unsigned lanes) {
#if GMPROF_WARPS && !GMPROF_TRACE
  unsigned act = meet(lanes);  // the lanes with n > k
  GMPROF_REJOIN_LANES(act);  // (after: lanes passing 0 took no branch of the hook)
  const long long i0 = read_index(idx, 0, code);
  GMPROF_NO_UNROLL
  for (unsigned k = 0;; ++k) {
    const long long ik = read_index(idx, (long long)k * d, code);
    const unsigned long long a =
        (unsigned long long)p + (unsigned long long)((ik - i0) * (long long)size);
    unsigned sectors, lines, ideal, more, gap;
    device_counts(act, a, size, sectors, lines, ideal, n > k + 1u, more, gap);
    warp_record(SITE, act, sectors, ideal, lines);
    if (!more) break;
    act = __ballot_sync(act, n > k + 1u);
    if (n <= k + 1u) break;  // this lane's walk ends here
  }
#else
  (void)p; (void)size; (void)idx; (void)code; (void)n; (void)d; (void)lanes;
#endif
}

template <int SITE, int OBJ, int POBJ, class T, class U>
__device__ __forceinline__ void warp_walk_gather(T *p, U *idx, unsigned n, long long d,
                                                 unsigned lanes = 0u) {
#if GMPROF_WARPS && !GMPROF_TRACE
  if (!n || !block_measured() || (L().obj[POBJ].reserved[0] & 1u)) return;
  walk_gather<SITE>(p, (unsigned)sizeof(T), (const void *)idx, index_code<U>(), n, d, lanes);
#else
  (void)p; (void)idx; (void)n; (void)d; (void)lanes;
#endif
}

#if GMPROF_WARPS && !GMPROF_TRACE
// Deferred walks (passes/defer.py). The statistics of a device walk made after its loop still
// took spmv's kernel from 32 registers to 48 (device_counts' collectives on 64-bit addresses),
// spilled under the occupancy cap in every block, measured or not: 0.74x against 0.60x without
// them on an H100; costed at the kernel's end instead, 56 registers and the same spills (the
// values the flush needs live across it). So where a kernel's loop runs at most once a thread,
// a measured block's threads record each walk's arguments after the loop (defer_walk_*: a few
// stores), and a kernel of gmprof's own, launched after the user's on the same stream with as
// many blocks as were measured and the same block shape (so the same warps), costs them
// (replay_walk_*): the user's kernel keeps its registers.
// A measured block's records are at its rank (block_rank, taken at its entry); the host gives
// as many as blocks it measures (passes/block_sample.py), and the replay kernel's block b
// reads rank b + 1's.
struct Deferred {
  unsigned long long p, idx;  // the walk's first address (a gather's: x's element), its index
  long long d;                // the stride in elements
  unsigned n, lanes;          // this lane's trips; the lanes that entered the loop
  unsigned size, code;        // bytes an element; a gather's index_code (0: a range)
};


// This thread's record of deferred walk k, or nullptr (the block measures nothing).
__device__ __forceinline__ Deferred *deferred(unsigned k) {
  const unsigned slot = __gmprof_slot;
  if (!slot) return nullptr;
  return reinterpret_cast<Deferred *>(L().defer) +
         ((unsigned long long)(slot - 1u) * L().defer_walks + k) * n_threads() + linear_tid();
}

template <int SITE, int OBJ, int MODE, int K, class T>
__device__ __forceinline__ void defer_walk_dm(T *p, unsigned n, long long d, unsigned lanes) {
  Deferred *r;
  if (!n || !(r = deferred(K))) return;
  r->p = (unsigned long long)p; r->idx = 0ull; r->d = d;
  r->n = n; r->lanes = lanes; r->size = (unsigned)sizeof(T); r->code = 0u;
}

template <int SITE, int OBJ, int POBJ, int K, class T, class U>
__device__ __forceinline__ void defer_walk_gather(T *p, U *idx, unsigned n, long long d,
                                                  unsigned lanes) {
  Deferred *r;
  if (!n || !(r = deferred(K))) return;
  r->p = (unsigned long long)p; r->idx = (unsigned long long)idx; r->d = d;
  r->n = n; r->lanes = lanes; r->size = (unsigned)sizeof(T); r->code = index_code<U>();
}

// (a record costed is emptied for the next launch's block of its rank: a thread that skips
// the loop there records nothing; the host's records start zero)
template <int SITE, int OBJ, int MODE, int K>
__device__ __forceinline__ void replay_walk_dm() {
  Deferred *r = deferred(K);
  const Deferred c = *r;
  if (!c.n) return;
  r->n = 0u;
  walk_dm<SITE, OBJ, MODE>((const volatile void *)c.p, c.size, c.n, c.d, c.lanes);
}

template <int SITE, int OBJ, int POBJ, int K>
__device__ __forceinline__ void replay_walk_gather() {
  Deferred *r = deferred(K);
  const Deferred c = *r;
  if (!c.n) return;
  r->n = 0u;
  if (L().obj[POBJ].reserved[0] & 1u) return;
  walk_gather<SITE>((const volatile void *)c.p, c.size, (const void *)c.idx, c.code, c.n, c.d,
                    c.lanes);
}
#endif

template <int SITE, int OBJ, class T>
__device__ __forceinline__ void warp_range_sm(T *p, const volatile void *base, unsigned n,
                                              long long d, long long elem = (long long)sizeof(T)) {
#if GMPROF_WARPS && !GMPROF_TRACE
  if (!n || !block_measured()) return;
  GMPROF_REJOIN;  // (after: lanes passing 0 took no branch of the hook)
  const unsigned mask = __activemask(), size = (unsigned)sizeof(T);
  const long long off = (long long)((const volatile char *)p - (const volatile char *)base);
  const long long s = d * elem;
  if ((size != 8u && size != 16u) || s % (long long)size == 0) {
    // every iteration aligned as the first (or no matter)
    const unsigned u = broadcast_units(mask, off, size);
    warp_record_n(SITE, mask, n, u, u, 0u);
  } else if (lane_id() == (unsigned)(__ffs(mask) - 1)) {
    GMPROF_NO_UNROLL
    for (unsigned k = 0; k < n; ++k) {  // a member stepping by an element of another size
      const unsigned u = broadcast_units(mask, off + (long long)k * s, size);
      warp_record_n(SITE, mask, 1u, u, u, 0u);
    }
  }
#else
  (void)p; (void)base; (void)n; (void)d; (void)elem;
#endif
}

template <int SITE, int OBJ, class T, class F>
__device__ __forceinline__ void warp_spread_sm(T *p, const volatile void *base, unsigned n,
                                               long long first, long long step, F at) {
#if GMPROF_WARPS && !GMPROF_TRACE
  if (!n || !block_measured()) return;
  GMPROF_REJOIN;  // (after: lanes passing 0 took no branch of the hook)
  const unsigned mask = __activemask(), size = (unsigned)sizeof(T);
  if ((size != 8u && size != 16u) || alignof(T) >= size) {
    // aligned wherever it is (its type's alignment): every request alike
    const unsigned u = broadcast_units(
        mask, (long long)((const volatile char *)p - (const volatile char *)base), size);
    warp_record_n(SITE, mask, n, u, u, 0u);
  } else if (lane_id() == (unsigned)(__ffs(mask) - 1)) {
    GMPROF_NO_UNROLL
    for (unsigned k = 0; k < n; ++k) {
      const volatile char *q = (const volatile char *)at(first + (long long)k * step);
      const unsigned u =
          broadcast_units(mask, (long long)(q - (const volatile char *)base), size);
      warp_record_n(SITE, mask, 1u, u, u, 0u);
    }
  }
#else
  (void)p; (void)base; (void)n; (void)first; (void)step; (void)at;
#endif
}

// --access-stats of a site whose count is made once per loop entry but whose addresses cannot
// be costed there (a gather, a site weighted by its loop's trips): the warp's request at each
// access, nothing counted (the counts keep their kind). warp_dm: a device access of object OBJ
// (OBJ < 0: a pointer gmprof could not resolve, which may hold a shared array's address, found
// by address as dm does); warp_sm: an access of a shared array that starts at BASE.
template <int SITE, int OBJ, class T>
__device__ __forceinline__ T *warp_dm(T *p) {
  if (!block_measured()) return p;
  GMPROF_REJOIN;
#if GMPROF_WARPS && !GMPROF_TRACE
  long long off = 0;
  if (OBJ >= 0) warp_device<SITE>(p, (unsigned)sizeof(T));
  else if (find_shared_object_at<SITE>(p, &off) >= 0) warp_shared<SITE>(off, (unsigned)sizeof(T));
  else if (in_global(p)) warp_device<SITE>(p, (unsigned)sizeof(T));
#endif
  return p;
}

template <int SITE, class T>
__device__ __forceinline__ T *warp_sm(T *p, const volatile void *base) {
  if (!block_measured()) return p;
  GMPROF_REJOIN;
#if GMPROF_WARPS && !GMPROF_TRACE
  warp_shared<SITE>((long long)((const volatile char *)p - (const volatile char *)base),
                    (unsigned)sizeof(T));
#else
  (void)base;
#endif
  return p;
}

// Shared memory: BASE is the array's first byte (the declared array, in scope at the site).
// STATS false: as dm's.
template <int SITE, int OBJ, int MODE, bool STATS = true, class T, class I = unsigned>
__device__ __forceinline__ T *sm(T *p, const volatile void *base, I inc = 1u,
                                 Sampler *s = nullptr) {
  GMPROF_REJOIN;
#if GMPROF_TRACE
  // shared addresses are per block: record the byte offset within the array
  trace(SITE, OBJ, (const void *)((const volatile char *)p - (const volatile char *)base), sizeof(T));
#else
  if (!sampled(s)) return p;
#if GMPROF_WARPS
  if (STATS && block_measured())
    warp_shared<SITE>((long long)((const volatile char *)p - (const volatile char *)base),
                      (unsigned)sizeof(T));
#endif
  const unsigned total = who_counts<SITE, MODE>(inc, p);
  if (!total) return p;
  add_shared_words(OBJ, (long long)((const volatile char *)p - (const volatile char *)base),
                   (unsigned)sizeof(T), total);
#endif
  return p;
}

// A shared access of a BLOCK site (tid-invariant, run by every thread of the block the same
// number of times) that walks p, p + D, ..., p + (N - 1) D over the N iterations of its loop
// (passes/ranges.py): in the loop's first iteration (N > 0; the others pass 0) every thread
// of the block adds the block's thread count to its share of the N elements (element k by
// thread k mod threads). Each thread runs this entry with the same p, N and D, so each element
// gets the count of every thread once: what thread 0 adding `threads` per iteration gave, in
// N / threads updates a thread instead of N in one warp. D counts elements of ELEM bytes: T's
// own size, or the array element's where p is a member of it (`sh[k].w`: D elements of 16
// bytes apart, 4 bytes counted at each).
template <int SITE, int OBJ, class T>
__device__ __forceinline__ T *sm_range_block(T *p, const volatile void *base, unsigned n,
                                             long long d, long long elem = (long long)sizeof(T)) {
#if GMPROF_TRACE
  trace(SITE, OBJ, (const void *)((const volatile char *)p - (const volatile char *)base), sizeof(T));
  (void)n; (void)d; (void)elem;
#else
  if (n == 0u) return p;
  GMPROF_REJOIN;  // (after: lanes passing 0 took no branch of the hook)
  const unsigned threads = n_threads();
  if (linear_tid() == 0) add_site(SITE, (site_count_t)n * threads);
  const long long off0 = (long long)((const volatile char *)p - (const volatile char *)base);
  for (unsigned k = linear_tid(); k < n; k += threads)
    add_shared_words(OBJ, off0 + (long long)k * d * elem, (unsigned)sizeof(T), threads);
#endif
  return p;
}

// A BLOCK site in a counted loop whose address is not a range but can be computed again for
// any iteration (passes/spread.py: AT(i) is the address with the iterator at i): in the
// loop's first iteration every thread of the block evaluates AT for its share of the N
// iterations (first + k * STEP for k = its thread index, + threads, ...) and adds the block's
// thread count to each element found. Every thread runs the entry alike, so each iteration's
// element gets every thread's access once.
template <int SITE, int OBJ, class T, class F>
__device__ __forceinline__ T *sm_spread_block(T *p, const volatile void *base, unsigned n,
                                              long long first, long long step, F at) {
#if GMPROF_TRACE
  trace(SITE, OBJ, (const void *)((const volatile char *)p - (const volatile char *)base), sizeof(T));
  (void)n; (void)first; (void)step; (void)at;
#else
  if (n == 0u) return p;
  GMPROF_REJOIN;  // (after: lanes passing 0 took no branch of the hook)
  const unsigned threads = n_threads();
  if (linear_tid() == 0) add_site(SITE, (site_count_t)n * threads);
  for (unsigned k = linear_tid(); k < n; k += threads) {
    const volatile char *q = (const volatile char *)at(first + (long long)k * step);
    add_shared_words(OBJ, (long long)(q - (const volatile char *)base), (unsigned)sizeof(T),
                     threads);
  }
#endif
  return p;
}

// ---------------------------------------------------------------- enhanced mode (Algorithm 2)

#if GMPROF_ENHANCED
__device__ __forceinline__ unsigned lr_bin(unsigned n) {
  // 1, 2, 3, 4, 5-8, 9-16, 17-32, ... accesses in one live range
  if (n <= 4) return n - 1;
  unsigned b = 32u - (unsigned)__clz(n - 1u);  // ceil(log2 n)
  return b + 1 < LR_BINS ? b + 1 : LR_BINS - 1;
}

__device__ __forceinline__ void lr_close(const Object &o, unsigned accesses) {
  if (accesses == 0 || !o.lr_offset) return;
  unsigned *s = area_words() + o.lr_offset;
  add_word(s + 0, 1u);
  add_word(s + 1, accesses);
  add_word(s + 2 + lr_bin(accesses), 1u);
}

// The logical clock of Algorithm 2: one thread of the block advances it at each live-range
// start or end statement and logs (block, array, clock, start/end) to a bounded buffer.
__device__ __forceinline__ void lr_clock(int obj, int is_end) {
  GMPROF_REJOIN;
  if (linear_tid() != 0) return;
  unsigned t = atomicAdd(area_words() + AREA_CLOCK, 1u) + 1u;
  unsigned long long *count = (unsigned long long *)L().clock_count;
  if (!count) return;
  unsigned long long i = atomicAdd(count, 1ull);
  if (i >= L().clock_capacity) return;  // counted, not stored: reported as overflow
  unsigned long long *rec = (unsigned long long *)L().clock_log + 2 * i;
  rec[0] = linear_bid();
  rec[1] = ((unsigned long long)t << 32) | ((unsigned)obj << 1) | (unsigned)is_end;
}
// A live range of each word written here starts now: close the word's previous range
// (its accesses so far) and count this write as the new range's first access.
template <int SITE, int OBJ, class T>
__device__ __forceinline__ T *lr_start(T *p, const volatile void *base) {
  GMPROF_REJOIN;
#if GMPROF_TRACE
  trace(SITE, OBJ, (const void *)((const volatile char *)p - (const volatile char *)base), sizeof(T));
  return p;
#endif
  lr_clock(OBJ, 0);
  const Object &o = L().obj[OBJ];
  count_site(SITE, One());
  const long long off = (long long)((const volatile char *)p - (const volatile char *)base);
  const bool inside = off >= 0 && (unsigned long long)off < o.bytes;
  for (long long w = off >> 2; w <= (off + (long long)sizeof(T) - 1) >> 2; ++w) {
    if (!inside || w < 0 || w >= (long long)o.n_counters) { out_of_range(OBJ); continue; }
    counter_t *c = area_counters() + o.area_offset + w;
    lr_close(o, exchange_counter(c, 1u));
  }
  return p;
}

#endif

// ---------------------------------------------------------------- loops and shared bases

// Iterations of `for (; i CMP b; i += s)` from the iterator's first value (for the hooks of
// loop-invariant sites, which count once, in the first iteration, with this weight).
// CMP: 0 <, 1 <=, 2 >, 3 >=, 4 !=.
__device__ __forceinline__ unsigned trips(long long i, long long b, long long s, int cmp) {
  long long n = 0;
  if (s == 0) return 0u;
  switch (cmp) {
    case 0: n = (s > 0 && b > i) ? (b - i + s - 1) / s : 0; break;
    case 1: n = (s > 0 && b >= i) ? (b - i) / s + 1 : 0; break;
    case 2: n = (s < 0 && i > b) ? (i - b - s - 1) / (-s) : 0; break;
    case 3: n = (s < 0 && i >= b) ? (i - b) / (-s) + 1 : 0; break;
    default: n = ((b - i) % s == 0 && (b - i) / s >= 0) ? (b - i) / s : 0; break;
  }
  return (unsigned)n;
}


// ---------------------------------------------------------------- block entry and exit

// Zero the block's counter area (SM mode), at the top of the kernel, where every thread of the
// block is present; one barrier.
// HASH false: a kernel with two bodies (passes/dual.py), whose blocks start unmeasured and
// test block_hashed_in themselves after this barrier, each warp on its own; the measured body
// starts with enter_measured. (Thread 0's hash here, before the barrier, held every block's
// warps at it: spmv's entry took 3.7 times default mode's stall samples on an H200.) FLAGS
// false: nothing of the unmeasured body reads the block's flags (no device function of
// gmprof's first pass is called), so they are not set.
template <bool HASH = true, bool FLAGS = true>
__device__ __forceinline__ void enter() {
#if GMPROF_WARPS
  if ((HASH || FLAGS) && linear_tid() == 0u) {
    const bool measured = HASH && block_hashed_in();
    __gmprof_measured = measured ? 1u : 0u;
#if !GMPROF_TRACE
    __gmprof_slot = measured && L().defer_ticket ? block_rank() : 0u;
#endif
  }
#endif
#if GMPROF_SHARED_BASES
  // no stale base (shared memory starts undefined; a CPU module's statics keep the last
  // launch's): an unregistered slot must not match an address in find_shared_object_at
  for (unsigned i = linear_tid(); i < GMPROF_SHARED_BASES; i += n_threads())
    __gmprof_shared_bases[i] = 0ull;
  for (unsigned i = linear_tid(); i < GMPROF_SHARED_HINTS; i += n_threads())
    __gmprof_shared_hints[i] = 0xffu;
#endif
#if GMPROF_SM && !GMPROF_TRACE
#if GMPROF_SM == 2
  if (!(L().flags & FLAG_AREA_SHARED)) {  // the same for every thread: no barrier skipped alone
#if GMPROF_WARPS
    __syncthreads();  // (publishes __gmprof_measured)
#endif
    return;
  }
#endif
  // (a measured block's statistics rows are in device memory at its rank: block_row)
  unsigned *a = area_words();
  const unsigned words = L().area_words;
  for (unsigned i = linear_tid(); i < words; i += n_threads()) a[i] = 0u;
#endif
#if (GMPROF_SM && !GMPROF_TRACE) || GMPROF_SHARED_BASES || GMPROF_WARPS
  __syncthreads();
#endif
}

#if GMPROF_WARPS
// The top of the measured body of a kernel with two bodies (passes/dual.py): the block is
// measured (block_hashed_in holds), its rank taken; every thread of the block is here.
__device__ __forceinline__ void enter_measured() {
  if (linear_tid() == 0u) {
    __gmprof_measured = 1u;
#if !GMPROF_TRACE
    __gmprof_slot = L().defer_ticket ? block_rank() : 0u;
#endif
  }
  __syncthreads();
}

// A measured block's rows (block_row) into the warp_stats buffer's block-row sums, and (a
// sampled launch: block_measured) each row's sums of requests r and units u squared and
// crossed (r^2, u^2, r u: doubles, WS_SQUARES a row, after the rows' site table), the
// between-block variance of the estimates (block_sample.py); then emptied for the next launch.
__device__ __forceinline__ void flush_rows(unsigned first, unsigned stride) {
  const unsigned rows = warp_rows();
  if (!rows || !L().warp_stats) return;
  unsigned long long *gws = reinterpret_cast<unsigned long long *>(L().warp_stats) +
                            (unsigned long long)L().n_sites * WS_STRIDE;
  double *sq = reinterpret_cast<double *>(gws + (unsigned long long)rows * WS_STRIDE +
                                          (L().n_sites + 1u) / 2u);
  for (unsigned i = first; i < rows; i += stride) {
    volatile unsigned long long *row = block_row(i);
    const double r = (double)row[WS_REQUESTS], u = (double)row[WS_UNITS];
    if (r != 0.0 && (L().stats_sampling & 31u)) {
      atomicAdd(sq + WS_SQUARES * i, r * r);
      atomicAdd(sq + WS_SQUARES * i + 1, u * u);
      atomicAdd(sq + WS_SQUARES * i + 2, r * u);
    }
    for (unsigned j = 0; j < WS_STRIDE; ++j) {
      const unsigned long long v = row[j];
      if (v) {
        atomicAdd(gws + (unsigned long long)i * WS_STRIDE + j, v);
        row[j] = 0ull;
      }
    }
  }
}
#endif

// Add the block's area into its replica of the device-memory totals, words first..stride apart.
// Blocks flush into one of L().area_replicas copies (by block number), so that thousands of
// blocks do not all queue on the same few hundred addresses; the host sums the copies (so any
// copy is right: the block number's low 32 bits choose it, a 32-bit remainder, not the 64-bit
// one that ptxas expands into every kernel).
__device__ __forceinline__ void flush(unsigned first, unsigned stride) {
  unsigned *a = area_words();
  const unsigned replicas = L().area_replicas;  // 0 (an old launch description) means 1
  unsigned *g = reinterpret_cast<unsigned *>(L().area_global) +
                (replicas > 1 ? (unsigned long long)((unsigned)linear_bid() % replicas) *
                                    L().area_words
                              : 0ull);
  // per-site counts (64-bit), then the live-range statistics (32-bit words), then the
  // per-warp statistics (64-bit, into their one copy in device memory)
  site_count_t *sites = reinterpret_cast<site_count_t *>(a + AREA_HEADER);
  site_count_t *gsites = reinterpret_cast<site_count_t *>(g + AREA_HEADER);
  for (unsigned i = first; i < L().n_sites; i += stride) {
    const site_count_t v = *(volatile site_count_t *)(sites + i);
    if (v) atomicAdd(gsites + i, v);
  }
#if GMPROF_WARPS
  // a measured block's statistics rows (one thread a row: read, squared, added, emptied)
  if (__gmprof_slot) flush_rows(first, stride);
#endif
  if (L().lr_offset)
    for (unsigned i = L().lr_offset + first; i < L().area_words; i += stride) {
      unsigned v = *(volatile unsigned *)(a + i);
      if (v) atomicAdd(g + i, v);
    }
  // the shared objects' counters, at their width (saturating when a threshold is set)
  counter_t *src = area_counters();
  counter_t *dst = reinterpret_cast<counter_t *>(g + AREA_HEADER + SITE_WORDS * L().n_sites);
  for (unsigned i = first; i < L().obj_counters; i += stride) {
    counter_t v = ((volatile counter_t *)src)[i];
#if GMPROF_COUNTER_BITS == 64
    // a block's own count of one word may pass 2^32 in a 64-bit run (add_to's increment is
    // 32-bit: a hook's)
    if (v > 0xffffffffull) { atomicAdd(dst + i, v); continue; }
#endif
    if (v) add_to(dst + i, (unsigned)v);
  }
}

#if GMPROF_ENHANCED
// Close every word's open live range (its accesses so far) before the statistics are flushed.
__device__ __forceinline__ void close_live_ranges(unsigned first, unsigned stride) {
  const int n = objects_in_use();
  GMPROF_NO_UNROLL
  for (int k = 0; k < n; ++k) {
    const Object &o = L().obj[k];
    if (o.kind != KIND_SHARED || !o.lr_offset) continue;
    volatile counter_t *c = area_counters() + o.area_offset;
    for (unsigned w = first; w < o.n_counters; w += stride) lr_close(o, c[w]);
  }
}
#endif

// Called by every thread when it leaves the kernel through a `return` (and at the end of the body
// of a kernel that has one). No barrier: threads that return early must not wait for the others
// (a barrier here would also pair with the user's own __syncthreads). The last thread out flushes
// the block's area alone.
__device__ __forceinline__ void leave() {
#if GMPROF_SM && !GMPROF_TRACE
#if GMPROF_SM == 2
  if (!(L().flags & FLAG_AREA_SHARED)) return;
#endif
  unsigned *a = area_words();
  __threadfence_block();
  const unsigned done = atomicAdd(a + AREA_EXITED, 1u) + 1u;
  if (done != n_threads()) return;
  __threadfence_block();
#if GMPROF_ENHANCED
  close_live_ranges(0, 1);
#endif
  flush(0, 1);
#endif
}

// The end of the body of a kernel without `return`: every thread of the block gets here, so a
// barrier is safe and the whole block flushes together (one thread flushing a 1,000-word area
// alone is a long serial tail per block).
__device__ __forceinline__ void leave_all() {
#if GMPROF_SM && !GMPROF_TRACE
#if GMPROF_SM == 2
  if (!(L().flags & FLAG_AREA_SHARED)) return;
#endif
  __syncthreads();
#if GMPROF_ENHANCED
  close_live_ranges(linear_tid(), n_threads());
  __syncthreads();
#endif
  flush(linear_tid(), n_threads());
#endif
}

#if GMPROF_WARPS && !GMPROF_TRACE
// The entry of a replay kernel (passes/defer.py): its block b costs the records of the
// launch's measured block of rank b + 1 (measured: block_measured holds) into that block's
// statistics rows, flushed by leave_all with their squares, as that block's own.
__device__ __forceinline__ void enter_replay() {
  if (linear_tid() == 0u) {
    __gmprof_measured = 1u;
    __gmprof_slot = (unsigned)linear_bid() + 1u;
  }
#if GMPROF_SM && !GMPROF_TRACE
#if GMPROF_SM == 2
  if (L().flags & FLAG_AREA_SHARED)
#endif
  {
    unsigned *a = area_words();
    for (unsigned i = linear_tid(); i < L().area_words; i += n_threads()) a[i] = 0u;
  }
#endif
  __syncthreads();
}
#endif

#ifdef GMPROF_CUH_CHILD
// At the entry of a child copy (every thread of the block, before anything else): the block's
// description, the template's header and fixed slots, then each pointer parameter's slot bound
// to its object among the candidates (the allocations of the host launch's group), or, found
// in none, to no memory: its accesses count under the unknown out-of-range counter. Thread 0
// copies, then one barrier (every thread of the block is here); block 0 counts the grid.
__device__ __forceinline__ void bind(const ::gmprof::ChildDesc *cd, const int *slots,
                                     const unsigned long long *args, int n) {
  if (linear_tid() == 0u) {
    const Launch &t = *reinterpret_cast<const Launch *>(cd->launch);
    Launch &d = *reinterpret_cast<Launch *>(__gmprof_dp_desc);
    const unsigned long long header = (unsigned long long)((const char *)&t.obj[0] -
                                                           (const char *)&t);
    const unsigned long long *from = reinterpret_cast<const unsigned long long *>(&t);
    for (unsigned long long w = 0; w < header / 8; ++w) __gmprof_dp_desc[w] = from[w];
    const unsigned n_obj = t.n_objects < (unsigned)GMPROF_DP_OBJECTS ? t.n_objects
                                                                     : (unsigned)GMPROF_DP_OBJECTS;
    d.n_objects = n_obj;
    for (unsigned k = 0; k < n_obj; ++k) d.obj[k] = t.obj[k];
    const Object *cand = reinterpret_cast<const Object *>(cd->cand);
    const unsigned *cand_slot = reinterpret_cast<const unsigned *>(cd->cand_slot);
    for (int i = 0; i < n; ++i) {
      const int k = slots[i];
      if (k < 0 || (unsigned)k >= n_obj) continue;
      Object o = d.obj[k];
      o.kind = KIND_DEVICE;
      o.base = args[i];
      o.bytes = 0;
      o.counters = 0;
      o.n_counters = 0;
      o.oor = t.unknown_oor;
      for (unsigned c = 0; c < cd->n_cand; ++c)
        if (cand_slot[c] == (unsigned)k && args[i] >= cand[c].base &&
            args[i] - cand[c].base < cand[c].bytes) {
          o = cand[c];
          break;
        }
      d.obj[k] = o;
    }
    if (linear_bid() == 0ull) atomicAdd(reinterpret_cast<unsigned long long *>(cd->grids), 1ull);
  }
  __syncthreads();
}
#endif

}  // namespace GMPROF_NS

GMPROF_TU_END

#if defined(GMPROF_CUH_UNMEASURED)
#undef GMPROF_WARPS
#define GMPROF_WARPS 1
#endif

#endif  // GMPROF_CUH
