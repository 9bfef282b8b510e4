"""Memory read in a loop's condition (issue 11): `for (j = 0; j < len[t]; j++)`, the CSR bound
`k < rowPtr[r + 1]`, `while (i < n && c[i] != 0)`. A condition runs once more than the body
(once when the body never runs); it was weighted as a loop-invariant site of its own loop, in
the body's first iteration, and counted 0. Expected counts derived by hand (numpy)."""
from __future__ import annotations

import numpy as np
import pytest

from gmprof.mode import Mode
from gmprof.runtime.session import Profiler

MODES = ["default", "SA", "basic", "trace"]

SOURCE = r"""
__global__ void lengths(float *out, const int *len, const float *w) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (int j = 0; j < len[t]; j++) s += w[j];
    out[t] = s;
}

__global__ void csr(float *y, const int *rowPtr, const int *col, const float *val,
                    const float *x, int rows) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float s = 0.0f;
    for (int k = rowPtr[r]; k < rowPtr[r + 1]; k++) s += val[k] * x[col[k]];
    y[r] = s;
}

__global__ void until_zero(int *out, const int *c, int n) {
    int i = 0;
    while (i < n && c[i] != 0) i++;
    out[blockIdx.x * blockDim.x + threadIdx.x] = i;
}

__global__ void inner_bound(float *out, const int *lim, int m) {
    float s = 0.0f;
    for (int i = 0; i < m; i++) {
        for (int j = 0; j < lim[1]; j++) s += 1.0f;
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
"""


@pytest.fixture(scope="module")
def prof():
    return Profiler(text=SOURCE, name="loop_conditions.cu", backend="cpu")


def check(report, name, expect):
    arr = report.array(name)
    np.testing.assert_array_equal(arr.counts, expect, err_msg=name)
    assert arr.label == "exact" and arr.out_of_range == 0, name


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("grid,block", [(1, 8), (2, 40)])
def test_read_in_for_condition(prof, mode, grid, block):
    n = grid * block
    length = (np.arange(n) % 5).astype(np.int32)  # 0..4: some bodies never run
    w, out = np.ones(8, np.float32), np.zeros(n, np.float32)
    report = prof.launch("lengths", grid, block, [out, length, w], mode=Mode.parse(mode))
    # thread t tests j < len[t] len[t] + 1 times; reads w[j] for j < len[t]
    check(report, "len", length + 1)
    check(report, "w", np.array([(length > j).sum() for j in range(8)]))
    assert report.run.outputs_identical and (out == length).all()


@pytest.mark.parametrize("mode", MODES)
def test_csr_row_bound(prof, mode):
    rows, grid, block = 50, 2, 32
    nnz_per_row = (np.arange(rows) * 7) % 4  # 0..3
    row_ptr = np.concatenate([[0], np.cumsum(nnz_per_row)]).astype(np.int32)
    nnz = int(row_ptr[-1])
    col = ((np.arange(nnz) * 5) % 11).astype(np.int32)
    val, x = np.ones(nnz, np.float32), np.ones(11, np.float32)
    y = np.zeros(rows, np.float32)
    report = prof.launch("csr", grid, block, [y, row_ptr, col, val, x, np.int32(rows)],
                         mode=Mode.parse(mode))
    # row r (r < rows): rowPtr[r] once (the init), rowPtr[r + 1] nnz(r) + 1 times (the test)
    expect = np.zeros(rows + 1, np.int64)
    expect[:rows] += 1
    expect[1:] += nnz_per_row + 1
    check(report, "rowPtr", expect)
    check(report, "val", np.ones(nnz, np.int64))
    check(report, "col", np.ones(nnz, np.int64))
    check(report, "x", np.bincount(col, minlength=11))
    assert report.run.outputs_identical and (y == nnz_per_row).all()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("zero_at", [0, 5, None])
def test_read_in_while_condition(prof, mode, zero_at):
    n, grid, block = 12, 2, 40
    c = np.ones(n, np.int32)
    if zero_at is not None:
        c[zero_at] = 0
    out = np.zeros(grid * block, np.int32)
    report = prof.launch("until_zero", grid, block, [out, c, np.int32(n)], mode=Mode.parse(mode))
    # every thread reads c[0..z] (z: the first zero) or, with no zero, c[0..n-1]
    last = zero_at if zero_at is not None else n - 1
    expect = np.where(np.arange(n) <= last, grid * block, 0)
    check(report, "c", expect)
    assert report.run.outputs_identical


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("bound", [0, 3])
def test_read_in_inner_condition_of_invariant_loop(prof, mode, bound):
    m, grid, block = 4, 3, 64
    lim = np.array([9, bound], np.int32)
    out = np.zeros(grid * block, np.float32)
    report = prof.launch("inner_bound", grid, block, [out, lim, np.int32(m)],
                         mode=Mode.parse(mode))
    # each thread, each of the m outer iterations, tests j < lim[1] lim[1] + 1 times
    check(report, "lim", np.array([0, grid * block * m * (bound + 1)]))
    assert report.run.outputs_identical
