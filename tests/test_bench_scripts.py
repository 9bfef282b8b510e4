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


def _fake_suite(root: Path) -> Path:
    """A suite laid out as cuda-samples is (written here, not copied): one sample that needs
    only the CUDA runtime, one that links cuBLAS, one the suite skips."""
    for name, links in (("hello", "CUDA::cudart"), ("blas", "CUDA::cublas"), ("gl", "")):
        d = root / "Samples" / "0_Introduction" / name
        d.mkdir(parents=True)
        (d / "CMakeLists.txt").write_text(
            f"project({name} LANGUAGES CXX CUDA)\nfind_package(CUDAToolkit REQUIRED)\n"
            f"add_executable({name} {name}.cu)\n"
            + (f"target_link_libraries({name} PRIVATE {links})\n" if links else "")
            + "set_target_properties(x PROPERTIES CUDA_SEPARABLE_COMPILATION ON)\n")
        (d / f"{name}.cu").write_text("int main() { return 0; }\n")
        (d / "doc").mkdir()
        (d / "doc" / "big.pdf").write_text("x")
    (root / "Common").mkdir()
    (root / "test_args.json").write_text(json.dumps({"gl": {"skip": True}}))
    return root


def test_whole_programs_plumbing(tmp_path):
    sys.path.insert(0, str(ROOT / "bench"))
    import whole_programs as W

    suite = _fake_suite(tmp_path / "suite")
    assert sorted(W.candidates(suite)) == ["gl", "hello"]
    hello = suite / "Samples" / "0_Introduction" / "hello"
    assert W.sources(hello) == ["hello.cu"] and W.cmake_flags(hello) == ["-rdc=true"]
    assert W.test_args(suite, "gl") == ([], True)
    assert W.normalise("time 1.5 ms\nvalue 3 at 0x7ffd12345678") == ["time # ms",
                                                                    "value 3 at 0x#"]
    W.trim(suite, tmp_path / "trimmed")
    assert (tmp_path / "trimmed" / "Samples" / "0_Introduction" / "hello" / "hello.cu").is_file()
    assert not (tmp_path / "trimmed" / "Samples" / "0_Introduction" / "blas").exists()
    assert not list((tmp_path / "trimmed").rglob("*.pdf"))
    r = subprocess.run([sys.executable, "bench/whole_programs.py", "--suite", str(suite),
                        "--backend", "cpu", "--deadline", "-1", "--out", str(tmp_path / "o")],
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "o" / "whole-programs.json").read_text())
    assert [x["reason"] for x in doc["results"]] == ["not run (--deadline)"] * 2
    assert doc["meta"]["finished"] and doc["meta"]["suite_rev"] == "(revision unknown)"
    assert "| hello | - |" in (tmp_path / "o" / "whole-programs.md").read_text()


def test_host_overhead_runs_a_sample_without_its_kernels(tmp_path):
    out = tmp_path / "rows.json"
    r = subprocess.run([sys.executable, "bench/host_overhead.py", "--size", "small",
                        "--json", str(out), "matmul_naive"], cwd=ROOT, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    rows = json.loads(out.read_text())
    assert [row["sample"] for row in rows] == ["matmul_naive"]
    assert rows[0]["cpu_s"] > 0 and rows[0]["size"] == "small"


def test_overheads_writes_its_tables(tmp_path):
    """bench/overheads.py --out: the per-profile table, Tables 1-2 and the sampling figure's
    table in overheads.md with the command and device; what the budget left out is named."""
    r = subprocess.run([sys.executable, "bench/overheads.py", "--backend", "cpu", "--size",
                        "small", "--samples", "spmv", "--modes", "default:dm", "--repeat", "1",
                        "--max-launches", "1", "--out", str(tmp_path)], cwd=ROOT,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "overheads.json").read_text())
    assert [(row["sample"], row["mode"], row["profile"]) for row in doc["profiles"]] == \
        [("spmv", "default", "dm")]
    assert doc["info"]["device"].startswith("CPU backend")
    md = (tmp_path / "overheads.md").read_text()
    assert "bench/overheads.py --backend cpu" in md and "## Mode default: overhead per profile" in md
    assert "| target (issue 17) | | 0.15x |" in md
    assert "## Table 2: device-memory profiling" in md
    r = subprocess.run([sys.executable, "bench/overheads.py", "--backend", "cpu", "--size",
                        "small", "--samples", "spmv", "--modes", "default:dm", "--paper",
                        "--budget-s", "0", "--out", str(tmp_path)], cwd=ROOT,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "overheads.json").read_text())
    assert "spmv basic:shm" in doc["not_run"] and "spmv SA-NA:dm" in doc["not_run"]
    assert "Not run (the call's time budget was spent)" in (tmp_path / "overheads.md").read_text()


