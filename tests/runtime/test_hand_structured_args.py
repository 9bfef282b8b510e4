"""`--arg p=FILE.npy` with a structured numpy array (an array of structs, issue 24) is passed
as its bytes, with its layout: it was refused ("does not hold a numeric array"), so an
array-of-structs kernel could not be profiled from the command line. Its itemsize is checked
against the kernel parameter's struct (a located error, exit 2, when they differ). Expected
counts derived by hand."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from gmprof.argspec import parse_arg
from gmprof.errors import InputError

SOURCE = r"""
struct Pt { float x, y; int m; };   // 12 bytes
__global__ void mass(const Pt *p, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (p[i].x + p[i].y) * p[i].m + p[p[i].m].y;
}
"""

PT = np.dtype([("x", "<f4"), ("y", "<f4"), ("m", "<i4")])


def _points(n):
    pts = np.zeros(n, PT)
    pts["x"] = np.arange(n)
    pts["y"] = 0.5 * np.arange(n)
    pts["m"] = (7 * np.arange(n)) % 5
    return pts


def _profile(tmp_path, npy, mode="default", *extra):
    src = tmp_path / "aos.cu"
    src.write_text(SOURCE)
    cmd = [sys.executable, "-m", "gmprof", "profile", str(src), "--kernel", "mass",
           "--grid", "2", "--block", "16", "--arg", f"p={npy}", "--arg", "out=float32[24]:zeros",
           "--arg", "n=24", "--backend", "cpu", "--mode", mode, *extra]
    return subprocess.run(cmd, capture_output=True, text=True)


def test_parse_arg_accepts_records(tmp_path):
    rng = np.random.default_rng(0)
    pts = _points(6)
    np.save(tmp_path / "pts.npy", pts)
    name, arr = parse_arg(f"p={tmp_path / 'pts.npy'}", rng)
    assert name == "p" and arr.dtype == PT and arr.tobytes() == pts.tobytes()
    np.save(tmp_path / "dates.npy", np.array(["2026-11-26"], dtype="datetime64[D]"))
    with pytest.raises(InputError, match="numeric or structured"):
        parse_arg(f"p={tmp_path / 'dates.npy'}", rng)


@pytest.mark.parametrize("mode", ["default", "SA", "basic"])
def test_structured_npy_from_the_cli(tmp_path, mode):
    n = 24
    pts = _points(n)
    np.save(tmp_path / "pts.npy", pts)
    out_json = tmp_path / "run.json"
    r = _profile(tmp_path, tmp_path / "pts.npy", mode, "-o", str(out_json))
    assert r.returncode == 0, r.stderr
    run = json.loads(out_json.read_text())
    kernel = run["kernels"][0]
    assert kernel["run"]["outputs_identical"]
    arrays = {a["name"]: a for a in kernel["arrays"]}
    # thread i < 24 reads p[i].x, p[i].y, p[i].m, p[i].m again as the index (4 reads of
    # struct i: a struct array counts per struct) and p[m_i].y with m_i = 7i mod 5
    want = np.full(n, 4) + np.bincount((7 * np.arange(n)) % 5, minlength=n)
    assert arrays["p"]["counts"] == want.tolist()
    assert arrays["out"]["counts"] == [1] * n
    assert "error" not in r.stderr


def test_itemsize_mismatch_is_a_located_error(tmp_path):
    # numpy packs fields: x (4), y (8 bytes, at 4), m (4, at 12) = 16 bytes, not the 12 of Pt
    bad = np.zeros(24, np.dtype([("x", "<f4"), ("y", "<f8"), ("m", "<i4")]))
    np.save(tmp_path / "bad.npy", bad)
    out_json = tmp_path / "run.json"
    r = _profile(tmp_path, tmp_path / "bad.npy", "default", "-o", str(out_json))
    assert r.returncode == 2
    assert "aos.cu:3:22: error:" in r.stderr and "12 bytes" in r.stderr and \
        "16-byte elements" in r.stderr
    assert "Traceback" not in r.stderr
    assert not out_json.exists()
