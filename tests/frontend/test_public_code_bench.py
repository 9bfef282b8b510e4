"""bench/public_code.py, the parse- and compile-rate measurement of docs/frontend.md, on a tiny
suite written for this test: its counts, derived by hand from the files, and its --out files."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

GOOD = """\
#include "util.h"
__device__ float twice(float x) { return 2.0f * x; }
__global__ void scale(float *a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = twice(a[i]) + BIAS;
}
"""
# a cp1252 byte in a comment (Rodinia myocyte, cuda-samples interval): read, hashed and compiled
UTIL = b"// caf\xe9\n#define BIAS 1.0f\n"
# a kernel whose body the grammar rejects (a structured binding): not parsed, with a warning
BAD = """\
struct P { int x, y; };
__global__ void bound(P *p, int *o) { auto [x, y] = p[0]; o[0] = x + y; }
__global__ void fine(int *o) { o[threadIdx.x] = 1; }
"""


def _suite(tmp_path: Path) -> Path:
    root = tmp_path / "suite"
    (root / "a").mkdir(parents=True)
    (root / "common").mkdir()
    (root / "a" / "good.cu").write_text(GOOD)
    (root / "common" / "util.h").write_bytes(UTIL)
    (root / "a" / "bad.cu").write_text(BAD)
    return root


def _run(tmp_path, *args):
    out = tmp_path / "report.md"
    r = subprocess.run([sys.executable, str(ROOT / "bench" / "public_code.py"), *args,
                        "--jobs", "2", "--out", str(out), f"toy={_suite(tmp_path)}"],
                       capture_output=True, text=True, timeout=600,
                       env={**__import__("os").environ,
                            "GMPROF_PUBLIC_CACHE": str(tmp_path / "nvcc-cache")})
    assert r.returncode == 0, r.stderr
    return out.read_text(), json.loads(out.with_suffix(".json").read_text())


def test_parse_rates_and_out_files(tmp_path):
    md, data = _run(tmp_path, "--no-compile")
    assert data["schema"] == "gmprof.public_code/1"
    (s,) = data["suites"]
    # kernels: scale, bound, fine; bound does not parse. Device functions: twice.
    assert s["kernels"] == [2, 3]
    assert s["device_functions"] == [1, 1]
    assert s["files_read"] == [2, 2]
    assert [f[0] for f in s["not_parsed"]] == ["bound"]
    assert s["silent"] == []          # bound is named by its unparsed-function warning
    assert s["compile"] is None
    assert "| `__global__` functions parsed | 2 | 3 | 66.7% |" in md


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
def test_compile_rates(tmp_path):
    _, data = _run(tmp_path)
    c = data["suites"][0]["compile"]
    # both originals compile with -I common; good.cu compiles instrumented in both modes;
    # bad.cu too (bound is left as written, fine is instrumented)
    assert c["compiled"] == 2 and c["original_compiles"] == 2
    assert c["whole_default"] == [2, 2] and c["whole_basic"] == [2, 2]
    assert c["instrumented_fails"] == []
