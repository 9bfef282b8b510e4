"""--access-stats of a device walk whose loop runs once a thread, deferred (passes/defer.py), in a
kernel that cannot have two bodies (passes/dual.py: a `__shared__` declaration in a nested
block; test_dual_bodies has the kernel that can): the measured blocks record the walk's arguments after the loop and a replay kernel of gmprof's costs
them after the launch, one block per measured block, flushing each as that block's own (the
sampled estimate's interval needs each block's sums). CPU backend; the expected statistics by
hand (lanes 8 bytes apart from a sector's start: 8 sectors a request) and with numpy where
blocks differ, the measured blocks found with the hash written out in test_block_sampled_stats."""
from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from gmprof.mode import Mode
from gmprof.runtime import modules as M
from gmprof.runtime.session import Profiler
from tests.runtime.test_block_sampled_stats import hash_measured

# each block's lanes walk v[j] for j = 2t + o, 2t + o + 64, 2t + o + 128: 3 requests a warp,
# lanes 8 bytes apart, from o floats on (by block: 0, or (5 b + b / 16) % 8 in block b)
SOURCE = r"""
__global__ void walk(float *y, const float *v, int by) {
    int t = threadIdx.x, b = blockIdx.x;
    int o = by ? (b * 5 + (b >> 4)) % 8 : 0;
    float sum = 0.0f;
    for (int j = 2 * t + o; j < 192 + o; j += 64)
        sum += v[j];
    y[blockIdx.x * 32 + t] = sum;
    { __shared__ int unused[1]; }
}
"""
# the same walk in a kernel that may return early: not deferred (measured after the loop)
RETURNS = SOURCE.replace("float sum = 0.0f;", "float sum = 0.0f; if (o < 0) return;")
N = 4096  # blocks of one warp
LOW = 64  # --access-stats-blocks 64: 1 block in 2^6 measured


def keep_texts(monkeypatch, texts: list) -> None:
    """Append (modules, plan, sm, text) of every instrumented text made to texts."""
    original = M.Modules.source

    def source_kept(self, plan, sm=None):
        text, defines = original(self, plan, sm)
        if plan is not None:
            texts.append((self, plan, sm, text))
        return text, defines
    monkeypatch.setattr(M.Modules, "source", source_kept)


