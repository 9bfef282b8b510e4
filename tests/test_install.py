"""A normal (non-editable) install works away from the checkout: `gmprof bench --help` and
`gmprof profile SAMPLE_DIR` (CPU backend) with nothing of the source tree on the path.

The package is built from a copy of the checkout's sources and installed with
`pip install --no-deps --no-build-isolation --no-index --target` into a temporary directory
(offline, a few seconds); the commands then run from another temporary directory with only
that target on PYTHONPATH. Building a wheel offline needs setuptools >= 70.1 (or the `wheel`
package) in the interpreter that runs pip: the test extra asks for it, so CI has it; elsewhere
GMPROF_INSTALL_PYTHON may name another interpreter to build with, and without one the test is
skipped and says why.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("pyproject.toml", "README.md", "gmprof", "passes", "grammar", "runtime_cu", "samples")

pytestmark = pytest.mark.install

_CAN_BUILD = ("import setuptools, importlib.util, sys\n"
              "v = tuple(int(x) for x in setuptools.__version__.split('.')[:2])\n"
              "sys.exit(0 if v >= (70, 1) or importlib.util.find_spec('wheel') else 1)\n")


def _builder() -> str:
    python = os.environ.get("GMPROF_INSTALL_PYTHON") or sys.executable
    probe = subprocess.run([python, "-c", _CAN_BUILD], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"{python} cannot build a wheel offline (needs setuptools >= 70.1 or "
                    "wheel; set GMPROF_INSTALL_PYTHON to an interpreter that can)")
    return python


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    python = _builder()
    base = tmp_path_factory.mktemp("install")
    src, site = base / "src", base / "site"
    src.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build")
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, symlinks=True, ignore=ignore)
        else:
            shutil.copy2(path, src / name)
    done = subprocess.run([python, "-m", "pip", "install", "--no-deps", "--no-build-isolation",
                           "--no-index", "--disable-pip-version-check", "--quiet",
                           "--target", str(site), str(src)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return site


def _gmprof(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(site))
    # the entry point pip wrote, run with this interpreter (which has the dependencies)
    return subprocess.run([sys.executable, str(site / "bin" / "gmprof"), *args], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=120)


def test_installed_package_is_the_one_imported(installed, tmp_path):
    env = dict(os.environ, PYTHONPATH=str(installed))
    done = subprocess.run([sys.executable, "-c", "import gmprof.passes.plan as p; print(p.__file__)"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()).is_relative_to(installed)


def test_bench_help_from_an_install(installed, tmp_path):
    done = _gmprof(installed, tmp_path, "bench", "--help")
    assert done.returncode == 0, done.stderr
    assert "usage: gmprof bench" in done.stdout


def test_profile_a_sample_from_an_install(installed, tmp_path):
    sample = installed / "gmprof" / "samples" / "matmul_tiled"
    assert (sample / "driver.py").is_file()  # the samples ship with the package
    done = _gmprof(installed, tmp_path, "profile", str(sample), "--backend", "cpu")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "self-check passed" in done.stderr
    assert not list(tmp_path.iterdir())  # nothing written where it ran


def test_an_installed_page_carries_its_script(installed, tmp_path):
    # report.html and report.js ship with the package (pyproject.toml's package data)
    sample = installed / "gmprof" / "samples" / "jcb_v1"
    done = _gmprof(installed, tmp_path, "profile", str(sample), "--backend", "cpu",
                   "--out", "page.html")
    assert done.returncode == 0, done.stdout + done.stderr
    page = (tmp_path / "page.html").read_text()
    assert "function HeatMap(box)" in page and 'class="heatmap"' in page


def test_version_and_python_m():
    """`gmprof --version` and `python -m gmprof` work as the console script does."""
    import subprocess
    import sys

    import gmprof

    r = subprocess.run([sys.executable, "-m", "gmprof", "--version"], capture_output=True,
                       text=True)
    assert r.returncode == 0 and r.stdout.strip() == f"gmprof {gmprof.__version__}"
    r = subprocess.run([sys.executable, "-m", "gmprof"], capture_output=True, text=True)
    assert r.returncode == 2 and "usage: gmprof" in r.stderr and "Traceback" not in r.stderr
