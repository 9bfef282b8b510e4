"""A pointer argument with an offset passed to a `__device__` helper (issue 11): `put(a + 16, t)`,
`put_here(a + threadIdx.x)`, `return p[k]` called as `pick(b + 16, t)`. The helper's accesses
are counted on the caller's elements (the argument's offset added to the helper's address), and
a site is tid-invariant only when the pointer is too. Expected counts derived by hand."""
from __future__ import annotations

import numpy as np
import pytest

from gmprof.mode import Mode
from gmprof.runtime.session import Profiler

MODES = ["default", "SA", "basic", "trace"]

SOURCE = r"""
__device__ void put(float *p, int k) { p[k] = 1.0f; }
__device__ void put_here(float *p) { *p = 2.0f; }
__device__ float pick(const float *p, int k) { return p[k]; }
__device__ float first(const float *p) { return p[0]; }
__device__ void put2(float *p, int k) { put(p + 1, k); }

__global__ void offsets(float *a, const float *b, float *c, float *out) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    put(a + 16, t);
    put_here(a + threadIdx.x);
    put_here(c + blockIdx.x);
    out[t] = pick(b + 16, t) + first(b + threadIdx.x) + first(b);
}

__global__ void nested_offsets(float *a, int n) {
    for (int i = 0; i < n; i++) put2(a + i * 4, threadIdx.x % 4);
}

__device__ void moved(float *p, int k) { p += 4; p[k] = 1.0f; }

__global__ void moved_pointers(float *a, float *b, float *c, int n) {
    moved(a, threadIdx.x);
    b += 2;
    b[threadIdx.x] = 3.0f;
    for (int i = 0; i < n; i++) {
        c[threadIdx.x] = 1.0f;
        c += blockDim.x;
    }
}
"""


@pytest.fixture(scope="module")
def prof():
    return Profiler(text=SOURCE, name="helper_offsets.cu", backend="cpu")


def check(report, name, expect):
    arr = report.array(name)
    np.testing.assert_array_equal(arr.counts, expect, err_msg=name)
    assert arr.label == "exact" and arr.out_of_range == 0, name


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("grid,block", [(2, 40), (3, 32)])
def test_offset_pointer_arguments(prof, mode, grid, block):
    threads = grid * block
    a, b = np.zeros(16 + threads, np.float32), np.ones(16 + threads, np.float32)
    c, out = np.zeros(grid, np.float32), np.zeros(threads, np.float32)
    report = prof.launch("offsets", grid, block, [a, b, c, out], mode=Mode.parse(mode))
    expect_a = np.zeros(16 + threads, np.int64)
    expect_b = np.zeros(16 + threads, np.int64)
    for bx in range(grid):
        for tx in range(block):
            t = bx * block + tx
            expect_a[16 + t] += 1  # put(a + 16, t)
            expect_a[tx] += 1      # put_here(a + threadIdx.x)
            expect_b[16 + t] += 1  # pick(b + 16, t)
            expect_b[tx] += 1      # first(b + threadIdx.x)
            expect_b[0] += 1       # first(b)
    check(report, "a", expect_a)
    check(report, "b", expect_b)
    check(report, "c", np.full(grid, block))  # every thread of block bx writes c[bx]
    assert report.run.outputs_identical


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("n", [0, 3])
def test_offsets_through_two_helpers_in_a_loop(prof, mode, n):
    grid, block = 2, 40
    a = np.zeros(4 * n + 5, np.float32)
    report = prof.launch("nested_offsets", grid, block, [a, np.int32(n)], mode=Mode.parse(mode))
    expect = np.zeros(a.size, np.int64)
    for i in range(n):
        for tx in range(block):
            expect[i * 4 + 1 + tx % 4] += grid  # put(p + 1, k) with p = a + 4i, k = tx % 4
    check(report, "a", expect)
    assert report.run.outputs_identical


@pytest.mark.parametrize("mode", MODES)
def test_pointer_parameters_moved_before_the_access(prof, mode):
    """`p += 4; p[k]` in a helper, `b += 2; b[t]` in the kernel, `c += blockDim.x` in a loop:
    the access is at the moved pointer (the formula had it at the argument)."""
    grid, block, n = 2, 8, 3
    a, b, c = (np.zeros(4 + block, np.float32), np.zeros(2 + block, np.float32),
               np.zeros(n * block, np.float32))
    report = prof.launch("moved_pointers", grid, block, [a, b, c, np.int32(n)],
                         mode=Mode.parse(mode))
    check(report, "a", np.r_[np.zeros(4, np.int64), np.full(block, grid)])
    check(report, "b", np.r_[np.zeros(2, np.int64), np.full(block, grid)])
    check(report, "c", np.full(n * block, grid))  # iteration i: c[i * block + threadIdx.x]
    assert report.run.outputs_identical
