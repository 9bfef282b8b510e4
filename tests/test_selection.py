"""Nsight Compute's launch selection (-k/--kernel-name, -s/--launch-skip, -c/--launch-count)
and -o/--output for `gmprof profile SAMPLE`; the selection logic on its own."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gmprof.errors import OptionError
from gmprof.selection import LaunchSelection

ROOT = Path(__file__).resolve().parents[1]


def _take(sel, names):
    return [sel.take(n) for n in names]


def test_skip_and_count_apply_to_matching_launches_in_order():
    names = ["a", "b<4>", "a", "b<8>", "a", "a"]
    assert _take(LaunchSelection(), names) == [True] * 6
    assert _take(LaunchSelection("a", skip=1, count=2), names) == \
        [False, False, True, False, True, False]
    assert _take(LaunchSelection("b"), names) == [False, True, False, True, False, False]
    assert _take(LaunchSelection("b<8>"), names) == [False, False, False, True, False, False]
    assert _take(LaunchSelection("regex:^b<", count=1), names) == \
        [False, True, False, False, False, False]
    with pytest.raises(OptionError):
        LaunchSelection("regex:(")


def _gmprof(*args, cwd):
    # this checkout's gmprof, whether or not (and wherever) it is pip-installed
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "gmprof", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def test_profile_a_sample_selects_launches_and_writes_by_extension(tmp_path):
    sample = str(ROOT / "samples" / "jcb_v1")  # 4 launches of one kernel at the small size
    r = _gmprof("profile", sample, "-k", "regex:jac", "-s", "1", "-c", "2", "-o", "run.json",
                cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "run.json").read_text())
    (kernel,) = doc["kernels"]
    assert len(kernel["launches"]) == 2
    assert "self-check passed" in r.stderr  # the unprofiled launches ran too
    r = _gmprof("profile", sample, "-o", "run.html", cwd=tmp_path)
    assert r.returncode == 0 and (tmp_path / "run.html").read_text().startswith("<!")


@pytest.mark.parametrize("args, message", [
    (["-k", "nothere"], "no launch of sample jcb_v1 (small) runs a kernel of that name"),
    (["-s", "100"], "no launch of sample jcb_v1 (small) is selected"),
    (["-o", "run.txt"], "name a .json, .html or .csv file"),
    (["-o", "a.json", "--json"], "both ask for the JSON output"),
])
def test_selection_and_output_misuse_is_a_usage_error(args, message, tmp_path):
    r = _gmprof("profile", str(ROOT / "samples" / "jcb_v1"), *args, cwd=tmp_path)
    assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr
    assert list(tmp_path.iterdir()) == []


def test_launch_selection_on_a_file_is_a_usage_error(tmp_path):
    r = _gmprof("profile", str(ROOT / "samples" / "jcb_v1" / "jacobi.cu"), "-k", "jacobi_v1",
                "-c", "1", cwd=tmp_path)
    assert r.returncode == 2 and "select among a sample's launches" in r.stderr
