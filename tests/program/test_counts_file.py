"""A whole program's per-element counts go to a counts file beside its report file (raw
little-endian words, runtime_cu/host/gmprof_host_counts.h; read by gmprof/program/countsfile.py):
a 2^20-element array's counts come back exactly; a missing or truncated counts file is a located
error; a report file of an older build (its counts in base64 inside the JSON) still decodes.
CPU backend; counts derived by hand."""
from __future__ import annotations

import base64
import json
import subprocess

import numpy as np
import pytest

from conftest import env, gmprof, report_json

from gmprof.report import countcodec

N = 1 << 20

BIG = r"""
#include <cstdio>
__global__ void copy(const int *a, int *b, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    b[i] = a[i];
}
int main() {
  const int n = N;
  int *a, *b;
  cudaMalloc(&a, n * sizeof(int));
  cudaMalloc(&b, n * sizeof(int));
  cudaMemset(a, 0, n * sizeof(int));
  for (int k = 0; k < 3; ++k) copy<<<16, 128>>>(a, b, n);
  cudaDeviceSynchronize();
  printf("done\n");
  return 0;
}
"""

SMALL = r"""
#include <cstdio>
__global__ void add(int *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = a[i] + 1;
}
int main() {
  int *a;
  cudaMalloc(&a, 64 * sizeof(int));
  cudaMemset(a, 0, 64 * sizeof(int));
  add<<<2, 32>>>(a, 64);
  cudaDeviceSynchronize();
  printf("done\n");
  return 0;
}
"""


def _build_and_run(d, name, text):
    (d / f"{name}.cu").write_text(text)
    # basic mode: every site is counted on the device, into per-element counters
    gmprof("nvcc", "--gmprof-mode", "basic", f"{name}.cu", "-o", name, cwd=d)
    p = subprocess.run([str(d / name)], cwd=d, env=env(GMPROF_OUTPUT="r.json"),
                       capture_output=True, text=True)
    assert p.returncode == 0 and p.stdout == "done\n", p.stdout + p.stderr
    return p


def _counts(kernel, array):
    a = next(x for x in kernel["arrays"] if x["name"] == array)
    return countcodec.decode(a["counts"])


@pytest.fixture(scope="module")
def big(tmp_path_factory, need_gxx):
    d = tmp_path_factory.mktemp("big")
    p = _build_and_run(d, "big", BIG.replace("N;", f"{N};"))
    assert "report written to r.json (its counts in r.counts)" in p.stderr
    return d


