"""Nsight Compute's command-line conventions: -o is a report file (refused if it exists,
unless -f), --csv as a switch prints one loadable table per --page, --print-summary
per-kernel|per-gpu, --error-exitcode on saved runs, and "did you mean" for misspellings.
Documents are made from hand-made reports (no kernel runs); expected values are the hand
counts below."""
from __future__ import annotations

import csv
import io

import numpy as np
import pytest

from gmprof.cli import main
from gmprof.errors import Diagnostic
from gmprof.report.document import document, dumps
from gmprof.report.model import ArrayStats, Report, RunInfo, SiteStats


def make(kernel="k", counts=(1, 2, 3, 4), failed=False):
    run = RunInfo(kernel, "cpu", "CPU backend", "default", (2, 1, 1), (32, 1, 1), 0)
    a = ArrayStats("tile", "shared", "float", (2, 2), 4, 4, np.array(counts, np.int64),
                   reads=sum(counts), writes=0)
    s = SiteStats(0, "k.cu:3:5", "tile[i]", kernel, "tile", "read", sum(counts), "measured")
    r = Report(run, [a], [s])
    if failed:
        r.warnings.append(Diagnostic("outputs-differ", "outputs differ"))
    return r


@pytest.fixture
def saved(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # k: 1+2+3+4 = 10 accesses; other: 0+0+5+5 = 10
    (tmp_path / "run.json").write_text(dumps(document([make(), make("other", (0, 0, 5, 5))])))
    return tmp_path


def test_o_refuses_an_existing_file_unless_forced(saved, capsys):
    (saved / "r.html").write_text("old")
    assert main(["report", "run.json", "-o", "r.html"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == ("gmprof: error: -o r.html: the file exists; give -f (--force) to "
                           "overwrite it")
    assert (saved / "r.html").read_text() == "old"
    assert main(["report", "run.json", "-o", "r.html", "-f"]) == 0
    assert (saved / "r.html").read_text().startswith("<!doctype html>")
    assert main(["report", "run.json", "-o", "new.csv"]) == 0
    assert (saved / "new.csv").read_text().startswith("kernel,array,")


def _table(text):
    return list(csv.DictReader(io.StringIO(text)))


def test_csv_switch_prints_one_table_per_page(saved, capsys):
    assert main(["report", "run.json", "--csv"]) == 0
    rows = _table(capsys.readouterr().out)
    assert [(r["kernel"], r["array"], r["accesses"]) for r in rows] == \
        [("k", "tile", "10"), ("other", "tile", "10")]
    assert main(["report", "run.json", "--csv", "--page", "sites"]) == 0
    rows = _table(capsys.readouterr().out)
    assert [(r["kernel"], r["location"], r["executions"]) for r in rows] == \
        [("k", "k.cu:3:5", "10"), ("other", "k.cu:3:5", "10")]
    assert main(["report", "run.json", "--csv", "--page", "raw"]) == 0
    rows = _table(capsys.readouterr().out)
    assert [int(r["count"]) for r in rows] == [1, 2, 3, 4, 0, 0, 5, 5]
    assert [int(r["counter"]) for r in rows] == [0, 1, 2, 3] * 2


def test_csv_file_keeps_every_table_and_takes_a_page(saved):
    assert main(["report", "run.json", "--csv", "all.csv"]) == 0
    text = (saved / "all.csv").read_text()
    assert text.count("\n\n") == 1 and "kernel,site,location" in text
    assert main(["report", "run.json", "--csv=raw.csv", "--page", "raw"]) == 0
    assert (saved / "raw.csv").read_text().startswith("kernel,array,counter,count\n")


def test_page_without_csv_is_a_usage_error(saved, capsys):
    assert main(["report", "run.json", "--page", "raw"]) == 2
    assert "give --csv too" in capsys.readouterr().err


def test_print_summary(saved, capsys):
    assert main(["report", "run.json", "--print-summary", "per-kernel"]) == 0
    out = capsys.readouterr().out
    lines = [line.split() for line in out.splitlines()]
    assert ["k", "1", "10", "10", "0"] in lines and ["other", "1", "10", "10", "0"] in lines
    assert "arrays" not in out  # the summary instead of the full tables
    assert main(["report", "run.json", "--print-summary", "per-gpu"]) == 0
    out = capsys.readouterr().out
    assert "summary per device" in out and "20" in out.split()  # 10 + 10 accesses


def test_report_exits_with_error_exitcode_on_a_failed_check(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.json").write_text(dumps(document([make(failed=True)])))
    assert main(["report", "bad.json"]) == 1
    assert "outputs differ" in capsys.readouterr().err
    assert main(["report", "bad.json", "--error-exitcode", "7"]) == 7
    assert main(["report", "bad.json", "--error-exitcode", "0"]) == 0


@pytest.mark.parametrize("argv, hint", [
    (["profle", "samples/x"], "(did you mean 'profile'?)"),
    (["report", "run.json", "--soruce"], "(did you mean --source?)"),
    (["profile", "x.cu", "--ouput", "r.json"], "(did you mean --output?)"),
    (["report", "run.json", "--print-summary", "per-kernl"], "(did you mean 'per-kernel'?)"),
])
def test_did_you_mean(argv, hint, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.rstrip().endswith(hint), err


def test_no_suggestion_for_a_distant_word(capsys):
    assert main(["frobnicate"]) == 2
    assert "did you mean" not in capsys.readouterr().err


def test_profile_csv_switch_and_summary(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "inc.cu").write_text(
        "__global__ void inc(int *a, int n) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i < n) a[i] += 1;\n}\n")
    launch = ["profile", "inc.cu", "-k", "inc", "--grid", "2", "--block", "32",
              "--arg", "n=40", "--arg", "a=int32[48]:zeros"]
    assert main(launch + ["--csv", "--page", "raw"]) == 0
    rows = _table(capsys.readouterr().out)
    # 64 threads, the first 40 update a[i] once: `a[i] += 1` is one read-write access (one
    # site), 1 on each of the first 40 counters, 0 on the last 8; reads and writes both count
    # it (40 each), accesses 40
    assert [int(r["count"]) for r in rows] == [1] * 40 + [0] * 8
    assert main(launch + ["--print-summary", "per-kernel", "-o", "inc.json"]) == 0
    out = capsys.readouterr().out.split()
    assert out[out.index("inc"):out.index("inc") + 5] == ["inc", "1", "40", "40", "40"]
    assert main(launch + ["-o", "inc.json"]) == 2  # exists: refused before the run


def test_csv_before_the_positional_says_what_it_took(capsys):
    assert main(["report", "--csv", "run.json"]) == 2
    assert "--csv took 'run.json' as its file name" in capsys.readouterr().err


def test_bench_status_follows_its_checks(capsys):
    from gmprof.bench import failed_status

    good = {"sample": "em_v1", "mode": "SA", "outputs_identical": True, "self_check": True}
    bad = dict(good, mode="SA-NA", outputs_identical=False)
    assert failed_status({"table1": [good], "table2": [], "sampling": []}, 1) == 0
    assert failed_status({"table1": [good], "table2": [bad], "sampling": []}, 7) == 7
    assert "em_v1 SA-NA: outputs differ" in capsys.readouterr().err
