// gmprof host runtime: the counts file written beside the report file (included by
// gmprof_host.cpp only).
//
// Stage: runtime, host side of whole programs, at exit. The report file is JSON; the per-element
// counters (each object's sums, a group's area and shared counters: up to 8 bytes per element of
// the program's largest arrays) go to a second file beside it, as raw little-endian words, and
// the JSON names each vector by its offset, dtype and count. Base64 inside the JSON (what older
// builds wrote, and what gmprof/program/countsfile.py still reads) took most of gmprof's time at
// exit on programs with large arrays (issue 25: 3.0 s of warpAggregatedAtomicsCG's 800 MB of
// sums, on an H100); raw words are written with one fwrite per vector (u8), or through one small
// buffer when every value fits in a u4.
//
// The counts file: a 32-byte header ("gmprof.counts/2\n", then the run's id in 16 hex digits,
// which the JSON repeats, so that a counts file of another run is refused), then the vectors,
// each starting at a multiple of 8 bytes. Version 2 adds the "packed" vectors (a device object's
// totals, narrowed per chunk on the device: gmprof_host_pack.h); version 1 files (u4, u8 and
// zero vectors only) still decode.
#ifndef GMPROF_HOST_COUNTS_H
#define GMPROF_HOST_COUNTS_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <string>
#include <vector>

#include "gmprof_host_pack.h"

namespace gmprof_host {
namespace counts {

enum { kHeaderBytes = 32, kNarrowChunk = 1 << 20 };

// An allocator whose resize leaves new elements uninitialised: a sum the host reads back whole
// is written once, by the copy, rather than zeroed first (a pass over up to 8 bytes an element).
template <class T>
struct NoInit : std::allocator<T> {
  template <class U>
  struct rebind {
    typedef NoInit<U> other;
  };
  NoInit() = default;
  template <class U>
  NoInit(const NoInit<U> &) {}
  template <class U>
  void construct(U *p) {
    ::new (static_cast<void *>(p)) U;
  }
  template <class U, class... A>
  void construct(U *p, A &&...a) {
    ::new (static_cast<void *>(p)) U(static_cast<A &&>(a)...);
  }
};

typedef std::vector<unsigned long long, NoInit<unsigned long long>> Sums;

// "gmprof-report-1.json" -> "gmprof-report-1.counts"; a name without ".json" gets ".counts"
inline std::string path_for(const std::string &report) {
  const size_t n = report.size();
  if (n > 5 && report.compare(n - 5, 5, ".json") == 0) return report.substr(0, n - 5) + ".counts";
  return report + ".counts";
}

inline std::string base_name(const std::string &path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

class Writer {
 public:
  Writer(FILE *f, const std::string &id) : f_(f) {
    char header[kHeaderBytes + 1];
    snprintf(header, sizeof header, "gmprof.counts/2\n%.16s", id.c_str());
    ok_ = fwrite(header, 1, kHeaderBytes, f_) == kHeaderBytes;
    at_ = kHeaderBytes;
  }

  // The JSON entry of a vector: {"dtype": "zero", "n": N} when every value is zero (nothing
  // written), else {"dtype": "u4"|"u8", "offset": BYTES, "n": N} and its words written.
  std::string entry(const unsigned long long *v, size_t n) {
    unsigned long long any = 0, high = 0;  // one pass, no branches: vectorised
    for (size_t i = 0; i < n; ++i) {
      any |= v[i];
      high |= v[i] >> 32;
    }
    const std::string count = std::to_string((unsigned long long)n);
    if (!any && n) return "{\"dtype\": \"zero\", \"n\": " + count + "}";
    const unsigned long long offset = at_;
    if (high) {
      put(v, n * 8);
    } else {
      buffer_.resize(n < (size_t)kNarrowChunk ? n : (size_t)kNarrowChunk);
      for (size_t i = 0; i < n; i += buffer_.size()) {
        const size_t m = n - i < buffer_.size() ? n - i : buffer_.size();
        for (size_t j = 0; j < m; ++j) buffer_[j] = (uint32_t)v[i + j];
        put(buffer_.data(), m * 4);
      }
    }
    static const char zeros[8] = {0};
    if (at_ % 8) put(zeros, 8 - at_ % 8);
    return std::string("{\"dtype\": \"") + (high ? "u8" : "u4") +
           "\", \"offset\": " + std::to_string(offset) + ", \"n\": " + count + "}";
  }

  template <class V>
  std::string entry(const V &v) {
    return entry(v.data(), v.size());
  }

  // A packed vector: {"dtype": "zero", "n": N} when every chunk is zero, else {"dtype":
  // "packed", "n": N, "chunk": C, "widths": "1120...", "offset": BYTES, "bytes": B}: its
  // non-zero chunks' bytes as read back, one fwrite (widths: each chunk's bytes an element).
  std::string entry(const pack::Packed &p) {
    const std::string count = std::to_string(p.n);
    if (p.zero()) return "{\"dtype\": \"zero\", \"n\": " + count + "}";
    const unsigned long long offset = at_;
    put(p.data.data(), p.data.size());
    static const char zeros[8] = {0};
    if (at_ % 8) put(zeros, 8 - at_ % 8);
    return "{\"dtype\": \"packed\", \"n\": " + count + ", \"chunk\": " +
           std::to_string((unsigned long long)pack::kChunk) + ", \"widths\": \"" + p.widths +
           "\", \"offset\": " + std::to_string(offset) + ", \"bytes\": " +
           std::to_string((unsigned long long)p.data.size()) + "}";
  }

  unsigned long long bytes() const { return at_; }
  bool ok() const { return ok_; }

 private:
  void put(const void *p, size_t bytes) {
    if (bytes && fwrite(p, 1, bytes, f_) != bytes) ok_ = false;
    at_ += bytes;
  }

  FILE *f_;
  bool ok_ = true;
  unsigned long long at_ = 0;
  std::vector<uint32_t> buffer_;
};

}  // namespace counts
}  // namespace gmprof_host

#endif
