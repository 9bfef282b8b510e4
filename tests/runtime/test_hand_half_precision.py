"""__half and __nv_bfloat16 on the CPU backend (issue 24): `#include <cuda_fp16.h>` /
`<cuda_bf16.h>` kernels compile (runtime_cu/cpu/include/), round as a GPU does (every conversion
and operation correctly rounded to nearest even), and are profiled in default, SA and basic
mode with 2-byte elements: a device array's counters are 4-byte words (two halves each), a
shared array's are 4-byte words too. Expected values from numpy's float16 (correctly rounded)
and a bfloat16 rounding written here with numpy bit operations; counts derived by hand."""
from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest

from gmprof.mode import Mode
from gmprof.runtime.cpu import CpuModule
from gmprof.runtime.session import Profiler

MODES = ["default", "SA", "basic"]

SOURCE = r"""
#include <cuda_fp16.h>
#include <cuda_bf16.h>

__global__ void half_ops(const __half *a, const __half *b, const __half *c, __half *out,
                         float *back, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    __half x = a[i], y = b[i];
    out[4 * i] = x + y;
    out[4 * i + 1] = __hmul(x, y);
    out[4 * i + 2] = __hfma(x, y, c[i]);
    out[4 * i + 3] = hsqrt(__habs(x)) - __hdiv(y, __float2half(3.0f));
    __half2 p = __floats2half2_rn(__half2float(x), 2.0f * __half2float(y));
    back[i] = __low2float(p) + __high2float(__hadd2(p, p));
  }
}

__global__ void half_shared(const __half *a, __half s, __half *out) {
  __shared__ __half tile[64];
  int t = threadIdx.x, g = blockIdx.x * 64 + t;
  tile[t] = a[g];
  __syncthreads();
  out[g] = tile[t] * tile[63 - t] + s;
}

__global__ void bf16_ops(const __nv_bfloat16 *a, const __nv_bfloat16 *b,
                         const __nv_bfloat16 *c, __nv_bfloat16 *out, const float *f,
                         __nv_bfloat16 *conv, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[3 * i] = __hadd(a[i], b[i]);
    out[3 * i + 1] = a[i] * b[i];
    out[3 * i + 2] = __hfma(a[i], b[i], c[i]);
    conv[i] = __float2bfloat16(f[i]);
  }
}
"""


