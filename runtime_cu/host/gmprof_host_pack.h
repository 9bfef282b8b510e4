// gmprof host runtime: a device object's per-element totals narrowed on the device before they
// are read back (included by gmprof_host.cpp only).
//
// Stage: runtime, host side of whole programs, at harvest. Each element of a device object has
// a u64 total per group (gmprof_host_fold.h); read back whole, that is 8 bytes an element of
// every array every kernel touched (segmentationTreeThrust: 1.8 G elements, 14 GB read back in
// 11.5 s and 8.3 s writing them, on an H200, issue 25), though most totals are small and many
// ranges are zero. The report keeps every element's count (the heat map, `counts` in the
// document), so nothing is dropped: the totals are cut into chunks of kChunk elements, and each
// chunk is stored at the width its largest value needs (0: all zero, nothing stored; 1, 2, 4 or
// 8 bytes, exact: a chunk with a total past 2^32 keeps 8 bytes an element).
//
//   1. the device ORs each chunk's totals (one u64 a chunk; the OR's highest bit is the
//      maximum's) and the host reads those back (8 bytes per kChunk elements);
//   2. the host gives each chunk its width and its place in the packed bytes;
//   3. the device packs the chunks into a scratch buffer (a batch at a time, at most
//      kBatch bytes), which the host reads back into the object's Packed bytes.
//
// The counts file stores those bytes as they are, with one character a chunk saying its width
// (gmprof_host_counts.h; decoded by gmprof/program/countsfile.py). On the CPU backend the same
// functions run on the host (tid 0 of 1).
#ifndef GMPROF_HOST_PACK_H
#define GMPROF_HOST_PACK_H

#include <stdint.h>
#include <string.h>

#include <string>
#include <vector>

#if defined(GMPROF_CPU)
#define GMPROF_PACK_HD
#else
#define GMPROF_PACK_HD __host__ __device__
#endif

