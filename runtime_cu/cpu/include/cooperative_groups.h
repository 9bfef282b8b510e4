// gmprof CPU backend: <cooperative_groups.h> for kernels run on the CPU. Stage: runtime (device
// side, CPU). Included by a kernel (g++ finds it through -isystem runtime_cu/cpu/include); built
// on the backend's own primitives (gmprof_cpu.h): block barriers, warp collectives with a mask,
// __activemask's call-site groups. What it covers is what real kernels use (cuda-samples,
// CUTLASS-style code): thread_block, tiles of 1 to 32 threads (static and dynamic), coalesced
// groups, grid_group (its sync() in a cooperative launch); cg::reduce is in
// <cooperative_groups/reduce.h>, as in CUDA. Not here: tiles larger than a warp, cluster groups,
// memcpy_async, scans.
//
// Every operation that waits takes the caller's file and line as default arguments
// (__builtin_FILE/__builtin_LINE are evaluated at the call site), so a deadlock report names the
// user's line, not this header's.
#ifndef GMPROF_CPU_COOPERATIVE_GROUPS_H
#define GMPROF_CPU_COOPERATIVE_GROUPS_H
#define _COOPERATIVE_GROUPS_H_  // NVIDIA's guard, for code that tests it

#ifndef GMPROF_CPU
#error "this <cooperative_groups.h> is gmprof's CPU backend's: compile with gmprof_cpu.h"
#endif

#define GMPROF_CG_SITE const char *file = __builtin_FILE(), int line = __builtin_LINE()
#define GMPROF_CG_INLINE __attribute__((always_inline)) inline

namespace cooperative_groups {

namespace gmprof_detail {

GMPROF_CG_INLINE unsigned linear_tid() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
GMPROF_CG_INLINE unsigned block_threads() { return blockDim.x * blockDim.y * blockDim.z; }
// warps are 32 consecutive linear thread ids on this backend
GMPROF_CG_INLINE unsigned lane() { return linear_tid() & 31u; }
GMPROF_CG_INLINE unsigned lanes_below() { return (1u << lane()) - 1u; }
// the lane of the group member with rank `rank` (the rank-th set bit of mask); 32 if none
GMPROF_CG_INLINE unsigned lane_of_rank(unsigned mask, unsigned rank) {
  for (unsigned m = mask; m; m &= m - 1, --rank)
    if (rank == 0) return (unsigned)__builtin_ctz(m);
  return 32u;
}
// a tile of `size` lanes (a power of 2 up to 32) holding the caller
GMPROF_CG_INLINE unsigned tile_mask(unsigned size) {
  return size >= 32u ? 0xffffffffu : ((1u << size) - 1u) << (lane() & ~(size - 1u));
}
GMPROF_CG_INLINE unsigned long long collective(const char *file, int line, const char *what,
                                               int op, unsigned mask, unsigned long long value) {
  return ::gmprof_cpu::warp_collective(file, line, what, op, mask, value, 0, 32, nullptr);
}

enum Kind : unsigned char { BLOCK, TILE, COALESCED };

template <class T>
struct always_false { static constexpr bool value = false; };

}  // namespace gmprof_detail

// Any group, as the dynamic API (`thread_group g = tiled_partition(block, 16)`) sees it.
class thread_group {
 protected:
  unsigned char kind_;
  unsigned mask_;       // TILE, COALESCED: the warp's lanes in the group
  unsigned tile_size_;  // TILE: a power of 2 up to 32
  unsigned meta_rank_, meta_size_;
  thread_group(unsigned char kind, unsigned mask, unsigned tile_size, unsigned meta_rank,
               unsigned meta_size)
      : kind_(kind), mask_(mask), tile_size_(tile_size), meta_rank_(meta_rank),
        meta_size_(meta_size) {}

