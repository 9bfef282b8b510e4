"""A member of a shared array's element read in a loop every thread runs (`sh[k].x * sh[k].w`
for a `__shared__ float4 sh[32]`, issue 24): the loop's walk (a range, a spread, counted at
the loop's entry) steps by the element's size (16 bytes), and each access counts the member's
own words (`.x` is word 4k, `.w` word 4k + 3). The walk used to step by the member's size, so
the counts landed on the wrong words (totals right). Expected counts derived by hand."""
from __future__ import annotations

import numpy as np
import pytest

from gmprof.frontend import cxx_ast as X
from gmprof.mode import Mode
from gmprof.passes.hooks import SmSpreadBlock
from gmprof.passes.pipeline import Pipeline
from gmprof.runtime.session import Profiler

SOURCE = r"""
struct Body { float3 pos; float m; };  // 16 bytes: pos is words 0-2, m word 3

__global__ void vec4(const float4 *in, float *out) {
    __shared__ float4 sh[32];
    int t = threadIdx.x;
    if (t < 32) sh[t] = in[t];
    __syncthreads();
    float acc = 0.f;
    for (int k = 0; k < 32; ++k) acc += sh[k].x * sh[k].w;   // range, 16 bytes a step
    for (int k = 0; k < 8; ++k) acc += sh[(k * 5) & 31].y;   // spread: no range
    out[blockIdx.x * blockDim.x + t] = acc;
}

__global__ void bodies(const Body *in, float *out) {
    __shared__ Body sb[16];
    int t = threadIdx.x;
    if (t < 16) sb[t] = in[t];
    __syncthreads();
    float acc = 0.f;
    for (int k = 1; k < 16; k += 2) {   // odd k: 8 iterations
        float3 p = sb[k].pos;           // 12 bytes of a 16-byte element
        acc += p.x + p.z * sb[k].m;
    }
    out[blockIdx.x * blockDim.x + t] = acc;
}
"""

BODY = np.dtype([("pos", np.float32, 3), ("m", np.float32)])


def _prof_sites(mode):
    pipeline = Pipeline()
    program = pipeline.analyze(pipeline.load(text=SOURCE, name="shared_members.cu"))
    return pipeline.plan(program, Mode.parse(mode, profile="shm"))


def test_planned_as_walks():
    plan = _prof_sites("default")
    how = {X.span(sp.site.member or sp.site.node).text: ("range" if sp.hook.range is not None else
                          "spread" if isinstance(sp.hook, SmSpreadBlock) else sp.strategy)
           for sp in plan.sites.values() if sp.slot is not None and sp.slot.kind == "shared"
           and sp.site.kind == "read"}
    # the fast paths this test is about are the ones taken
    assert how["sh[k].x"] == how["sh[k].w"] == "range"
    assert how["sh[(k * 5) & 31].y"] == "spread"
    assert how["sb[k].pos"] == how["sb[k].m"] == "range"


@pytest.fixture(scope="module", params=["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
def prof(request):
    return Profiler(text=SOURCE, name="shared_members.cu", backend=request.param)


@pytest.mark.parametrize("mode", ["default", "SA", "basic"])
def test_float4_members(prof, mode):
    grid, block = 2, 50
    inp = (np.arange(128) % 7).astype(np.float32)
    out = np.zeros(grid * block, np.float32)
    report = prof.launch("vec4", grid, block, [inp, out], mode=Mode.parse(mode, profile="shm"))
    assert report.run.outputs_identical
    words = inp.reshape(32, 4)
    expect_out = (words[:, 0] * words[:, 3]).sum() + words[(np.arange(8) * 5) & 31, 1].sum()
    np.testing.assert_allclose(out, np.full(grid * block, expect_out, np.float32))
    sh = report.array("sh")
    # per block: threads 0..31 write sh[t] whole (words 4t..4t+3 once each); every one of the
    # 50 threads reads sh[k].x (word 4k) and sh[k].w (word 4k+3) for k = 0..31, and sh[e].y
    # (word 4e+1) for e = 5k & 31, k = 0..7: e = 0, 5, 10, 15, 20, 25, 30, 3
    expect = np.ones((32, 4), np.int64)
    expect[:, 0] += block
    expect[:, 3] += block
    expect[[0, 5, 10, 15, 20, 25, 30, 3], 1] += block
    counts = np.asarray(sh.counts).reshape(-1)
    assert counts.size == 128  # 32 float4 = 128 words
    np.testing.assert_array_equal(counts, grid * expect.reshape(-1))
    assert sh.label == "exact"


@pytest.mark.parametrize("mode", ["default", "SA", "basic"])
def test_struct_members(prof, mode):
    grid, block = 3, 40
    bodies = np.zeros(16, BODY)
    bodies["pos"] = np.arange(48).reshape(16, 3) % 5
    bodies["m"] = np.arange(16) % 3
    out = np.zeros(grid * block, np.float32)
    report = prof.launch("bodies", grid, block, [bodies.view(np.float32), out],
                         mode=Mode.parse(mode, profile="shm"))
    assert report.run.outputs_identical
    odd = np.arange(1, 16, 2)
    expect_out = (bodies["pos"][odd, 0] + bodies["pos"][odd, 2] * bodies["m"][odd]).sum()
    np.testing.assert_allclose(out, np.full(grid * block, expect_out, np.float32))
    # per block: threads 0..15 write sb[t] whole (16 x 4 words once each); each of the 40
    # threads reads sb[k].pos (words 4k..4k+2) and sb[k].m (word 4k+3) for k = 1, 3, .., 15
    expect = np.ones((16, 4), np.int64)
    expect[odd, :] += block
    counts = np.asarray(report.array("sb").counts).reshape(-1)
    np.testing.assert_array_equal(counts, grid * expect.reshape(-1))
