// gmprof CPU backend: <cooperative_groups/reduce.h>. Stage: runtime (device side, CPU).
// cg::reduce over a tile of 1 to 32 threads, with CUDA's function objects. The order of the
// operations is CUDA's (a butterfly of shfl_xor with offsets Size/2, ..., 1, each step
// op(own, partner)), so a float sum rounds as it does on the GPU; every thread of the tile gets
// the result. Integer plus/less/greater, which sm_80 computes with redux.sync, give the same
// value in any order.
#ifndef GMPROF_CPU_CG_REDUCE_H
#define GMPROF_CPU_CG_REDUCE_H
#define _CG_REDUCE_H_  // NVIDIA's guard

#include "../cooperative_groups.h"

namespace cooperative_groups {

template <class T> struct plus { T operator()(T a, T b) const { return a + b; } };
template <class T> struct less { T operator()(T a, T b) const { return (b < a) ? b : a; } };
template <class T> struct greater { T operator()(T a, T b) const { return (a < b) ? b : a; } };
template <class T> struct bit_and { T operator()(T a, T b) const { return a & b; } };
template <class T> struct bit_or { T operator()(T a, T b) const { return a | b; } };
template <class T> struct bit_xor { T operator()(T a, T b) const { return a ^ b; } };

template <unsigned Size, class ParentT, class V, class Op>
GMPROF_CG_INLINE auto reduce(const thread_block_tile<Size, ParentT> &tile, V &&val, Op &&op,
                             GMPROF_CG_SITE) -> decltype(op(val, val)) {
  decltype(op(val, val)) out = val;
  for (unsigned m = Size >> 1; m > 0; m >>= 1) out = op(out, tile.shfl_xor(out, m, file, line));
  return out;
}

}  // namespace cooperative_groups

#endif  // GMPROF_CPU_CG_REDUCE_H
