"""Geometric loops (passes/geometric.py): `for (s = C; s > 0; s >>= 1)` sites counted at launch
from their formulas, on the CPU backend (and the GPU), against counts derived here with
numpy."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import gmprof
from gmprof.mode import Mode
from gmprof.passes.pipeline import Pipeline
from gmprof.passes.plan import STATIC

KERNELS = Path(__file__).resolve().parent / "cpu_kernels" / "geometric.cu"
W = 64


def test_tree_sites_are_static_and_others_are_not():
    pipeline = Pipeline()
    program = pipeline.analyze(pipeline.load(KERNELS))
    plan = pipeline.plan(program, Mode.parse("default"))
    static = {(sp.site.function.name, sp.site.text) for sp in plan.sites.values()
              if sp.strategy == STATIC}
    assert {("tree", "part[tid]"), ("tree", "part[tid + s]"), ("tree", "part[s % WIDTH]"),
            ("tree", "out[blockIdx.x * WIDTH + tid]"),
            ("tree", "out[blockIdx.x * WIDTH + (tid + s) % WIDTH]")} <= static
    assert ("not_geometric", "part[tid + s]") not in static
    assert ("not_geometric", "part[s]") not in static


@pytest.fixture(scope="module", params=["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
def prof(request):
    return gmprof.api.profiler(KERNELS, backend=request.param)


def values(s, test, step):
    out = []
    while test(s):
        out.append(s)
        s = step(s)
    return out


@pytest.mark.parametrize("mode", ["default", "basic"])
def test_tree_counts(prof, mode):
    blocks = 3
    rng = np.random.default_rng(0)
    args = [np.zeros(blocks * W, np.float32), rng.random(blocks * W, dtype=np.float32)]
    r = prof.launch("tree", (blocks,), (W,), args, mode=Mode.parse(mode))
    part = np.zeros(W, np.int64)
    out = np.zeros(blocks * W, np.int64)
    for b in range(blocks):
        for tid in range(W):
            part[tid] += 1  # the store before the barrier
            for s in values(W // 2, lambda s: s > 0, lambda s: s >> 1):
                if tid < s:
                    part[tid] += 1  # one read-write access (`+=`)
                    part[tid + s] += 1
            for s in values(100, lambda s: s >= 1, lambda s: int(s / 2)):
                if tid % 8 < s % 8:
                    out[b * W + tid] += 1
                    part[s % W] += 1
            for s in values(W, lambda s: s > 1, lambda s: s >> 2):
                out[b * W + (tid + s) % W] += 1
    np.testing.assert_array_equal(r.array("part").counts.reshape(-1), part)
    np.testing.assert_array_equal(r.array("out").counts, out)
    assert r.run.outputs_identical


def test_not_geometric_counts(prof):
    rng = np.random.default_rng(1)
    inp = rng.random(W, dtype=np.float32)
    r = prof.launch("not_geometric", (1,), (W,), [np.zeros(W, np.float32), inp],
                    mode=Mode.parse("default"))
    part = np.ones(W, np.int64)  # the store
    for tid in range(W):
        for s in values(W // 2, lambda s: s > 0, lambda s: s >> 1):
            if tid < s:
                part[tid + s] += 1
        for s in values(W // 2, lambda s: s > 0, lambda s: s >> 1):
            if tid < s:
                part[s] += 1
    np.testing.assert_array_equal(r.array("part").counts.reshape(-1), part)