def test_large_counts_come_back_exactly_from_the_counts_file(big):
    raw = json.loads((big / "r.json").read_text())
    ref = raw["counts_file"]
    assert ref["name"] == "r.counts"
    assert (big / "r.counts").stat().st_size == ref["bytes"]
    (group,) = raw["groups"]
    by_param = {o["param"]: o["counts"] for o in group["objects"]}
    # every element of a and of b: 3 launches x 1 access = 3, which fits a byte: packed
    # (gmprof_host_pack.h) at 1 byte an element, 256 chunks of 4096, N bytes in all
    for param in (0, 1):
        e = by_param[param]
        assert (e["dtype"], e["n"], e["chunk"], e["bytes"]) == ("packed", N, 4096, N)
        assert e["widths"] == "1" * (N // 4096) and "data" not in e
    k = report_json(big, "r.json")["kernels"]["copy"]
    assert k["run"]["launches"] == 3
    assert np.array_equal(_counts(k, "a"), np.full(N, 3))
    assert np.array_equal(_counts(k, "b"), np.full(N, 3))
    a = next(x for x in k["arrays"] if x["name"] == "a")
    assert (a["reads"], a["writes"]) == (3 * N, 0)
    # a glob that matches both files (gmprof report r.*) reads the counts file through r.json
    assert report_json(big, "r.json", "r.counts")["kernels"]["copy"]["run"]["launches"] == 3


def _report_error(d, *files):
    p = gmprof("report", *files, cwd=d, check=False)
    assert "Traceback" not in p.stderr
    return p.returncode, p.stderr.strip()


def test_a_missing_or_short_counts_file_is_a_located_error(big, tmp_path):
    (tmp_path / "r.json").write_bytes((big / "r.json").read_bytes())
    status, err = _report_error(tmp_path, "r.json")
    assert status == 2
    assert err.startswith("r.json: error: its counts file r.counts is missing"), err
    assert len(err.splitlines()) == 1
    # cut short (a copy that stopped half-way)
    whole = (big / "r.counts").read_bytes()
    (tmp_path / "r.counts").write_bytes(whole[:len(whole) // 2])
    status, err = _report_error(tmp_path, "r.json")
    assert status == 2
    assert err.startswith(f"r.json: error: its counts file r.counts is shorter than the "
                          f"{len(whole):,} bytes"), err
    # the counts file of another run
    raw = json.loads((big / "r.json").read_text())
    raw["counts_file"]["id"] = "0" * 16
    (tmp_path / "r.json").write_text(json.dumps(raw))
    (tmp_path / "r.counts").write_bytes(whole)
    status, err = _report_error(tmp_path, "r.json")
    assert status == 2 and "r.counts belongs to another run" in err, err


def test_both_files_renamed_alike_still_decode(big, tmp_path):
    (tmp_path / "s.json").write_bytes((big / "r.json").read_bytes())
    (tmp_path / "s.counts").write_bytes((big / "r.counts").read_bytes())
    k = report_json(tmp_path, "s.json")["kernels"]["copy"]
    assert np.array_equal(_counts(k, "b"), np.full(N, 3))


def test_an_older_builds_base64_report_still_decodes(tmp_path, need_gxx):
    _build_and_run(tmp_path, "small", SMALL)
    raw = json.loads((tmp_path / "r.json").read_text())
    words = (tmp_path / "r.counts").read_bytes()
    # written as older builds wrote it: each vector's words in base64 inside the JSON, no
    # counts file
    (group,) = raw["groups"]
    (obj,) = group["objects"]
    # a: 64 threads each read a[i] once and write it once, in one launch: 2 per element
    obj["counts"] = {"dtype": "u4",
                     "data": base64.b64encode(np.full(64, 2, "<u4").tobytes()).decode()}
    for key in ("area", "shared", "site_max"):
        e = group[key]
        if e["dtype"] != "zero":
            size = 4 if e["dtype"] == "u4" else 8
            chunk = words[e["offset"]:e["offset"] + e["n"] * size]
            group[key] = {"dtype": e["dtype"], "data": base64.b64encode(chunk).decode()}
    del raw["counts_file"]
    (tmp_path / "r.counts").unlink()
    (tmp_path / "old.json").write_text(json.dumps(raw))
    k = report_json(tmp_path, "old.json")["kernels"]["add"]
    assert _counts(k, "a").tolist() == [2] * 64
    a = next(x for x in k["arrays"] if x["name"] == "a")
    assert (a["reads"], a["writes"]) == (64, 64)


UNTOUCHED = r"""
#include <cstdio>
// b is an argument of every launch but only read where flag[0] says so (never here); c is
// read in the second launch only
__global__ void pick(const int *a, const int *b, const int *c, int *out, const int *flag,
                     int use_c) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = a[i];
  if (flag[0]) v += b[i];
  if (use_c) v += c[i];
  out[i] = v;
}
int main() {
  const int n = 256;
  int *a, *b, *c, *out, *flag;
  cudaMalloc(&a, n * sizeof(int));
  cudaMalloc(&b, n * sizeof(int));
  cudaMalloc(&c, n * sizeof(int));
  cudaMalloc(&out, n * sizeof(int));
  cudaMalloc(&flag, sizeof(int));
  cudaMemset(a, 0, n * sizeof(int));
  cudaMemset(b, 0, n * sizeof(int));
  cudaMemset(c, 0, n * sizeof(int));
  cudaMemset(flag, 0, sizeof(int));
  pick<<<2, 128>>>(a, b, c, out, flag, 0);
  pick<<<2, 128>>>(a, b, c, out, flag, 1);
  cudaDeviceSynchronize();
  printf("done\n");
  return 0;
}
"""


def test_objects_no_launch_touched_are_not_read_back_and_count_zero(tmp_path, need_gxx):
    """The harvest reads back only objects a fold added to (fold::FoldObj::touched): b, read
    by no launch, is written as zeros without being read; a (2 launches x 1 read) and c (the
    second launch's read) are read back. By hand: a 2, b 0, c 1 per element."""
    _build_and_run(tmp_path, "pick", UNTOUCHED)
    raw = json.loads((tmp_path / "r.json").read_text())
    (group,) = raw["groups"]
    by_param = {o["param"]: o["counts"] for o in group["objects"]}
    assert by_param[1] == {"dtype": "zero", "n": 256}
    k = report_json(tmp_path, "r.json")["kernels"]["pick"]
    assert np.array_equal(_counts(k, "a"), np.full(256, 2))
    assert np.array_equal(_counts(k, "b"), np.zeros(256))
    assert np.array_equal(_counts(k, "c"), np.full(256, 1))


@pytest.mark.gpu
def test_a_read_back_larger_than_the_pinned_chunks_comes_back_exactly(tmp_path):
    """On a GPU, totals of 2 x 16 MiB or more are read back through two pinned buffers in turn
    (gmprof_host.cpp read_device): 2^22 + 5 elements (33.5 MB of u64 totals each: three chunks,
    the last short). By hand: 3 launches x 1 access = 3 per element of a and of b."""
    n = (1 << 22) + 5
    (tmp_path / "big.cu").write_text(BIG.replace("N;", f"{n};"))
    gmprof("nvcc", "--gmprof-mode", "basic", "-arch=sm_90", "big.cu", "-o", "big", cwd=tmp_path,
           GMPROF_BACKEND="gpu")
    p = subprocess.run([str(tmp_path / "big")], cwd=tmp_path,
                       env=env(GMPROF_OUTPUT="r.json", GMPROF_BACKEND="gpu"),
                       capture_output=True, text=True)
    assert p.returncode == 0 and p.stdout == "done\n", p.stdout + p.stderr
    k = report_json(tmp_path, "r.json")["kernels"]["copy"]
    assert np.array_equal(_counts(k, "a"), np.full(n, 3))
    assert np.array_equal(_counts(k, "b"), np.full(n, 3))
