"""Reports without a GPU: aggregation, labels, renderers; argument specs; launch errors."""
from __future__ import annotations

import json

import numpy as np
import pytest

from gmprof.argspec import parse_arg, parse_dim3
from gmprof.errors import GmprofError
from gmprof.report.model import ArrayStats, Report, RunInfo, SiteStats
from gmprof.report.render import csv_text, html_text, json_text, to_json


def make_report(counts=(0, 1, 2, 5), threshold=None, label="exact"):
    run = RunInfo("k", "cpu", "CPU backend", "default", (1, 1, 1), (4, 1, 1), 0,
                  native_ms=2.0, instrumented_ms=3.0, timing_repeats=5)
    a = ArrayStats("tile", "shared", "float", (2, 2), 4, 4, np.array(counts, np.int64),
                   reads=5, writes=3, label=label, threshold=threshold)
    s = SiteStats(0, "k.cu:3:5", "tile[t]", "k", "tile", "read", 8, "measured")
    return Report(run, [a], [s])


def test_array_statistics():
    r = make_report()
    a = r.array("tile")
    assert (a.accesses, a.min, a.max, a.untouched) == (8, 0, 5, 1)
    assert a.mean == pytest.approx(2.0)
    assert a.grid().shape == (2, 2)
    assert r.run.overhead == pytest.approx(0.5)


def test_threshold_is_shown_as_at_least():
    a = make_report((0, 1, 300, 255), threshold=255, label="thresholded").array("tile")
    assert a.max == 255 and a.saturated == 2
    assert a.fmt(a.max) == ">=255" and a.fmt(3) == "3"


def test_merge_sums_counts_and_executions():
    r = make_report()
    r.merge(make_report())
    assert r.array("tile").accesses == 16 and r.sites[0].executions == 16
    assert r.run.launches == 2 and r.run.native_ms == pytest.approx(4.0)


def test_json_csv_html():
    r = make_report()
    data = json.loads(json_text(r, include_counts=True))
    assert data["schema"] == "gmprof.run/1"
    (kernel,) = data["kernels"]
    assert kernel["schema"] == "gmprof.report/1" == to_json(r)["schema"]
    (arr,) = kernel["arrays"]
    assert arr["counts"] == [0, 1, 2, 5] and arr["label"] == "exact"
    assert kernel["run"]["overhead"] == pytest.approx(0.5)
    assert "k,tile,shared,float,2x2" in csv_text(r)
    page = html_text(r)
    assert page.startswith("<!doctype html>") and "<svg" in page


def test_wide_shared_elements_shown_per_element():
    a = ArrayStats("d", "shared", "double", (2,), 8, 4, np.array([3, 3, 1, 1], np.int64))
    np.testing.assert_array_equal(a.grid(), [3, 1])


def test_argument_specs():
    rng = np.random.default_rng(0)
    assert parse_arg("n=1024", rng) == ("n", 1024)
    assert parse_arg("alpha=0.5", rng) == ("alpha", 0.5)
    name, arr = parse_arg("in=float32[4,8]:random", rng)
    assert name == "in" and arr.shape == (4, 8) and arr.dtype == np.float32
    assert (parse_arg("z=int32[3]:zeros", rng)[1] == 0).all()
    assert list(parse_arg("a=int64[4]:arange", rng)[1]) == [0, 1, 2, 3]
    assert (parse_arg("f=float64[2]:fill=2.5", rng)[1] == 2.5).all()
    assert parse_dim3("16,8", "block") == (16, 8, 1)


@pytest.mark.parametrize("spec,message", [
    ("n", "expected NAME=VALUE"),
    ("n=abc", "neither a number"),
    ("a=float99[4]:zeros", "unknown dtype"),
    ("a=float32[4]:bogus", "unknown initialiser"),
    ("a=missing.npy", "no such file"),
])
def test_bad_argument_specs_are_plain_errors(spec, message):
    with pytest.raises(GmprofError, match=message):
        parse_arg(spec, np.random.default_rng(0))


def test_bad_dims():
    with pytest.raises(GmprofError, match="positive integers"):
        parse_dim3("0,4", "grid")
    with pytest.raises(GmprofError, match="positive integers"):
        parse_dim3("a", "block")
