"""Shared arrays reached through a device function's pointer parameter that callers bind to
different arrays (gmprof.cuh find_shared_object_at: the slot a site found last in the block is
tried first, the scan only where it misses). The counts are the scan's: a site that alternates
between two arrays misses its hint at every call and still counts each access to its own array.
Expected counts by hand; CPU backend, and the GPU where there is one."""
from __future__ import annotations

import numpy as np
import pytest

from gmprof.mode import Mode
from gmprof.runtime.session import Profiler
from tests.runtime.test_deferred_walks import keep_texts

# bump and get are handed `a` and `b` in turn: their sites cannot name one array
SOURCE = r"""
__device__ void bump(float *s, int i, float v) { s[i] = s[i] + v; }
__device__ float get(const float *s, int i) { return s[i]; }

__global__ void hints(float *out, int rounds) {
    __shared__ float a[64];
    __shared__ float b[32];
    int t = threadIdx.x;
    a[t] = 0.0f; a[t + 32] = 0.0f; b[t] = 0.0f;
    __syncthreads();
    for (int r = 0; r < rounds; ++r) {
        bump(a, (t + r) % 64, 1.0f);
        bump(b, t, 2.0f);
        __syncthreads();
    }
    out[blockIdx.x * 32 + t] = get(a, t) + get(b, t) + get(a, 63 - t);
}
"""
BLOCKS, ROUNDS = 3, 64


def profile(backend, texts=None, monkeypatch=None):
    if monkeypatch is not None:
        keep_texts(monkeypatch, texts)
    prof = Profiler(text=SOURCE, name="hints.cu", backend=backend)
    out = np.zeros(32 * BLOCKS, np.float32)
    report = prof.launch("hints", BLOCKS, 32, [out, np.int32(ROUNDS)], mode=Mode.parse("default"))
    # a[t] and a[63 - t] each got 1.0 from 32 of the 64 rounds, b[t] 2.0 from every round
    np.testing.assert_array_equal(out, 32.0 + 128.0 + 32.0)
    return {x.name: x for x in report.arrays}


def check(arrays):
    a, b = arrays["a"], arrays["b"]
    # a: written once at the start, then thread t adds to word (t + r) mod 64 in round r: over
    # 64 rounds each word 32 times, read and written; read once more by get(a, t) (words 0-31)
    # or get(a, 63 - t) (words 32-63)
    np.testing.assert_array_equal(a.counts, np.full(64, (1 + 32 + 32 + 1) * BLOCKS))
    # b: word t written once, then read and written in every round, read once by get(b, t)
    np.testing.assert_array_equal(b.counts, np.full(32, (1 + 2 * ROUNDS + 1) * BLOCKS))
    assert a.out_of_range == b.out_of_range == 0
    assert int(arrays["out"].writes) == 32 * BLOCKS


def test_a_site_alternating_between_two_shared_arrays_counts_each(monkeypatch):
    texts = []
    check(profile("cpu", texts, monkeypatch))
    text = texts[-1][3]
    # the helpers' sites are the unresolved kind (OBJ -1: found by address at run time)
    assert "::gmprof::dm<" in text and ", -1, ::gmprof::EACH>(&(s[i])" in text


@pytest.mark.gpu
def test_a_site_alternating_between_two_shared_arrays_counts_each_on_a_gpu():
    check(profile("gpu"))
