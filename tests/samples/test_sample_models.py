"""bench/sample_models.py (counts derived from five samples' source, without gmprof) against
gmprof's profile of each sample at --size small on the CPU backend, default mode; and
bench/check_large.py's verdict when a model is off by one (issue 24). The large sizes run on a
GPU: python3 bench/check_large.py --backend gpu."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from gmprof.driver import load_sample
from gmprof.mode import Mode
from gmprof.runtime.samples import run_sample

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import check_large  # noqa: E402
import sample_models  # noqa: E402


@pytest.mark.parametrize("name", sample_models.NAMES)
def test_model_equals_profile_small(name):
    arrays = sample_models.inputs(name, "small")
    want = sample_models.expected(name, "small", arrays)
    run = run_sample(load_sample(ROOT / "samples" / name), "small", mode=Mode.parse("default"),
                     backend="cpu", initial=arrays, check=False)
    row = check_large.compare(want, run.reports)
    assert row["mismatches"] == []
    # every array and every counted site of every kernel was compared
    assert row["arrays"] == sum(len(k.arrays) for k in want.kernels.values())
    assert row["sites"] == sum(len(k.sites) for k in want.kernels.values())


def test_spmv_model_totals():
    """The spmv model's totals by hand: x is read once per nonzero, so its counts sum to nnz;
    each of the 200 / 4 = 50 blocks stages rpb + 1 = 5 rowPtr entries: 250 reads."""
    arrays = sample_models.inputs("spmv", "small")
    k = sample_models.expected("spmv", "small", arrays).kernels["spmv_csr"]
    assert k.arrays["x"].counts.sum() == len(arrays["colIdx"])
    assert k.arrays["rowPtr"].reads == 50 * 5


def _perturbed(kind):
    real = sample_models.MODELS["bo_v1"]

    def model(size_name, arrays=None):
        want = real(size_name, arrays)
        k = want.kernels["binomial_v1"]
        if kind == "count":
            counts = k.arrays["callB"].counts
            counts[np.argmax(counts)] += 1
        elif kind == "writes":
            k.arrays["price"].writes += 1
        else:
            key = next(iter(k.sites))
            k.sites[key] += 1
        return want

    return model


@pytest.mark.parametrize("kind", ["count", "writes", "site"])
def test_check_large_exits_1_on_a_perturbed_model(monkeypatch, capsys, tmp_path, kind):
    argv = ["--samples", "bo_v1", "--modes", "default", "--size", "small", "--backend", "cpu"]
    monkeypatch.setitem(sample_models.MODELS, "bo_v1", _perturbed(kind))
    out_file = tmp_path / "rows.json"
    assert check_large.main(argv + ["--out", str(out_file)]) == 1
    assert "(model " in capsys.readouterr().out
    (row,) = json.loads(out_file.read_text())
    assert len(row["mismatches"]) == 1 and row["sample"] == "bo_v1"
    monkeypatch.undo()
    assert check_large.main(argv) == 0


def test_check_large_usage_error(capsys):
    assert check_large.main(["--samples", "nope", "--size", "small", "--backend", "cpu"]) == 2
    assert "gmprof: error: --samples" in capsys.readouterr().err


# Sizes with the large sizes' structure, small enough for the CPU backend: bo_v1's 256 threads
# and 1024 steps; jcb_v1's tiles walked by a grid that does not divide them; spmv's 256-thread
# blocks (8 rows) over a row count that leaves the last block part empty; co's 16 clusters and
# 256 columns; em_v1's D = K = 16 (528 sum tasks: every thread takes several, a > 0).
MEDIUM = {"bo_v1": {"options": 3, "steps": 1024, "threads": 256},
          "jcb_v1": {"nx": 130, "ny": 67, "sweeps": 3, "blocks": 5},
          "spmv": {"rows": 203, "cols": 120, "min_nnz": 16, "max_nnz": 48, "block": 256},
          "co": {"rows": 768, "cols": 256, "clusters": 16, "blocks": 3},
          "em_v1": {"points": 300, "dims": 16, "clusters": 16, "blocks": 2, "iterations": 2}}


@pytest.mark.parametrize("name", sample_models.NAMES)
def test_model_equals_profile_medium(monkeypatch, name):
    drv = sample_models.sample(name).driver
    monkeypatch.setattr(drv, "sizes", {**drv.sizes, "medium": MEDIUM[name]})
    arrays = sample_models.inputs(name, "medium")
    want = sample_models.expected(name, "medium", arrays)
    run = run_sample(sample_models.sample(name), "medium", mode=Mode.parse("default"),
                     backend="cpu", initial=arrays, check=False)
    assert check_large.compare(want, run.reports)["mismatches"] == []
