// gmprof host runtime: folding one launch's counters into its group's 64-bit totals, on the
// device, in stream order (included by gmprof_host.cpp only).
//
// Stage: runtime, host side of whole programs. A selected launch counts into its group's
// counter buffers (the block areas' copies, out-of-range words, each device object's shadow
// counters); right after it, on the launch's stream, a fold adds every counter into the group's
// 64-bit totals and zeroes it, so the next launch starts from zero without the host waiting,
// copying or summing anything per launch. Counts stay exact: per-launch semantics are kept
// (shared counters are summed over the area's copies, then saturated at the threshold per
// launch, as one copy would have been), and 64-bit totals cannot wrap. The host reads the
// totals back once, at exit or at cudaDeviceReset (gmprof_host.cpp harvest).
//
// On a GPU the fold is a kernel launched after the instrumented one (a graph captures it with
// the launch, so every replay is folded); on the CPU backend it is a host function enqueued
// with cudaLaunchHostFunc (the emulation runs it at once, or records it while capturing).
#ifndef GMPROF_HOST_FOLD_H
#define GMPROF_HOST_FOLD_H

#include <stddef.h>

#if defined(GMPROF_CPU)
#define GMPROF_FOLD_HD
#else
#define GMPROF_FOLD_HD __device__
#endif

