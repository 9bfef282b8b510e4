"""`--sampling RATE` scales only what was sampled (issue 11): a static formula's counts are
exact and added unscaled; an array is labelled sampled (with its rate) only when a sampled
site reaches it, and each site says whether it was sampled. Expected counts by hand."""
from __future__ import annotations

import numpy as np
import pytest

from gmprof.mode import Mode
from gmprof.report.document import short_label
from gmprof.runtime.session import Profiler

SOURCE = r"""
__global__ void mix(float *out, const float *a, const int *idx) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    out[t] = a[t] + a[idx[t]];
}
"""
N, GRID, BLOCK = 4096, 32, 128


@pytest.fixture(scope="module")
def prof():
    return Profiler(text=SOURCE, name="sampling.cu", backend="cpu")


def run(prof, mode):
    out, a = np.zeros(N, np.float32), np.ones(N, np.float32)
    idx = np.zeros(N, np.int32)  # every thread's gather reads a[0]
    return prof.launch("mix", GRID, BLOCK, [out, a, idx], mode=mode)


@pytest.mark.parametrize("rate", [0.5, 0.1, 0.001])
@pytest.mark.parametrize("mode", ["default", "SA", "SA-NA-SM"])
def test_static_counts_are_not_scaled(prof, mode, rate):
    report = run(prof, Mode.parse(mode, sampling=rate))
    out, a, idx = report.array("out"), report.array("a"), report.array("idx")
    # out[t], a[t], idx[t]: one access per element each, proven statically: exact, unscaled
    for arr in (out, idx):
        np.testing.assert_array_equal(arr.counts, np.ones(N))
        assert arr.label == "exact" and arr.sampling is None
    assert (out.writes, idx.reads) == (N, N)
    # a[1:] is read only by a[t] (static); a[0] also by every gather (sampled)
    np.testing.assert_array_equal(a.counts[1:], np.ones(N - 1))
    assert a.label == "sampled" and a.sampling == rate
    assert short_label(a.label, a.threshold, a.sampling) == f"sampled rate {rate:g}"
    # a[0] = 1 + (sampled gathers) / rate: a multiple of 1/rate away from 1, within 6 sigma
    sampled = (a.counts[0] - 1) * rate
    assert abs(sampled - round(sampled)) < 1e-6
    sigma = np.sqrt(N * rate * (1 - rate)) / rate
    assert abs(a.counts[0] - (N + 1)) <= 6 * sigma + 1 / rate
    how = {s.text: s.how for s in report.sites}
    assert how == {"out[t]": "static", "a[t]": "static", "a[idx[t]]": "sampled",
                   "idx[t]": "static"}


def test_every_site_sampled_in_basic_mode(prof):
    report = run(prof, Mode.parse("basic", sampling=0.5))
    assert {a.label for a in report.arrays} == {"sampled"}
    assert {s.how for s in report.sites} == {"sampled"}


def test_without_sampling_everything_is_exact(prof):
    report = run(prof, Mode.parse("default"))
    assert {a.label for a in report.arrays} == {"exact"}
    expect = np.ones(N)
    expect[0] += N
    np.testing.assert_array_equal(report.array("a").counts, expect)


def test_merged_launches_keep_the_weaker_label(prof):
    exact = run(prof, Mode.parse("default"))
    sampled = run(prof, Mode.parse("default", sampling=0.5))
    merged = exact.merge(sampled)
    assert merged.array("a").label == "sampled" and merged.array("a").sampling == 0.5
    assert merged.array("out").label == "exact"
