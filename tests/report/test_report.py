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
    assert data["schema"] == "gmprof.run/2"
    (kernel,) = data["kernels"]
    assert kernel["schema"] == "gmprof.report/2" == to_json(r)["schema"]
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


@pytest.mark.parametrize("spec,kind", [
    ("n", "bad-option"),
    ("n=abc", "bad-option"),
    ("a=float99[4]:zeros", "bad-option"),
    ("a=float32[4]:bogus", "bad-option"),
    ("a=missing.npy", "input"),
])
def test_bad_argument_specs_are_plain_errors(spec, kind):
    with pytest.raises(GmprofError) as info:
        parse_arg(spec, np.random.default_rng(0))
    assert info.value.kind == kind


def test_bad_dims():
    for text, what in (("0,4", "grid"), ("a", "block")):
        with pytest.raises(GmprofError) as info:
            parse_dim3(text, what)
        assert info.value.kind == "bad-option"


def test_merge_never_changes_the_merged_reports_arrays():
    a, b = make_report(), make_report()
    before = b.array("tile").counts.copy()
    a.merge(b)
    a.merge(b)
    np.testing.assert_array_equal(b.array("tile").counts, before)
    assert a.array("tile").accesses == 3 * int(before.sum())
    assert [x["grid"] for x in a.launches_list()] == [[1, 1, 1]] * 3


def test_merge_keeps_every_launchs_warnings():
    from gmprof.errors import Diagnostic

    a, b = make_report(), make_report()
    b.warnings.append(Diagnostic("outputs-differ", "out differs"))
    a.merge(b)
    assert [w.kind for w in a.warnings] == ["outputs-differ"]


def test_summary_agrees_with_the_properties():
    for thr in (None, 2, 100):
        a = make_report((0, 1, 300, 255), threshold=thr).array("tile")
        s = a.summary()
        assert s == {"accesses": a.accesses, "min": a.min, "max": a.max,
                     "mean": pytest.approx(a.mean), "untouched": a.untouched,
                     "at_threshold": a.saturated}


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=80, deadline=None)
@given(rows=st.integers(1, 200), cols=st.integers(1, 200), seed=st.integers(0, 2 ** 16))
def test_heat_grid_blocks_match_a_plain_loop(rows, cols, seed):
    from gmprof.report.heatgrid import MAX_CELLS_2D, heat_grid

    g = np.random.default_rng(seed).integers(0, 50, (rows, cols))
    hg = heat_grid(g)
    by, bx = hg["block"]
    assert -(-rows // by) <= MAX_CELLS_2D and -(-cols // bx) <= MAX_CELLS_2D
    for i in range(0, rows, by):
        for j in range(0, cols, bx):
            cell = g[i:i + by, j:j + bx]
            got = hg["mean"][i // by][j // bx]
            assert got == pytest.approx(round(cell.mean(), 4))
            if hg["min"] is not None:
                assert hg["min"][i // by][j // bx] == cell.min()
                assert hg["max"][i // by][j // bx] == cell.max()
