"""Per-warp requests (--access-stats, issue 27) in CSV, HTML and `gmprof diff`, on the CPU
backend: the GMProf paper's transpose pair (samples/transpose_naive, samples/transpose_padded)
and a 32 x 32 tile with and without its padding column. Every expected value is derived here
from the kernels' shapes (a numpy walk over the warps with the bank model of docs/report.md,
and the closed forms in the comments), never from gmprof's output.
"""
from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]

# samples/transpose_*/driver.py, size small: a 72 x 40 input (idata is height x width = 40 x 72),
# tiles of 16 x 16 threads, grid (ceil(72/16), ceil(40/16)) = (5, 3)
WIDTH, HEIGHT, BLK = 72, 40, 16


def gmprof(*args, cwd=ROOT, check=True) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT), GMPROF_BACKEND="cpu", GMPROF_PROGRESS="0")
    proc = subprocess.run([sys.executable, "-m", "gmprof", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)
    assert not check or proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def bank_wavefronts(words) -> int:
    """One request's wavefronts: 32 banks of 4-byte words, the most distinct words in a bank."""
    distinct = np.unique(np.asarray(words))
    return int(np.bincount(distinct % 32, minlength=32).max())


def transpose_shared(pad: int) -> dict:
    """The samples' two shared sites, warp by warp: {site: (requests, wavefronts, histogram)}.
    A warp is 32 consecutive threads of a 16 x 16 block (threadIdx.y 2w and 2w + 1, x 0..15);
    the tile's row is 16 + pad words. Write: tile[ty][tx] where (bx*16+tx < 72, by*16+ty < 40);
    read: tile[tx][ty] where (by*16+tx < 40, bx*16+ty < 72)."""
    row = BLK + pad
    out = {"write": [], "read": []}
    for by in range(-(-HEIGHT // BLK)):
        for bx in range(-(-WIDTH // BLK)):
            for w in range(BLK * BLK // 32):
                ty = np.repeat([2 * w, 2 * w + 1], BLK)
                tx = np.tile(np.arange(BLK), 2)
                on = (bx * BLK + tx < WIDTH) & (by * BLK + ty < HEIGHT)
                if on.any():
                    out["write"].append(bank_wavefronts((ty * row + tx)[on]))
                on = (by * BLK + tx < HEIGHT) & (bx * BLK + ty < WIDTH)
                if on.any():
                    out["read"].append(bank_wavefronts((tx * row + ty)[on]))
    return {k: (len(v), sum(v), np.bincount(v, minlength=33)[1:].tolist())
            for k, v in out.items()}


def transpose_loads() -> tuple[int, int, int]:
    """idata[index_in], warp by warp: (requests, 32-byte sectors, 128-byte lines), with idata
    at an aligned base (CUDA's allocations are 256-byte aligned; so are the CPU backend's)."""
    requests = sectors = lines = 0
    for by in range(-(-HEIGHT // BLK)):
        for bx in range(-(-WIDTH // BLK)):
            for w in range(BLK * BLK // 32):
                x = bx * BLK + np.tile(np.arange(BLK), 2)
                y = by * BLK + np.repeat([2 * w, 2 * w + 1], BLK)
                on = (x < WIDTH) & (y < HEIGHT)
                if on.any():
                    address = 4 * (y * WIDTH + x)[on]
                    requests += 1
                    sectors += len(np.unique(address // 32))
                    lines += len(np.unique(address // 128))
    return requests, sectors, lines


def test_the_hand_model_of_the_samples():
    # naive, tile 16 x 16, read tile[tx][ty] = word 16 tx + ty: lanes with even tx share bank
    # ty, odd tx bank 16 + ty: 8 distinct words a bank in a full warp (8-way), 4 when only
    # tx < 8 are on (the last block row: by*16 + tx < 40 for by = 2). Requests: by 0,1 x bx 0..3
    # x 8 warps = 64 full, by 0,1 x bx 4 x 4 warps (bx*16 + ty < 72: ty < 8) = 8 full, by 2:
    # 4 x 8 + 4 = 36 half: 64*8 + 8*8 + 36*4 = 720 wavefronts in 108 requests
    naive, padded = transpose_shared(0), transpose_shared(1)
    assert naive["read"][:2] == (108, 720)
    # the write tile[ty][tx] = word 16 ty + tx: two rows of 16 cover 32 banks: 1 each, in the
    # 5 x 8 + 5 x 4 = 100 warps with a thread on
    assert naive["write"][:2] == (100, 100)
    # padded, row 17: read word 17 tx + ty: banks 17 tx mod 32 (tx 0..15: 0, 17, 2, 19, ...)
    # plus ty and ty + 1 meet once (tx 0 of row ty and tx 15 of row ty + 1, bank ty): 2-way
    # in the 72 full warps, conflict-free in the 36 half ones: 72*2 + 36 = 180
    assert padded["read"][:2] == (108, 180)
    # write word 17 ty + tx: rows 2w and 2w + 1 are 34w + (0..15) and 34w + (17..32): word
    # 34w + 32 shares 34w's bank: 2-way in the full warps, bx 0..3 x (8 + 8 + 4 warps) = 80,
    # conflict-free in the 20 of bx 4 (tx < 8: 34w + (0..7), 34w + (17..24)): 80*2 + 20 = 180
    assert padded["write"][:2] == (100, 80 * 2 + 20)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    d = tmp_path_factory.mktemp("warps")
    for name in ("transpose_naive", "transpose_padded"):
        gmprof("profile", f"samples/{name}", "--access-stats", "-o", d / f"{name}.json")
    return d


def test_diff_shows_the_conflicts_going(runs):
    naive, padded = transpose_shared(0), transpose_shared(1)
    # shared_data's wavefronts: its write and its read, summed
    a = naive["write"][1] + naive["read"][1]      # 100 + 720 = 820
    b = padded["write"][1] + padded["read"][1]    # 180 + 180 = 360
    n = naive["write"][0] + naive["read"][0]      # 100 + 108 = 208 requests, both runs
    d = runs
    out = gmprof("diff", d / "transpose_naive.json", d / "transpose_padded.json").stdout
    row = next(line.split() for line in out.splitlines() if line.startswith("shared_data") and
               "wavefronts" in line)
    assert row[:4] == ["shared_data", "wavefronts", f"{a:,}", f"{b:,}"]
    assert row[-2:] == [f"{n:,}", f"{n:,}"]
    said = " ".join(out.split())  # the line may fold
    assert (f"shared_data: {a / n:.2f} wavefronts/req (up to 8-way) -> "
            f"{b / n:.2f} wavefronts/req (up to 2-way)") in said
    js = json.loads(gmprof("diff", d / "transpose_naive.json", d / "transpose_padded.json",
                           "--json").stdout)
    w = next(r for r in js["kernels"][0]["arrays"] if r["name"] == "shared_data")["warps"]
    assert (w["units"], w["requests"], w["ideal"], w["worst"]) == ([a, b], [n, n], [n, n],
                                                                    [8, 2])
    # the device arrays: rows of 16 floats (64 bytes, 2 sectors each), the same in both runs
    for name in ("idata", "odata"):
        w = next(r for r in js["kernels"][0]["arrays"] if r["name"] == name)["warps"]
        assert w["units"][0] == w["units"][1] and w["worst"] == [4, 4]


def _table(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def test_csv_has_the_statistics_per_site_and_per_array(runs):
    naive = transpose_shared(0)
    sites = _table(gmprof("report", runs / "transpose_naive.json", "--csv", "--page",
                          "sites").stdout)
    read = next(s for s in sites if s["text"] == "shared_data[threadIdx.x][threadIdx.y]")
    requests, waves, hist = naive["read"]
    assert (read["warp_space"], int(read["requests"]), int(read["wavefronts"]),
            read["sectors"], int(read["ideal"]), int(read["worst"])) == (
        "shared", requests, waves, "", requests, 8)
    assert read["histogram"] == " ".join(f"{k + 1}:{c}" for k, c in enumerate(hist) if c)
    assert read["histogram"] == "4:36 8:72"
    assert float(read["per_request"]) == pytest.approx(720 / 108, abs=1e-4)
    # idata[index_in]: each warp reads two rows of its tile, 16 floats (64 bytes at a multiple
    # of 32: 2 sectors) each; only 8 floats (1 sector) a row in the last block column (72 =
    # 4*16 + 8): 80 warps of 4 sectors and 20 of 2: 360 sectors, ideal the same (contiguous
    # rows). A row of idata is 288 bytes, so a row's 64 bytes start at 32y + 64bx mod 128 and
    # cross a line when that is 96: the lines come from the walk
    requests, sectors, lines = transpose_loads()
    assert (requests, sectors) == (100, 80 * 4 + 20 * 2)
    load = next(s for s in sites if s["text"] == "idata[index_in]")
    assert (load["warp_space"], int(load["requests"]), load["wavefronts"],
            int(load["sectors"]), int(load["ideal"]), int(load["lines"])) == (
        "device", requests, "", sectors, sectors, lines)
    arrays = _table(gmprof("report", runs / "transpose_naive.json", "--csv").stdout)
    tile = next(a for a in arrays if a["array"] == "shared_data")
    assert (int(tile["requests"]), int(tile["wavefronts"]), int(tile["worst"]),
            tile["histogram"]) == (208, 820, 8, "1:100 4:36 8:72")
    # a run without --access-stats keeps its columns as they were
    gmprof("profile", "samples/transpose_naive", "-o", runs / "plain.json")
    plain = gmprof("report", runs / "plain.json", "--csv", "--page", "sites").stdout
    assert plain.splitlines()[0] == \
        "kernel,site,location,text,function,object,kind,executions,how"


def test_html_has_a_column_in_the_source_view_and_a_panel_per_array(runs):
    gmprof("report", runs / "transpose_padded.json", "--html", runs / "p.html")
    page = (runs / "p.html").read_text()
    assert '<th class="warps">warp requests</th>' in page
    # padded: the read 180 / 108 = 1.67 wavefronts a request, 2 at worst
    assert "shared_data: 1.67 wavefronts/req (up to 2-way)" in page
    assert "odata: 3.33 sectors/req (ideal 3.33)" in page  # 360 / 108
    assert page.count('class="warp-panel"') == 3
    # without --access-stats: no column, no panel
    gmprof("profile", "samples/transpose_padded", "--out", runs / "plain.html")
    plain = (runs / "plain.html").read_text()
    assert "warp requests" not in plain and 'class="warp-panel"' not in plain


TILE_32 = """
__global__ void transpose(float *out, const float *in) {
    __shared__ float tile[32][%d];
    int x = threadIdx.x, y = threadIdx.y;
    tile[y][x] = in[y * 32 + x];
    __syncthreads();
    out[y * 32 + x] = tile[x][y];
}
"""


def test_a_32_way_conflict_goes_away_with_the_padding_column(tmp_path):
    for name, cols in (("v1", 32), ("v2", 33)):
        (tmp_path / f"{name}.cu").write_text(TILE_32 % cols)
        gmprof("profile", f"{name}.cu", "-k", "transpose", "--grid", "1", "--block", "32,32",
               "--arg", "out=float32[1024]:zeros", "--arg", "in=float32[1024]:arange",
               "--access-stats", "-o", f"{name}.json", cwd=tmp_path)
    # one block of 32 warps, warp y = one row (x = 0..31): 32 requests a site
    # v1: write word 32y + x, 32 banks: 1 each; read tile[x][y] = word 32x + y, all in bank y:
    #     32 wavefronts each. 32 * 1 + 32 * 32 = 1,056 in 64 requests: 16.5 a request
    # v2: write word 33y + x and read word 33x + y: bank (x + y) mod 32, distinct: 1 each, 64
    assert [bank_wavefronts(32 * np.arange(32) + 0), bank_wavefronts(33 * np.arange(32))] == \
        [32, 1]
    out = gmprof("diff", "v1.json", "v2.json", cwd=tmp_path).stdout
    said = " ".join(out.split())
    assert "tile wavefronts 1,056 64 -992 (x0.0606) 64 64" in said
    assert "tile: 16.5 wavefronts/req (up to 32-way) -> 1 wavefronts/req, conflict-free" in said
