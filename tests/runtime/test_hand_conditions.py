"""A condition joining a thread-index-only test with another test (issue 11): `threadIdx.x < R
&& g >= R`, or the same as nested ifs, the halo load of every stencil. The static count folds the
thread-only test into threadIdx.x's range; when the other test stays undecided the count must
still see both tests and the launch's own addresses (30 reads were reported where 6 happen).
Expected counts derived by hand (a loop over the threads of the launch, below)."""
from __future__ import annotations

import numpy as np
import pytest

from gmprof.mode import Mode
from gmprof.runtime.session import Profiler

MODES = ["default", "SA", "basic", "trace"]
R = 3

SOURCE = r"""
#define R 3
__global__ void halo_and(float *out, const float *in, int n) {
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    float v = 0.0f;
    if (threadIdx.x < R && g >= R) v = in[g - R];
    out[g] = v;
}

__global__ void halo_nested(float *out, const float *in, int n) {
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    float v = 0.0f;
    if (threadIdx.x < R) {
        if (g >= R) v = in[g - R];
    }
    out[g] = v;
}

__global__ void stencil(float *out, const float *in, int n) {
    __shared__ float tile[64 + 2 * R];
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    int l = threadIdx.x + R;
    if (g >= n) return;
    tile[l] = in[g];
    if (threadIdx.x < R) {
        tile[l - R] = g >= R ? in[g - R] : 0.0f;
        if (g + (int)blockDim.x < n) tile[l + blockDim.x] = in[g + blockDim.x];
    }
    __syncthreads();
    float s = 0.0f;
    for (int k = -R; k <= R; k++) s += tile[l + k];
    out[g] = s;
}
"""


@pytest.fixture(scope="module")
def prof():
    return Profiler(text=SOURCE, name="conditions.cu", backend="cpu")


def halo_reads(grid, block):
    """in[g - R] for the first R threads of each block whose g >= R."""
    expect = np.zeros(grid * block, np.int64)
    for b in range(grid):
        for t in range(block):
            g = b * block + t
            if t < R and g >= R:
                expect[g - R] += 1
    return expect


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kernel", ["halo_and", "halo_nested"])
@pytest.mark.parametrize("grid,block", [(2, 8), (5, 32), (3, 40)])
def test_thread_test_joined_with_another(prof, mode, kernel, grid, block):
    n = grid * block
    out, inp = np.zeros(n, np.float32), np.arange(n, dtype=np.float32)
    report = prof.launch(kernel, grid, block, [out, inp, np.int32(n)], mode=Mode.parse(mode))
    expect = halo_reads(grid, block)
    assert expect.sum() == R * (grid - 1)  # block 0's halo threads all have g < R
    arr = report.array("in")
    np.testing.assert_array_equal(arr.counts, expect)
    assert arr.label == "exact" and arr.out_of_range == 0
    assert report.run.outputs_identical


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("grid,block,n", [(4, 32, 128), (4, 32, 100), (3, 64, 150)])
def test_stencil_halo_loads(prof, mode, grid, block, n):
    out, inp = np.zeros(grid * block, np.float32), np.ones(n, np.float32)
    report = prof.launch("stencil", grid, block, [out, inp, np.int32(n)], mode=Mode.parse(mode))
    reads = np.zeros(n, np.int64)
    tile = np.zeros(-(-(64 + 2 * R) * 4 // 4), np.int64)  # words of tile, summed over blocks
    for b in range(grid):
        for t in range(block):
            g, l = b * block + t, t + R
            if g >= n:
                continue
            reads[g] += 1
            tile[l] += 1
            if t < R:
                tile[l - R] += 1
                if g >= R:
                    reads[g - R] += 1
                if g + block < n:
                    reads[g + block] += 1
                    tile[l + block] += 1
            tile[l - R:l + R + 1] += 1  # the 2R + 1 reads of the sum
    arr = report.array("in")
    np.testing.assert_array_equal(arr.counts, reads)
    assert arr.label == "exact" and arr.out_of_range == 0
    np.testing.assert_array_equal(report.array("tile").counts, tile)
    assert report.run.outputs_identical
