"""Byte arrays whose size is not a multiple of their 4-byte counters (issue 11): an access at or
past the array's last byte is out of range even inside its last counter word (the static
formula counted those padding bytes as in range: 74 where 70 are), in every mode, for device
and shared arrays. Expected counts derived by hand."""
from __future__ import annotations

import numpy as np
import pytest

from gmprof.mode import Mode
from gmprof.runtime import layout as LY
from gmprof.runtime.session import Profiler

MODES = ["default", "SA", "basic", "trace", "SA-SM", "basic-SM"]

SOURCE = r"""
__global__ void bytes(unsigned char *out, const unsigned char *a) {
    __shared__ unsigned char s[70];
    int t = threadIdx.x;
    if (t < 70) s[t] = a[t];
    __syncthreads();
    out[blockIdx.x * blockDim.x + t] = s[t] + a[t];
}
"""


@pytest.fixture(scope="module")
def prof():
    return Profiler(text=SOURCE, name="bytes.cu", backend="cpu")


def per_word(per_byte: np.ndarray) -> np.ndarray:
    """Counts per byte -> per 4-byte counter (the last one partial)."""
    padded = np.zeros(-(-len(per_byte) // 4) * 4, np.int64)
    padded[:len(per_byte)] = per_byte
    return padded.reshape(-1, 4).sum(axis=1)


@pytest.mark.parametrize("mode", MODES)
def test_bytes_past_the_end_are_out_of_range(prof, mode):
    grid, block = 2, 74  # threads 70..73 read a[t] and s[t] past their 70 bytes
    out, a = np.zeros(grid * block, np.uint8), np.arange(70, dtype=np.uint8)
    report = prof.launch("bytes", grid, block, [out, a], mode=Mode.parse(mode))
    # per block: a[t] read by threads t < 70 twice (the fill, the sum); s[t] written by
    # threads t < 70 and read by them; 4 threads read past each array's end
    in_range = np.full(70, 2 * grid)
    np.testing.assert_array_equal(report.array("a").counts, per_word(in_range))
    np.testing.assert_array_equal(report.array("s").counts, per_word(in_range))
    assert report.array("a").counts.sum() == 140 * grid
    assert report.array("a").out_of_range == 4 * grid
    assert report.array("s").out_of_range == 4 * grid
    np.testing.assert_array_equal(report.array("out").counts, per_word(np.ones(grid * block)))
    assert report.array("out").out_of_range == 0


def test_count_units_stops_at_the_last_byte():
    # 70-byte object, 4-byte units: bytes 70 and 71 are padding of unit 17
    counts, oor = LY.count_units(np.arange(74), 1, 18, 4, nbytes=70)
    assert counts.tolist() == [4] * 17 + [2] and oor == 4
    counts, oor = LY.count_units(np.arange(74), 1, 18, 4, per_word=False, touched=1,
                                 weights=np.full(74, 3), nbytes=70)
    assert counts.tolist() == [12] * 17 + [6] and oor == 12
