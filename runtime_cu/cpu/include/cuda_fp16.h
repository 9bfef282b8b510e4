// gmprof CPU backend: <cuda_fp16.h>. __half and __half2 (and, from the same header,
// __nv_bfloat16): gmprof_cpu_fp16.h says how they round.
#ifndef __CUDA_FP16_H__
#define __CUDA_FP16_H__  // NVIDIA's guard, for code that tests it
#define __CUDA_FP16_HPP__
#define __CUDA_FP16_TYPES_EXIST__
#include "gmprof_cpu_fp16.h"
#endif
