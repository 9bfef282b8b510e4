"""Lanes that meet at a tid-invariant site at different addresses (issue 11): a per-lane
`continue` before the access puts the lanes of a warp in different iterations, so one leader
per converged group must not count for lanes at another address (the CPU backend groups lanes
by call site; a GPU may too). A weighted loop-invariant site whose trip count differs per lane
must not count the leader's trip count for all. Expected counts derived by hand."""
from __future__ import annotations

import numpy as np
import pytest

from gmprof.mode import Mode
from gmprof.runtime.session import Profiler

MODES = ["default", "SA", "basic", "trace", "SA-SM", "SA-NA", "SA-NA-SM"]

SOURCE = r"""
__global__ void skip_below(float *out, const float *c, int n) {
    int t = threadIdx.x;
    float s = 0.0f;
    for (int j = 0; j < n; j++) {
        if (j < t) continue;
        s += c[j];
    }
    out[t] = s;
}

__global__ void skip_below_shared(float *out, const float *c, int n) {
    __shared__ float tile[64];
    int t = threadIdx.x;
    for (int j = t; j < 64; j += blockDim.x) tile[j] = c[j];
    __syncthreads();
    float s = 0.0f;
    for (int j = 0; j < n; j++) {
        if (j < t) continue;
        s += tile[j];
    }
    out[t] = s;
}

__global__ void own_trip_count(float *out, const float *c) {
    int t = threadIdx.x;
    float s = 0.0f;
    for (int j = 0; j < t; j++) s += c[5];
    out[t] = s;
}
"""


@pytest.fixture(scope="module")
def prof():
    return Profiler(text=SOURCE, name="lanes.cu", backend="cpu")


def exact_or_na(report, name, expect, mode):
    arr = report.array(name)
    if "NA" in mode and arr.label != "exact":
        # non-atomic updates may lose counts; never more than the truth, and so labelled
        assert arr.label == "approximate"
        assert (arr.counts <= expect).all()
    else:
        # (under NA an array only static formulas reach is exact: it must then be)
        assert arr.label == "exact"
        np.testing.assert_array_equal(arr.counts, expect)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("block", [40, 64, 20])
def test_continue_before_tid_invariant_device_access(prof, mode, block):
    n, grid = 48, 2
    out, c = np.zeros(grid * block, np.float32), np.ones(n, np.float32)
    report = prof.launch("skip_below", grid, block, [out, c, np.int32(n)],
                         mode=Mode.parse(mode))
    # thread t of each block reads c[j] for t <= j < n
    expect = grid * np.array([min(j + 1, block) for j in range(n)])
    exact_or_na(report, "c", expect, mode)
    assert report.run.outputs_identical


@pytest.mark.parametrize("mode", MODES)
def test_continue_before_tid_invariant_shared_access(prof, mode):
    block, grid, n = 40, 3, 64
    out, c = np.zeros(grid * block, np.float32), np.ones(n, np.float32)
    report = prof.launch("skip_below_shared", grid, block, [out, c, np.int32(n)],
                         mode=Mode.parse(mode))
    # each word written once per block (the fill loop), read by threads t <= j
    expect = grid * (1 + np.array([min(j + 1, block) for j in range(n)]))
    exact_or_na(report, "tile", expect, mode)


@pytest.mark.parametrize("mode", MODES)
def test_per_lane_trip_count_of_a_loop_invariant_site(prof, mode):
    block, grid = 48, 2
    out, c = np.zeros(grid * block, np.float32), np.ones(8, np.float32)
    report = prof.launch("own_trip_count", grid, block, [out, c], mode=Mode.parse(mode))
    expect = np.zeros(8, np.int64)
    expect[5] = grid * sum(range(block))  # thread t reads c[5] t times
    exact_or_na(report, "c", expect, mode)


@pytest.mark.gpu
@pytest.mark.parametrize("mode", ["default", "SA", "SA-SM", "basic"])
def test_continue_before_tid_invariant_access_on_the_gpu(mode):
    import cupy as cp

    gpu = Profiler(text=SOURCE, name="lanes.cu", backend="gpu")
    n, grid, block = 48, 2, 40
    out, c = cp.zeros(grid * block, cp.float32), cp.ones(n, cp.float32)
    report = gpu.launch("skip_below", grid, block, [out, c, np.int32(n)],
                        mode=Mode.parse(mode))
    expect = grid * np.array([min(j + 1, block) for j in range(n)])
    np.testing.assert_array_equal(report.array("c").counts, expect)
    assert report.array("c").label == "exact"
