// app_stencil: fill a grid, run the stencil for a number of steps, check against the host.
//
//   app_stencil [NX [NY [STEPS]]]     (default 40 x 24, 3 steps)
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <vector>

#include "kernels.h"

#define CHECK(call)                                                                   \
  do {                                                                                \
    cudaError_t err_ = (call);                                                        \
    if (err_ != cudaSuccess) {                                                        \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                   \
              cudaGetErrorString(err_));                                              \
      return 1;                                                                       \
    }                                                                                 \
  } while (0)

static const float kCoef[5] = {0.5f, 0.125f, 0.125f, 0.125f, 0.125f};

static void host_step(const std::vector<float> &in, std::vector<float> &out, int nx, int ny) {
  for (int y = 0; y < ny; ++y)
    for (int x = 0; x < nx; ++x) {
      int w = x > 0 ? x - 1 : 0, e = x < nx - 1 ? x + 1 : nx - 1;
      int n = y > 0 ? y - 1 : 0, s = y < ny - 1 ? y + 1 : ny - 1;
      out[y * nx + x] = kCoef[0] * in[y * nx + x] + kCoef[1] * in[y * nx + w] +
                        kCoef[2] * in[y * nx + e] + kCoef[3] * in[n * nx + x] +
                        kCoef[4] * in[s * nx + x];
    }
}

int main(int argc, char **argv) {
  int nx = argc > 1 ? atoi(argv[1]) : 40;
  int ny = argc > 2 ? atoi(argv[2]) : 24;
  int steps = argc > 3 ? atoi(argv[3]) : 3;
  if (nx < 1 || ny < 1 || steps < 0) {
    fprintf(stderr, "usage: %s [NX [NY [STEPS]]]\n", argv[0]);
    return 2;
  }
  int devices = 0;
  CHECK(cudaGetDeviceCount(&devices));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  printf("grid %d x %d, %d steps\n", nx, ny, steps);

  size_t bytes = (size_t)nx * ny * sizeof(float);
  float *d_a = NULL, *d_b = NULL;
  CHECK(cudaMalloc((void **)&d_a, bytes));
  CHECK(cudaMalloc((void **)&d_b, bytes));
  set_coefficients(kCoef);

  dim3 block(TILE, TILE);
  dim3 grid((nx + TILE - 1) / TILE, (ny + TILE - 1) / TILE);
  float scale = 0.25f;
  fill<<<grid, block>>>(d_a, nx, ny, scale);
  CHECK(cudaGetLastError());
  // the second buffer is filled through the runtime API's launch call
  void *fill_args[] = {&d_b, &nx, &ny, &scale};
  CHECK(cudaLaunchKernel((const void *)fill, grid, block, fill_args, 0, 0));

  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  CHECK(cudaEventRecord(start, stream));
  for (int s = 0; s < steps; ++s) {
    CHECK(stencil_step(d_a, d_b, nx, ny, stream));
    float *t = d_a;
    d_a = d_b;
    d_b = t;
  }
  CHECK(cudaEventRecord(stop, stream));
  CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, start, stop));

  std::vector<float> got((size_t)nx * ny), want((size_t)nx * ny), next((size_t)nx * ny);
  CHECK(cudaMemcpy(got.data(), d_a, bytes, cudaMemcpyDeviceToHost));
  for (int y = 0; y < ny; ++y)
    for (int x = 0; x < nx; ++x) want[y * nx + x] = (float)((x * 7 + y * 13) % 17) * scale;
  for (int s = 0; s < steps; ++s) {
    host_step(want, next, nx, ny);
    want.swap(next);
  }
  double sum = 0, worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    sum += got[i];
    worst = fmax(worst, fabs((double)got[i] - want[i]));
  }
  printf("checksum %.6f\n", sum);
  CHECK(cudaStreamDestroy(stream));
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  CHECK(cudaFree(d_a));
  CHECK(cudaFree(d_b));
  if (worst > 1e-4) {
    printf("FAILED: max difference %g\n", worst);
    return 1;
  }
  printf("PASSED\n");
  return 0;
}
