"""Static formulas that hold at scale: the shapes that fell off their formula at the samples'
large sizes (issue 24) stay static when enumerating them would pass the budget. The budget is
lowered here so that small launches (CPU backend, CI) stand for large ones; the counts are
derived by hand or with a plain numpy model of the loops, and the sites must still be counted
from their formulas ("static"), never on the device.

- bo_v1's lattice: a triangular loop (`for j = n; j > 0; j -= 2`, `for i = tid; i < j; ...`),
  one block per option, its rows at `opt * (n + 1)`: one block's histogram, copied at each
  block's offset (static_blocks._shifted_copies);
- em_v1's and jcb_v2's grid-stride loops (`for t = blockIdx.x * C; t < N; t += gridDim.x * C`):
  virtual blocks, one a trip (static_gridstride.py).
"""
from __future__ import annotations

import numpy as np
import pytest

from gmprof.mode import Mode
from gmprof.runtime import static_blocks, static_enumerate
from gmprof.runtime.session import Profiler

SOURCE = r"""
__global__ void lattice(float *rows, int n) {
    int base = blockIdx.x * (n + 1);
    for (int i = threadIdx.x; i <= n; i += blockDim.x)
        rows[base + i] = 1.0f;
    __syncthreads();
    for (int j = n; j > 0; j -= 2) {
        for (int i = threadIdx.x; i < j; i += blockDim.x)
            rows[base + i] = 0.5f * (rows[base + i] + rows[base + i + 1]);
        __syncthreads();
    }
}

#define TILE 64
__global__ void strided(float *out, const float *in, int n) {
    for (int first = blockIdx.x * TILE; first < n; first += gridDim.x * TILE) {
        for (int i = threadIdx.x; i < TILE; i += blockDim.x)
            if (first + i < n)
                out[first + i] = 2.0f * in[first + i];
    }
}

__global__ void tstride(float *y, const float *x, int n) {
    __shared__ float sh[64];
    for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < n; t += gridDim.x * blockDim.x) {
        sh[threadIdx.x] = x[t];
        y[t] += sh[threadIdx.x];
    }
}
"""


@pytest.fixture
def small_budgets(monkeypatch):
    # past these, the old methods gave up (Unknown) and the site was counted on the device
    monkeypatch.setattr(static_enumerate, "ENUMERATION_BUDGET", 500)
    monkeypatch.setattr(static_enumerate, "POINTS_BUDGET", 1_000)
    from gmprof import host_cache
    monkeypatch.setattr(host_cache, "load", lambda *a, **k: None)
    monkeypatch.setattr(host_cache, "store", lambda *a, **k: None)


def lattice_model(options: int, n: int, threads: int) -> tuple[np.ndarray, np.ndarray]:
    """(reads, writes) per element of rows, by walking the loops for one block (every block
    does the same at its own base)."""
    reads = np.zeros(n + 1, np.int64)
    writes = np.zeros(n + 1, np.int64)
    writes[:] += 1  # the leaves
    for j in range(n, 0, -2):
        i = np.arange(j)
        np.add.at(reads, i, 1)
        np.add.at(reads, i + 1, 1)
        np.add.at(writes, i, 1)
    return np.tile(reads, options), np.tile(writes, options)


@pytest.mark.parametrize("mode", ["default", "SA"])
def test_triangular_lattice_per_block_rows_stay_static(small_budgets, mode):
    prof = Profiler(text=SOURCE, name="scale.cu", backend="cpu")
    options, n, threads = 40, 30, 8
    rows = np.zeros(options * (n + 1), np.float32)
    report = prof.launch("lattice", options, threads, [rows, np.int32(n)],
                         mode=Mode.parse(mode))
    reads, writes = lattice_model(options, n, threads)
    np.testing.assert_array_equal(report.array("rows").counts, reads + writes)
    assert report.array("rows").reads == int(reads.sum())
    assert report.array("rows").writes == int(writes.sum())
    assert all(s.how == "static" for s in report.sites), \
        [(s.text, s.how) for s in report.sites]


@pytest.mark.parametrize("grid,n", [(3, 1000), (7, 64 * 21), (50, 130)])
def test_grid_stride_loop_counts_as_virtual_blocks(small_budgets, grid, n):
    prof = Profiler(text=SOURCE, name="scale.cu", backend="cpu")
    inp = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    report = prof.launch("strided", grid, 32, [out, inp, np.int32(n)],
                         mode=Mode.parse("default"))
    np.testing.assert_array_equal(out, 2 * inp)
    # every element is one tile's, read once and written once, whatever the grid
    np.testing.assert_array_equal(report.array("in").counts, np.ones(n, np.int64))
    np.testing.assert_array_equal(report.array("out").counts, np.ones(n, np.int64))
    assert all(s.how == "static" for s in report.sites), \
        [(s.text, s.how) for s in report.sites]


@pytest.mark.parametrize("grid,block,n", [(3, 32, 1000), (5, 64, 64 * 5 * 3), (40, 32, 77)])
@pytest.mark.parametrize("mode", ["default", "SA"])
def test_thread_grid_stride_loop_counts_as_virtual_blocks(small_budgets, grid, block, n, mode):
    prof = Profiler(text=SOURCE, name="scale.cu", backend="cpu")
    x = np.arange(n, dtype=np.float32)
    y = np.ones(n, np.float32)
    report = prof.launch("tstride", grid, block, [y, x, np.int32(n)], mode=Mode.parse(mode))
    np.testing.assert_array_equal(y, 1 + x)
    # element t is one thread's (t mod blockDim.x in some block): x read once, y read-written
    np.testing.assert_array_equal(report.array("x").counts, np.ones(n, np.int64))
    np.testing.assert_array_equal(report.array("y").counts, np.ones(n, np.int64))
    # sh[threadIdx.x]: written and read once for each t of a thread with that index
    want = 2 * np.bincount(np.arange(n) % block, minlength=64)
    np.testing.assert_array_equal(report.array("sh").counts, want)
    assert all(s.how == "static" for s in report.sites), \
        [(s.text, s.how) for s in report.sites]


def test_copies_at_a_constant_step_add_in_columns():
    counts = np.zeros(20, np.int64)
    # copies of [1, 2, 3] at 0, 2, 4, 6 (overlapping: step 2 < width 3), 1 and 2 blocks each
    static_blocks._add_copies(counts, np.array([0, 2, 4, 6]), np.array([1, 2, 1, 2]),
                              np.array([1, 2, 3]))
    want = np.zeros(20, np.int64)
    for s, m in zip([0, 2, 4, 6], [1, 2, 1, 2]):
        want[s:s + 3] += m * np.array([1, 2, 3])
    np.testing.assert_array_equal(counts, want)
