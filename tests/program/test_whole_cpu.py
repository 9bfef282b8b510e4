"""samples/app_stencil built with `make NVCC="gmprof nvcc"` and run on the CPU backend: the program
computes what it computes natively, and its report equals `gmprof profile` on the same kernel and
launch, and an independent numpy model of the accesses (tests/program/stencil_model.py)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from conftest import APP, gmprof, report_json, run_app
from stencil_model import fill_counts, stencil_counts


def report_of(directory, *files):
    return report_json(directory, *files)


@pytest.fixture(scope="module")
def stencil_second(app_build):
    """The second launch of `stencil` (launch-skip 1, count 1) of a run of 40 x 24, 3 steps."""
    out = app_build / "second.json"
    proc = run_app(app_build, 40, 24, 3, GMPROF_KERNEL="stencil", GMPROF_LAUNCH_SKIP=1,
                   GMPROF_LAUNCH_COUNT=1, GMPROF_OUTPUT=out)
    assert proc.returncode == 0, proc.stderr
    assert "PASSED" in proc.stdout
    return report_of(app_build, out)


def test_program_output_unchanged(app_build):
    proc = run_app(app_build, 40, 24, 3, GMPROF_OUTPUT=app_build / "any.json")
    assert proc.returncode == 0
    assert proc.stdout.splitlines() == ["grid 40 x 24, 3 steps", "checksum 1919.250000",
                                        "PASSED"]


def test_selected_launch_matches_model(stencil_second):
    kernels = stencil_second["kernels"]
    assert list(kernels) == ["stencil"]
    rep = kernels["stencil"]
    assert rep["run"]["launches"] == 1
    assert rep["run"]["grid"] == [3, 2, 1] and rep["run"]["block"] == [16, 16, 1]
    assert stencil_second["processes"][0]["launches"] == 5  # 2 fills, 3 stencils
    assert stencil_second["processes"][0]["profiled"] == 1


def test_whole_program_equals_single_launch(app_build):
    """The same kernel and launch through `gmprof profile` (the Python path): every array's
    counts per element, and every site's executions, are equal."""
    from gmprof.mode import Mode
    from gmprof.runtime.session import Profiler

    for mode in ("default", "basic"):
        out = app_build / f"eq-{mode}.json"
        # a build per mode: the mode is the instrumented copy's
        d = app_build / f"build-{mode}"
        d.mkdir(exist_ok=True)
        for f in APP.iterdir():
            if f.is_file():
                (d / f.name).write_bytes(f.read_bytes())
        from conftest import make

        make(d, GMPROF_MODE=mode)
        proc = run_app(d, 40, 24, 3, GMPROF_KERNEL="stencil", GMPROF_LAUNCH_COUNT=1,
                       GMPROF_OUTPUT=out)
        assert proc.returncode == 0, proc.stderr
        whole = report_of(d, out)["kernels"]["stencil"]
        prof = Profiler(d / "kernels.cu", backend="cpu")
        a = np.random.default_rng(0).random(40 * 24).astype(np.float32)
        single = prof.launch("stencil", (3, 2), (16, 16),
                             [a, np.zeros_like(a), np.int32(40), np.int32(24)],
                             mode=Mode.parse(mode))
        from gmprof.report.render import to_json

        ref = to_json(single, include_counts=True)
        full = report_of(d, out)
        assert [x["name"] for x in whole["arrays"]] == [x["name"] for x in ref["arrays"]]
        model = stencil_counts(40, 24)
        for got, want in zip(whole["arrays"], ref["arrays"]):
            for key in ("accesses", "reads", "writes", "min", "max", "untouched",
                        "out_of_range", "label", "counters"):
                assert got[key] == want[key], (mode, got["name"], key)
            r, w = model[got["name"]]
            assert got["reads"] == r.sum() and got["writes"] == w.sum()
        assert [(s["location"].split(":", 1)[1], s["executions"], s["how"])
                for s in whole["sites"]] == \
            [(s["location"].split(":", 1)[1], s["executions"], s["how"]) for s in ref["sites"]]
        assert full["kernels"]["stencil"]["arrays"] == whole["arrays"]


def test_counts_per_element_match_model(app_build):
    """Per-element counts of one stencil launch and both fills (basic: every access counted on
    the device), from the JSON with counts."""
    from gmprof.program.records import decode

    out = app_build / "all.json"
    proc = run_app(app_build, 40, 24, 1, GMPROF_OUTPUT=out)
    assert proc.returncode == 0
    result = decode([out])
    model = stencil_counts(40, 24)
    st = result.reports["stencil"]
    for name, (r, w) in model.items():
        assert np.array_equal(st.array(name).counts, r + w), name
    fill = result.reports["fill"]
    assert fill.run.launches == 2  # the <<<>>> launch and the cudaLaunchKernel one
    r, w = fill_counts(40, 24)["a"]
    # both launches wrote their own buffer: `a` is summed over two allocations of one shape
    assert np.array_equal(fill.array("a").counts, 2 * (r + w))


def test_launch_selection(app_build):
    from gmprof.program.records import decode

    cases = [({"GMPROF_KERNEL": "fill"}, {"fill": 2}),
             ({"GMPROF_KERNEL": "regex:^st"}, {"stencil": 3}),
             ({"GMPROF_LAUNCH_SKIP": 1, "GMPROF_LAUNCH_COUNT": 2}, {"fill": 1, "stencil": 1}),
             ({"GMPROF_LAUNCH_COUNT": 0}, {}),
             ({"GMPROF_KERNEL": "nothing"}, {})]
    for k, (extra, want) in enumerate(cases):
        out = app_build / f"sel{k}.json"
        proc = run_app(app_build, 40, 24, 3, GMPROF_OUTPUT=out, **extra)
        assert proc.returncode == 0 and "PASSED" in proc.stdout
        got = {name: r.run.launches for name, r in decode([out]).reports.items()}
        assert got == want, extra


def test_report_file_names(app_build):
    proc = run_app(app_build, 16, 16, 1, GMPROF_OUTPUT="r-%q{RANK}-%p-%%.json", RANK="7")
    assert proc.returncode == 0
    names = [p.name for p in app_build.glob("r-7-*-%.json")]
    assert len(names) == 1 and names[0][4:-7].isdigit()


def test_two_processes_merge(app_build):
    """Two runs (two processes) merged by `gmprof report`: totals are the sums, and the
    breakdown has one row per process."""
    files = []
    for k in range(2):
        out = app_build / f"proc{k}.json"
        proc = run_app(app_build, 40, 24, 1 + k, GMPROF_OUTPUT=out, GMPROF_KERNEL="stencil")
        assert proc.returncode == 0
        files.append(out)
    merged = report_of(app_build, *files)
    st = merged["kernels"]["stencil"]
    assert st["run"]["launches"] == 3
    one = stencil_counts(40, 24)
    assert {a["name"]: a["accesses"] for a in st["arrays"]} == \
        {n: 3 * int((r + w).sum()) for n, (r, w) in one.items()}
    pids = {b["pid"] for b in merged["breakdown"]}
    assert len(pids) == 2 and len(merged["processes"]) == 2
    assert sum(b["launches"] for b in merged["breakdown"]) == 3
