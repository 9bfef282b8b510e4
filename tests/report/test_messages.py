"""What the report says about a run does not contradict itself (issue 29): where the counters
lived and how many bytes they took, whether outputs were compared, the names of memory spaces,
thresholded lower bounds beside exact reads, and what `accuracy loss` means. Reports are made
by hand (no kernel runs), except `gmprof compare`'s."""
from __future__ import annotations

import io
import re

import numpy as np
from rich.console import Console

from gmprof.cli import main
from gmprof.report.document import document
from gmprof.report.html import html_text
from gmprof.report.model import ArrayStats, Report, RunInfo
from gmprof.report.terminal import kernel_heading, render

NONE_WHY = ("none: every count of this kernel comes from formulas at launch (no counter on "
            "the device)")


def heading(**run) -> list[str]:
    info = RunInfo("k", "cpu", "CPU backend", "default", (1, 1, 1), (32, 1, 1), 0)
    for key, value in run.items():
        setattr(info, key, value)
    a = ArrayStats("a", "device", "float", (4,), 4, 4, np.ones(4, np.int64), reads=4)
    return kernel_heading(document([Report(info, [a], [])])["kernels"][0])


def test_a_kernel_counted_by_formulas_only_says_no_counter_and_no_size():
    (line,) = [x for x in heading(counter_bytes=24_924, counters_in="device memory",
                                  counters_why=NONE_WHY) if x.startswith("counters:")]
    assert line == ("counters: none: every count of this kernel comes from formulas at launch "
                    "(no counter on the device)")


def test_device_arrays_counters_are_not_said_to_be_in_shared_memory():
    # co large: the device array's shadow counters (in device memory) dwarf the blocks' area
    (line,) = [x for x in heading(counter_bytes=1_111_930_208, counters_in="shared memory",
                                  block_counter_bytes=2_084,
                                  counters_why="SM mode: the block's counters live in shared "
                                               "memory") if x.startswith("counters:")]
    assert line == ("counters: 1,111,930,208 bytes in device memory and 2,084 bytes a block in "
                    "shared memory (SM mode: the block's counters live in shared memory)")


def test_device_memory_counters_say_why_once():
    (line,) = [x for x in heading(counter_bytes=57_392, counters_in="device memory",
                                  counters_why="device memory (no SM in this mode)")
               if x.startswith("counters:")]
    assert line == "counters: 57,392 bytes in device memory (no SM in this mode)"


def _summary_outputs(identical) -> str:
    info = RunInfo("k", "cpu", "CPU backend", "default", (1, 1, 1), (32, 1, 1), 0)
    info.outputs_identical = identical
    a = ArrayStats("a", "device", "float", (4,), 4, 4, np.ones(4, np.int64), reads=4)
    page = html_text(document([Report(info, [a], [])]))
    summary = page[page.index('<section id="summary">'):page.index("</section>")]
    return re.findall(r"<td>(?:<span class=\"\w+\">)?(identical|DIFFER|not compared)", summary)


def test_html_says_outputs_identical_only_when_they_were_compared():
    assert _summary_outputs(True) == ["identical"]
    assert _summary_outputs(False) == ["DIFFER"]
    # a whole program's launches are not compared (None): not "identical" in green
    assert _summary_outputs(None) == ["not compared"]


def test_memory_spaces_are_named_in_cudas_words():
    info = RunInfo("k", "cpu", "CPU backend", "default", (1, 1, 1), (32, 1, 1), 64)
    arrays = [ArrayStats("dyn", "shared_dynamic", "float", (16,), 4, 4, np.ones(16, np.int64),
                         reads=16),
              ArrayStats("g", "global", "int", (4,), 4, 4, np.ones(4, np.int64), reads=4)]
    doc = document([Report(info, arrays, [])])
    buf = io.StringIO()
    render(doc, Console(file=buf, width=120, color_system=None))
    text, page = buf.getvalue(), html_text(doc)
    for shown in (text, page):
        assert "dynamic shared" in shown and "__device__" in shown
        assert "shared_dynamic" not in shown
    assert doc["kernels"][0]["arrays"][0]["space"] == "shared_dynamic"  # the data keeps its name


def test_a_thresholded_lower_bound_is_not_below_the_reads_beside_it():
    # 4 counters saturated at 3 (their sum, 12, is a lower bound); the sites' executions say the
    # array was read 18 times: the accesses are at least 18
    info = RunInfo("k", "cpu", "CPU backend", "SA-SM-TH", (1, 1, 1), (32, 1, 1), 0)
    a = ArrayStats("A", "device", "float", (4,), 4, 4, np.full(4, 3, np.int64), reads=18,
                   writes=0, label="thresholded", threshold=3)
    doc = document([Report(info, [a], [])])
    entry = doc["kernels"][0]["arrays"][0]
    assert (entry["accesses"], entry["at_threshold"]) == (18, 4)
    buf = io.StringIO()
    render(doc, Console(file=buf, width=200, color_system=None))
    row = next(line for line in buf.getvalue().splitlines() if line.startswith("A "))
    assert ">=18 " in row and ">=12" not in row
    # a sampled count is an estimate, not a bound: the sum stays as counted
    s = ArrayStats("S", "device", "float", (4,), 4, 4, np.full(4, 3, np.int64), reads=18,
                   writes=0, label="sampled", threshold=3, sampling=0.5)
    assert document([Report(info, [s], [])])["kernels"][0]["arrays"][0]["accesses"] == 12


def test_compare_gives_accuracy_loss_a_unit_and_a_definition(tmp_path, capsys):
    src = tmp_path / "k.cu"
    src.write_text("__global__ void k(float *a) { a[threadIdx.x] = 2.0f * a[threadIdx.x + 32]; }\n")
    assert main(["compare", str(src), "--kernel", "k", "--grid", "1", "--block", "32",
                 "--arg", "a=float32[64]:random", "--repeat", "1", "--sampling", "0.5",
                 "--backend", "cpu"]) == 0
    out = capsys.readouterr().out
    basic = next(line for line in out.splitlines() if line.startswith("basic"))
    assert "0.00%" in basic  # the reference against itself
    assert "accuracy loss: the mean relative error of the per-element counts against basic " \
        "mode's exact ones" in " ".join(out.split())