def bf16_bits(x) -> np.ndarray:
    """float32 -> bfloat16 bits, round to nearest even (NaN: the canonical 0x7fff)."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    r[np.isnan(np.asarray(x, np.float32))] = 0x7FFF
    return r


def bf16_values(bits) -> np.ndarray:
    return (np.asarray(bits, np.uint16).astype(np.uint32) << 16).view(np.float32)


def same_half(got, want):
    got, want = np.asarray(got, np.float16), np.asarray(want, np.float16)
    both_nan = np.isnan(got) & np.isnan(want)
    np.testing.assert_array_equal(np.where(both_nan, 0, got.view(np.uint16)),
                                  np.where(both_nan, 0, want.view(np.uint16)))


def exact(values) -> np.ndarray:
    """float64 results that must be exact (checked with fractions), so numpy's correctly
    rounded float64 -> float16/float32 conversion rounds them once."""
    return np.asarray(values, np.float64)


@pytest.fixture(scope="module")
def prof():
    return Profiler(text=SOURCE, name="half.cu", backend="cpu")


def check(report, name, expect, reads, writes):
    arr = report.array(name)
    assert arr.label == "exact", (name, arr.label)
    np.testing.assert_array_equal(arr.counts, expect, err_msg=name)
    assert (arr.reads, arr.writes) == (reads, writes), name


@pytest.mark.parametrize("mode", MODES)
def test_half_arithmetic_matches_numpy_float16(prof, mode):
    n = 1000
    rng = np.random.default_rng(7)
    a = (rng.standard_normal(n) * 8).astype(np.float16)
    b = (rng.standard_normal(n) * 2).astype(np.float16)
    c = (rng.standard_normal(n)).astype(np.float16)
    a[:6] = [0.0, -0.0, 65504, 6e-8, 1e-5, -3.0]
    b[:6] = [1.0, 2.0, 2.0, 0.5, 1e-3, 7.0]  # 65504 + 2 rounds to 65504; 65504 * 2 overflows
    # an exact product on a rounding midpoint minus a tiny addend: one rounding gives
    # 1.5009765625; rounding a*b+c to float first, then to half, would give 1.501953125
    a[6], b[6], c[6] = 1.0009765625, 1.5, -2.0 ** -24
    out = np.zeros(4 * n, np.float16)
    back = np.zeros(n, np.float32)
    report = prof.launch("half_ops", 4, 256, [a, b, c, out, back, np.int32(n)],
                         mode=Mode.parse(mode))
    assert report.run.outputs_identical
    out = out.reshape(n, 4)
    A, B, C = (v.astype(np.float64) for v in (a, b, c))
    with np.errstate(over="ignore", invalid="ignore"):
        fma = exact(A * B + C)
        assert all(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)) == Fraction(float(r))
                   for x, y, z, r in zip(A, B, C, fma))
        same_half(out[:, 0], A + B)          # a float16 sum: exact in float64, rounded once
        same_half(out[:, 1], A * B)
        same_half(out[:, 2], fma)
        assert out[6, 2] == np.float16(1.5009765625)
        root = np.sqrt(np.abs(A)).astype(np.float16)   # correctly rounded from float64
        third = (B / 3.0).astype(np.float16)           # 3.0 is a half; one rounding
        same_half(out[:, 3], root.astype(np.float64) - third.astype(np.float64))
    # p = (x, 2y) as halves; p + p = (2x, 4y): back = x + half(4 * half(2y)) = x + 4 * half(2y)
    two_y = (2 * B).astype(np.float16).astype(np.float64)
    np.testing.assert_array_equal(back, (A + (2 * two_y).astype(np.float16)).astype(np.float32))
    # a, b, c: 2-byte elements, one counter per 4-byte word (two elements); x = a[i] and
    # y = b[i] once per element, c[i] once: 2 per word. out: 4 elements per thread, each
    # written once: 2 per word. back: floats, one per element.
    check(report, "a", np.full(n // 2, 2), reads=n, writes=0)
    check(report, "b", np.full(n // 2, 2), reads=n, writes=0)
    check(report, "c", np.full(n // 2, 2), reads=n, writes=0)
    check(report, "out", np.full(2 * n, 2), reads=0, writes=4 * n)
    check(report, "back", np.ones(n, np.int64), reads=0, writes=n)


@pytest.mark.parametrize("mode", MODES)
def test_half_shared_array_and_by_value_half(prof, mode):
    grid = 2
    a = (np.arange(64 * grid) / 16 - 3).astype(np.float16)
    out = np.zeros(64 * grid, np.float16)
    report = prof.launch("half_shared", grid, 64, [a, 0.375, out], mode=Mode.parse(mode))
    assert report.run.outputs_identical
    t = np.arange(64)
    want = np.concatenate([
        (a[64 * g + t].astype(np.float64) * a[64 * g + 63 - t]).astype(np.float16)
        .astype(np.float64) + 0.375 for g in range(grid)])
    same_half(out, want)
    # tile (shared, 32 words of two halves): per block each element written once and read
    # twice (tile[t], tile[63 - t]): 2 writes + 4 reads per word, 2 blocks
    check(report, "tile", np.full(32, 6 * grid), reads=128 * grid, writes=64 * grid)
    check(report, "a", np.full(32 * grid, 2), reads=64 * grid, writes=0)
    check(report, "out", np.full(32 * grid, 2), reads=0, writes=64 * grid)


@pytest.mark.parametrize("mode", MODES)
def test_bfloat16_arithmetic_and_conversion(prof, mode):
    n = 512
    rng = np.random.default_rng(11)

    def bf16_in(lo, hi):  # bfloat16 values of magnitude [lo, hi), random signs
        v = rng.uniform(lo, hi, n) * rng.choice([-1, 1], n)
        return bf16_bits(v.astype(np.float32))

    # magnitudes in [1, 2): sums, products and a*b + c are exact in float32 (at most 17
    # significant bits), so the hand-written float32 -> bfloat16 rounding rounds them once
    a, b, c = bf16_in(1, 2), bf16_in(1, 2), bf16_in(1, 2)
    # a product on a bfloat16 midpoint minus 2^-30: one rounding gives 1.5078125; float's
    # rounding of a*b+c would land on the midpoint and round to 1.515625
    a[0], b[0], c[0] = bf16_bits(np.float32([1 + 2 ** -7, 1.5, -(2.0 ** -30)]))
    f = (rng.standard_normal(n) * 1e3).astype(np.float32)
    f[:4] = [np.float32(1.00390625), np.float32(1.01171875), np.inf, np.nan]  # ties to even
    out = np.zeros(3 * n, np.uint16)
    conv = np.zeros(n, np.uint16)
    report = prof.launch("bf16_ops", 2, 256, [a, b, c, out, f, conv, np.int32(n)],
                         mode=Mode.parse(mode))
    assert report.run.outputs_identical
    out = out.reshape(n, 3)
    A, B, C = (bf16_values(v).astype(np.float64) for v in (a, b, c))
    np.testing.assert_array_equal(out[:, 0], bf16_bits(exact(A + B).astype(np.float32)))
    np.testing.assert_array_equal(out[:, 1], bf16_bits(exact(A * B).astype(np.float32)))
    fma = A * B + C
    assert (fma[1:].astype(np.float32) == fma[1:]).all()  # exact in float32
    np.testing.assert_array_equal(out[1:, 2], bf16_bits(fma[1:].astype(np.float32)))
    assert bf16_values(out[0, 2]) == np.float32(1.5078125)
    np.testing.assert_array_equal(conv, bf16_bits(f))
    assert list(conv[:4]) == [0x3F80, 0x3F82, 0x7F80, 0x7FFF]
    # a[i], b[i]: read by three statements each; c[i] once; f: floats; 2 elements per word
    check(report, "a", np.full(n // 2, 6), reads=3 * n, writes=0)
    check(report, "b", np.full(n // 2, 6), reads=3 * n, writes=0)
    check(report, "c", np.full(n // 2, 2), reads=n, writes=0)
    check(report, "out", np.full(3 * n // 2, 2), reads=0, writes=3 * n)
    check(report, "f", np.ones(n, np.int64), reads=n, writes=0)
    check(report, "conv", np.full(n // 2, 2), reads=0, writes=n)


def test_conversions_in_every_rounding_mode(tmp_path):
    src = r"""
