"""File-scope `__constant__` and `__device__` arrays reached by counted sites (issue 11): the
counters are aimed at the instrumented module's own copy of each variable (not the native
module's), and a `__device__` variable set by one launch is seen by the next profiled launch.
Expected counts are derived by hand (numpy for the gathers), never from gmprof."""
from __future__ import annotations

import numpy as np
import pytest

from gmprof.mode import Mode
from gmprof.runtime.session import Profiler

EXACT_MODES = ["default", "SA", "basic", "trace", "SA-SM", "basic-SM"]

SOURCE = r"""
__constant__ float c[16];
__device__ int d[16];
__device__ int total;
__global__ void gather(float *out, const int *idx) {
    int t = threadIdx.x;
    out[t] = c[idx[t]];
    d[idx[t]] += 1;
    if (t == 0) total += 1;
}
__global__ void fill(int base) { d[threadIdx.x] = base + threadIdx.x; }
__global__ void read_back(int *o) { o[threadIdx.x] = d[threadIdx.x] + total; }
"""


@pytest.fixture(scope="module")
def prof():
    return Profiler(text=SOURCE, name="globals.cu", backend="cpu")


@pytest.mark.parametrize("mode", EXACT_MODES)
def test_counted_sites_on_file_scope_arrays(prof, mode):
    idx = (np.arange(16) * 3 % 16).astype(np.int32)
    idx[:4] = 0  # four threads read c[0] and update d[0]
    out = np.zeros(16, np.float32)
    report = prof.launch("gather", 1, 16, [out, idx], mode=Mode.parse(mode))
    # each thread reads c[idx[t]] once and reads-and-writes d[idx[t]] once (one site)
    expect = np.bincount(idx, minlength=16)
    assert expect[0] == 4 and expect[3] == 0
    c, d, total = report.array("c"), report.array("d"), report.array("total")
    np.testing.assert_array_equal(c.counts, expect)
    np.testing.assert_array_equal(d.counts, expect)
    assert total.counts.tolist() == [1]  # thread 0 alone
    assert c.out_of_range == d.out_of_range == total.out_of_range == 0
    assert not [w for w in report.warnings if w.kind == "out-of-range"]
    assert c.label == d.label == "exact"
    assert report.run.outputs_identical


def test_device_state_carries_over_between_profiled_launches(prof):
    # fill sets d[t] = 100 + t; the profiled read_back launch must see it (native and
    # instrumented alike: their outputs are compared on every run)
    prof.launch("fill", 1, 16, [np.int32(100)], mode=Mode.parse("basic"))
    for mode in ("basic", "default"):
        o = np.zeros(16, np.int32)
        report = prof.launch("read_back", 1, 16, [o], mode=Mode.parse(mode))
        total = o[0] - 100  # whatever `total` holds from earlier tests, the same for all
        np.testing.assert_array_equal(o, 100 + np.arange(16) + total)
        assert report.run.outputs_identical
        np.testing.assert_array_equal(report.array("d").counts, np.ones(16))
        assert report.array("total").counts.tolist() == [16]