def test_ab_timing_placements_dry_run():
    """bench/ab_timing.py --placements on the CPU backend: both placements of the
    once-per-entry counts are built and timed in one run (the GPU rows need a device)."""
    r = subprocess.run([sys.executable, "bench/ab_timing.py", "co", "--profile", "shm",
                        "--placements", "--size", "small", "--backend", "cpu", "--rounds", "1",
                        "--reps", "1"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "  entry " in r.stdout and "  first iteration " in r.stdout


def test_static_sites_lists_each_static_site_and_its_method():
    r = subprocess.run([sys.executable, "bench/static_sites.py", "spmv", "--size", "small"],
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = [line for line in r.stdout.splitlines() if " site " in line]
    # spmv's nine static sites (its three data-dependent ones are counted at run time)
    assert len(lines) == 9 and not any("DEMOTED" in line for line in lines)
    assert any("bounds[local]" in line and "blocks" in line for line in lines)


def test_advice_pairs_names_v2s_change_and_predicts_its_counts():
    """bench/advice_pairs.py on two pairs: nbody_global's pos is staged (n = 200 bodies, 4
    blocks of 64: each block reads each body once, 4 x 200 = 800, and each thread its own body,
    200 more: 1,000 = what nbody_shared reads), transpose's tile padded (720 + 100 wavefronts ->
    360, what transpose_padded makes)."""
    r = subprocess.run([sys.executable, "bench/advice_pairs.py", "--json", "--pairs",
                        "nbody_global,transpose_naive"], cwd=ROOT, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    rows = {row["array"]: row for row in json.loads(r.stdout)}
    assert rows["pos"]["top_advice"] == "stage" and rows["pos"]["predicted"] == 4 * 200 + 200
    assert rows["pos"]["v2"] == 1000 and rows["pos"]["ok"]
    assert rows["shared_data"]["top_advice"] == "padding" and rows["shared_data"]["ok"]


TINY = r"""
#include <cstdio>
// doubles n values (n from ../../data/tiny/in.txt); one launch
__global__ void twice(int *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = 2 * i;
}
int main() {
  int n = 0;
  FILE *f = fopen("../../data/tiny/in.txt", "r");
  if (!f || fscanf(f, "%d", &n) != 1) return 3;
  fclose(f);
  int *a, h[64];
  cudaMalloc(&a, n * sizeof(int));
  twice<<<(n + 31) / 32, 32>>>(a, n);
  cudaMemcpy(h, a, n * sizeof(int), cudaMemcpyDeviceToHost);
  long s = 0;
  for (int i = 0; i < n; i++) s += h[i];
  printf("sum %ld\nKERNEL TOOK %f\n", s, (double)clock() / CLOCKS_PER_SEC);
  FILE *o = fopen("out.txt", "w");
  fprintf(o, "%ld\n", s);
  fclose(o);
  return 0;
}
"""


def test_rodinia_plumbing(tmp_path, monkeypatch):
    """bench/rodinia.py on a suite laid out as Rodinia is (written here): an application whose
    Makefile includes ../../common/make.config, names nvcc as $(CUDA_DIR)/bin/nvcc in CC and
    asks for sm_20, and reads a data/ file that the suite keeps compressed."""
    import lzma
    import shutil

    if shutil.which("g++") is None or shutil.which("make") is None:
        import pytest

        pytest.skip("needs g++ and make")
    sys.path.insert(0, str(ROOT / "bench"))
    import rodinia as R

    suite = tmp_path / "rodinia"
    (suite / "common").mkdir(parents=True)
    (suite / "common" / "make.config").write_text("CUDA_DIR = /usr/local/cuda\n")
    app_dir = suite / "cuda" / "tiny"
    app_dir.mkdir(parents=True)
    (app_dir / "tiny.cu").write_text(TINY)
    (app_dir / "Makefile").write_text("include ../../common/make.config\n"
                                      "CC := $(CUDA_DIR)/bin/nvcc\n"
                                      "tiny: tiny.cu\n\t$(CC) -arch sm_20 tiny.cu -o tiny\n")
    (suite / "data" / "tiny").mkdir(parents=True)
    (suite / "data" / "tiny" / "in.txt.xz").write_bytes(lzma.compress(b"40\n"))
    app = R.App("tiny", "tiny", "tiny", [], ("CC",), outputs=("out.txt",),
                inputs=("tiny/in.txt",))
    monkeypatch.setenv("GMPROF_BACKEND", "cpu")
    r = R.run_app(suite, app, "cpu", tmp_path / "work", 120, "sm_90")
    # sum of 2 i for i < 40 = 40 * 39 = 1560 in both runs; the timing line is masked
    assert (r["build"], r["run"], r["output"], r["report"]) == ("ok", "ok", "same", "ok"), r
    assert (r["kernels"], r["profiled"], r["launches"], r["failed_checks"]) == (1, 1, 1, 0)
    assert R.mask(["KERNEL TOOK 0.25", "sum 1560"], "") == ["KERNEL TOOK #", "sum 1560"]
    # the real nvcc's wrapper gives the machine's architecture for one CUDA 13 cannot build
    nvcc = R.toolchain(tmp_path / "tc", "native", "gpu", "sm_90")
    if R.W.shutil.which("nvcc"):
        p = subprocess.run([str(nvcc), "--dryrun", "-arch", "sm_20", "-c", "tiny.cu"],
                           cwd=app_dir, capture_output=True, text=True)
        assert "sm_90" in p.stderr and "sm_20" not in p.stderr, p.stderr
    monkeypatch.setattr(R, "APPS", [app])
    R.trim(suite, tmp_path / "trimmed")
    assert (tmp_path / "trimmed" / "cuda" / "tiny" / "tiny.cu").is_file()
    assert (tmp_path / "trimmed" / "data" / "tiny" / "in.txt.xz").is_file()
    assert not (tmp_path / "trimmed" / "cuda" / "tiny" / "tiny").exists()


def test_whole_programs_nondeterministic_lines_are_free_not_ignored():
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    import whole_programs as W

    native = ["Result\t: 667760.000000", "PASSED", "BLOCK 2 launched by thread 0 of block 1"]
    again = ["Result\t: 664045.000000", "PASSED", "BLOCK 2 launched by thread 0 of block 0"]
    # the numbers that differ natively are free, the words around them are not
    assert W.same_but_nondeterministic(
        native, again, ["Result\t: 12.5", "PASSED", "BLOCK 3 launched by thread 0 of block 7"]) == 2
    assert W.same_but_nondeterministic(
        native, again, ["Result\t: 1", "FAILED", "BLOCK 2 launched by thread 0 of block 1"]) is None
    assert W.same_but_nondeterministic(
        native, again, ["Total\t: 1", "PASSED", "BLOCK 2 launched by thread 0 of block 1"]) is None
    # lines that do not line up are not checked
    assert W.same_but_nondeterministic(native, again, native[:2]) is None


def test_whole_programs_lines_in_another_order_each_run():
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    import whole_programs as W

    native = ["BLOCK 6 launched by thread 1 of block 0", "BLOCK 2 launched by thread 0 of block 1",
              "done"]
    again = ["BLOCK 2 launched by thread 0 of block 0", "BLOCK 6 launched by thread 1 of block 1",
             "done"]
    assert W.same_but_nondeterministic(
        native, again, ["BLOCK 3 launched by thread 0 of block 0",
                        "BLOCK 6 launched by thread 0 of block 1", "done"]) == 2
    assert W.same_but_nondeterministic(
        native, again, ["BLOCK 3 launched by thread 0 of block 0", "BLOCK 6 ended", "done"]) \
        is None