 public:
  unsigned long long num_threads() const {
    return kind_ == gmprof_detail::BLOCK ? gmprof_detail::block_threads()
           : kind_ == gmprof_detail::TILE ? tile_size_
                                          : (unsigned)__builtin_popcount(mask_);
  }
  unsigned long long size() const { return num_threads(); }
  unsigned long long thread_rank() const {
    return kind_ == gmprof_detail::BLOCK ? gmprof_detail::linear_tid()
           : kind_ == gmprof_detail::TILE
               ? (gmprof_detail::lane() & (tile_size_ - 1u))
               : (unsigned)__builtin_popcount(mask_ & gmprof_detail::lanes_below());
  }
  void sync(GMPROF_CG_SITE) const {
    if (kind_ == gmprof_detail::BLOCK)
      ::gmprof_cpu::barrier(file, line, "thread_group::sync()", 0, nullptr);
    else
      gmprof_detail::collective(file, line, "thread_group::sync()", ::gmprof_cpu::OP_SYNCWARP,
                                mask_, 0);
  }
  // for tiled_partition(parent, tilesz)
  unsigned gmprof_mask() const { return mask_; }
  unsigned char gmprof_kind() const { return kind_; }
};

// The block: every thread of the launch's block.
class thread_block : public thread_group {
  friend thread_block this_thread_block();
  thread_block() : thread_group(gmprof_detail::BLOCK, 0xffffffffu, 0, 0, 1) {}

 public:
  static void sync(GMPROF_CG_SITE) {
    ::gmprof_cpu::barrier(file, line, "thread_block::sync()", 0, nullptr);
  }
  static unsigned thread_rank() { return gmprof_detail::linear_tid(); }
  static unsigned num_threads() { return gmprof_detail::block_threads(); }
  static unsigned size() { return gmprof_detail::block_threads(); }
  static dim3 group_index() { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
  static dim3 thread_index() { return dim3(threadIdx.x, threadIdx.y, threadIdx.z); }
  static dim3 group_dim() { return blockDim; }
  static dim3 dim_threads() { return blockDim; }
};

GMPROF_CG_INLINE thread_block this_thread_block() { return thread_block(); }

// A tile of Size consecutive threads (1 to 32, a power of 2) of a block or of a larger tile.
template <unsigned Size, class ParentT = void>
class thread_block_tile;

template <unsigned Size>
class thread_block_tile<Size, void> : public thread_group {
  static_assert(Size >= 1 && Size <= 32 && (Size & (Size - 1)) == 0,
                "gmprof CPU backend: thread_block_tile sizes are powers of 2 up to 32 (tiles "
                "larger than a warp are not supported)");
  static constexpr unsigned kFull = Size == 32 ? 0xffffffffu : (1u << Size) - 1u;
  static unsigned shift() { return gmprof_detail::lane() & ~(Size - 1u); }

 public:
  thread_block_tile(unsigned meta_rank, unsigned meta_size)
      : thread_group(gmprof_detail::TILE, gmprof_detail::tile_mask(Size), Size, meta_rank,
                     meta_size) {}

  static constexpr unsigned num_threads() { return Size; }
  static constexpr unsigned size() { return Size; }
  static unsigned thread_rank() { return gmprof_detail::lane() & (Size - 1u); }
  unsigned meta_group_rank() const { return meta_rank_; }
  unsigned meta_group_size() const { return meta_size_; }

