"""Shared accesses of every width the hooks take apart (gmprof.cuh add_shared_words): a double
(two aligned words, inline), a 12-byte struct (three words, inline), a 20-byte struct (five
words, the out-of-line loop), a member of a struct (one word). basic and basic-SM count them
with hooks (default counts them by formula, trace by its log). Counts are per 4-byte word;
expected values derived by hand."""
from __future__ import annotations

import numpy as np
import pytest

from gmprof.mode import Mode
from gmprof.runtime.session import Profiler

SOURCE = r"""
struct P3 { int a, b, c; };
struct P5 { int a, b, c, d, e; };
__global__ void widths(const double *in, float *out) {
    __shared__ double sd[8];
    __shared__ P3 s3[4];
    __shared__ P5 s5[4];
    int t = threadIdx.x;
    sd[t] = in[t];
    P3 x = {t, t, t};
    s3[t] = x;
    P5 y = {t, t, t, t, t};
    s5[t] = y;
    __syncthreads();
    out[t] = (float)(sd[(t + 1) % 4] + s3[3 - t].a + s5[0].e);
}
"""


@pytest.fixture(scope="module")
def prof():
    return Profiler(text=SOURCE, name="widths.cu", backend="cpu")


@pytest.mark.parametrize("mode", ["default", "basic", "basic-SM", "trace"])
def test_shared_accesses_of_several_words(prof, mode):
    n = 4
    inp = np.arange(n, dtype=np.float64) + 0.5
    out = np.zeros(n, np.float32)
    report = prof.launch("widths", 1, n, [inp, out], mode=Mode.parse(mode))
    np.testing.assert_array_equal(out, inp[(np.arange(n) + 1) % n] + (3 - np.arange(n)))
    # sd: elements 0..3 (words 0..7) written once and read once, words 8..15 untouched
    np.testing.assert_array_equal(report.array("sd").counts, [2] * 8 + [0] * 8)
    # s3: every word written once; .a (word 0 of each element) read once more
    np.testing.assert_array_equal(report.array("s3").counts, [2, 1, 1] * 4)
    # s5: every word written once; s5[0].e (word 4) read by the four threads
    want = np.ones(20, np.int64)
    want[4] += n
    np.testing.assert_array_equal(report.array("s5").counts, want)
    for name in ("sd", "s3", "s5"):
        assert report.array(name).out_of_range == 0, name
    np.testing.assert_array_equal(report.array("in").counts, np.ones(n))
    np.testing.assert_array_equal(report.array("out").counts, np.ones(n))
    assert report.run.outputs_identical
