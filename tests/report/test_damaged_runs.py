"""A damaged saved run (`gmprof report`, `report --html`, `report --json`, `gmprof diff`) is a
usage error located by a JSON pointer (`run.json: error: /kernels/0/arrays/0/reads: -5 is less
than the minimum of 0`, status 2, nothing written), never a traceback (status 3) nor accepted
(status 0). The rule is gmprof/report/run.schema.json (gmprof/report/check.py); Hypothesis
damages a good document at random and checks that what is accepted renders in every format and
what the schema refuses is refused. Documents are made from hand-made reports (no kernel runs).
"""
from __future__ import annotations

import copy
import io
import json

import jsonschema
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from rich.console import Console

from gmprof.cli import main
from gmprof.errors import InputError
from gmprof.report import csvout, terminal
from gmprof.report.check import full_schema
from gmprof.report.diff import diff, render as render_diff
from gmprof.report.document import document, dumps, loads
from gmprof.report.html import html_text
from gmprof.report.model import ArrayStats, Report, RunInfo, SiteStats

SCHEMA = full_schema()  # SCHEMA_FILE and the counter families' fields


def good_doc() -> dict:
    run = RunInfo("k<16>", "cpu", "CPU backend", "SA-NA-SM-TH", (2, 1, 1), (32, 1, 1), 0)
    tile = ArrayStats("tile", "shared", "float", (4, 4), 4, 4, np.arange(16, dtype=np.int64),
                      reads=100, writes=20, label="thresholded", threshold=12,
                      live_ranges={"ranges": 4, "accesses": 9, "histogram": [1] * 12})
    dyn = ArrayStats("buf", "shared_dynamic", "int", (40,), 4, 4,
                     np.arange(40, dtype=np.int64) % 3, reads=40, writes=0)
    big = ArrayStats("A", "device", "float", (70, 3), 4, 4, np.ones(210, np.int64),
                     reads=210, writes=0, sampling=0.5, label="sampled")
    sites = [SiteStats(0, "k.cu:3:5", "tile[i]", "k", "tile", "read", 8, "thresholded"),
             SiteStats(1, "k.cu:4:5", "A[i]", "k", "A", "read-write", 4, "sampled"),
             SiteStats(2, "k.cu:5:5", "acc[i]", "k", None, "write", 0, "not counted")]
    r = Report(run, [tile, dyn, big], sites)
    r.source = [{"function": "k", "file": "k.cu", "first_line": 1,
                 "lines": ["__global__ void k() {", "  x;", "  tile[i];", "  A[i];",
                           "  acc[i];", "}"]}]
    return json.loads(dumps(document([r], command=["profile", "k.cu"],
                                     sample={"name": "s", "size": "small",
                                             "self_check": "passed", "error": None})))


GOOD = good_doc()


def test_the_good_document_is_good():
    jsonschema.validate(GOOD, SCHEMA)
    assert loads(json.dumps(GOOD), "run.json") == GOOD


def _set(path, value):
    def damage(doc):
        *head, last = path
        for key in head:
            doc = doc[key]
        doc[last] = value
    return damage


def _drop(path):
    def damage(doc):
        *head, last = path
        for key in head:
            doc = doc[key]
        del doc[last]
    return damage