namespace gmprof_host {
namespace pack {

// 4096 elements: a zero run of that length is skipped, and one hot element widens only its
// chunk; the per-chunk ORs read back are 1/4096 of the totals.
enum : unsigned long long { kChunk = 4096, kBatch = 64ull << 20 };

// The bytes each element of a chunk takes, from the OR of its values (0: every value is zero).
inline unsigned width_of(unsigned long long bits) {
  return !bits ? 0u : bits < 0x100ull ? 1u : bits < 0x10000ull ? 2u : (bits >> 32) ? 8u : 4u;
}

// One object's totals, packed: `widths` holds one character per chunk ('0', '1', '2', '4',
// '8'), `data` the non-zero chunks one after another, each element little-endian at its
// chunk's width. n == 0 with no widths: nothing was ever read back (every value zero).
struct Packed {
  unsigned long long n = 0;
  std::string widths;
  std::vector<unsigned char> data;
  bool zero() const { return widths.find_first_not_of('0') == std::string::npos; }
};

inline unsigned long long chunks_of(unsigned long long n) { return (n + kChunk - 1) / kChunk; }

// The OR of each chunk of v[0, n) into ors[c] (the host's loop; a GPU gives each chunk a warp).
inline void or_chunks(const unsigned long long *v, unsigned long long n, unsigned long long *ors) {
  for (unsigned long long c = 0; c < chunks_of(n); ++c) {
    const unsigned long long end = (c + 1) * kChunk < n ? (c + 1) * kChunk : n;
    unsigned long long bits = 0;
    for (unsigned long long i = c * kChunk; i < end; ++i) bits |= v[i];
    ors[c] = bits;
  }
}

// Element k of a chunk of width w that starts at byte `at` of out.
GMPROF_PACK_HD inline void put(unsigned char *out, unsigned long long at, unsigned w,
                               unsigned long long k, unsigned long long v) {
  if (w == 1) out[at + k] = (unsigned char)v;
  else if (w == 2) reinterpret_cast<unsigned short *>(out + at)[k] = (unsigned short)v;
  else if (w == 4) reinterpret_cast<unsigned *>(out + at)[k] = (unsigned)v;
  else reinterpret_cast<unsigned long long *>(out + at)[k] = v;
}

// Packs the chunks [c0, c1) of v (the host's loop): chunk c at width w[c], at byte at[c] - base
// of out (a batch: base is the packed offset of chunk c0).
inline void pack_chunks(const unsigned long long *v, unsigned long long n, unsigned char *out,
                        const unsigned long long *at, const unsigned char *w,
                        unsigned long long base, unsigned long long c0, unsigned long long c1) {
  for (unsigned long long c = c0; c < c1; ++c) {
    if (!w[c]) continue;
    const unsigned long long first = c * kChunk, end = first + kChunk < n ? first + kChunk : n;
    for (unsigned long long i = first; i < end; ++i) put(out, at[c] - base, w[c], i - first, v[i]);
  }
}

// Each chunk's width (from its OR) and byte offset in the packed data: their total, returned.
inline unsigned long long layout(unsigned long long n, const unsigned long long *ors,
                                 unsigned char *w, unsigned long long *at, std::string &widths) {
  unsigned long long bytes = 0;
  widths.assign(chunks_of(n), '0');
  for (unsigned long long c = 0; c < chunks_of(n); ++c) {
    w[c] = (unsigned char)width_of(ors[c]);
    widths[c] = (char)('0' + w[c]);
    at[c] = bytes;
    bytes += w[c] * ((c + 1) * kChunk < n ? kChunk : n - c * kChunk);
  }
  return bytes;
}

// On the host (CPU-backend counters, range sites' prefix sums, a later harvest's additions).
inline void pack_host(const unsigned long long *v, unsigned long long n, Packed &p) {
  const unsigned long long chunks = chunks_of(n);
  std::vector<unsigned long long> ors(chunks), at(chunks);
  std::vector<unsigned char> w(chunks);
  or_chunks(v, n, ors.data());
  p.n = n;
  p.data.resize(layout(n, ors.data(), w.data(), at.data(), p.widths));
  pack_chunks(v, n, p.data.data(), at.data(), w.data(), 0, 0, chunks);
}

// Back to one u64 an element, added into out[0, p.n) (a later harvest adds to what it kept).
inline void unpack_add(const Packed &p, unsigned long long *out) {
  unsigned long long at = 0;
  for (unsigned long long c = 0; c < p.widths.size(); ++c) {
    const unsigned w = (unsigned)(p.widths[c] - '0');
    const unsigned long long first = c * kChunk;
    const unsigned long long end = first + kChunk < p.n ? first + kChunk : p.n;
    for (unsigned long long i = first; w && i < end; ++i) {
      const unsigned char *q = p.data.data() + at + (i - first) * w;
      unsigned long long v = 0;
      memcpy(&v, q, w);  // little-endian, as the device wrote it
      out[i] += v;
    }
    if (w) at += w * (end - first);
  }
}

#if !defined(GMPROF_CPU)
// The same on a GPU, a warp a chunk: its lanes read consecutive totals (coalesced), then OR
// across the warp.
__global__ void or_kernel(const unsigned long long *v, unsigned long long n,
                          unsigned long long *ors) {
  const unsigned lane = threadIdx.x & 31;
  const unsigned long long warp = ((unsigned long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  const unsigned long long warps = ((unsigned long long)gridDim.x * blockDim.x) >> 5;
  for (unsigned long long c = warp; c < (n + kChunk - 1) / kChunk; c += warps) {
    const unsigned long long end = (c + 1) * kChunk < n ? (c + 1) * kChunk : n;
    unsigned long long bits = 0;
    for (unsigned long long i = c * kChunk + lane; i < end; i += 32) bits |= v[i];
    for (int d = 16; d; d >>= 1) bits |= __shfl_xor_sync(0xffffffffu, bits, d);
    if (lane == 0) ors[c] = bits;
  }
}

__global__ void pack_kernel(const unsigned long long *v, unsigned long long n, unsigned char *out,
                            const unsigned long long *at, const unsigned char *w,
                            unsigned long long base, unsigned long long c0,
                            unsigned long long c1) {
  const unsigned lane = threadIdx.x & 31;
  const unsigned long long warp = ((unsigned long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  const unsigned long long warps = ((unsigned long long)gridDim.x * blockDim.x) >> 5;
  for (unsigned long long c = c0 + warp; c < c1; c += warps) {
    if (!w[c]) continue;
    const unsigned long long first = c * kChunk, end = first + kChunk < n ? first + kChunk : n;
    for (unsigned long long i = first + lane; i < end; i += 32)
      put(out, at[c] - base, w[c], i - first, v[i]);
  }
}
#endif

#if !defined(GMPROF_CPU)
// A warp per chunk, on stream 0 (read_device's copies follow in order). cudaLaunchKernel
// returns this launch's own error without reading (and clearing) the program's.
inline bool launch(const void *kernel, unsigned long long chunks, void **args) {
  unsigned long long blocks = (chunks * 32 + 255) / 256;
  blocks = blocks < 1 ? 1 : blocks > 4096 ? 4096 : blocks;  // a grid-stride loop covers the rest
  return cudaLaunchKernel(kernel, dim3((unsigned)blocks), dim3(256), args, 0, 0) == cudaSuccess;
}
#endif

// The device's part of a read-back: or_chunks / pack_chunks on the device's memory (a call on
// the CPU backend, whose device memory is the host's).
inline bool device_or(const unsigned long long *v, unsigned long long n, unsigned long long *ors) {
#if defined(GMPROF_CPU)
  or_chunks(v, n, ors);
  return true;
#else
  void *args[] = {&v, &n, &ors};
  return launch(reinterpret_cast<const void *>(&or_kernel), chunks_of(n), args);
#endif
}

inline bool device_pack(const unsigned long long *v, unsigned long long n, unsigned char *out,
                        const unsigned long long *at, const unsigned char *w,
                        unsigned long long base, unsigned long long c0, unsigned long long c1) {
#if defined(GMPROF_CPU)
  pack_chunks(v, n, out, at, w, base, c0, c1);
  return true;
#else
  void *args[] = {&v, &n, &out, &at, &w, &base, &c0, &c1};
  return launch(reinterpret_cast<const void *>(&pack_kernel), c1 - c0, args);
#endif
}

// Reads one object's u64 totals (device memory, n of them) back packed into p: the chunks' ORs,
// then the packed chunks, `batch` bytes at most at a time, through a scratch buffer. `read`
// copies device memory to the host (read_device); `copied` adds the bytes it read back. False
// (p left empty) when the device has no room for the scratch or a step fails: the caller then
// reads the totals whole.
template <class Read>
inline bool read_back(const unsigned long long *total, unsigned long long n, Packed &p,
                      unsigned long long batch, Read read, unsigned long long &copied) {
  const unsigned long long chunks = chunks_of(n);
  if (batch < kChunk * 8) batch = kChunk * 8;  // a batch holds one chunk at least
  std::vector<unsigned long long> ors(chunks), at(chunks);
  std::vector<unsigned char> w(chunks);
  void *d_ors = nullptr, *d_at = nullptr, *d_w = nullptr, *d_out = nullptr;
  bool ok = cudaMalloc(&d_ors, chunks * 8) == cudaSuccess &&
            device_or(total, n, static_cast<unsigned long long *>(d_ors)) &&
            read(ors.data(), d_ors, chunks * 8);
  copied += chunks * 8;
  p.n = n;
  const unsigned long long bytes = ok ? layout(n, ors.data(), w.data(), at.data(), p.widths) : 0;
  p.data.resize(bytes);
  if (ok && bytes) {
    ok = cudaMalloc(&d_at, chunks * 8) == cudaSuccess && cudaMalloc(&d_w, chunks) == cudaSuccess &&
         cudaMalloc(&d_out, bytes < batch ? bytes : batch) == cudaSuccess &&
         cudaMemcpy(d_at, at.data(), chunks * 8, cudaMemcpyHostToDevice) == cudaSuccess &&
         cudaMemcpy(d_w, w.data(), chunks, cudaMemcpyHostToDevice) == cudaSuccess;
  }
  for (unsigned long long c0 = 0; ok && bytes && c0 < chunks;) {
    // the chunks from c0 whose packed bytes fit the batch (one at least)
    const unsigned long long base = at[c0];
    unsigned long long c1 = c0, end = base;
    while (c1 < chunks) {
      const unsigned long long next = c1 + 1 < chunks ? at[c1 + 1] : bytes;
      if (c1 > c0 && next - base > batch) break;
      end = next;
      ++c1;
    }
    if (end > base) {
      ok = device_pack(total, n, static_cast<unsigned char *>(d_out),
                       static_cast<const unsigned long long *>(d_at),
                       static_cast<const unsigned char *>(d_w), base, c0, c1) &&
           read(p.data.data() + base, d_out, end - base);
      copied += end - base;
    }
    c0 = c1;
  }
  for (void *d : {d_ors, d_at, d_w, d_out})
    if (d) cudaFree(d);
  if (!ok) {
    cudaGetLastError();  // (a failed cudaMalloc's error, not the program's)
    p = Packed();
  }
  return ok;
}

}  // namespace pack
}  // namespace gmprof_host

#endif  // GMPROF_HOST_PACK_H
