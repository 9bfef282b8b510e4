"""Shared set-up for the whole-program tests: gmprof's command line in a subprocess (as make
calls it), the CPU backend, a private compile cache."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "samples" / "app_stencil"
GMPROF = f"{sys.executable} -m gmprof.cli"


def env(**extra) -> dict:
    e = dict(os.environ)
    e["PYTHONPATH"] = str(ROOT) + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
    e["GMPROF_BACKEND"] = "cpu"
    e.setdefault("GMPROF_CACHE_DIR", str(Path(os.environ.get("TMPDIR", "/tmp")) /
                                         "gmprof-test-cache"))
    e.update({k: str(v) for k, v in extra.items()})
    return e


def gmprof(*args, cwd=None, check=True, **extra) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "gmprof.cli", *map(str, args)], cwd=cwd,
                          env=env(**extra), capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise AssertionError(f"gmprof {' '.join(map(str, args))} failed ({proc.returncode}):\n"
                             f"{proc.stdout}\n{proc.stderr}")
    return proc


def report_json(directory, *files) -> dict:
    """`gmprof report --json FILES` read back: the run document (gmprof.run/2) with its kernels
    keyed by name expression, and the program's part (processes, breakdown) at the top."""
    import json

    doc = json.loads(gmprof("report", "--json", *files, cwd=directory).stdout)
    assert doc["schema"] == "gmprof.run/2"
    return {"kernels": {k["kernel"]: k for k in doc["kernels"]}, **doc["program"], "doc": doc}


def make(directory: Path, *targets, **extra) -> subprocess.CompletedProcess:
    proc = subprocess.run(["make", f"NVCC={GMPROF} nvcc", *targets], cwd=directory,
                          env=env(**extra), capture_output=True, text=True)
    if proc.returncode != 0:
        raise AssertionError(f"make failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


@pytest.fixture(scope="session")
def need_gxx():
    if shutil.which("g++") is None or shutil.which("make") is None:
        pytest.skip("needs g++ and make")


@pytest.fixture(scope="module")
def app_build(tmp_path_factory, need_gxx):
    """samples/app_stencil built with `make NVCC="gmprof nvcc"` on the CPU backend."""
    d = tmp_path_factory.mktemp("app")
    for f in APP.iterdir():
        if f.is_file():
            shutil.copy(f, d / f.name)
    make(d)
    return d


def run_app(directory: Path, *args, **extra) -> subprocess.CompletedProcess:
    return subprocess.run([str(directory / "app_stencil"), *map(str, args)], cwd=directory,
                          env=env(**extra), capture_output=True, text=True)