namespace gmprof_host {
namespace fold {

enum { kMaxFoldObjects = 64, kHeader = 2, kSiteWords = 2 };

struct FoldObj {
  unsigned long long shadow;  // the object's counters, csize bytes each
  unsigned long long total;   // u64 each
  unsigned long long n;
  unsigned long long n_diff;  // range sites: the difference array's entries after the n (0: none)
  // a u64 the fold sets to 1 when it adds anything to total: the harvest reads back only the
  // objects whose flag is set (most of a Thrust program's allocations are never touched by a
  // kernel gmprof instrumented: segmentationTreeThrust read back 14 GB of zeros on an H100)
  unsigned long long touched;
};

// Everything one fold needs, passed by value (a kernel parameter: under 4 KB).
struct FoldJob {
  unsigned long long area;     // `replicas` copies of the block area (u32 words)
  unsigned long long totals;   // u64: [words] area, [n_shared] shared counters, [n_oor] oor, clock,
                               // then per site the most one launch executed it
  unsigned long long oor;      // u64 [n_oor]: unknown, then one per object
  unsigned long long clock;    // enhanced: the u64 count of clock records (0: none)
  unsigned long long log;      // u64 [2]: this launch's accesses out of range, its runs
  unsigned words, sites_end, lr_offset, n_shared, replicas, csize, threshold, n_oor, n_objects;
  unsigned pad;
  FoldObj obj[kMaxFoldObjects];
};

// Takes a counter's value and leaves zero. On a GPU atomically: a launch of the same group on
// another stream may be counting into the same buffers at that moment (its increments land
// before the exchange, in this fold, or after it, in its own), so no increment is lost.
GMPROF_FOLD_HD inline unsigned long long take(unsigned char *p, unsigned csize) {
#if defined(GMPROF_CPU)
  unsigned long long v;
  if (csize == 1) {
    v = *p;
    if (v) *p = 0;
  } else if (csize == 2) {
    unsigned short *q = reinterpret_cast<unsigned short *>(p);
    v = *q;
    if (v) *q = 0;
  } else if (csize == 8) {
    unsigned long long *q = reinterpret_cast<unsigned long long *>(p);
    v = *q;
    if (v) *q = 0;
  } else {
    unsigned *q = reinterpret_cast<unsigned *>(p);
    v = *q;
    if (v) *q = 0;
  }
  return v;
#else
  if (csize == 8) {
    unsigned long long *q = reinterpret_cast<unsigned long long *>(p);
    return *q ? atomicExch(q, 0ull) : 0ull;
  }
  if (csize == 4) {
    unsigned *q = reinterpret_cast<unsigned *>(p);
    return *q ? atomicExch(q, 0u) : 0u;
  }
  // 8- and 16-bit counters: a compare-and-swap on the aligned word that holds them
  unsigned *word = reinterpret_cast<unsigned *>((unsigned long long)p & ~3ull);
  const unsigned shift = (unsigned)((unsigned long long)p & 3ull) * 8;
  const unsigned mask = (csize == 1 ? 0xffu : 0xffffu) << shift;
  unsigned old = *(volatile unsigned *)word;
  while (old & mask) {
    const unsigned prev = atomicCAS(word, old, old & ~mask);
    if (prev == old) break;
    old = prev;
  }
  return (old & mask) >> shift;
#endif
}

// A u32 word of the area (header, live ranges, half of a site's u64), taken the same way.
GMPROF_FOLD_HD inline unsigned take_word(unsigned *w) {
#if defined(GMPROF_CPU)
  const unsigned v = *w;
  *w = 0;
  return v;
#else
  return *w ? atomicExch(w, 0u) : 0u;
#endif
}

// Keeps the largest of a site's per-launch counts (the bound on what one launch's 32-bit
// counters can hold, runtime/widen.py, is taken over single launches, not their sum).
GMPROF_FOLD_HD inline void max_total(unsigned long long *t, unsigned long long v) {
#if defined(GMPROF_CPU)
  if (v > *t) *t = v;
#else
  if (v > *t) atomicMax(t, v);
#endif
}

// Adds to a total (atomically on a GPU: folds of one group on two streams may run together).
GMPROF_FOLD_HD inline void add_total(unsigned long long *t, unsigned long long v) {
#if defined(GMPROF_CPU)
  *t += v;
#else
  atomicAdd(t, v);
#endif
}

// The part of the fold done by thread `tid` of `stride` (every index once over all threads).
GMPROF_FOLD_HD inline void fold_range(const FoldJob &j, unsigned long long tid,
                                      unsigned long long stride) {
  unsigned *area = reinterpret_cast<unsigned *>(j.area);
  unsigned long long *tot = reinterpret_cast<unsigned long long *>(j.totals);
  // header and live-range words (u32 sums), and the sites' u64 counts (at their first word)
  for (unsigned long long w = tid; w < j.words; w += stride) {
    const bool plain = w < kHeader || (j.lr_offset && w >= j.lr_offset);
    const bool site = !plain && w < j.sites_end && ((w - kHeader) % kSiteWords) == 0;
    if (!plain && !site) continue;
    unsigned long long s = 0;
    for (unsigned r = 0; r < j.replicas; ++r) {
      unsigned *a = area + (unsigned long long)r * j.words + w;
      if (site) {
        // the u64 count whole: its two halves taken apart would lose a carry in flight
#if defined(GMPROF_CPU)
        unsigned long long *c = reinterpret_cast<unsigned long long *>(a);
        s += *c;
        *c = 0;
#else
        unsigned long long *c = reinterpret_cast<unsigned long long *>(a);
        s += *c ? atomicExch(c, 0ull) : 0ull;
#endif
      } else {
        s += take_word(a);
      }
    }
    if (s) add_total(tot + w, s);
    if (s && site)
      max_total(tot + j.words + j.n_shared + j.n_oor + 1 + (w - kHeader) / kSiteWords, s);
  }
  // the shared objects' counters at their width: summed over the copies, saturated per launch
  for (unsigned long long i = tid; i < j.n_shared; i += stride) {
    unsigned long long s = 0;
    for (unsigned r = 0; r < j.replicas; ++r) {
      unsigned char *base = reinterpret_cast<unsigned char *>(area + (unsigned long long)r * j.words +
                                                              j.sites_end);
      s += take(base + i * j.csize, j.csize);
    }
    if (j.threshold && s > j.threshold) s = j.threshold;
    if (s) add_total(tot + j.words + i, s);
  }
  if (tid == 0) {
    unsigned long long *oor = reinterpret_cast<unsigned long long *>(j.oor);
    unsigned long long sum = 0;
    for (unsigned i = 0; i < j.n_oor; ++i) {
      const unsigned long long v = take(reinterpret_cast<unsigned char *>(oor + i), 8);
      sum += v;
      if (v) add_total(tot + j.words + j.n_shared + i, v);
    }
    if (j.clock)
      add_total(tot + j.words + j.n_shared + j.n_oor,
                take(reinterpret_cast<unsigned char *>(j.clock), 8));
    unsigned long long *log = reinterpret_cast<unsigned long long *>(j.log);
    log[0] += sum;
    log[1] += 1;
  }
  // each device object's counters, where any were touched
  for (unsigned k = 0; k < j.n_objects; ++k) {
    const FoldObj &o = j.obj[k];
    unsigned char *sh = reinterpret_cast<unsigned char *>(o.shadow);
    unsigned long long *t = reinterpret_cast<unsigned long long *>(o.total);
    bool any = false;
    for (unsigned long long i = tid; i < o.n; i += stride) {
      const unsigned long long v = take(sh + i * j.csize, j.csize);
      if (v) add_total(t + i, v);
      any = any || v;
    }
    // the difference array's entries are signed (a range's end subtracts): 32-bit ones are
    // sign-extended, so that the u64 totals add them modulo 2^64 (ranges are planned with 32-
    // and 64-bit counters only)
    for (unsigned long long i = tid; i < o.n_diff; i += stride) {
      unsigned long long v = take(sh + (o.n + i) * j.csize, j.csize);
      if (j.csize == 4) v = (unsigned long long)(long long)(int)(unsigned)v;
      if (v) add_total(t + o.n + i, v);
      any = any || v;
    }
    // (every thread that added stores the same 1: no atomic needed)
    if (any && o.touched) *reinterpret_cast<volatile unsigned long long *>(o.touched) = 1ull;
  }
}

#if !defined(GMPROF_CPU)
__global__ void fold_kernel(FoldJob j) {
  fold_range(j, (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x,
             (unsigned long long)gridDim.x * blockDim.x);
}
#endif

inline unsigned long long fold_work(const FoldJob &j) {
  unsigned long long most = j.words > j.n_shared ? j.words : j.n_shared;
  for (unsigned k = 0; k < j.n_objects; ++k)
    if (j.obj[k].n + j.obj[k].n_diff > most) most = j.obj[k].n + j.obj[k].n_diff;
  return most;
}

#if defined(GMPROF_CPU)
inline void fold_host(void *job) { fold_range(*static_cast<const FoldJob *>(job), 0, 1); }
#endif

// Enqueues the fold of one launch on its stream. `job` must stay valid until it has run (on the
// CPU backend, until every replay of a graph that captured it: the group keeps it).
inline cudaError_t enqueue(FoldJob *job, cudaStream_t stream) {
#if defined(GMPROF_CPU)
  return cudaLaunchHostFunc(stream, fold_host, job);
#else
  const unsigned long long work = fold_work(*job);
  unsigned long long blocks = (work + 255) / 256;
  if (blocks < 1) blocks = 1;
  if (blocks > 1024) blocks = 1024;  // a grid-stride loop covers the rest
  // cudaLaunchKernel returns the fold's own error without reading (and clearing) the program's
  void *args[] = {job};
  return cudaLaunchKernel(reinterpret_cast<const void *>(&fold_kernel), dim3((unsigned)blocks),
                          dim3(256), args, 0, stream);
#endif
}

}  // namespace fold
}  // namespace gmprof_host

#endif  // GMPROF_HOST_FOLD_H
