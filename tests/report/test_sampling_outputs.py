"""Sampled counts' intervals on the command line (issue 28): the terminal's table, the CSV's
LOW/HIGH columns, `gmprof compare`'s check against the exact counts, and --sampling-seed's
usage error. The intervals' arithmetic is tests/report/test_interval.py's."""
from __future__ import annotations

import csv
import io
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KERNEL = r"""
__global__ void gather(const float *a, const int *idx, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (int j = 0; j < 8; ++j) s += a[idx[(i * 8 + j) % n]];
    out[i] = s;
}
"""
LAUNCH = ["--kernel", "gather", "--grid", "8", "--block", "128", "--arg", "a=float32[1024]:random",
          "--arg", "idx=int32[1024]:zeros", "--arg", "out=float32[1024]", "--arg", "n=1024",
          "--backend", "cpu"]


def gmprof(*args):
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["COLUMNS"] = "200"
    return subprocess.run([sys.executable, "-m", "gmprof.cli", *args], env=env,
                          capture_output=True, text=True, timeout=600)


def test_profile_prints_and_writes_the_intervals(tmp_path):
    src = tmp_path / "g.cu"
    src.write_text(KERNEL)
    out = tmp_path / "g.csv"
    r = gmprof("profile", str(src), *LAUNCH, "--sampling", "0.1", "--csv", str(out))
    assert r.returncode == 0, r.stderr
    assert "95% intervals" in r.stdout and "exact binomial" in r.stdout
    rows = {row["array"]: row for row in csv.DictReader(io.StringIO(
        out.read_text().split("\n\n")[0]))}
    # a[idx[...]]: 8 reads a thread, 8192 (every idx is 0: all of a[0]); sampled, with bounds
    a = rows["a"]
    assert a["label"] == "sampled"
    assert float(a["accesses_low"]) <= int(a["accesses"]) <= float(a["accesses_high"])
    assert a["writes_low"] == a["writes_high"] == "0"  # never written
    # out[i] is static: exact, no interval
    assert rows["out"]["label"] == "exact" and rows["out"]["accesses_low"] == ""


def test_compare_checks_the_intervals_against_basic_mode(tmp_path):
    src = tmp_path / "g.cu"
    src.write_text(KERNEL)
    r = gmprof("compare", str(src), *LAUNCH, "--sampling", "0.1,0.01", "--repeat", "1",
               "--sampling-seed", "4")
    assert r.returncode == 0, r.stderr
    assert "sampled accesses against the exact counts" in r.stdout
    # basic mode's exact counts, by hand: a and idx 8 * 1024 = 8192 reads, out 1024 writes
    lines = [l for l in r.stdout.splitlines() if "sampling 0.1 " in l and " a " in l]
    assert lines and "8,192" in lines[0]
    assert "coverage: arrays' accesses" in r.stdout


def test_a_bad_sampling_seed_is_a_usage_error(tmp_path):
    src = tmp_path / "g.cu"
    src.write_text(KERNEL)
    r = gmprof("profile", str(src), *LAUNCH, "--sampling", "0.1", "--sampling-seed", "-3")
    assert r.returncode == 2 and "--sampling-seed" in r.stderr
    assert "Traceback" not in r.stderr


def test_the_coverage_bench_runs(tmp_path):
    env = {k: v for k, v in os.environ.items()}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "bench/sampling_coverage.py", "--samples", "spmv",
                        "--seeds", "1", "--rates", "0.1", "--samplers", "rng", "--json",
                        str(tmp_path / "t.json")], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "| spmv |" in r.stdout and "arrays' accesses:" in r.stdout
    assert (tmp_path / "t.json").read_text().startswith("[")
