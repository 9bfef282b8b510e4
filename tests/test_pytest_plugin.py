"""The pytest plugin (gmprof/pytest_plugin.py): its fixtures pass and fail a user's test with
the messages of `gmprof check`, on the CPU backend; it is declared as a pytest11 entry point and
imports nothing of gmprof until a fixture is used. Expected counts are derived by hand (the
kernel is tests/test_check.py's: each in[i] read once per block)."""
from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

from test_check import KERNEL, PROFILE

pytest_plugins = ["pytester"]
ROOT = Path(__file__).resolve().parents[1]
# the installed entry point (if any) is turned off and this checkout's module loaded instead
PLUGIN = ("-p", "no:gmprof", "-p", "gmprof.pytest_plugin")

USER_TESTS = '''
import numpy as np

def profile(gmprof_profile, **kw):
    out, inp = np.zeros(128, np.float32), np.arange(32, dtype=np.float32)
    return gmprof_profile("k.cu", "spread", grid=4, block=32, args=[out, inp], device="cpu",
                          **kw)

def test_holds(gmprof_profile):
    run = profile(gmprof_profile, access_stats=True)
    # 4 blocks x 32 threads read in[t]: 128 reads, 4 (gridDim.x) per element
    run.expect("in", reads=128, reads_per_element="== gridDim.x", untouched=0)
    run.expect_site("5:5", bank_conflict_degree=1).expect_kernel(launches=1)

def test_fails(gmprof_profile):
    profile(gmprof_profile).expect("in", reads_per_element="<= 2")

def test_conflict(gmprof_profile):
    profile(gmprof_profile, access_stats=True).expect_site("6:5", bank_conflict_degree=1)

def test_file(gmprof_check):
    gmprof_check("expect.toml")
'''


def test_fixtures_pass_and_fail_with_the_check_messages(pytester):
    pytester.makefile(".cu", k=KERNEL)
    pytester.makefile(".toml", expect=PROFILE + "[array.in]\nreads = 128\nuntouched = 1\n")
    pytester.makepyfile(test_user=USER_TESTS)
    result = pytester.runpytest(*PLUGIN)
    result.assert_outcomes(passed=1, failed=3)
    result.stdout.fnmatch_lines([
        "E*AssertionError: kernel spread, array in: reads_per_element is 4, expected <= 2",
        "E*AssertionError: kernel spread, site 6:5 s[[]t * 32[]]: bank_conflict_degree is 32, "
        "expected == 1",
        # PROFILE takes lines 1-7, [array.in] line 8: untouched is on line 10
        "E*expect.toml:10:1: error: kernel spread, array in: untouched is 0, expected == 1",
    ])


def test_the_entry_point_and_a_light_import():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["entry-points"]["pytest11"] == {"gmprof": "gmprof.pytest_plugin"}
    tree = ast.parse((ROOT / "gmprof" / "pytest_plugin.py").read_text())
    top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert [a.name for n in top for a in n.names] == ["annotations", "pytest"]
    # loading the plugin loads none of gmprof's stages (only what gmprof/__init__ imports)
    code = ("import sys, gmprof; before = set(sys.modules); import gmprof.pytest_plugin; "
            "print(sorted(m for m in set(sys.modules) - before if m.startswith('gmprof')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True).stdout
    assert out.strip() == "['gmprof.pytest_plugin']"
