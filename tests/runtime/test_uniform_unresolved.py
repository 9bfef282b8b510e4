"""A tid-invariant access through a pointer gmprof cannot follow to one array (a device
function handed one of several shared arrays, as cuda-samples' eigenvalues does) is counted
by one lane per group of lanes at the same address (UNIFORM), its array found from the
address, instead of by every lane on the same counter word; in a counted loop its walk is
counted once per entry, shared out over the group's lanes (dm_range_uniform). By hand."""
from __future__ import annotations

import numpy as np
import pytest

import gmprof.api
from gmprof.mode import Mode

SOURCE = r"""
__device__ float sum_first(const float *s, unsigned n) {
    float a = 0.0f;
    for (unsigned k = 0; k < n; ++k) a += s[k];
    return a;
}

__global__ void two_arrays(float *out, const unsigned *active, unsigned n) {
    __shared__ float sa[64];
    __shared__ float sb[64];
    unsigned t = threadIdx.x;
    if (t < 64) { sa[t] = t; sb[t] = 2.0f * t; }
    __syncthreads();
    float r = 0.0f;
    if (t < active[0]) r = sum_first(sa, n);        // lanes a condition picks
    else r = sum_first(sb, n / 2);
    out[blockIdx.x * blockDim.x + t] = r;
}
"""


@pytest.mark.parametrize("backend", ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
def test_tid_invariant_reads_through_one_of_several_shared_arrays(tmp_path, backend):
    """With --profile shm too: such a pointer went uncounted there, taken for device memory."""
    src = tmp_path / "two.cu"
    src.write_text(SOURCE)
    prof = gmprof.api.profiler(src, backend=backend)
    blocks, threads, active, n = 2, 96, 40, 10
    out = np.zeros(blocks * threads, np.float32)
    rep = prof.launch("two_arrays", blocks, threads,
                      [out, np.array([active], np.uint32), np.uint32(n)],
                      mode=Mode.parse("default", profile="shm"))
    t = np.arange(threads)
    want_out = np.where(t < active, sum(range(n)), 2.0 * sum(range(n // 2)))
    assert out.tolist() == np.tile(want_out, blocks).tolist()
    # every word is written once a block (2); sa[k], k < 10, is read by the 40 picked threads
    # of each block: + 80; sb[k], k < 5, by the other 56 threads of each block: + 112
    assert rep.array("sa").counts.tolist() == \
        [blocks + blocks * active] * n + [blocks] * (64 - n)
    assert rep.array("sb").counts.tolist() == \
        [blocks + blocks * (threads - active)] * (n // 2) + [blocks] * (64 - n // 2)
    # the site is counted by one lane per group, not by each lane, and its loop's walk once
    # per entry, shared out over the lanes at its address
    assert "one lane per warp" in rep.site(4, "s[k]").strategy
    assert "shared out over the lanes" in rep.site(4, "s[k]").strategy
    assert rep.site(4, "s[k]").executions == blocks * (active * n + (threads - active) * (n // 2))
