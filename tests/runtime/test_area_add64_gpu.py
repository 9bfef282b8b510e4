"""Site counts in the block's shared-memory area are 64-bit words added as two 32-bit halves on a
GPU (gmprof.cuh area_add64: a u64 atomicAdd on shared memory is a compare-and-swap loop on
sm_90). Past 2^32 the carries must all reach the high word: one block of 1024 threads runs a
measured shared read 2^22 + 3 times each, 1024 x (2^22 + 3) = 2^32 + 3,072 executions, one
warp-aggregated add of 32 at a time. Expected by hand and numpy."""
from __future__ import annotations

import numpy as np
import pytest

import gmprof.api
from gmprof.mode import Mode

pytestmark = pytest.mark.gpu

SOURCE = r"""
__global__ void many(float *out, const float *in, int n) {
    __shared__ float s[32];
    if (threadIdx.x < 32) s[threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    float a = 0.0f;
    for (int k = 0; k < n; ++k)
        if (a >= -1.0f)             // always true, which no analysis can tell: measured
            a += s[(k * 7) & 31];   // the same word for the whole block at each k
    out[threadIdx.x] = a;
}
"""


def test_site_count_past_2_32_in_the_shared_area(tmp_path):
    src = tmp_path / "many.cu"
    src.write_text(SOURCE)
    prof = gmprof.api.profiler(src, backend="gpu")
    n, threads = (1 << 22) + 3, 1024
    inp = np.zeros(32, np.float32)
    out = np.zeros(threads, np.float32)
    rep = prof.launch("many", 1, threads, [out, inp, np.int32(n)],
                      mode=Mode.parse("default", profile="shm"))
    site = rep.site(9, "s[(k * 7) & 31]")
    assert site.executions == threads * n == (1 << 32) + 3 * 1024
    # word j is read at the k with 7k = j (mod 32), by every thread; written once
    k = np.arange(n, dtype=np.int64)
    reads = np.bincount((k * 7) & 31, minlength=32) * threads
    assert rep.array("s").counts.tolist() == (reads + 1).tolist()
