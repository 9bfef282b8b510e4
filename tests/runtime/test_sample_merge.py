"""A sample's launches merged as `gmprof profile samples/NAME` merges them: on the GPU the
device arrays' counts stay there (report/where.py) and the static sites' sums are made once per
distinct launch (runtime/decode.static_sum). Expected counts derived by hand for jcb_v1 small:
4 sweeps alternate a -> b and b -> a; a sweep reads each interior point's 4 neighbours of `in`
and writes the interior of `out` once. The report names the parameters (in, out): their counts
are summed over the launches element by element, whichever array each launch passed."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]


def jacobi_counts(ny: int, nx: int, sweeps: int) -> dict:
    """Accesses per element of `in` and of `out` over `sweeps` launches."""
    interior = np.zeros((ny, nx), np.int64)
    interior[1:-1, 1:-1] = 1
    neighbours = np.zeros((ny, nx), np.int64)  # interior points whose stencil reads e
    neighbours[:-2, 1:-1] += 1  # (i-1, j) of each interior (i, j)
    neighbours[2:, 1:-1] += 1
    neighbours[1:-1, :-2] += 1
    neighbours[1:-1, 2:] += 1
    return {"in": sweeps * neighbours.reshape(-1), "out": sweeps * interior.reshape(-1)}


@pytest.mark.parametrize("backend", ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
def test_jcb_v1_small_merged_counts_match_a_hand_model(backend):
    from gmprof.driver import load_sample
    from gmprof.report import where
    from gmprof.runtime.samples import run_sample

    sample = load_sample(ROOT / "samples" / "jcb_v1")
    size = sample.driver.sizes["small"]
    run = run_sample(sample, "small", backend=backend)
    assert run.ok, run.check_error
    report = run.reports["jacobi_v1"]
    want = jacobi_counts(size["ny"], size["nx"], size["sweeps"])
    inner = (size["ny"] - 2) * (size["nx"] - 2)
    for name, reads, writes in (("in", 4 * inner, 0), ("out", 0, inner)):
        arr = report.array(name)
        assert not where.on_device(arr.counts)  # read back once, at the end
        assert arr.label == "exact"
        np.testing.assert_array_equal(arr.counts, want[name], err_msg=name)
        assert (arr.reads, arr.writes) == (size["sweeps"] * reads, size["sweeps"] * writes)
    assert len(report.launches_list()) == size["sweeps"]


def test_static_sums_are_made_once_per_distinct_launch():
    """The same StaticCount objects (a repeated launch) give the same sum object; the sum adds
    every part over the array's counters, a shorter part over its own length."""
    from gmprof.runtime.decode import STATIC_SUMS_KEPT, static_sum
    from gmprof.runtime.static_counts import StaticCount

    p = StaticCount(np.array([1, 2, 3, 4], np.int64), 1, 10, "test")
    q = StaticCount(np.array([5, 5], np.int64), 0, 2, "test")
    cache: dict = {}
    s = static_sum([p, q], 4, cache)
    np.testing.assert_array_equal(s.counts, [6, 7, 3, 4])
    assert (s.out_of_range, s.executions) == (1, 12)
    assert static_sum([p, q], 4, cache) is s
    assert static_sum([q, p], 4, cache) is not s  # another order: another key, same sum
    np.testing.assert_array_equal(static_sum([q, p], 4, cache).counts, s.counts)
    assert s.on(np.zeros(4, np.int64)) is s.counts  # a host array's sum stays on the host
    for k in range(2 * STATIC_SUMS_KEPT):  # bounded
        static_sum([StaticCount(np.full(4, k, np.int64), 0, 0, "test")], 4, cache)
    assert len(cache) <= STATIC_SUMS_KEPT


def test_timing_phases_add_up(monkeypatch):
    """Inner phases are not counted twice: the outer phase keeps only its own seconds."""
    import time

    from gmprof import timing

    monkeypatch.setattr(timing, "_ON", True)
    timing.reset()
    with timing.phase("outer"):
        time.sleep(0.02)
        with timing.phase("inner"):
            time.sleep(0.05)
    got = timing.seconds()
    assert got["inner"] >= 0.05
    assert 0.02 <= got["outer"] < 0.05
    assert got["other"] >= 0


def test_profile_a_sample_without_its_self_check(tmp_path):
    """--no-self-check: the reference is not computed, the document says 'skipped' (valid
    against the run schema), the status is 0."""
    import json
    import os
    import subprocess
    import sys

    out = tmp_path / "run.json"
    r = subprocess.run([sys.executable, "-m", "gmprof", "profile", "samples/spmv", "--backend",
                        "cpu", "--no-self-check", "-o", str(out)], cwd=ROOT,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    assert doc["sample"]["self_check"] == "skipped"
    assert "self-check skipped" in r.stderr
    import jsonschema

    from gmprof.report.check import full_schema

    schema = full_schema()  # run.schema.json and the counter families' fields
    jsonschema.validate(doc, schema)


def test_a_kept_summary_is_dropped_when_the_counts_change():
    """Report.to_host keeps the summary made on the GPU; a merge or new counts make it anew."""
    from gmprof.report.model import ArrayStats, Report, RunInfo

    def report(counts):
        r = Report(RunInfo("k", "cpu", "host", "default", (1, 1, 1), (4, 1, 1), 0))
        r.arrays.append(ArrayStats("a", "device", "int", (4,), 4, 4,
                                   np.array(counts, np.int64)))
        return r

    r = report([1, 0, 2, 3])
    a = r.arrays[0]
    a._summary = (a.counts, a.threshold, {"accesses": -1})  # as to_host leaves it
    assert a.summary() == {"accesses": -1}
    r.merge(report([1, 1, 1, 1]))
    assert a.summary()["accesses"] == 10 and a.summary()["untouched"] == 0
    a._summary = (a.counts, a.threshold, {"accesses": -1})
    a.counts = np.zeros(4, np.int64)
    assert a.summary()["accesses"] == 0


@pytest.mark.gpu
def test_counts_cross_from_the_gpu_unchanged():
    """where.counts_to_host narrows for the copy only: the host gets the same int64 values."""
    import cupy as cp

    from gmprof.report import where

    for values in ([0, 1, 255], [0, 256, 7], [3, 70000], [0, 2 ** 40], [-1, 5], []):
        host = np.array(values, np.int64)
        got = where.counts_to_host(cp.asarray(host))
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, host)
