"""Per-warp requests (--access-stats, issue 27), hand-derived, on the CPU backend: shared
wavefronts (bank conflicts) and device sectors and lines (coalescing) per site, counted from the
formula (default mode, static sites) and by the hooks (basic mode, every site measured): both
must give the counts derived here. One block of 32 threads (one warp, one request a site) unless
said otherwise. The model (docs/report.md): 32 banks of 4 bytes, same word broadcast, 8-byte
accesses a half-warp a phase, 16-byte a quarter-warp; 32-byte sectors, 128-byte lines."""
from __future__ import annotations

import numpy as np
import pytest

from gmprof.mode import Mode
from gmprof.runtime.session import Profiler
from gmprof.runtime.warp_requests import device_request, shared_request

SOURCE = r"""
__global__ void banks(float *out, const int *idx) {
    __shared__ float s[32 * 33];
    __shared__ float2 s2[64];
    __shared__ float4 s4[32];
    __shared__ double sd[32];
    __shared__ unsigned h[64];
    int t = threadIdx.x;
    for (int i = t; i < 32 * 33; i += 32) s[i] = (float)i;
    for (int i = t; i < 64; i += 32) s2[i] = make_float2(1.0f, 2.0f);
    s4[t] = make_float4(1.0f, 2.0f, 3.0f, 4.0f);
    sd[t] = 1.0;
    h[t] = 0u;
    h[t + 32] = 0u;
    __syncthreads();
    float a = s[2 * t];
    float b = s[33 * t];
    float c = s[0];
    float2 d = s2[t];
    float2 e = s2[2 * t];
    float4 f = s4[t];
    double g = sd[t];
    atomicAdd(&h[idx[t]], 1u);
    out[t] = a + b + c + d.x + e.y + f.z + (float)g;
}

__global__ void transpose(float *out, const float *in, int n) {
    __shared__ float tile[32][32];
    __shared__ float padded[32][33];
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = in[y * n + x];
    padded[threadIdx.y][threadIdx.x] = in[y * n + x];
    __syncthreads();
    int ox = blockIdx.y * 32 + threadIdx.x, oy = blockIdx.x * 32 + threadIdx.y;
    out[oy * n + ox] = tile[threadIdx.x][threadIdx.y] + padded[threadIdx.x][threadIdx.y];
}

__global__ void strides(float *out, const float *x, const int *idx) {
    int t = threadIdx.x;
    out[t] = x[t] + x[2 * t] + x[32 * t] + x[idx[t]];
}
"""

MODES = ["default", "basic"]


@pytest.fixture(scope="module")
def prof():
    return Profiler(text=SOURCE, name="warps.cu", backend="cpu")


def stats(report, text):
    site = next(s for s in report.sites if s.text == text)
    assert site.warps is not None, text
    return site.warps


@pytest.mark.parametrize("mode", MODES)
def test_shared_banks(prof, mode):
    idx = np.array([(t % 2) * 32 for t in range(32)], np.int32)  # words 0 and 32: one bank
    out = np.zeros(32, np.float32)
    report = prof.launch("banks", 1, 32, [out, idx], mode=Mode.parse(mode, warps=True))
    want = {
        # s[2t]: words 0, 2, ..., 62; bank 2t mod 32 holds words t and t + 16: 2 wavefronts
        "s[2 * t]": (2, 1),
        # s[33t]: bank 33t mod 32 = t, every lane its own bank: 1
        "s[33 * t]": (1, 1),
        # s[0]: one word, broadcast: 1
        "s[0]": (1, 1),
        # float2 s2[t]: 8 bytes, two half-warps of 128 contiguous bytes: 1 each, 2 in all
        "s2[t]": (2, 2),
        # float2 s2[2t]: half-warp lanes l and l + 8 share banks (words 4l, 4l + 1): 2 each
        "s2[2 * t]": (4, 2),
        # float4 s4[t]: four quarter-warps of 128 contiguous bytes: 4
        "s4[t]": (4, 4),
        # double sd[t]: as float2: 2
        "sd[t]": (2, 2),
        # the histogram: words 0 and 32, both bank 0: 2 wavefronts
        "h[idx[t]]": (2, 1),
    }
    for text, (wave, ideal) in want.items():
        w = stats(report, text)
        assert (w.space, w.requests, w.units, w.ideal) == ("shared", 1, wave, ideal), text
        assert w.histogram[wave - 1] == 1, text
    assert stats(report, "h[idx[t]]").how == "measured"
    if mode == "default":
        assert stats(report, "s[33 * t]").how == "static"


