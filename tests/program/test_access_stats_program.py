"""Per-warp requests (--access-stats, issue 27) of a whole program on the CPU backend: `gmprof
nvcc --gmprof-access-stats` (or GMPROF_ACCESS_STATS=1 at build time) builds it, the host runtime
gives each profiled launch its sites' statistics buffer and sums it per group of launches, and
`gmprof report` decodes them as `gmprof profile --access-stats` does. Every site is measured by
its hook (a whole program cannot move a site to a hook at a launch, as `gmprof profile` does).
Expected values derived by hand in the comments."""
from __future__ import annotations

import subprocess

import pytest

from conftest import env, gmprof, report_json

# the host runtime now keeps counters on the device across launches; the warp statistics'
# buffer has no fold there yet, so the build refuses --gmprof-access-stats (a usage error)
pytestmark = pytest.mark.xfail(strict=True, reason="whole programs' access stats: not yet "
                               "with device-resident counters")

PROGRAM = r"""#include <cstdio>
__global__ void transpose32(float *out, const float *in) {
  __shared__ float tile[32][32];
  int x = threadIdx.x, y = threadIdx.y;
  tile[y][x] = in[y * 32 + x];
  __syncthreads();
  out[y * 32 + x] = tile[x][y];
}
__global__ void transpose33(float *out, const float *in) {
  __shared__ float padded[32][33];
  int x = threadIdx.x, y = threadIdx.y;
  padded[y][x] = in[y * 32 + x];
  __syncthreads();
  out[y * 32 + x] = padded[x][y];
}
__global__ void strided(float *out, const float *in) {
  int t = threadIdx.x;
  out[t] = in[32 * t];
}
int main() {
  float *in, *out;
  cudaMalloc(&in, 1024 * sizeof(float));
  cudaMalloc(&out, 1024 * sizeof(float));
  cudaMemset(in, 0, 1024 * sizeof(float));
  transpose32<<<1, dim3(32, 32)>>>(out, in);
  transpose32<<<1, dim3(32, 32)>>>(out, in);
  transpose33<<<1, dim3(32, 32)>>>(out, in);
  strided<<<1, 32>>>(out, in);
  cudaDeviceSynchronize();
  printf("done\n");
  return 0;
}
"""


def _warps(kernel: dict, text: str) -> tuple:
    s = next(s for s in kernel["sites"] if s["text"] == text)
    w = s["warps"]
    return (w["space"], w["requests"], w.get("wavefronts", w.get("sectors")), w["ideal"],
            w["lines"], w["how"])


def _check(doc: dict) -> None:
    k = doc["kernels"]
    t32, t33, strided = k["transpose32"], k["transpose33"], k["strided"]
    # one block of 32 x 32 threads: 32 warps, each one row y (x = 0..31); two launches of
    # transpose32: 64 requests a site. tile[y][x] is word 32y + x: 32 banks, 1 wavefront;
    # tile[x][y] is word 32x + y: every lane in bank y, 32 distinct words: 32 wavefronts
    assert _warps(t32, "tile[y][x]") == ("shared", 64, 64, 64, None, "measured")
    assert _warps(t32, "tile[x][y]") == ("shared", 64, 64 * 32, 64, None, "measured")
    hist = next(s for s in t32["sites"] if s["text"] == "tile[x][y]")["warps"]["histogram"]
    assert hist[31] == 64 and sum(hist) == 64
    # in[y * 32 + x]: a row of 32 floats, 128 bytes from a multiple of 128: 4 sectors, 1 line
    assert _warps(t32, "in[y * 32 + x]") == ("device", 64, 256, 256, 64, "measured")
    # padded: word 33y + x and 33x + y, bank (x + y) mod 32: conflict-free; one launch
    assert _warps(t33, "padded[y][x]") == ("shared", 32, 32, 32, None, "measured")
    assert _warps(t33, "padded[x][y]") == ("shared", 32, 32, 32, None, "measured")
    # in[32t]: one float in each of 32 lines (32 sectors), 128 distinct bytes: ideal 4
    assert _warps(strided, "in[32 * t]") == ("device", 1, 32, 4, 32, "measured")
    # the arrays' sums: tile's two sites, 64 + 2,048 wavefronts in 128 requests
    tile = next(a for a in t32["arrays"] if a["name"] == "tile")["warps"]
    assert (tile["requests"], tile["wavefronts"], tile["ideal"]) == (128, 64 + 2048, 128)
    # the counts themselves stay exact: 2 launches x 1,024 threads read tile[x][y] once each
    assert next(s for s in t32["sites"] if s["text"] == "tile[x][y]")["executions"] == 2048


def test_a_whole_program_built_with_access_stats(tmp_path, need_gxx):
    (tmp_path / "t.cu").write_text(PROGRAM)
    gmprof("nvcc", "--gmprof-access-stats", "t.cu", "-o", "t", cwd=tmp_path)
    p = subprocess.run([str(tmp_path / "t")], cwd=tmp_path, env=env(GMPROF_OUTPUT="r.json"),
                       capture_output=True, text=True)
    assert p.returncode == 0 and p.stdout == "done\n", p.stdout + p.stderr
    _check(report_json(tmp_path, "r.json"))
    # the source view of a whole program's page has the column
    gmprof("report", "r.json", "--html", "r.html", cwd=tmp_path)
    assert "tile: 32 wavefronts/req (32-way)" in (tmp_path / "r.html").read_text()


def test_gmprof_run_access_stats(tmp_path, need_gxx):
    (tmp_path / "t.cu").write_text(PROGRAM)
    import json

    p = gmprof("run", "--access-stats", "--json", "t.cu", cwd=tmp_path)
    doc = json.loads(p.stdout)
    _check({"kernels": {k["kernel"]: k for k in doc["kernels"]}})


def test_the_build_variable_and_a_build_without(tmp_path, need_gxx):
    (tmp_path / "t.cu").write_text(PROGRAM)
    gmprof("nvcc", "t.cu", "-o", "t", cwd=tmp_path, GMPROF_ACCESS_STATS="1")
    subprocess.run([str(tmp_path / "t")], cwd=tmp_path, env=env(GMPROF_OUTPUT="r.json"),
                   check=True, capture_output=True)
    _check(report_json(tmp_path, "r.json"))
    # without it: no statistics, and the static sites stay static
    gmprof("nvcc", "t.cu", "-o", "plain", cwd=tmp_path)
    subprocess.run([str(tmp_path / "plain")], cwd=tmp_path, env=env(GMPROF_OUTPUT="p.json"),
                   check=True, capture_output=True)
    k = report_json(tmp_path, "p.json")["kernels"]["transpose32"]
    assert not any(s.get("warps") for s in k["sites"])
    assert all(s["how"] == "static" for s in k["sites"])
