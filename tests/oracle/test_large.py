"""The oracle's large regime (large.py) in CI: its families at the small scale on the CPU
backend against their closed-form models, also with counters that start near 2^32 (widen.py's
test build: the launch must widen and stay exact), and the large scale's draws (models only:
each has a count past 2^32). The large scale itself runs on a GPU:
`python3 bench/oracle.py --large 200 --scale large --backend gpu`."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1] / "bench"))

import large  # noqa: E402

SEEDS = range(10)  # two of each family


def _profile(kernels, mode_override=None):
    import harness

    import gmprof

    prof = gmprof.api.profiler("".join(k.cuda() for k in kernels), backend="cpu")
    out, line = [], 0
    for k in kernels:
        for mode in mode_override or k.modes:
            args = [a.copy() if isinstance(a, np.ndarray) else a for a in k.args]
            report = prof.launch(k.name, k.grid, k.block, args, mode=harness.parse_mode(mode))
            out.append((k, mode, report, large.compare(k, report, line)))
        line += len(k.lines)
    return out


def test_small_scale_matches_the_models():
    got = _profile([large.draw(s, "small") for s in SEEDS], ("default", "SA", "basic"))
    assert not [(k.name, m, w) for k, m, _, w in got if w]


def test_counters_near_their_limit_widen_and_stay_exact(monkeypatch):
    from gmprof.runtime import widen

    monkeypatch.setattr(widen, "counter_origin", 2 ** 32 - 3_000)
    got = _profile([large.draw(s, "small") for s in SEEDS], ("default", "basic"))
    assert not [(k.name, m, w) for k, m, _, w in got if w]
    # the measured families' launches passed the headroom: they ran again, wide
    wide = {(k.family, m) for k, m, r, _ in got if "64-bit" in r.run.mode}
    assert ("hot_uniform", "basic") in wide and ("passes", "basic") in wide


def test_a_wrong_model_is_caught():
    k = large.draw(2, "small")  # passes
    k.expected.counts["x"] = k.expected.counts["x"] + 1
    (_, _, _, wrong), = _profile([k], ("default",))
    assert any(w.startswith("x: counts differ") for w in wrong)


@pytest.mark.parametrize("seed", range(10))
def test_large_draws_pass_2_to_the_32(seed):
    assert large.draw(seed, "large").expected.largest() > large.LIMIT
