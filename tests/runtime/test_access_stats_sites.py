"""Issue 27's overhead criterion, the part that needs no GPU (bench/stats_sites.py): on the
paper's six samples, --access-stats hooks no site that default mode counts by formula or once
per loop entry; its only additions are statistics calls beside the once-per-entry counts of
sites default mode hooks. (The times themselves: bench/stats_overhead.sh on a GPU.)"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import stats_sites  # noqa: E402

# the hooks default mode gives each sample's kernels at the small size (bench/counted_sites.py:
# co's three loop counts and its histogram; spmv's gather and its two twins; the rest static)
HOOKS = {"co": 4, "em_v1": 0, "bo_v2": 0, "jcb_v1": 0, "spmv": 3, "dxtc": 0}
# statistics calls: beside co's range, spread and range; beside spmv's gather and twins
STATS_CALLS = {"co": 3, "spmv": 3}


@pytest.mark.parametrize("name", sorted(HOOKS))
def test_access_stats_adds_no_hook(name):
    rows = stats_sites.sample_rows(name, "small", "both")
    assert rows
    for r in rows:
        assert r["problems"] == [], r["kernel"]
        assert r["hooks_stats"] == r["hooks"], r["kernel"]
    assert sum(r["hooks"] for r in rows) == HOOKS[name]
    assert sum(r["stats_calls"] for r in rows) == STATS_CALLS.get(name, 0)


def test_the_script_says_ok():
    r = subprocess.run([sys.executable, "bench/stats_sites.py", "--samples", "co,dxtc"],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "FAILS" not in r.stdout and r.stdout.count(" ok") == 2