@pytest.mark.parametrize("mode", MODES)
def test_transpose_tile_and_padded_tile(prof, mode):
    n = 64
    inp = np.arange(n * n, dtype=np.float32)
    out = np.zeros(n * n, np.float32)
    report = prof.launch("transpose", (2, 2), (32, 32), [out, inp, np.int32(n)],
                         mode=Mode.parse(mode, warps=True))
    np.testing.assert_array_equal(out.reshape(n, n), 2 * inp.reshape(n, n).T)
    requests = 4 * 32  # 4 blocks of 32 warps, one request a site each
    # a warp is one row (threadIdx.y fixed, x = 0..31): row writes hit 32 banks; the column
    # read tile[x][y] is word 32x + y: all in bank y, 32 wavefronts; padded: word 33x + y, bank
    # (x + y) mod 32, conflict-free
    for text, wave in (("tile[threadIdx.y][threadIdx.x]", 1),
                       ("padded[threadIdx.y][threadIdx.x]", 1),
                       ("tile[threadIdx.x][threadIdx.y]", 32),
                       ("padded[threadIdx.x][threadIdx.y]", 1)):
        w = stats(report, text)
        assert (w.requests, w.units, w.ideal) == (requests, requests * wave, requests), text
    # in[y * n + x] and out[...]: 32 consecutive floats, 128 aligned bytes: 4 sectors, 1 line
    for text in ("in[y * n + x]", "out[oy * n + ox]"):
        w = stats(report, text)
        assert (w.space, w.units, w.ideal, w.lines) == ("device", 4 * requests, 4 * requests,
                                                        requests), text


@pytest.mark.parametrize("mode", MODES)
def test_device_strides_and_a_gather(prof, mode):
    x = np.arange(32 * 32, dtype=np.float32)
    idx = np.array([0, 1, 2, 3] * 8, np.int32)  # 4 distinct floats: 1 sector, 1 line
    out = np.zeros(32, np.float32)
    report = prof.launch("strides", 1, 32, [out, x, idx], mode=Mode.parse(mode, warps=True))
    want = {
        "x[t]": (4, 4, 1),        # 128 contiguous bytes
        "x[2 * t]": (8, 4, 2),    # every other float: 256 bytes, 8 sectors, 2 lines
        "x[32 * t]": (32, 4, 32),  # one float a line
        "x[idx[t]]": (1, 1, 1),   # 16 bytes: ideal 1 sector
    }
    for text, (sectors, ideal, lines) in want.items():
        w = stats(report, text)
        assert (w.requests, w.units, w.ideal, w.lines) == (1, sectors, ideal, lines), text


def test_the_model_by_hand():
    lanes = np.arange(32)
    assert shared_request(4 * 32 * lanes, 4) == (32, 1)       # one bank, 32 words
    assert shared_request(4 * lanes, 4) == (1, 1)
    assert shared_request(np.zeros(32, int), 4) == (1, 1)     # broadcast
    assert shared_request(8 * lanes, 8) == (2, 2)
    assert shared_request(16 * lanes, 16) == (4, 4)
    assert shared_request(12 * lanes, 12) == (3, 3)          # three 4-byte requests, conflict-free
    assert device_request(4 * lanes, 4) == (4, 4, 1)
    assert device_request(4 * lanes + 4, 4) == (5, 4, 2)      # misaligned by a float
    assert device_request(np.zeros(32, int), 4) == (1, 1, 1)


def test_diff_shows_conflicts_going_away(tmp_path):
    """The paper's transpose, naive (tile[16][16]) -> padded ([16][17]), saved with
    --access-stats and compared with `gmprof diff`: the shared array's wavefronts fall to the
    conflict-free count; the device arrays' sectors stay."""
    import json
    import subprocess
    import sys

    docs = []
    for name in ("transpose_naive", "transpose_padded"):
        out = tmp_path / f"{name}.json"
        r = subprocess.run([sys.executable, "-m", "gmprof", "profile", f"samples/{name}",
                            "--access-stats", "--json"], capture_output=True, text=True,
                           timeout=600)
        assert r.returncode == 0, r.stderr
        out.write_text(r.stdout)
        docs.append(out)
    a, b = (json.loads(p.read_text()) for p in docs)
    wa = {x["name"]: x.get("warps") for x in a["kernels"][0]["arrays"]}
    wb = {x["name"]: x.get("warps") for x in b["kernels"][0]["arrays"]}
    # a 16 x 16 block's warp is two rows of the tile. Naive ([16][16]): a row write puts row
    # y's words 16y..16y+15 and row y+1's in banks 16(y mod 2).. : conflict-free, 1; the
    # column read tile[tx][ty] puts word 16tx + ty in bank (16tx + ty) mod 32: the 16 lanes of
    # a row share two banks (8 words each), 8 wavefronts. Padded ([16][17]): words 17y + x;
    # the second row wraps into bank 0 (word 32 beside word 0): 2 wavefronts a row access;
    # the column read 17tx + ty: banks (17tx + ty) mod 32 distinct for tx < 16 within a row,
    # the two rows' words 17tx + 2w and 17tx + 2w + 1 collide once: 2.
    assert wb["shared_data"]["wavefronts"] < wa["shared_data"]["wavefronts"]
    assert wb["shared_data"]["requests"] == wa["shared_data"]["requests"]
    assert wa["idata"] == wb["idata"] and wa["odata"] == wb["odata"]
    r = subprocess.run([sys.executable, "-m", "gmprof", "diff", str(docs[0]), str(docs[1]),
                        "--json"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    row = next(x for x in d["kernels"][0]["arrays"] if x["name"] == "shared_data")
    assert row["warps"]["what"] == "wavefronts"
    assert row["warps"]["units"] == [wa["shared_data"]["wavefronts"],
                                     wb["shared_data"]["wavefronts"]]
