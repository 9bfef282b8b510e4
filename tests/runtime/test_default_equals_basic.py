"""Differential: default mode (static formulas, SA hooks, shared-memory counters) counts exactly
what basic mode (an atomic per access, no analysis) counts, element by element, and the same
reads and writes, on every sample and on the paper's kernels (tests/passes/kernels/paper.cu,
launched as bench/check_counts.py launches them). Neither is the oracle: a difference shows
that one of them is wrong (the oracle suite, tests/oracle/, says which)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import gmprof
from gmprof.driver import load_sample
from gmprof.mode import Mode
from gmprof.runtime.samples import run_sample, sample_profiler

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = sorted(p.name for p in (ROOT / "samples").iterdir() if (p / "driver.py").is_file())


def _same(got, ref, where: str):
    assert [a.name for a in got.arrays] == [a.name for a in ref.arrays], where
    for a in ref.arrays:
        g = got.array(a.name)
        np.testing.assert_array_equal(g.counts, a.counts, err_msg=f"{where} {a.name}")
        assert (g.reads, g.writes, g.out_of_range) == (a.reads, a.writes, a.out_of_range), \
            f"{where} {a.name}: reads/writes/out of range"


@pytest.mark.parametrize("name", SAMPLES)
def test_default_equals_basic_on_samples(name):
    sample = load_sample(ROOT / "samples" / name)
    prof = sample_profiler(sample, backend="cpu")
    basic = run_sample(sample, "small", mode=Mode.parse("basic"), backend="cpu", profiler=prof)
    default = run_sample(sample, "small", mode=Mode(), backend="cpu", profiler=prof)
    assert basic.ok and default.ok
    assert basic.reports and basic.reports.keys() == default.reports.keys()
    for kernel, ref in basic.reports.items():
        _same(default.reports[kernel], ref, f"{name} {kernel}")


def test_default_equals_basic_on_paper_kernels():
    spec = importlib.util.spec_from_file_location("check_counts",
                                                  ROOT / "bench" / "check_counts.py")
    cc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cc)
    prof = gmprof.api.profiler(cc.KERNELS, backend="cpu")
    launched = 0
    for kernel, grid, block, make_args, _expected in cc.launches(32, np.random.default_rng(1)):
        ref = prof.launch(kernel, grid, block, make_args(), mode=Mode.parse("basic"))
        got = prof.launch(kernel, grid, block, make_args(), mode=Mode())
        _same(got, ref, kernel)
        launched += 1
    assert launched == 3