def run(source, by, mode, texts=None, monkeypatch=None, blocks=None, block=32):
    if monkeypatch is not None:
        keep_texts(monkeypatch, texts)
    prof = Profiler(text=source, name="walk.cu", backend="cpu")
    y = np.zeros(32 * (N if blocks is None else blocks), np.float32)
    v = np.ones(200, np.float32)
    report = prof.launch("walk", len(y) // 32, block, [y, v, np.int32(by)], mode=mode)
    np.testing.assert_array_equal(y, 3.0)  # the kernel computes what it computes natively
    return {s.text: s for s in report.sites}


def per_block():
    """Each block's sectors, with numpy: 3 requests of the distinct 32-byte sectors of bytes
    4 (2t + o) (the next iterations 256 bytes on: as many)."""
    b, t = np.arange(N), np.arange(32)
    o = (b * 5 + (b >> 4)) % 8
    sectors = {oo: len(np.unique(4 * (2 * t + oo) // 32)) for oo in range(8)}
    return 3 * np.array([sectors[oo] for oo in o])


def kernel_text(texts) -> str:
    """The user's kernel in the last instrumented text (and what gmprof adds after it)."""
    text = texts[-1][3]
    return text[text.index("__global__ void walk("):]


def sampled():
    return Mode.parse("default", warps=True, warps_blocks=LOW)


def test_alike_blocks_give_the_hand_count(monkeypatch):
    texts = []
    sites = run(SOURCE, 0, sampled(), texts, monkeypatch)
    # lanes 8 bytes apart: 256 bytes a request, 8 sectors, 2 lines; ideal 32 x 4 / 32 = 4
    w = sites["v[j]"].warps
    assert (w.requests, w.units, w.lines, w.ideal) == (3 * N, 24 * N, 6 * N, 12 * N)
    assert w.to_dict()["sample"]["units_interval"] == [24 * N, 24 * N]
    kernel, replay = kernel_text(texts).split("__gmprof_replay_walk()")
    assert "::gmprof::defer_walk_dm<" in kernel and "::gmprof::warp_walk_dm<" not in kernel
    assert "::gmprof::replay_walk_dm<" in replay


def check_scaled(w, per):
    """v[j]'s statistics w against each block's sectors per: the measured blocks' sum scaled
    to the grid, and its interval, 1.96 sd of N^2 (1 - n / N) S^2 / n, S^2 the measured
    blocks' variance (each block's row flushed as its own)."""
    m = hash_measured(N, 6, 1)
    n = int(m.sum())
    assert w.requests == 3 * N and w.units == round(per[m].sum() * N / n)
    lo, hi = w.to_dict()["sample"]["units_interval"]
    half = 1.959964 * np.sqrt(N * N * (1 - n / N) * per[m].var(ddof=1) / n)
    assert hi - lo == pytest.approx(2 * half, rel=1e-4)
    assert lo <= per.sum() <= hi


def test_differing_blocks_scale_the_measured_sums():
    # (each replay block flushed as its measured block)
    check_scaled(run(SOURCE, 1, sampled())["v[j]"].warps, per_block())


def test_a_kernel_that_returns_measures_after_the_loop_alike(monkeypatch):
    texts = []
    sites = run(RETURNS, 1, sampled(), texts, monkeypatch)
    kernel = kernel_text(texts)
    assert "defer_walk" not in kernel and "::gmprof::warp_walk_dm<" in kernel
    deferred = run(SOURCE, 1, sampled())
    a, d = sites["v[j]"].warps, deferred["v[j]"].warps
    assert (a.requests, a.units, a.lines, a.ideal) == (d.requests, d.units, d.lines, d.ideal)


def test_exact_mode_keeps_the_walk_in_the_kernel(monkeypatch):
    texts = []
    sites = run(SOURCE, 0, Mode.parse("default", warps=True, warps_blocks=0), texts,
                monkeypatch, blocks=64)
    assert "defer_walk" not in kernel_text(texts)
    w = sites["v[j]"].warps  # lanes 8 bytes apart: 8 sectors, 2 lines a request
    assert (w.requests, w.units, w.lines) == (3 * 64, 8 * 3 * 64, 2 * 3 * 64)


def nvcc_compiles(texts, tmp_path):
    """The last kept text's plan emitted for NVRTC (the GPU's unit) compiled by nvcc for
    sm_90; returns the instrument stage's result."""
    from gmprof.passes.targets import NVRTC

    modules, plan, sm, _ = texts[-1]
    text, done = modules.pipeline.instrumented_source(modules.program, plan, NVRTC, sm=sm,
                                                      defines=True)
    src = tmp_path / "walk.cu"
    src.write_text(text)
    r = subprocess.run(["nvcc", "-c", "-arch=sm_90", "-o", str(tmp_path / "walk.o"), str(src)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[:3000]
    return done


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
def test_nvcc_compiles_the_records_and_the_replay_kernel_for_sm_90(monkeypatch, tmp_path):
    texts = []
    run(SOURCE, 0, sampled(), texts, monkeypatch)
    nvcc_compiles(texts, tmp_path)


@pytest.mark.gpu
def test_on_a_gpu_alike_and_differing_blocks():
    for by, per in ((0, np.full(N, 3 * 8)), (1, per_block())):
        prof = Profiler(text=SOURCE, name="walk.cu", backend="gpu")
        y = np.zeros(32 * N, np.float32)
        report = prof.launch("walk", N, 32, [y, np.ones(200, np.float32), np.int32(by)],
                             mode=sampled())
        w = {s.text: s for s in report.sites}["v[j]"].warps
        m = hash_measured(N, 6, 1)
        assert w.requests == 3 * N and w.units == round(per[m].sum() * N / int(m.sum()))


def test_a_two_dimensional_block(monkeypatch):
    # a thread's record is at its linear thread index (16 x 2 threads: one warp, lanes
    # t = x + 16 y as in SOURCE's t)
    texts = []
    sites = run(SOURCE.replace("int t = threadIdx.x,", "int t = threadIdx.x + 16 * threadIdx.y,"),
                0, sampled(), texts, monkeypatch, block=(16, 2))
    assert "__gmprof_replay_walk()" in kernel_text(texts)
    w = sites["v[j]"].warps
    assert (w.requests, w.units, w.lines, w.ideal) == (3 * N, 24 * N, 6 * N, 12 * N)
