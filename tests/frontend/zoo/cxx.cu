// Syntax zoo: the C++ that kernels use.
#include <cooperative_groups.h>
#include "zoo_helpers.cuh"
#define DATA_TYPE float
namespace cg = cooperative_groups;
typedef unsigned int uint32;
using index_t = int;
template <typename T> struct Limits { __device__ static T max() { return T(1) << 30; } };

template <typename T, int BLOCK = 128>
__device__ __forceinline__ T clampv(const T &v, T lo = T(0))
{
    return v < lo ? lo : v;
}

template <int N>
__device__ int sum_n(const int *x) { int s = 0;
#pragma unroll
  for (int i = 0; i < N; i++) s += x[i];
  return s; }

extern "C" __global__ void __launch_bounds__(256, 2)
cxx_kernel(DATA_TYPE *out, const DATA_TYPE *__restrict__ in, index_t n)
{
    auto i = static_cast<index_t>(blockIdx.x * blockDim.x + threadIdx.x);
    uint32 lane = ::threadIdx.x & 31u;
    float &ref = out[i];
    ref = clampv<float>(in[i]) + float(lane) + sum_n<4>((const int *)in);
    unsigned int laneid;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(laneid));
    out[n - 1] = (float)laneid + static_cast<float>(Limits<int>::max());
    out[0] = helper_scale(in[1], 2.0f);
}

__host__ __device__ inline float both(float x) { return x * 2.0f; }
