"""A shared array sized by a local constant of its kernel (`constexpr size_t S = 4;
__shared__ float a[S][B];`, as cuda-samples' globalToShmemAsyncCopy sizes its pipeline
stages): its shape is known at the launch. It was refused ('the size of shared array a ([S][B])
is not known at launch'), on `gmprof profile` and in whole programs alike. Counts by hand."""
from __future__ import annotations

import numpy as np
import pytest

from gmprof.mode import Mode
from gmprof.runtime.session import Profiler

SOURCE = r"""
template <int B>
__global__ void staged(float *o) {
  constexpr size_t S = 4;
  __shared__ float a[S][B];
  a[threadIdx.x % S][threadIdx.x] = 1.0f;
  __syncthreads();
  o[threadIdx.x] = a[threadIdx.x % S][threadIdx.x];
}
__global__ void halves(float *o) {
  const int H = 2, W = 16 * H;
  __shared__ float a[H * 2][W];
  a[threadIdx.x / W][threadIdx.x % W] = 1.0f;
  __syncthreads();
  o[threadIdx.x] = a[threadIdx.x / W][threadIdx.x % W];
}
"""


@pytest.fixture(scope="module")
def prof():
    return Profiler(text=SOURCE, name="local_constants.cu", backend="cpu")


@pytest.mark.parametrize("mode", ["default", "basic"])
def test_shape_from_a_local_constant(prof, mode):
    o = np.zeros(32, np.float32)
    report = prof.launch("staged<32>", 1, 32, [o], mode=Mode.parse(mode))
    a = report.array("a")
    # a is 4 x 32 words; thread x writes and reads word (x % 4, x): 2 accesses on 32 words
    expect = np.zeros((4, 32), np.int64)
    x = np.arange(32)
    expect[x % 4, x] = 2
    np.testing.assert_array_equal(np.asarray(a.counts).reshape(4, 32), expect)
    assert a.label == "exact"


@pytest.mark.parametrize("mode", ["default", "basic"])
def test_shape_from_local_constant_expressions(prof, mode):
    o = np.zeros(128, np.float32)
    report = prof.launch("halves", 1, 128, [o], mode=Mode.parse(mode))
    a = report.array("a")
    # H = 2, W = 32: a is 4 x 32 words, thread x on (x / 32, x % 32): every word twice
    np.testing.assert_array_equal(a.counts, np.full(128, 2))


# sized by object-like macros of constants, one of them a product (cuda-samples' histogram256:
# `__shared__ uint s_Hist[HISTOGRAM256_THREADBLOCK_MEMORY]`, `(WARP_COUNT * 256)`), which the
# parser alone reads as a cast to a pointer: refused as not known at launch before
MACROS = r"""
#define WARPS 2
#define BINS 32
#define WORDS (WARPS * BINS)
__global__ void binned(float *o) {
  __shared__ unsigned h[WORDS];
  h[threadIdx.x] = 0u;
  __syncthreads();
  atomicAdd(&h[(threadIdx.x >> 5) * BINS + (threadIdx.x & 3)], 1u);
  __syncthreads();
  o[threadIdx.x] = (float)h[threadIdx.x];
}
"""


def test_shape_from_object_like_macros():
    prof = Profiler(text=MACROS, name="macros.cu", backend="cpu")
    o = np.zeros(64, np.float32)
    report = prof.launch("binned", 1, 64, [o])
    h = report.array("h")
    # 64 words: each written once and read once by its thread (2); the atomics of warp w go
    # to words 32 w + 0..3, 8 lanes each, one access per atomic (8 more)
    expect = np.full(64, 2)
    for w in range(2):
        expect[32 * w: 32 * w + 4] += 8
    np.testing.assert_array_equal(h.counts, expect)
    np.testing.assert_array_equal(o[[0, 1, 2, 3, 4, 32, 36]], [8, 8, 8, 8, 0, 8, 0])
