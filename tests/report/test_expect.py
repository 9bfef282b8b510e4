"""The expectation language (gmprof/report/expect.py, expect_file.py) on hand-made documents:
no kernel runs. The counts below are the hand-made arrays' own; nothing is profiled."""
from __future__ import annotations

import numpy as np
import pytest

from gmprof.cli import main
from gmprof.report import expect_file
from gmprof.report.document import document, dumps
from gmprof.report.expect import (Bound, Expectation, ExpectError, Target, evaluate,
                                  expression_value)
from gmprof.report.model import ArrayStats, Report, RunInfo, SiteStats


def run_doc(counts=(1, 2, 3, 4), reads=10, writes=0, threshold=None, sampling=None,
            label="exact"):
    run = RunInfo("k", "cpu", "CPU backend", "default", (2, 1, 1), (32, 1, 1), 0)
    a = ArrayStats("A", "device", "float", (4,), 4, 4, np.array(counts, np.int64),
                   reads=reads, writes=writes, threshold=threshold, sampling=sampling,
                   label=label)
    s = SiteStats(0, "k.cu:3:5", "A[i]", "k", "A", "read", reads, "measured")
    return document([Report(run, [a], [s])], include_counts=False)


def outcome(doc, metric, bound, kind="array", name="A"):
    e = Expectation(Target(kind, name), metric, Bound.parse(bound))
    return evaluate(doc, [e])[0]


@pytest.mark.parametrize("metric, bound, passed", [
    ("reads_per_element", "<= 4", True),        # max of 1, 2, 3, 4
    ("reads_per_element", "< 4", False),
    ("reads_per_element_mean", "== 2.5", True),  # (1 + 2 + 3 + 4) / 4
    ("reads_per_element_min", 1, True),
    ("accesses", "== 2 * 5", True),              # 1 + 2 + 3 + 4
    ("untouched", 0, True),
    ("reads", "!= 10", False),
])
def test_bounds_on_an_array(metric, bound, passed):
    assert outcome(run_doc(), metric, bound).passed is passed


def test_a_failed_bound_says_the_value_and_the_bound():
    o = outcome(run_doc(), "reads_per_element", "<= 2")
    assert o.message == "kernel k, array A: reads_per_element is 4, expected <= 2"
    o = outcome(run_doc(), "accesses", "== gridDim.x * 4")
    assert o.message == "kernel k, array A: accesses is 10, expected == gridDim.x * 4 = 8"


def test_reads_per_element_needs_an_array_nobody_writes():
    o = outcome(run_doc(writes=3), "reads_per_element", "<= 4")
    assert not o.passed and "also written (3 writes)" in o.message
    assert outcome(run_doc(writes=3), "accesses_per_element", "<= 4").passed


def test_a_thresholded_count_is_a_lower_bound():
    """Counters saturated at 3: the max shows as >=3, which proves >= but never <=."""
    doc = run_doc(counts=(1, 2, 3, 7), threshold=3, label="thresholded")
    o = outcome(doc, "reads_per_element", "<= 5")
    assert not o.passed
    assert o.message == ("kernel k, array A: reads_per_element is >=3 (thresholded >=3), "
                         "expected <= 5")
    assert outcome(doc, "reads_per_element", ">= 3").passed
    assert outcome(doc, "reads_per_element_min", "== 1").passed  # below the threshold: exact
    assert not outcome(doc, "reads_per_element_mean", "<= 9").passed  # one counter at >=3


def test_a_site_by_position_text_or_file():
    doc = run_doc()  # its one site: k.cu:3:5 A[i]
    for name in ("3:5", "k.cu:3:5", "A[i]"):
        assert outcome(doc, "executions", 10, "site", name).passed
    with pytest.raises(ExpectError, match="no site 'j.cu:3:5'"):
        outcome(doc, "executions", 10, "site", "j.cu:3:5")


def test_a_sampled_count_says_so():
    o = outcome(run_doc(sampling=0.5, label="sampled"), "reads", "<= 2")
    assert "reads is 10 (sampled rate 0.5)" in o.message


def test_warp_metrics_need_access_stats():
    o = outcome(run_doc(), "sectors_per_request", "<= 4")
    assert not o.passed and "--access-stats" in o.message


def test_a_block_sampled_warp_statistic_holds_a_bound_over_its_interval():
    """--access-stats on a large grid: a site's sectors estimated from 1 block in 4, with
    the 95% intervals the document holds (hand-made: 200 requests, 1,558 sectors, 7.79 a
    request, interval 6.84-8.75). A bound holds only where the whole interval holds it."""
    doc = run_doc()
    site = doc["kernels"][0]["sites"][0]
    site["warps"] = {"space": "device", "requests": 200, "sectors": 1558, "ideal": 364,
                     "lines": 786, "histogram": [], "how": "measured",
                     "sample": {"label": "sampled", "text": "sampled 1/4 of blocks",
                                "rate": 4, "rates": [4], "blocks": 50, "measured_blocks": 13,
                                "requests_interval": [200.0, 200.0],
                                "units_interval": [1368.0, 1750.0],
                                "per_request_interval": [6.84, 8.75]}}
    o = outcome(doc, "sectors_per_request", "<= 8", "site", "A[i]")
    assert not o.passed  # 7.79 <= 8, but the interval reaches 8.75
    assert o.message == ("kernel k, site 3:5 A[i]: sectors_per_request is 7.79 (sampled "
                         "1/4 of blocks, 95% 6.84-8.75), expected <= 8")
    assert outcome(doc, "sectors_per_request", "<= 9", "site", "A[i]").passed
    assert outcome(doc, "sectors_per_request", "> 6", "site", "A[i]").passed
    assert not outcome(doc, "sectors", ">= 1500", "site", "A[i]").passed  # 1,368 possible
    assert outcome(doc, "requests", "== 200", "site", "A[i]").passed  # an interval of one
    assert outcome(doc, "sectors", "!= 2000", "site", "A[i]").passed
    # per ideal: no interval in the document, the label alone
    o = outcome(doc, "sectors_per_ideal", "<= 5", "site", "A[i]")
    assert o.passed and "(sampled 1/4 of blocks)" in o.message


def test_expressions():
    names = {"n": 96, "gridDim.x": 4}
    assert expression_value("n * gridDim.x // 2 + 2 ** 3 - -1", names) == 201
    with pytest.raises(ExpectError, match="unknown name m"):
        expression_value("m * 2", names)
    with pytest.raises(ExpectError, match="division by zero"):
        expression_value("n / 0", names)
    with pytest.raises(ExpectError, match="only numbers"):
        expression_value("__import__('os')", names)


def test_keys_are_located_where_the_file_writes_them():
    f = expect_file.parse('[profile]\nrun = "r.json"\n\n[kernel."mm<16>".array.As]\n'
                          '  reads = 1\n[kernel."mm<16>"]\nsite."3:5".executions = "> 0"\n',
                          "e.toml")
    (first, second) = f.expectations
    assert first.target == Target("array", "As", "mm<16>", first.target.location)
    assert (first.location.line, first.location.col) == (5, 3)
    assert second.target.kind == "site" and second.target.name == "3:5"
    assert (second.location.line, second.location.col) == (7, 1)


def test_a_saved_run(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run.json").write_text(dumps(run_doc()))
    (tmp_path / "e.toml").write_text('[profile]\nrun = "run.json"\n[array.A]\nreads = 10\n'
                                     '[site."3:5"]\nexecutions = "> 10"\n')
    assert main(["check", "e.toml"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("e.toml:6:1: error: kernel k, site 3:5 A[i]: executions is 10, "
                          "expected > 10")
