// app_stencil device code: see kernels.h.
#include <stdio.h>

#include "kernels.h"

__constant__ float coef[5];

__global__ void fill(float *a, int nx, int ny, float scale) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < nx && y < ny) a[y * nx + x] = (float)((x * 7 + y * 13) % 17) * scale;
}

__global__ void stencil(const float *in, float *out, int nx, int ny) {
  // the block's tile with a one-element halo on each side
  __shared__ float tile[TILE + 2][TILE + 2];
  int tx = threadIdx.x, ty = threadIdx.y;
  int x = blockIdx.x * TILE + tx;
  int y = blockIdx.y * TILE + ty;
  int cx = min(x, nx - 1), cy = min(y, ny - 1);
  tile[ty + 1][tx + 1] = in[cy * nx + cx];
  if (tx == 0) tile[ty + 1][0] = in[cy * nx + max(cx - 1, 0)];
  if (tx == TILE - 1) tile[ty + 1][TILE + 1] = in[cy * nx + min(cx + 1, nx - 1)];
  if (ty == 0) tile[0][tx + 1] = in[max(cy - 1, 0) * nx + cx];
  if (ty == TILE - 1) tile[TILE + 1][tx + 1] = in[min(cy + 1, ny - 1) * nx + cx];
  __syncthreads();
  if (x < nx && y < ny) {
    out[y * nx + x] = coef[0] * tile[ty + 1][tx + 1] + coef[1] * tile[ty + 1][tx] +
                      coef[2] * tile[ty + 1][tx + 2] + coef[3] * tile[ty][tx + 1] +
                      coef[4] * tile[ty + 2][tx + 1];
  }
}

void set_coefficients(const float c[5]) {
  cudaMemcpyToSymbol(coef, c, 5 * sizeof(float));
}

cudaError_t stencil_step(const float *in, float *out, int nx, int ny, cudaStream_t stream) {
  dim3 block(TILE, TILE);
  dim3 grid((nx + TILE - 1) / TILE, (ny + TILE - 1) / TILE);
  stencil<<<grid, block, 0, stream>>>(in, out, nx, ny);
  return cudaGetLastError();
}