#include <cuda_fp16.h>
#include <cuda_bf16.h>
__global__ void k(const float *f, unsigned short *h, unsigned short *b, int *i, int n) {
  int t = threadIdx.x;
  if (t < n) {
    h[4 * t] = __half_as_ushort(__float2half_rn(f[t]));
    h[4 * t + 1] = __half_as_ushort(__float2half_rz(f[t]));
    h[4 * t + 2] = __half_as_ushort(__float2half_rd(f[t]));
    h[4 * t + 3] = __half_as_ushort(__float2half_ru(f[t]));
    b[2 * t] = __bfloat16_as_ushort(__float2bfloat16_rz(f[t]));
    b[2 * t + 1] = __bfloat16_as_ushort(__float2bfloat16_rn(f[t]));
    __half x = __float2half(f[t]);
    i[2 * t] = __half2int_rz(x);
    i[2 * t + 1] = __half2int_rn(x);
  }
}
"""
    m = CpuModule(src, ["k"], filename="conv.cu", cache_dir=str(tmp_path))
    f = np.array([1.0, 1 + 2 ** -11, 1 + 3 * 2 ** -11, -(1 + 2 ** -11), 2.5, -2.5, 3.5,
                  65520.0, -70000.0, 1e-8, -1e-8, 2.0 ** -25, 0.0, 100.7], np.float32)
    n = len(f)
    h, b, i = np.zeros(4 * n, np.uint16), np.zeros(2 * n, np.uint16), np.zeros(2 * n, np.int32)
    m.launch("k", 1, 32, (f, h, b, i, np.int32(n)))
    h, b, i = h.reshape(n, 4), b.reshape(n, 2), i.reshape(n, 2)
    rn = f.astype(np.float16)
    np.testing.assert_array_equal(h[:, 0], rn.view(np.uint16))
    # directed modes: the neighbour of the nearest value on the required side
    F = f.astype(np.float64)
    R = rn.astype(np.float64)
    inf16 = np.float16(np.inf)
    down = np.where(R > F, np.nextafter(rn, -inf16), rn)
    up = np.where(R < F, np.nextafter(rn, inf16), rn)
    toward0 = np.where(F >= 0, down, up)
    # an overflow toward zero is the largest finite half
    toward0 = np.where(np.isinf(toward0), np.sign(F) * np.float16(65504), toward0)
    down = np.where(np.isposinf(down) & (F < 7e4), np.float16(65504), down)
    up = np.where(np.isneginf(up) & (F > -7e4), np.float16(-65504), up)
    np.testing.assert_array_equal(h[:, 1], np.asarray(toward0, np.float16).view(np.uint16))
    np.testing.assert_array_equal(h[:, 2], np.asarray(down, np.float16).view(np.uint16))
    np.testing.assert_array_equal(h[:, 3], np.asarray(up, np.float16).view(np.uint16))
    np.testing.assert_array_equal(b[:, 0], (f.view(np.uint32) >> 16).astype(np.uint16))
    np.testing.assert_array_equal(b[:, 1], bf16_bits(f))
    hv = rn.astype(np.float64)
    # to int: truncation, and nearest even (2.5 -> 2, -2.5 -> -2, 3.5 -> 4); saturated
    np.testing.assert_array_equal(i[:, 0], np.clip(np.trunc(hv), -2 ** 31, 2 ** 31 - 1))
    np.testing.assert_array_equal(i[:, 1], np.clip(np.rint(hv), -2 ** 31, 2 ** 31 - 1))


def test_cli_float16_argument(tmp_path):
    # `__half *` takes a float16 array (--arg x=float16[N]), a by-value `__half` a number
    src = tmp_path / "scale.cu"
    src.write_text("#include <cuda_fp16.h>\n"
                   "__global__ void scale(__half *x, __half s, int n) {\n"
                   "  int i = threadIdx.x;\n"
                   "  if (i < n) x[i] = x[i] * s;\n"
                   "}\n")
    proc = subprocess.run([sys.executable, "-m", "gmprof", "profile", str(src), "-k", "scale",
                           "--grid", "1", "--block", "64", "--arg", "x=float16[64]:arange",
                           "--arg", "s=0.5", "--arg", "n=64", "--backend", "cpu", "--json"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    (kernel,) = doc["kernels"]
    assert kernel["run"]["outputs_identical"]
    x = next(a for a in kernel["arrays"] if a["name"] == "x")
    # 64 halves in 32 words: each element read and written once, 4 per word
    assert (x["elem_size"], x["counter_unit_bytes"]) == (2, 4)
    assert x["counts"] == [4] * 32 and (x["reads"], x["writes"]) == (64, 64)


def test_float16_array_required_for_half_pointer(prof):
    with pytest.raises(TypeError, match="float16"):
        prof.launch("half_shared", 1, 64, [np.zeros(64, np.float32), 0.5,
                                           np.zeros(64, np.float16)])
