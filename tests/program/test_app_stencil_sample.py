"""samples/app_stencil's kernels profiled alone (the single-launch path, arguments spelled out),
against an independent numpy model of their accesses (tests/program/stencil_model.py)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gmprof.mode import Mode
from gmprof.runtime.session import Profiler
from stencil_model import fill_counts, stencil_counts

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "samples" / "app_stencil"


@pytest.fixture(scope="module")
def profiler():
    return Profiler(APP / "kernels.cu", backend="cpu")


def check_against(report, model):
    arrays = {a.name: a for a in report.arrays}
    assert set(arrays) == set(model)
    for name, (reads, writes) in model.items():
        a = arrays[name]
        assert a.reads == int(reads.sum()), name
        assert a.writes == int(writes.sum()), name
        assert np.array_equal(a.counts, reads + writes), name
        assert a.label == "exact"


@pytest.mark.parametrize("mode", ["default", "basic"])
@pytest.mark.parametrize("nx,ny", [(40, 24), (16, 16)])
def test_stencil_matches_model(profiler, mode, nx, ny):
    rng = np.random.default_rng(1)
    a = rng.random(nx * ny).astype(np.float32)
    b = np.zeros(nx * ny, np.float32)
    report = profiler.launch("stencil", (-(-nx // 16), -(-ny // 16)), (16, 16),
                             [a, b, np.int32(nx), np.int32(ny)], mode=Mode.parse(mode))
    check_against(report, stencil_counts(nx, ny))
    assert report.run.outputs_identical


def test_fill_matches_model(profiler):
    a = np.zeros(40 * 24, np.float32)
    report = profiler.launch("fill", (3, 2), (16, 16),
                             [a, np.int32(40), np.int32(24), np.float32(0.25)],
                             mode=Mode.parse("basic"))
    check_against(report, fill_counts(40, 24))
    x, y = np.meshgrid(np.arange(40), np.arange(24))
    assert np.array_equal(a, (((x * 7 + y * 13) % 17) * np.float32(0.25)).astype(np.float32).ravel())