  void sync(GMPROF_CG_SITE) const {
    gmprof_detail::collective(file, line, "thread_block_tile::sync()", ::gmprof_cpu::OP_SYNCWARP,
                              mask_, 0);
  }
  template <class T>
  T shfl(T var, int src_rank, GMPROF_CG_SITE) const {
    return ::gmprof_cpu::shfl(file, line, "thread_block_tile::shfl()", ::gmprof_cpu::OP_SHFL_IDX,
                              mask_, var, src_rank, (int)Size);
  }
  template <class T>
  T shfl_down(T var, unsigned delta, GMPROF_CG_SITE) const {
    return ::gmprof_cpu::shfl(file, line, "thread_block_tile::shfl_down()",
                              ::gmprof_cpu::OP_SHFL_DOWN, mask_, var, (int)delta, (int)Size);
  }
  template <class T>
  T shfl_up(T var, unsigned delta, GMPROF_CG_SITE) const {
    return ::gmprof_cpu::shfl(file, line, "thread_block_tile::shfl_up()", ::gmprof_cpu::OP_SHFL_UP,
                              mask_, var, (int)delta, (int)Size);
  }
  template <class T>
  T shfl_xor(T var, unsigned lane_mask, GMPROF_CG_SITE) const {
    return ::gmprof_cpu::shfl(file, line, "thread_block_tile::shfl_xor()",
                              ::gmprof_cpu::OP_SHFL_XOR, mask_, var, (int)lane_mask, (int)Size);
  }
  // votes answer in the tile's own bit positions (bit r for the thread of rank r), as CUDA's
  unsigned ballot(int pred, GMPROF_CG_SITE) const {
    return (unsigned)gmprof_detail::collective(file, line, "thread_block_tile::ballot()",
                                               ::gmprof_cpu::OP_BALLOT, mask_, pred != 0) >>
           shift();
  }
  int any(int pred, GMPROF_CG_SITE) const {
    return (int)gmprof_detail::collective(file, line, "thread_block_tile::any()",
                                          ::gmprof_cpu::OP_ANY, mask_, pred != 0);
  }
  int all(int pred, GMPROF_CG_SITE) const {
    return (int)gmprof_detail::collective(file, line, "thread_block_tile::all()",
                                          ::gmprof_cpu::OP_ALL, mask_, pred != 0);
  }
  template <class T>
  unsigned match_any(T val, GMPROF_CG_SITE) const {
    return ::gmprof_cpu::match_any(file, line, mask_, val) >> shift();
  }
  template <class T>
  unsigned match_all(T val, int &pred, GMPROF_CG_SITE) const {
    return ::gmprof_cpu::match_all(file, line, mask_, val, &pred) >> shift();
  }
};

template <unsigned Size, class ParentT>
class thread_block_tile : public thread_block_tile<Size, void> {
 public:
  thread_block_tile(unsigned meta_rank, unsigned meta_size)
      : thread_block_tile<Size, void>(meta_rank, meta_size) {}
};

// The lanes of the caller's warp that arrived here together (__activemask's call-site groups on
// this backend).
class coalesced_group : public thread_group {
 public:
  explicit coalesced_group(unsigned mask) : thread_group(gmprof_detail::COALESCED, mask, 0, 0, 1) {}
  unsigned num_threads() const { return (unsigned)__builtin_popcount(mask_); }
  unsigned size() const { return num_threads(); }
  unsigned thread_rank() const {
    return (unsigned)__builtin_popcount(mask_ & gmprof_detail::lanes_below());
  }
  unsigned meta_group_rank() const { return 0; }
  unsigned meta_group_size() const { return 1; }
  void sync(GMPROF_CG_SITE) const {
    gmprof_detail::collective(file, line, "coalesced_group::sync()", ::gmprof_cpu::OP_SYNCWARP,
                              mask_, 0);
  }
  // shuffles by rank: a rank outside the group reads the caller's own value
  template <class T>
  T shfl(T var, unsigned src_rank, GMPROF_CG_SITE) const {
    const unsigned src = gmprof_detail::lane_of_rank(mask_, src_rank);
    return ::gmprof_cpu::shfl(file, line, "coalesced_group::shfl()", ::gmprof_cpu::OP_SHFL_IDX,
                              mask_, var, (int)(src < 32 ? src : gmprof_detail::lane()), 32);
  }
  template <class T>
  T shfl_down(T var, unsigned delta, GMPROF_CG_SITE) const {
    const unsigned src = gmprof_detail::lane_of_rank(mask_, thread_rank() + delta);
    return ::gmprof_cpu::shfl(file, line, "coalesced_group::shfl_down()",
                              ::gmprof_cpu::OP_SHFL_IDX, mask_, var,
                              (int)(src < 32 ? src : gmprof_detail::lane()), 32);
  }
  template <class T>
  T shfl_up(T var, unsigned delta, GMPROF_CG_SITE) const {
    const unsigned r = thread_rank();
    const unsigned src = r >= delta ? gmprof_detail::lane_of_rank(mask_, r - delta) : 32u;
    return ::gmprof_cpu::shfl(file, line, "coalesced_group::shfl_up()", ::gmprof_cpu::OP_SHFL_IDX,
                              mask_, var, (int)(src < 32 ? src : gmprof_detail::lane()), 32);
  }
  // bit r for the member of rank r
  unsigned ballot(int pred, GMPROF_CG_SITE) const {
    const unsigned lanes = (unsigned)gmprof_detail::collective(
        file, line, "coalesced_group::ballot()", ::gmprof_cpu::OP_BALLOT, mask_, pred != 0);
    unsigned packed = 0, r = 0;
    for (unsigned m = mask_; m; m &= m - 1, ++r)
      if (lanes & (m & -m)) packed |= 1u << r;
    return packed;
  }
  int any(int pred, GMPROF_CG_SITE) const {
    return (int)gmprof_detail::collective(file, line, "coalesced_group::any()",
                                          ::gmprof_cpu::OP_ANY, mask_, pred != 0);
  }
  int all(int pred, GMPROF_CG_SITE) const {
    return (int)gmprof_detail::collective(file, line, "coalesced_group::all()",
                                          ::gmprof_cpu::OP_ALL, mask_, pred != 0);
  }
};

// Inlined, so that each use is its own call site for __activemask's grouping.
GMPROF_CG_INLINE coalesced_group coalesced_threads(GMPROF_CG_SITE) {
  return coalesced_group(::gmprof_cpu::activemask_at(file, line));
}

// The grid: ranks and sizes, and sync() in a cooperative launch.
class grid_group {
 public:
  static unsigned long long num_threads() {
    return (unsigned long long)gmprof_detail::block_threads() * num_blocks();
  }
  static unsigned long long size() { return num_threads(); }
  static unsigned long long block_rank() {
    return blockIdx.x + (unsigned long long)gridDim.x * (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);
  }
  static unsigned long long thread_rank() {
    return block_rank() * gmprof_detail::block_threads() + gmprof_detail::linear_tid();
  }
  static unsigned long long num_blocks() {
    return (unsigned long long)gridDim.x * gridDim.y * gridDim.z;
  }
  static dim3 block_index() { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
  static dim3 dim_blocks() { return gridDim; }
  static dim3 group_dim() { return gridDim; }
  static bool is_valid() { return true; }
  // a grid-wide barrier: in a cooperative launch only (cudaLaunchCooperativeKernel), as on a
  // GPU; the CPU backend runs the blocks in phases between grid barriers
  static void sync(GMPROF_CG_SITE) { ::gmprof_cpu::grid_sync(file, line); }
};

GMPROF_CG_INLINE grid_group this_grid() { return grid_group(); }

// tiled_partition<Size>(parent): the caller's tile of Size threads.
template <unsigned Size, class ParentT>
GMPROF_CG_INLINE thread_block_tile<Size, ParentT> tiled_partition(const ParentT &parent) {
  static_assert(std::is_base_of<thread_group, ParentT>::value,
                "gmprof CPU backend: tiled_partition<N> takes a thread_block or a tile");
  const unsigned rank = (unsigned)parent.thread_rank(), n = (unsigned)parent.num_threads();
  return thread_block_tile<Size, ParentT>(rank / Size, (n + Size - 1u) / Size);
}

// tiled_partition(parent, tilesz): the same, sized at run time, as a thread_group.
class gmprof_dynamic_tile : public thread_group {
 public:
  gmprof_dynamic_tile(unsigned size, unsigned meta_rank, unsigned meta_size)
      : thread_group(gmprof_detail::TILE, gmprof_detail::tile_mask(size), size, meta_rank,
                     meta_size) {}
};

inline thread_group tiled_partition(const thread_group &parent, unsigned tilesz, GMPROF_CG_SITE) {
  if (tilesz == 0 || tilesz > 32 || (tilesz & (tilesz - 1)))
    ::gmprof_cpu::assert_failed(
        "tiled_partition(parent, tilesz): tilesz is a power of 2 up to 32 on the CPU backend",
        file, line);
  if (parent.gmprof_kind() == gmprof_detail::COALESCED)
    ::gmprof_cpu::assert_failed(
        "tiled_partition of a coalesced_group is not supported on the CPU backend", file, line);
  const unsigned rank = (unsigned)parent.thread_rank(), n = (unsigned)parent.num_threads();
  return gmprof_dynamic_tile(tilesz, rank / tilesz, (n + tilesz - 1u) / tilesz);
}

// Free functions over any group.
template <class G>
GMPROF_CG_INLINE void sync(const G &g, GMPROF_CG_SITE) { g.sync(file, line); }
template <class G>
GMPROF_CG_INLINE unsigned long long thread_rank(const G &g) { return g.thread_rank(); }
template <class G>
GMPROF_CG_INLINE unsigned long long group_size(const G &g) { return g.num_threads(); }
template <class G>
GMPROF_CG_INLINE unsigned long long num_threads(const G &g) { return g.num_threads(); }

}  // namespace cooperative_groups

#endif  // GMPROF_CPU_COOPERATIVE_GROUPS_H
