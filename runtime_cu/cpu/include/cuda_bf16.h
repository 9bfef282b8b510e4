// gmprof CPU backend: <cuda_bf16.h>. __nv_bfloat16 and __nv_bfloat162 (and, from the same
// header, __half): gmprof_cpu_fp16.h says how they round.
#ifndef __CUDA_BF16_H__
#define __CUDA_BF16_H__  // NVIDIA's guard, for code that tests it
#define __CUDA_BF16_HPP__
#define __CUDA_BF16_TYPES_EXIST__
#include "gmprof_cpu_fp16.h"
#endif
