"""Terminal tables: at any width, no number is cut and nothing is cropped with an ellipsis;
labels are printed wherever counts are. Reports here are made by hand (no kernel runs)."""
from __future__ import annotations

import io
import re

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from gmprof.report.document import document
from gmprof.report.model import ArrayStats, Report, RunInfo, SiteStats
from gmprof.report.tables import FOLD, NUM, WORD, Col, print_table
from gmprof.report.terminal import render


def console(width: int) -> tuple[Console, io.StringIO]:
    buf = io.StringIO()
    return Console(file=buf, width=width, highlight=False, color_system=None), buf


def big_report(label="exact", threshold=None, sampling=None, repeats=1) -> Report:
    """Counts in the billions and a deep path: the cases that used to read `2,…`."""
    run = RunInfo("a_kernel_with_a_rather_long_name<128, float>", "gpu", "NVIDIA H100",
                  "SA-NA-SM-TH", (65536, 1, 1), (1024, 1, 1), 0, native_ms=12.5,
                  instrumented_ms=14.0, timing_repeats=repeats)
    counts = np.full(16, 1_234_567_890, np.int64)
    counts[3] = 0
    arrays = [ArrayStats(f"shared_data_number_{i}", "shared_dynamic", "float", (4, 4), 4, 4,
                         counts.copy(), reads=98_765_432_109, writes=12_345_678_901,
                         out_of_range=7, label=label, threshold=threshold, sampling=sampling)
              for i in range(3)]
    path = "/very/deep/directory/structure/of/a/project/src/kernels/transpose_kernels.cu"
    sites = [SiteStats(i, f"{path}:{100 + i}:{17 + i}", "shared_data[threadIdx.y * 1024 + "
                       "threadIdx.x + blockDim.x * blockIdx.x]", "k", "shared_data_number_0",
                       "read-write", 98_765_432_109 + i, "measured") for i in range(3)]
    return Report(run, arrays, sites)


def text_of(report, width, **kw) -> str:
    con, buf = console(width)
    render(document([report]), con, **kw)
    return buf.getvalue()


def test_nothing_is_cut_at_80_columns():
    text = text_of(big_report(), 80)
    assert "…" not in text
    assert max(map(len, text.splitlines())) <= 80
    words = set(re.findall(r"\S+", text))
    for number in ("1,234,567,890", "98,765,432,109", "12,345,678,901", "98,765,432,111"):
        assert number in words, number
    # the file is named once, in full, and each site by line:col
    joined = text.replace("\n", "")
    assert "transpose_kernels.cu" in joined and "102:19" in words


def test_timings_are_shown_only_when_measured_more_than_once():
    assert "native" not in text_of(big_report(repeats=1), 120)
    assert "median of 5 runs" in text_of(big_report(repeats=5), 120)


def test_labels_are_printed_with_the_counts():
    thr = text_of(big_report("thresholded", threshold=255), 80)
    assert "thresholded >=255" in thr and ">=255" in thr
    smp = text_of(big_report("sampled", sampling=0.01), 80)
    assert "sampled rate 0.01" in smp
    assert "approximate" in text_of(big_report("approximate"), 80)


def test_columns_that_carry_nothing_are_left_out():
    r = big_report()
    for a in r.arrays:
        a.out_of_range = 0
    text = text_of(r, 200)
    assert "out of range" not in text and "untouched" in text
    assert "dynamic shared" in text  # the one space, said once in the title (CUDA's words)
    assert text.count("dynamic shared") == 1 and "shared_dynamic" not in text


cell = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_[]*+ .:/", min_size=0, max_size=60)
number = st.integers(min_value=0, max_value=10 ** 15).map(lambda n: f"{n:,}")


@settings(max_examples=60, deadline=None)
@given(width=st.integers(min_value=30, max_value=200),
       rows=st.lists(st.tuples(cell, number, number, cell), min_size=1, max_size=6))
def test_any_table_fits_and_keeps_every_number_whole(width, rows):
    cols = [Col("name", FOLD), Col("first number", NUM), Col("second", NUM),
            Col("kind of thing", WORD)]
    con, buf = console(width)
    print_table(con, "title", cols, [list(r) for r in rows])
    text = buf.getvalue()
    assert "…" not in text
    assert max(map(len, text.splitlines()), default=0) <= width
    lines = text.splitlines()
    for r in rows:
        for n in (r[1], r[2]):
            if len(n) <= width - 2:
                assert any(n in line for line in lines), (n, text)


def test_parse_tables_cut_no_location(monkeypatch, capsys):
    from pathlib import Path

    from gmprof.cli import main

    monkeypatch.delenv("COLUMNS", raising=False)
    src = Path(__file__).resolve().parents[2] / "samples" / "em_v1" / "em.cu"
    assert main(["parse", str(src)]) == 0
    out = capsys.readouterr().out
    assert "…" not in out and max(map(len, out.splitlines())) <= 80
    assert "52:47" in out  # X[first * D + i], as line:col in the function's file
