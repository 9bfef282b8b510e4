"""--access-stats sampled by block on a large grid (issue 27's overhead; passes/block_sample.py),
on the CPU backend. One warp a block, each block one request a site. The hooked sites read
through an index array (x[j], s[j % 64]), so their statistics are measured; the expected
counts are derived here: by hand where every block is alike, with numpy where blocks differ,
the measured blocks found with the hash written out below (multiplicative hashing, as
gmprof.cuh block_hashed_in documents it), not with gmprof's."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gmprof.cli import build_parser
from gmprof.cli_commands import _mode
from gmprof.mode import Mode
from gmprof.passes import block_sample as BS
from gmprof.report.warpview import how_text
from gmprof.runtime.session import Profiler

SOURCE = r"""
__global__ void k(float *out, const float *x, const int *idx) {
    __shared__ float s[64];
    int t = threadIdx.x;
    s[t] = 1.0f;
    s[t + 32] = 2.0f;
    __syncthreads();
    int j = idx[blockIdx.x * 32 + t];
    out[blockIdx.x * 32 + t] = x[j] + s[j % 64];
}
"""
ROOT = Path(__file__).resolve().parents[2]
N = 4096  # blocks of 32 threads
LOW = 64  # --access-stats-blocks: s = 6 (4096 / 64 = 64 = 2^6 blocks a measured one)


def hash_measured(blocks: int, s: int, seed: int) -> np.ndarray:
    """Which blocks measure: the top s bits of (b * 0x9e3779b1 + seed * 0x9e3779b9) mod 2^32
    all zero (Python integers, reduced by hand)."""
    key = (seed * 0x9E3779B9) % 2**32
    return np.array([((b * 0x9E3779B1 + key) % 2**32) >> (32 - s) == 0
                     for b in range(blocks)])


def run(idx, x, mode, backend="cpu"):
    # a fresh Profiler: this launch is its first, number 1 (session.py), the sample's seed
    prof = Profiler(text=SOURCE, name="k.cu", backend=backend)
    out = np.zeros(len(idx), np.float32)
    report = prof.launch("k", len(idx) // 32, 32, [out, x, idx], mode=mode)
    return {s.text: s for s in report.sites}, report


def stride2():
    return np.tile(np.arange(32, dtype=np.int32) * 2, N)


def test_the_rate_rule():
    # the largest s with blocks / 2^s >= the minimum: spmv large, 524,288 blocks -> 1/256
    assert BS.shift(524288, 2048) == 8
    assert BS.shift(4095, 2048) == 0 and BS.shift(4096, 2048) == 1
    assert BS.shift(N, LOW) == 6 and BS.shift(N, 0) == 0
    # the host's count of measured blocks is the hash's
    assert BS.measured_count(N, 6, 1) == int(hash_measured(N, 6, 1).sum())


def test_a_small_grid_stays_exact():
    idx = np.tile(np.arange(32, dtype=np.int32) * 2, 32)  # 32 blocks < 2 x 2048: every block
    sites, _ = run(idx, np.ones(64, np.float32), Mode.parse("default", warps=True))
    w = sites["x[j]"].warps
    assert (w.requests, w.units, w.how, w.sample) == (32, 32 * 8, "measured", None)
    assert "sample" not in w.to_dict() and how_text(w.to_dict()) == "measured"


@pytest.mark.parametrize("backend", ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
def test_alike_blocks_give_the_hand_count_exactly(backend):
    sites, _ = run(stride2(), np.ones(64, np.float32),
                   Mode.parse("default", warps=True, warps_blocks=LOW), backend)
    # x[2t], floats: bytes 0, 8, ..., 248 -> 8 sectors, 2 lines; ideal 32 x 4 / 32 = 4
    x = sites["x[j]"].warps
    assert (x.requests, x.units, x.lines, x.ideal) == (N, 8 * N, 2 * N, 4 * N)
    assert x.histogram[7] == N and sum(x.histogram) == N
    # s[2t]: words 0, 2, ..., 62; bank 2t mod 32 holds words t and t + 16: 2 wavefronts
    s = sites["s[j % 64]"].warps
    assert (s.requests, s.units, s.ideal) == (N, 2 * N, N)
    d = x.to_dict()["sample"]
    assert d["label"] == "sampled" and d["rate"] == 64 and d["blocks"] == N
    assert d["measured_blocks"] == int(hash_measured(N, 6, 1).sum())
    # every block alike: no variance between blocks, the interval is the count
    assert d["requests_interval"] == [N, N] and d["units_interval"] == [8 * N, 8 * N]
    assert how_text(x.to_dict()) == "measured, sampled 1/64 of blocks"
    # the counts (not the statistics) are made in every block
    assert sites["x[j]"].executions == 32 * N


def block_strides():
    b = np.arange(N)
    k = 1 + (b * 7 + (b >> 3)) % 3  # 1, 2 or 3 floats between lanes, by block
    t = np.arange(32)
    return k, (t[None, :] * k[:, None]).astype(np.int32).reshape(-1)


def per_block(k):
    """Each block's request (sectors, wavefronts) at stride k, with numpy: distinct 32-byte
    sectors of bytes 4 k t; the most distinct words of one bank among words k t mod 64."""
    t = np.arange(32)
    sectors = {kk: len(np.unique(4 * kk * t // 32)) for kk in (1, 2, 3)}

    def wavefronts(kk):
        words = np.unique((kk * t) % 64)
        return int(np.bincount(words % 32).max())

    return np.array([sectors[v] for v in k]), np.array([wavefronts(v) for v in k])


def test_differing_blocks_scale_the_measured_sum():
    k, idx = block_strides()
    sites, _ = run(idx, np.ones(128, np.float32),
                   Mode.parse("default", warps=True, warps_blocks=LOW))
    sectors, waves = per_block(k)
    m = hash_measured(N, 6, 1)
    n = int(m.sum())
    for text, per in (("x[j]", sectors), ("s[j % 64]", waves)):
        w = sites[text].warps
        est = per[m].sum() * N / n
        assert w.units == round(est) and w.requests == N, text
        d = w.to_dict()["sample"]
        lo, hi = d["units_interval"]
        assert lo <= per.sum() <= hi, (text, lo, per.sum(), hi)
        # the interval: 1.96 sd of N^2 (1 - n / N) S^2 / n, S^2 the measured blocks' variance
        half = 1.959964 * np.sqrt(N * N * (1 - n / N) * per[m].var(ddof=1) / n)
        assert hi - lo == pytest.approx(2 * half, rel=1e-4)
        plo, phi = d["per_request_interval"]
        assert plo <= per.sum() / N <= phi


def test_exact_on_the_large_grid():
    k, idx = block_strides()
    sites, _ = run(idx, np.ones(128, np.float32), Mode.parse("default", warps=True,
                                                             warps_blocks=0))
    sectors, waves = per_block(k)
    assert sites["x[j]"].warps.units == sectors.sum() and sites["x[j]"].warps.sample is None
    assert sites["s[j % 64]"].warps.units == waves.sum()


def test_device_memory_statistics_are_approximate():
    # basic mode: no counter area in shared memory, so no per-block sums
    sites, _ = run(stride2(), np.ones(64, np.float32),
                   Mode.parse("basic", warps=True, warps_blocks=LOW))
    w = sites["x[j]"].warps
    assert (w.requests, w.units) == (N, 8 * N)
    d = w.to_dict()["sample"]
    assert d["label"] == "approximate" and d["units_interval"] is None
    assert "no interval" in d["text"]


def test_the_options():
    p = build_parser()
    args = p.parse_args(["profile", "k.cu", "--access-stats-exact"])
    mode = _mode(args)
    assert mode.warps and mode.warps_blocks == 0 and "exact" in mode.name
    args = p.parse_args(["profile", "k.cu", "--access-stats", "--access-stats-blocks", "64"])
    assert _mode(args).warps_blocks == 64
    assert _mode(p.parse_args(["profile", "k.cu", "--access-stats"])).warps_blocks == 2048


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
def test_nvcc_compiles_the_sampled_hooks_for_sm_90(tmp_path):
    # the hooks with statistics (block_measured, the conditional rejoin, the flush's squares,
    # the whole programs' weights) as nvcc's device pass for an H100 reads them
    src = tmp_path / "k.cu"
    src.write_text(SOURCE)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for mode in ("default", "basic"):
        out = tmp_path / f"k_{mode}.cu"
        subprocess.run([sys.executable, "-m", "gmprof", "instrument", str(src), "-o", str(out),
                        "--access-stats", "--mode", mode], check=True, env=env,
                       capture_output=True)
        r = subprocess.run(["nvcc", "-c", "-arch=sm_90", "-o", str(tmp_path / f"{mode}.o"),
                            str(out)], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr[:3000]
