"""Counters that cannot wrap silently (runtime/widen.py), on the CPU backend.

A launch that would pass 2^32 on one counter takes minutes on the CPU backend, so the test build
starts every 32-bit counter at `widen.counter_origin` = 2^32 - HEADROOM (counters.describe) and
takes the origin off again without wrapping (counters.read_back): a counter that received
HEADROOM counts or more really wraps in the device's 32-bit arithmetic and decodes as a count
2^32 too small. The bound check sees the same headroom, so the launch must run again with
64-bit counters and report the exact counts. Without the check (may_wrap disabled) the same
launch reports wrong counts: the emulation bites. Expected values derived by hand.
"""
from __future__ import annotations

import numpy as np
import pytest

from gmprof.mode import Mode
from gmprof.runtime import layout as LY
from gmprof.runtime import session as session_module
from gmprof.runtime import widen
from gmprof.runtime.session import Profiler

SOURCE = r"""
__global__ void hot(const float *x, const int *idx, float *out, int iters) {
    // every thread reads x[idx[k]] (idx all zero: one hot element) iters times
    float s = 0.0f;
    for (int k = 0; k < iters; ++k) s += x[idx[k]];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

__global__ void hist(const int *idx, unsigned *out, int iters) {
    // a data-dependent shared histogram: every thread adds to word idx[k] & 31
    __shared__ unsigned h[32];
    if (threadIdx.x < 32) h[threadIdx.x] = 0;
    __syncthreads();
    for (int k = 0; k < iters; ++k) atomicAdd(&h[idx[k] & 31], 1u);
    __syncthreads();
    if (threadIdx.x < 32) out[blockIdx.x * 32 + threadIdx.x] = h[threadIdx.x];
}
"""

GRID, BLOCK, ITERS = 4, 64, 50
HEADROOM = 10_000  # 4 x 64 x 50 = 12,800 reads of x[0] pass it


@pytest.fixture(scope="module")
def prof():
    return Profiler(text=SOURCE, name="wide.cu", backend="cpu")


@pytest.fixture
def near_limit(monkeypatch):
    monkeypatch.setattr(widen, "counter_origin", 2 ** 32 - HEADROOM)


def launch_hot(prof, mode):
    x = np.arange(8, dtype=np.float32) + 1.0
    idx = np.zeros(ITERS, np.int32)
    out = np.zeros(GRID * BLOCK, np.float32)
    report = prof.launch("hot", GRID, BLOCK, [x, idx, out, np.int32(ITERS)],
                         mode=Mode.parse(mode))
    np.testing.assert_array_equal(out, np.full(GRID * BLOCK, ITERS * 1.0, np.float32))
    return report


@pytest.mark.parametrize("mode", ["default", "SA", "basic"])
def test_hot_element_past_the_headroom_is_exact(prof, near_limit, mode):
    report = launch_hot(prof, mode)
    reads = GRID * BLOCK * ITERS  # 12,800 reads of x[0], by hand
    want = np.zeros(8, np.int64)
    want[0] = reads
    np.testing.assert_array_equal(report.array("x").counts, want)
    assert report.array("x").reads == reads
    assert report.run.mode == f"{mode} [64-bit]"  # the same mode, wider counters
    site = next(s for s in report.sites if s.text == "x[idx[k]]")
    assert site.executions == reads


def test_without_the_check_the_emulated_counters_wrap(prof, near_limit, monkeypatch):
    # the emulation really wraps: with the bound check off, x[0] is 2^32 short
    monkeypatch.setattr(session_module, "may_wrap", lambda *a: [])
    fresh = Profiler(text=SOURCE, name="wide.cu", backend="cpu")
    report = launch_hot(fresh, "basic")
    assert report.array("x").counts[0] == GRID * BLOCK * ITERS - 2 ** 32
    assert "64-bit" not in report.run.mode


def test_below_the_headroom_stays_32_bit(prof, near_limit):
    fresh = Profiler(text=SOURCE, name="wide.cu", backend="cpu")
    x = np.ones(8, np.float32)
    idx = np.zeros(2, np.int32)
    out = np.zeros(64, np.float32)
    report = fresh.launch("hot", 1, 64, [x, idx, out, np.int32(2)], mode=Mode.parse("basic"))
    assert report.array("x").counts[0] == 64 * 2
    assert "64-bit" not in report.run.mode


@pytest.mark.parametrize("mode", ["default", "basic"])
def test_shared_histogram_past_the_headroom_is_exact(prof, near_limit, mode):
    iters = 250
    idx = (np.arange(iters) % 5).astype(np.int32)  # words 0..4, 50 times each per thread
    out = np.zeros(GRID * 32, np.uint32)
    report = prof.launch("hist", GRID, BLOCK, [idx, out, np.int32(iters)],
                         mode=Mode.parse(mode))
    per_word = BLOCK * iters // 5  # 3,200 per block
    np.testing.assert_array_equal(out.reshape(GRID, 32)[:, :5], per_word)
    # each atomicAdd on h[w] is one read-write access; the first 32 threads' zeroing writes
    # and final reads add 2 a word a block
    want = np.full(32, 2 * GRID, np.int64)
    want[:5] += GRID * per_word  # 4 blocks x 3,200 = 12,800 atomics a word: past the headroom
    np.testing.assert_array_equal(report.array("h").counts, want)


def test_site_counts_fold_at_64_bits():
    # two copies of an area with one site: 0xFFFFFFFF + 2 executions carry into the high word
    n_sites, words = 1, LY.area_words(1, 4)
    copies = np.zeros((2, words), np.uint32)
    copies[0, LY.AREA_HEADER] = 0xFFFFFFFF
    copies[1, LY.AREA_HEADER] = 2
    copies[:, LY.sites_end(n_sites)] = 7  # one 32-bit object counter in each copy
    area = LY.fold_replicas(copies.reshape(-1), 2, words, n_sites, 1, 32, None)
    assert int(LY.site_counts(area, n_sites)[0]) == 2 ** 32 + 1
    assert int(area[LY.sites_end(n_sites)]) == 14


def test_bounds_count_every_unit_an_access_covers():
    from types import SimpleNamespace as NS
    dev = NS(kind=LY.KIND_DEVICE, unit=4, elem_size=4, slot="A")
    wide = NS(kind=LY.KIND_DEVICE, unit=48, elem_size=48, slot="S")
    shared = NS(kind=LY.KIND_SHARED, unit=4, elem_size=8, slot="sh")
    # a float4 from a float array starting mid-unit: 4 elements, +1 for a misaligned start
    assert widen.units_per_access(dev) == 5
    assert widen.units_per_access(wide) == 2
    assert widen.units_per_access(shared) == 5
