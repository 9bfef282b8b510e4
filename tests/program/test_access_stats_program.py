"""Per-warp requests (--access-stats, issue 27) of a whole program on the CPU backend: `gmprof
nvcc --gmprof-access-stats` (or GMPROF_ACCESS_STATS=1 at build time) builds it, the host runtime
gives each group of launches one device buffer of its sites' statistics (the launches add into
it, read back at exit), and `gmprof report` decodes them as `gmprof profile --access-stats` does.
Every site is measured by its hook (a whole program cannot move a site to a hook at a launch, as
`gmprof profile` does). Expected values derived by hand in the comments."""
from __future__ import annotations

import subprocess

from conftest import env, gmprof, report_json

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


# The statistics live on the device per group of launches: launches on two streams and replays
# of a captured graph add into the group's one buffer, and cudaDeviceReset reads it back before
# freeing it (the launches after the reset start a new one). Every launch of strided is one warp.
ACROSS = r"""#include <cstdio>
__global__ void strided(float *out, const float *in) {
  int t = threadIdx.x;
  out[t] = in[32 * t];
}
int main() {
  float *in, *out;
  cudaMalloc(&in, 1024 * sizeof(float));
  cudaMalloc(&out, 32 * sizeof(float));
  strided<<<1, 32>>>(out, in);
  cudaDeviceReset();
  cudaMalloc(&in, 1024 * sizeof(float));
  cudaMalloc(&out, 32 * sizeof(float));
  cudaStream_t s, t;
  cudaStreamCreate(&s);
  cudaStreamCreate(&t);
  strided<<<1, 32, 0, s>>>(out, in);
  strided<<<1, 32, 0, t>>>(out, in);
  cudaGraph_t graph;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  strided<<<1, 32, 0, s>>>(out, in);
  cudaStreamEndCapture(s, &graph);
  cudaGraphExec_t exec;
  cudaGraphInstantiate(&exec, graph, 0);
  for (int k = 0; k < 3; ++k) cudaGraphLaunch(exec, s);
  cudaDeviceSynchronize();
  printf("done\n");
  return 0;
}
"""


def test_statistics_add_up_across_streams_graph_replays_and_a_reset(tmp_path, need_gxx):
    (tmp_path / "t.cu").write_text(ACROSS)
    gmprof("nvcc", "--gmprof-access-stats", "t.cu", "-o", "t", cwd=tmp_path)
    p = subprocess.run([str(tmp_path / "t")], cwd=tmp_path,
                       env=env(GMPROF_OUTPUT="r.json", GMPROF_GRAPHS=1),
                       capture_output=True, text=True)
    assert p.returncode == 0 and p.stdout == "done\n", p.stdout + p.stderr
    k = report_json(tmp_path, "r.json")["kernels"]["strided"]
    # 1 launch before the reset + 2 on two streams + 3 replays of the graph = 6 warps, each
    # one request of in[32t]: 32 lines, 32 sectors, 128 distinct bytes (ideal 4 sectors)
    assert _warps(k, "in[32 * t]") == ("device", 6, 6 * 32, 6 * 4, 6 * 32, "measured")
    # out[t]: 32 consecutive floats from the allocation's start: 4 sectors in 1 line
    assert _warps(k, "out[t]") == ("device", 6, 6 * 4, 6 * 4, 6, "measured")
    assert next(s for s in k["sites"] if s["text"] == "in[32 * t]")["executions"] == 6 * 32


# A large grid (passes/block_sample.py): 4,096 blocks of one warp, every block alike. With
# GMPROF_ACCESS_STATS_BLOCKS=64 a launch measures 1 block in 2^6 (4,096 / 64 = 2^6), block b
# where the low 6 bits of fmix32(b) are 0 (whole programs: seed 0), each measured block's
# statistics added 64 times on the device: 64 x n requests, labelled approximate.
WIDE = r"""#include <cstdio>
__global__ void wide(float *out, const float *in) {
  int t = threadIdx.x;
  out[blockIdx.x * 32 + t] = in[2 * t];
}
int main() {
  float *in, *out;
  cudaMalloc(&in, 64 * sizeof(float));
  cudaMalloc(&out, 4096 * 32 * sizeof(float));
  cudaMemset(in, 0, 64 * sizeof(float));
  wide<<<4096, 32>>>(out, in);
  cudaDeviceSynchronize();
  printf("done\n");
  return 0;
}
"""


def _hash_measured(blocks: int, s: int) -> int:
    """Blocks whose top s bits of (b * 0x9e3779b1 + seed 0) mod 2^32 are all zero."""
    return sum(((b * 0x9E3779B1) % 2**32) >> (32 - s) == 0 for b in range(blocks))


def test_a_large_grid_is_sampled_by_block(tmp_path, need_gxx):
    (tmp_path / "t.cu").write_text(WIDE)
    gmprof("nvcc", "--gmprof-access-stats", "t.cu", "-o", "t", cwd=tmp_path)
    n = _hash_measured(4096, 6)
    for blocks, want in (("64", 64 * n), ("0", 4096)):
        p = subprocess.run([str(tmp_path / "t")], cwd=tmp_path,
                           env=env(GMPROF_OUTPUT=f"r{blocks}.json",
                                   GMPROF_ACCESS_STATS_BLOCKS=blocks),
                           capture_output=True, text=True)
        assert p.returncode == 0 and p.stdout == "done\n", p.stdout + p.stderr
        k = report_json(tmp_path, f"r{blocks}.json")["kernels"]["wide"]
        w = next(s for s in k["sites"] if s["text"] == "in[2 * t]")["warps"]
        # in[2t], floats: bytes 0, 8, ..., 248: 8 sectors, 2 lines, ideal 4 a request
        assert (w["requests"], w["sectors"], w["lines"], w["ideal"]) == \
            (want, 8 * want, 2 * want, 4 * want)
        # the counts are made in every block: 4,096 x 32 reads
        assert next(s for s in k["sites"] if s["text"] == "in[2 * t]")["executions"] == \
            4096 * 32
        if blocks == "0":
            assert "sample" not in w
        else:
            assert w["sample"]["label"] == "approximate" and w["sample"]["rate"] == 64
            assert w["sample"]["units_interval"] is None
