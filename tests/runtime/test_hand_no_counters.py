"""A kernel none of whose sites is counted at run time (every count static, issue 17) runs as
written: no prologue, no epilogue, no counter area in its shared memory; its counts are the
formulas' alone. A kernel of the same file that does count keeps them. Expected counts derived
by hand."""
from __future__ import annotations

import numpy as np
import pytest

from gmprof.mode import Mode
from gmprof.passes.pipeline import Pipeline
from gmprof.passes.targets import NVRTC
from gmprof.runtime.session import Profiler

SOURCE = r"""
__device__ int twice(const int *p, int i) { return 2 * p[i]; }

__global__ void affine(int *out, const int *in, int n) {
    __shared__ int tile[64];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = in[i];
    __syncthreads();
    int s = 0;
    for (int k = 0; k < 4; k++)
        s += tile[(threadIdx.x + k) % 64];
    out[i] = s + twice(in, i);
}

__global__ void gather(int *out, const int *in, const int *idx) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[idx[i]];
}
"""

MODES = ["default", "SA", "SA-SM"]


def _plan(mode: Mode):
    pipeline = Pipeline()
    program = pipeline.analyze(pipeline.load(text=SOURCE, name="nocount.cu"))
    return pipeline, program, pipeline.plan(program, mode)


@pytest.mark.parametrize("profile", ["shm", "dm", "both"])
def test_only_counting_kernels_get_a_prologue(profile):
    pipeline, program, plan = _plan(Mode.parse("default", profile=profile))
    assert not plan.counts_on_device("affine")
    # gather's in[idx[i]] is data-dependent: counted on the device in dm and both
    assert plan.counts_on_device("gather") == (profile != "shm")
    text, _ = pipeline.instrumented_source(program, plan, NVRTC)
    body = text[text.index("__global__ void affine"):text.index("__global__ void gather")]
    assert "gmprof::" not in body
    rest = text[text.index("__global__ void gather"):]
    assert ("gmprof::enter()" in rest) == (profile != "shm")
    # basic mode counts every access: every kernel has counters
    _, _, basic = _plan(Mode.parse("basic", profile=profile))
    assert basic.counts_on_device("affine")


@pytest.fixture(scope="module", params=["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
def prof(request):
    return Profiler(text=SOURCE, name="nocount.cu", backend=request.param)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("profile", ["shm", "dm", "both"])
def test_static_kernel_counts(prof, mode, profile):
    grid, block = 3, 64
    n = grid * block
    inp = np.arange(n, dtype=np.int32) * 7 % 11
    out = np.zeros(n, np.int32)
    report = prof.launch("affine", grid, block, [out, inp, np.int32(n)],
                         mode=Mode.parse(mode, profile=profile))
    assert report.run.outputs_identical
    tile_of = inp.reshape(grid, block)
    expect_out = np.concatenate([sum(np.roll(t, -k) for k in range(4)) for t in tile_of]) \
        + 2 * inp
    np.testing.assert_array_equal(out, expect_out)
    assert "no counter on the device" in report.run.counters_why
    assert report.run.counters_in == "device memory"
    if profile != "dm":
        # tile: each word written once a block and read by 4 threads (k = 0..3 wrap mod 64)
        tile = report.array("tile")
        np.testing.assert_array_equal(tile.counts, np.full(64, grid * (1 + 4)))
        assert tile.label == "exact"
    if profile != "shm":
        # in: read once by tile's fill and once by twice(); out: written once
        np.testing.assert_array_equal(report.array("in").counts, np.full(n, 2))
        np.testing.assert_array_equal(report.array("out").counts, np.full(n, 1))
        assert report.array("in").label == "exact"


@pytest.mark.parametrize("mode", MODES)
def test_counting_kernel_beside_it(prof, mode):
    grid, block = 2, 64
    n = grid * block
    inp = np.arange(n, dtype=np.int32)
    idx = (np.arange(n) * 5 % 7).astype(np.int32)  # in[0..6] only
    out = np.zeros(n, np.int32)
    report = prof.launch("gather", grid, block, [out, inp, idx],
                         mode=Mode.parse(mode, profile="dm"))
    assert report.run.outputs_identical
    np.testing.assert_array_equal(out, inp[idx])
    assert "no counter on the device" not in report.run.counters_why
    np.testing.assert_array_equal(report.array("in").counts, np.bincount(idx, minlength=n))
    np.testing.assert_array_equal(report.array("idx").counts, np.ones(n))
