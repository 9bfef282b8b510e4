"""The device-machine scripts' plumbing, without a GPU (what they measure needs one)."""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_time_to_answer_writes_its_table(tmp_path):
    r = subprocess.run([sys.executable, "bench/time_to_answer.py", "--backend", "cpu",
                        "--samples", "matmul_tiled,spmv", "--deadline", "-1", "--out",
                        str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "time-to-answer.json").read_text())
    assert [row["sample"] for row in doc["rows"]] == ["matmul_tiled", "spmv"]
    assert doc["meta"]["device"].startswith("CPU backend")
    assert "| spmv | not run (deadline) |" in (tmp_path / "time-to-answer.md").read_text()


def test_gpu_session_skips_what_is_missing(tmp_path):
    r = subprocess.run([sys.executable, "bench/gpu_session.py", "--out", str(tmp_path),
                        "--steps", "counts", "--budget", "0"], cwd=ROOT, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    (entry,) = json.loads((tmp_path / "session.json").read_text())
    assert entry == {"step": "counts", "status": "skipped: the call's budget is spent"}


def test_host_overhead_runs_a_sample_without_its_kernels(tmp_path):
    out = tmp_path / "rows.json"
    r = subprocess.run([sys.executable, "bench/host_overhead.py", "--size", "small",
                        "--json", str(out), "matmul_naive"], cwd=ROOT, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    rows = json.loads(out.read_text())
    assert [row["sample"] for row in rows] == ["matmul_naive"]
    assert rows[0]["cpu_s"] > 0 and rows[0]["size"] == "small"
