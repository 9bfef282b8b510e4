"""bench/check_counts.py's hand-derived counts (tiled matmul, the paper's transpose, a Jacobi
tile), checked on the CPU backend in every exact mode: the one count check whose expectations
are derived by hand runs in CI, not only on a GPU."""
from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _check_counts():
    spec = importlib.util.spec_from_file_location("check_counts",
                                                  ROOT / "bench" / "check_counts.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_hand_derived_counts_on_cpu():
    cc = _check_counts()
    ok, rows = cc.run("cpu", 32, quiet=True)
    assert len(rows) == 3 * len(cc.MODES), rows  # every kernel in every mode was run
    # basic, SA, SA-SM, default: the exact modes, first in MODES
    assert [m for m, _ in cc.MODES[:4]] == ["basic", "SA", "SA-SM", "default"]
    exact = [r for i, r in enumerate(rows) if i % len(cc.MODES) < 4]
    bad = [r for r in exact if not r[4]]
    assert not bad, bad
    assert all(r[3] for r in rows), [r for r in rows if not r[3]]  # outputs identical
    assert ok
