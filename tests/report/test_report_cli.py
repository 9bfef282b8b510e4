"""`gmprof report` re-renders a saved run exactly as it was printed; `gmprof diff` compares two
runs per kernel and array; bad saved files are usage errors (status 2, located, nothing
written). Documents are made from hand-made reports (no kernel runs)."""
from __future__ import annotations

import io
import json
import os
import shlex

import numpy as np
import pytest
from rich.console import Console

from gmprof.cli import main
from gmprof.report.diff import change, diff
from gmprof.report.document import document, dumps
from gmprof.report.model import ArrayStats, Report, RunInfo, SiteStats
from gmprof.report.terminal import render


def make(kernel="k", counts=(1, 2, 3, 4), name="tile", label="exact", sampling=None):
    run = RunInfo(kernel, "cpu", "CPU backend", "default", (2, 1, 1), (32, 1, 1), 0)
    a = ArrayStats(name, "shared", "float", (2, 2), 4, 4, np.array(counts, np.int64),
                   reads=sum(counts), writes=0, label=label, sampling=sampling)
    s = SiteStats(0, "k.cu:3:5", f"{name}[i]", kernel, name, "read", sum(counts), "measured")
    r = Report(run, [a], [s])
    r.source = [{"function": kernel, "file": "k.cu", "first_line": 1,
                 "lines": ["__global__ void k() {", "  __shared__ float tile[4];",
                           "  float v = tile[i];", "}"]}]
    return r


@pytest.fixture
def saved(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    doc = document([make(), make("other", (0, 0, 5, 5))], command=["profile", "x"])
    (tmp_path / "run.json").write_text(dumps(doc))
    return doc


def printed(doc, source=False) -> str:
    buf = io.StringIO()
    render(doc, Console(file=buf, width=80, highlight=False, color_system=None), source=source)
    return buf.getvalue()


def test_report_prints_what_the_run_printed(saved, capsys):
    assert main(["report", "run.json", "--source"]) == 0
    out = capsys.readouterr().out
    assert out == printed(saved, source=True)
    assert "source of k" in out and "source of other" in out


def test_report_converts_to_html_csv_and_json(saved, capsys, tmp_path):
    assert main(["report", "run.json", "--html", "r.html", "--csv", "r.csv"]) == 0
    assert (tmp_path / "r.html").read_text().startswith("<!doctype html>")
    assert (tmp_path / "r.csv").read_text().startswith("kernel,array,")
    capsys.readouterr()
    assert main(["report", "run.json", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(dumps(saved))


@pytest.mark.parametrize("content,message", [
    ("{\"schema\": ", "run.json:1:12: error: not JSON"),
    ("[1, 2]", "not a gmprof run document"),
    ("{\"schema\": \"gmprof.report/1\"}", "not a gmprof run document"),
    # the first value the JSON Schema refuses (tests/report/test_damaged_runs.py has more)
    ("{\"schema\": \"gmprof.run/2\", \"kernels\": [{\"arrays\": 3}]}",
     "run.json: error: 'gmprof' is a required property"),
])
def test_a_file_that_is_not_a_saved_run_is_a_usage_error(tmp_path, monkeypatch, capsys,
                                                        content, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run.json").write_text(content)
    assert main(["report", "run.json", "--html", "out.html"]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert sorted(os.listdir(tmp_path)) == ["run.json"]


def test_missing_file(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["report", "missing.json"]) == 2
    assert "no such file" in capsys.readouterr().err


def test_diff_matches_kernels_and_arrays_by_name():
    a = document([make(counts=(4, 4, 4, 4)), make("only_a")])
    b = document([make(counts=(1, 1, 1, 1)), make("only_b")])
    d = diff(a, b)
    k = {e["kernel"]: e for e in d["kernels"]}
    assert (k["k"]["in"], k["only_a"]["in"], k["only_b"]["in"]) == ("both", "a", "b")
    (row,) = k["k"]["arrays"]
    assert row["accesses"] == [16, 4] and row["reads"] == [16, 4]


def test_change_reads_as_difference_and_ratio():
    assert change(16, 4) == "-12 (x0.25)"
    assert change(0, 5) == "+5 (from 0)"
    assert (change(3, 3), change(None, 2), change(2, None)) == ("same", "new", "gone")


def test_diff_command_and_mixed_labels(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.json").write_text(dumps(document([make(counts=(4, 4, 4, 4))])))
    (tmp_path / "b.json").write_text(dumps(document([make(counts=(100, 0, 0, 0),
                                                          label="sampled", sampling=0.01)])))
    assert main(["diff", "a.json", "b.json"]) == 0
    out = capsys.readouterr().out
    assert "+84 (x6.25)" in out and "exact in A, sampled rate 0.01 in B" in out
    assert "counted differently" in out
    assert main(["diff", "a.json", "b.json", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["schema"] == "gmprof.diff/1"


def test_the_document_records_the_command_it_came_from(tmp_path, monkeypatch, capsys):
    from pathlib import Path

    kernels = Path(__file__).resolve().parents[1] / "badinput" / "kernels.cu"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k.cu").write_text(kernels.read_text())
    argv = ["profile", "k.cu", "--kernel", "saxpy", "--grid", "4", "--block", "64", "--arg",
            "y=float32[256]:random", "--arg", "x=float32[256]:random", "--arg", "a=2",
            "--arg", "n=256", "--backend", "cpu", "--json"]
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    assert shlex.split(doc["command"]) == ["gmprof", *argv]  # quoted for a shell
    assert [k["kernel"] for k in doc["kernels"]] == ["saxpy"] and doc["sample"] is None
    assert doc["kernels"][0]["source"][0]["file"] == "k.cu"
