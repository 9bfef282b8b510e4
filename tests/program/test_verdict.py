"""One verdict on every path: an access out of range in a whole program is a failed check for
`gmprof run` and `gmprof report` (exit status 1, or --error-exitcode N), with the located
message `gmprof profile` prints (report/findings.py), and the report says which launches
failed it."""
from __future__ import annotations

import json
import subprocess

import pytest

from conftest import env, gmprof

# fill: an off-by-one bound, `i <= n`: with 128 threads and n = 64, threads 0..64 write, so 65
# writes of which one (i = 64) is past the 64 elements: a static site, counted from its formula.
# scatter: indexes read from memory (a counted site); its first launch stays inside `out` (idx
# is 0..31), its second writes out[32] and out[33] (idx[5] = 32, idx[9] = 33): 2 accesses out of
# range, in launch 2 of the process (launches numbered from 0: fill 0, scatter 1 and 2).
PROGRAM = r"""#include <cstdio>
__global__ void fill(int *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) a[i] = i;
}
__global__ void scatter(float *out, const int *idx, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[idx[i]] = 1.0f;
}
int main() {
  const int n = 32;
  int *a, *idx; float *out;
  cudaMalloc(&a, 64 * sizeof(int));
  cudaMallocManaged(&out, n * sizeof(float));
  cudaMallocManaged(&idx, n * sizeof(int));
  fill<<<1, 128>>>(a, 64);
  for (int i = 0; i < n; ++i) idx[i] = i;
  scatter<<<1, n>>>(out, idx, n);
  idx[5] = n;  idx[9] = n + 1;
  scatter<<<1, n>>>(out, idx, n);
  cudaDeviceSynchronize();
  printf("done\n");
  return 0;
}
"""
FILL = "oob.cu:4:15: error: kernel fill accesses outside the array 'a', 64 elements of 4 bytes"
SCATTER = ("oob.cu:8:14: error: kernel scatter accesses outside the array 'out', 32 elements of "
           "4 bytes: 2 access(es) out of range")


@pytest.fixture(scope="module")
def report_file(tmp_path_factory, need_gxx):
    d = tmp_path_factory.mktemp("verdict")
    (d / "oob.cu").write_text(PROGRAM)
    gmprof("nvcc", "oob.cu", "-o", "oob", cwd=d)
    p = subprocess.run([str(d / "oob")], cwd=d, env=env(GMPROF_OUTPUT=d / "r.json"),
                       capture_output=True, text=True)
    # the program itself runs as it would: its own output and status
    assert (p.returncode, p.stdout) == (0, "done\n"), p.stderr
    return d, d / "r.json"


def test_report_fails_with_located_message(report_file):
    d, raw = report_file
    p = gmprof("report", raw, cwd=d, check=False)
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert FILL in p.stderr and "`a[i]` (write): 1 out of range" in p.stderr
    assert SCATTER in p.stderr
    assert gmprof("report", "--error-exitcode", "5", raw, cwd=d, check=False).returncode == 5
    p = gmprof("report", "--error-exitcode", "0", raw, cwd=d, check=False)
    assert p.returncode == 0 and SCATTER in p.stderr


def test_report_records_which_launches_failed(report_file):
    d, raw = report_file
    p = gmprof("report", "--json", raw, cwd=d, check=False)
    assert p.returncode == 1
    doc = json.loads(p.stdout)
    assert any(FILL.split(": error: ")[1] in t for t in doc["failed_checks"])
    failed = [(f["kernel"], f["launch"], f["out_of_range"])
              for f in doc["program"]["failed_launches"]]
    assert failed == [("fill", 0, 1), ("scatter", 2, 2)]
    scatter = next(k for k in doc["kernels"] if k["kernel"] == "scatter")
    assert [(r["index"], r["out_of_range"], r["failed_check"]) for r in scatter["launches"]] == \
        [(1, 0, False), (2, 2, True)]


def test_run_fails_the_check(tmp_path, need_gxx):
    (tmp_path / "oob.cu").write_text(PROGRAM)
    p = gmprof("run", "--check", "--error-exitcode", "7", "oob.cu", cwd=tmp_path, check=False)
    # the output and status are the native program's, but an access fell out of range
    assert p.returncode == 7, p.stderr
    assert "done" in p.stdout and FILL in p.stderr and SCATTER in p.stderr
    assert "Traceback" not in p.stderr
