"""Shifts in device code on the CPU backend compute what a GPU computes: an amount at least the
operand's width gives 0 (or the sign's bits for an arithmetic right shift), where x86 masks the
amount (x << 32 == x). Rodinia's huffman packs bits with `dw << 32 - bit` and `dw >> bit` for
bit in 0..31; on the CPU backend its encoding differed from its own CPU encoder's. Expected
values from PTX's definition of shl/shr (amounts clamped to the width), by hand."""
from __future__ import annotations

from conftest import gmprof

PROGRAM = r"""
#include <cstdio>
#define SHIFT_BY_MACRO(a, b) ((a) << (b))
__device__ unsigned twice(unsigned v, int k) { return v << k; }
__global__ void shifts(const int *k, long long *out) {
  __shared__ int s[1 << 3];  // a constant expression still
  int t = threadIdx.x;
  unsigned u = 5u;
  int neg = -8;
  unsigned long long w = 3ull;
  unsigned c = 7u;
  c <<= k[t];
  s[t & 7] = t;
  out[7 * t + 0] = u << k[t];
  out[7 * t + 1] = (u + 1) >> (k[t]);
  out[7 * t + 2] = neg >> k[t];
  out[7 * t + 3] = (long long)(w << (k[t] + 32));
  out[7 * t + 4] = c;
  out[7 * t + 5] = twice(1u, k[t]) + (1 << 2 << 1);
  out[7 * t + 6] = SHIFT_BY_MACRO(1u, 4) + s[t & 7];
}
int main() {
  int h[4] = {0, 31, 32, 40};
  long long o[28];
  int *k;
  long long *out;
  cudaMalloc(&k, sizeof h);
  cudaMalloc(&out, sizeof o);
  cudaMemcpy(k, h, sizeof h, cudaMemcpyHostToDevice);
  shifts<<<1, 4>>>(k, out);
  cudaMemcpy(o, out, sizeof o, cudaMemcpyDeviceToHost);
  for (int i = 0; i < 28; i++) printf("%lld%c", o[i], i % 7 == 6 ? '\n' : ' ');
  return 0;
}
"""


def test_shift_amounts_clamp_as_on_a_gpu(tmp_path, need_gxx):
    (tmp_path / "shifts.cu").write_text(PROGRAM)
    for extra in ((), ("--gmprof-native",)):
        gmprof("nvcc", *extra, "shifts.cu", "-o", "app", cwd=tmp_path)
        import subprocess

        p = subprocess.run([str(tmp_path / "app")], capture_output=True, text=True,
                           cwd=tmp_path, env={"GMPROF_QUIET": "1", "PATH": "/usr/bin:/bin"})
        assert p.returncode == 0, p.stderr
        rows = [list(map(int, line.split())) for line in p.stdout.splitlines()]
        # columns: 5u << k, 6u >> k, -8 >> k, 3ull << (k + 32), 7u <<= k, (1u << k) + 8,
        # 16 + t; rows k = 0, 31, 32, 40
        assert rows == [
            [5, 6, -8, 3 << 32, 7, 1 + 8, 16 + 0],
            # 5 << 31 keeps bit 0 only: 2^31; 3 << 63 keeps bit 0 only: 2^63 as a long long
            [2 ** 31, 0, -1, -(2 ** 63), 2 ** 31, 2 ** 31 + 8, 16 + 1],
            # amounts >= 32 on 32 bits: 0 (or -1 for -8 >> k); 3ull << 64: 0
            [0, 0, -1, 0, 0, 0 + 8, 16 + 2],
            [0, 0, -1, 0, 0, 0 + 8, 16 + 3],
        ], p.stdout