A0 = ["kernels", 0, "arrays", 0]
DAMAGED = [
    # (what is damaged, the pointer and message the error gives)
    (_set(A0 + ["reads"], -5), "/kernels/0/arrays/0/reads: -5 is less than the minimum of 0"),
    (_drop(A0 + ["name"]), "/kernels/0/arrays/0: 'name' is a required property"),
    (_set(A0 + ["name"], ""), "/kernels/0/arrays/0/name: \"\" should be non-empty"),
    (_drop(["kernels", 0, "sites", 1, "location"]),
     "/kernels/0/sites/1: 'location' is a required property"),
    (_set(["kernels", 0, "sites", 1, "location"], "k.cu"),
     "/kernels/0/sites/1/location: \"k.cu\" does not match"),
    (_set(A0 + ["accesses"], "12"), "/kernels/0/arrays/0/accesses: \"12\" is not of type "
                                    "'integer'"),
    (_set(A0 + ["writes"], 2.5), "/kernels/0/arrays/0/writes: 2.5 is not of type"),
    (_set(A0 + ["max"], None), "/kernels/0/arrays/0/max: null is not of type 'integer'"),
    (_set(A0 + ["counts", 7], -1), "/kernels/0/arrays/0/counts/7: -1 is less than the minimum"),
    (_set(A0 + ["counts", 3], "3"), "/kernels/0/arrays/0/counts/3: \"3\" is not of type"),
    (_set(A0 + ["counts", 3], True), "/kernels/0/arrays/0/counts/3: true is not of type"),
    (_set(A0 + ["heatmap", "mean", 1, 2], "x"), "/kernels/0/arrays/0/heatmap/mean/1/2: \"x\""),
    (_set(A0 + ["heatmap", "mean", 1], [1, 2]), "/kernels/0/arrays/0/heatmap/mean: not a grid "
                                                "of 4 x 4 cells"),
    (_set(A0 + ["heatmap", "shape"], [4, 5]), "/kernels/0/arrays/0/heatmap/shape: [4, 5] does "
                                              "not hold the declared shape"),
    (_set(A0 + ["space"], "registers"), "/kernels/0/arrays/0/space: \"registers\" is not one "
                                        "of"),
    (_set(A0 + ["label"], "probably"), "/kernels/0/arrays/0/label: \"probably\" is not one of"),
    (_set(A0 + ["live_ranges", "histogram"], [1]),
     "/kernels/0/arrays/0/live_ranges/histogram: [1] is too short"),
    (_set(["kernels", 0, "run", "grid"], [0, 1, 1]),
     "/kernels/0/run/grid/0: 0 is less than the minimum of 1"),
    (_set(["kernels", 0, "run", "launches"], "2"), "/kernels/0/run/launches: \"2\" is not of"),
    (_set(["kernels", 0, "launches"], []), "/kernels/0/launches: [] should be non-empty"),
    (_drop(["kernels", 0, "run"]), "/kernels/0: 'run' is a required property"),
    (_set(["kernels", 0, "arrays", 1], 5), "/kernels/0/arrays/1: 5 is not of type 'object'"),
    (_set(["kernels", 0, "source", 0, "lines"], []),
     "/kernels/0/source/0/lines: [] should be non-empty"),
    (_set(["kernels"], {}), "/kernels: {} is not of type 'array'"),
    (_set(A0 + ["counters"], 15), "/kernels/0/arrays/0/counts: 16 counts for 15 counters"),
    (_set(A0 + ["min"], 99), "/kernels/0/arrays/0/min: 99 is more than the maximum, 12"),
    (_set(A0 + ["untouched"], 17), "/kernels/0/arrays/0/untouched: 17 is more than the 16 "
                                   "counters"),
    (_set(["kernels", 0, "run", "launches"], 3), "/kernels/0/run/launches: 3 where "
                                                 "\"launches\" lists 1"),
    (_drop(["failed_checks"]), "'failed_checks' is a required property"),
]


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "good.json").write_text(json.dumps(GOOD))
    return tmp_path


@pytest.mark.parametrize("damage,said", DAMAGED, ids=[s[:40] for _, s in DAMAGED])
def test_damaged_runs_are_located_usage_errors(damage, said, workdir, capsys):
    doc = copy.deepcopy(GOOD)
    damage(doc)
    (workdir / "run.json").write_text(json.dumps(doc, indent=1))
    for argv in (["report", "run.json"], ["report", "run.json", "--html", "r.html"],
                 ["report", "run.json", "--json", "--csv", "r.csv"],
                 ["diff", "run.json", "good.json"], ["diff", "good.json", "run.json", "--json"]):
        assert main(argv) == 2, argv
        out, err = capsys.readouterr()
        assert out == "" and err.startswith(f"run.json: error: {said}"), (argv, err)
        assert "Traceback" not in err and err.count("\n") == 1
        assert not (workdir / "r.html").exists() and not (workdir / "r.csv").exists()


def _paths(value, path=()):
    yield path
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value[:5]):
            yield from _paths(v, path + (i,))


PATHS = list(_paths(GOOD))[1:]
VALUES = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([2 ** 70, 1.5,
                   -0.5, "", "12", "k.cu:1:1", [], {}, [1, 2], [[1]], {"a": 1}]))
DAMAGE = st.tuples(st.sampled_from(PATHS), st.one_of(st.just("delete"), VALUES))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(DAMAGE, min_size=1, max_size=3))
def test_any_damage_is_refused_or_renders(damages):
    doc = copy.deepcopy(GOOD)
    for path, value in damages:
        holder = doc
        try:
            for key in path[:-1]:
                holder = holder[key]
            if value == "delete":
                del holder[path[-1]]
            else:
                holder[path[-1]] = copy.deepcopy(value)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier damage removed the path
    schema_ok = jsonschema.Draft202012Validator(SCHEMA).is_valid(doc)
    try:
        loaded = loads(json.dumps(doc), "run.json")
    except InputError as e:
        assert e.render().startswith("run.json: error: ")
        return
    assert schema_ok  # what the schema refuses is refused (the fast path agrees with it)
    terminal.render(loaded, Console(file=io.StringIO(), width=80), source=True)
    csvout.csv_text(loaded)
    html_text(loaded)
    render_diff(diff(loaded, GOOD, "a.json", "b.json"), Console(file=io.StringIO(), width=80))
