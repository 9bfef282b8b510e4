"""Arrays reached through a device function's pointer parameter that callers bind to different
arrays (gmprof.cuh find_shared_object_at, find_device_object_at: the object a site found last in
the block is tried first, the scan only where it misses; for device objects only where none of
the launch's overlap). The counts are the scan's: a site that alternates between two arrays
misses its hint at every call and still counts each access to its own array; overlapping device
pointers count at the first object, as the scan does. Expected counts by hand; CPU backend, and
the GPU where there is one."""
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


# Device arrays handed to one helper by two call sites (unresolved: found by address; the
# site's last object tried first where no two device objects overlap, FLAG_DEVICE_DISJOINT)
DEVICE = r"""
__device__ void bump(float *s, int i, float v) { s[i] = s[i] + v; }

__global__ void device_hints(float *x, float *y, int rounds) {
    int t = threadIdx.x;
    for (int r = 0; r < rounds; ++r) {
        bump(x, t, 1.0f);
        bump(y, t + 32 * (r % 2), 2.0f);
    }
}
"""


@pytest.mark.parametrize("backend", ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
def test_a_site_alternating_between_two_device_arrays_counts_each(backend):
    from gmprof.runtime import layout as LY

    prof = Profiler(text=DEVICE, name="device_hints.cu", backend=backend)
    x, y = np.zeros(32, np.float32), np.zeros(64, np.float32)
    report = prof.launch("device_hints", 1, 32, [x, y, np.int32(ROUNDS)],
                         mode=Mode.parse("default"))
    np.testing.assert_array_equal(x, ROUNDS)          # +1 a round
    np.testing.assert_array_equal(y, ROUNDS)          # +2 every other round
    arrays = {a.name: a for a in report.arrays}
    # x[t]: read and written each round; y's words t and t + 32: each in half the rounds
    np.testing.assert_array_equal(arrays["x"].counts, np.full(32, 2 * ROUNDS))
    np.testing.assert_array_equal(arrays["y"].counts, np.full(64, ROUNDS))
    assert arrays["x"].out_of_range == arrays["y"].out_of_range == 0
    # the flag's test, by hand: disjoint, touching, overlapping, an unknown size (0 bytes)
    assert LY.device_disjoint([(0, 128), (128, 256)])
    assert not LY.device_disjoint([(0, 128), (64, 256)])
    assert LY.device_disjoint([(0, 128), (64, 0), (256, 4)])


# A whole program whose kernel is handed overlapping pointers (`a` and `a + 16`): no hint is
# used (the host's flag is off) and each access counts at the object the scan finds first
OVERLAP = r"""
#include <cstdio>
__device__ void bump(float *s, int i) { s[i] = s[i] + 1.0f; }

__global__ void twice(float *a, float *b, float *c) {
    int t = threadIdx.x;
    bump(a, t);
    bump(b, t);
    bump(c, t);
}

int main() {
    float *a, *c, h[48];
    cudaMalloc(&a, 48 * sizeof(float));
    cudaMalloc(&c, 32 * sizeof(float));
    cudaMemset(a, 0, 48 * sizeof(float));
    cudaMemset(c, 0, 32 * sizeof(float));
    twice<<<1, 16>>>(a, a + 16, c);
    cudaMemcpy(h, a, sizeof h, cudaMemcpyDeviceToHost);
    printf("%g %g %g\n", h[0], h[16], h[47]);
    return 0;
}
"""


@pytest.mark.slow
def test_overlapping_device_objects_in_a_whole_program_count_at_the_first(tmp_path):
    import json
    import shutil
    import subprocess
    import sys

    if shutil.which("g++") is None:
        pytest.skip("needs g++")
    src = tmp_path / "overlap.cu"
    src.write_text(OVERLAP)
    r = subprocess.run([sys.executable, "-m", "gmprof", "run", "--backend", "cpu", "--json",
                        str(src)], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "1 1 0\n" in r.stderr  # a[0..15] and a[16..31] once each, a[32..47] never
    run = json.loads(r.stdout[r.stdout.index("{"):])
    arrays = {a["name"]: a for k in run["kernels"] for a in k["arrays"]}
    # bump(a, t) and bump(b, t): b's elements lie in a (its first 48 floats hold b's 16), so
    # the scan finds a first for both: a's words 0-31 read and written once each
    assert arrays["a"]["counts"][:32] == [2] * 32 and arrays["a"]["counts"][32:] == [0] * 16
    assert sum(arrays["b"]["counts"]) == 0
    assert arrays["c"]["counts"] == [2] * 16 + [0] * 16
