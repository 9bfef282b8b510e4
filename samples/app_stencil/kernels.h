// app_stencil: a small multi-file CUDA application for gmprof's whole-program path.
//
// kernels.cu holds the device code (a fill kernel and a 5-point stencil through a haloed shared
// tile, with its coefficients in constant memory) and two host helpers; main.cu is the program:
// it allocates, fills, runs the stencil for a number of steps, and checks the result against a
// host computation. Written for gmprof; not copied from public code.
#ifndef APP_STENCIL_KERNELS_H
#define APP_STENCIL_KERNELS_H

#include <cuda_runtime.h>

#define TILE 16

// a[y * nx + x] = a deterministic pattern scaled by `scale`
__global__ void fill(float *a, int nx, int ny, float scale);

// out = the 5-point stencil of in (coefficients: centre, west, east, north, south), with the
// grid's edge values clamped
__global__ void stencil(const float *in, float *out, int nx, int ny);

void set_coefficients(const float c[5]);
cudaError_t stencil_step(const float *in, float *out, int nx, int ny, cudaStream_t stream);

#endif
