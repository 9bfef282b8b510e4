"""8- and 16-bit counters (issue 11): counts far below the threshold are exact at every width,
and in enhanced mode a live range's start resets only its own counter (a 32-bit exchange on a
narrow counter cleared its neighbours and the live-range statistics read garbage). Expected
counts and live ranges derived by hand. (Bounds: tests/runtime/test_asan_counters.py.)"""
from __future__ import annotations

import numpy as np
import pytest

from gmprof.mode import Mode
from gmprof.runtime import counters as C
from gmprof.runtime.session import Profiler

SOURCE = r"""
__global__ void stage(float *out, const float *in) {
    __shared__ float tile[64];
    int t = threadIdx.x;
    for (int r = 0; r < 3; r++) {
        tile[t] = in[r * 64 + t];
        __syncthreads();
        float v = tile[(t + 1) % 64];
        __syncthreads();
        out[r * 64 + t] = tile[t] + v;
        __syncthreads();
    }
}
"""


@pytest.fixture(scope="module")
def prof():
    return Profiler(text=SOURCE, name="narrow.cu", backend="cpu")


@pytest.mark.parametrize("bits", [8, 16, 32])
@pytest.mark.parametrize("mode", ["SA-SM-TH", "SM-TH"])
@pytest.mark.parametrize("grid", [1, 3])
def test_live_ranges_with_narrow_counters(prof, bits, mode, grid):
    out, x = np.zeros(192, np.float32), np.ones(192, np.float32)
    report = prof.launch("stage", grid, 64, [out, x],
                         mode=Mode.parse(mode, threshold=200, counter_bits=bits, enhanced=True))
    tile = report.array("tile")
    # each round, each word: loaded from `in` (a live range starts), read by its left
    # neighbour's thread, read by its own and stored to `out`: 3 accesses; 3 rounds, so 3 live
    # ranges of 3 accesses per word per block; the counts are the last live range's
    np.testing.assert_array_equal(tile.counts, np.full(64, 3 * grid))
    assert tile.live_ranges["ranges"] == 3 * 64 * grid
    assert tile.live_ranges["accesses"] == 9 * 64 * grid
    histogram = [0] * len(tile.live_ranges["histogram"])
    histogram[2] = 3 * 64 * grid  # bins: 1, 2, 3, 4, 5-8, ... accesses
    assert tile.live_ranges["histogram"] == histogram


@pytest.mark.parametrize("bits", [8, 16])
@pytest.mark.parametrize("mode", ["basic-TH", "TH", "NA-TH", "SM-TH"])
def test_narrow_counts_below_the_threshold_are_exact(prof, bits, mode):
    out, x = np.zeros(192, np.float32), np.ones(192, np.float32)
    report = prof.launch("stage", 2, 64, [out, x],
                         mode=Mode.parse(mode, threshold=200, counter_bits=bits))
    # in[k] and out[k] once per block; tile words 9 times per block (see above)
    for name, want in (("in", 2), ("out", 2), ("tile", 18)):
        arr = report.array(name)
        if "NA" in mode:
            assert arr.label == "approximate" and (arr.counts <= want).all()
        else:
            assert arr.label == "thresholded" and arr.threshold == 200
            np.testing.assert_array_equal(arr.counts, np.full(arr.counts.size, want))


def test_device_counter_buffers_are_whole_words_on_a_gpu():
    # an 8-bit counter on a GPU is updated by a CAS of its aligned 32-bit word
    for n in range(0, 12):
        for dtype in (np.uint8, np.uint16, np.uint32):
            got = C.padded_counters(n, dtype, "gpu")
            assert got >= max(n, 1) and got * np.dtype(dtype).itemsize % 4 == 0
            assert (got - 1) * np.dtype(dtype).itemsize < max(n, 1) * np.dtype(dtype).itemsize + 3
            assert C.padded_counters(n, dtype, "cpu") == max(n, 1)


@pytest.mark.gpu
@pytest.mark.parametrize("bits", [8, 16])
@pytest.mark.parametrize("mode", ["SA-SM-TH", "basic-TH"])
def test_narrow_counters_on_the_gpu(bits, mode):
    import cupy as cp

    gpu = Profiler(text=SOURCE, name="narrow.cu", backend="gpu")
    out, x = cp.zeros(192, cp.float32), cp.ones(192, cp.float32)
    enhanced = mode.startswith("SA")
    report = gpu.launch("stage", 3, 64, [out, x],
                        mode=Mode.parse(mode, threshold=200, counter_bits=bits,
                                        enhanced=enhanced))
    tile = report.array("tile")
    # 3 blocks; per block each word: 3 rounds of 3 accesses (see above)
    np.testing.assert_array_equal(tile.counts, np.full(64, 9 if enhanced else 27))
    if enhanced:
        assert tile.live_ranges["ranges"] == 3 * 64 * 3
        assert tile.live_ranges["accesses"] == 9 * 64 * 3
    np.testing.assert_array_equal(report.array("in").counts, np.full(192, 3))
