"""Accesses of every width the hooks take apart. Shared (gmprof.cuh add_shared_words, counts per
4-byte word): a double (two aligned words, inline), a 12-byte struct (three words, inline), a
20-byte struct (five words, the out-of-line loop), a member of a struct (one word). Device
(counts per element): a double of a double array (one element, inline), a float4 of a float
array and a double2 of a double array (several elements, count_elements out of line). basic and
basic-SM count them with hooks (default by formula where it can, trace by its log). Expected
values derived by hand."""
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

__global__ void vectors(const float *f, const double *d, float *out) {
    int t = threadIdx.x;
    float4 v = reinterpret_cast<const float4 *>(f)[t];
    double2 w = reinterpret_cast<const double2 *>(d)[t];
    out[t] = v.x + v.y + v.z + v.w + (float)(w.x + w.y + d[t]);
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


@pytest.mark.parametrize("mode", ["default", "basic", "basic-SM", "trace"])
def test_device_accesses_of_several_elements(prof, mode):
    n = 4
    f = np.arange(4 * n, dtype=np.float32)
    d = np.arange(2 * n, dtype=np.float64)
    out = np.zeros(n, np.float32)
    report = prof.launch("vectors", 1, n, [f, d, out], mode=Mode.parse(mode))
    t = np.arange(n)
    np.testing.assert_array_equal(out, f.reshape(n, 4).sum(axis=1) + d[2 * t] + d[2 * t + 1] + d[t])
    # thread t reads f[4t..4t+3] (one float4), d[2t], d[2t+1] (one double2) and d[t]
    np.testing.assert_array_equal(report.array("f").counts, np.ones(4 * n))
    want_d = np.ones(2 * n, np.int64)
    want_d[:n] += 1
    np.testing.assert_array_equal(report.array("d").counts, want_d)
    np.testing.assert_array_equal(report.array("out").counts, np.ones(n))
    for name in ("f", "d", "out"):
        assert report.array(name).out_of_range == 0, name
    assert report.run.outputs_identical
