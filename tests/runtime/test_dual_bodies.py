"""--access-stats sampled by block with the kernel's body emitted twice (passes/dual.py): the
measured blocks run the body with the statistics (walks measured in place), the others default
mode's body with the header's second pass (gmprof_u). CPU backend; expected counts and
statistics by hand (lanes 8 bytes apart from a sector's start: 8 sectors a request) and with
numpy where blocks differ, the measured blocks found with the hash written out in
test_block_sampled_stats; the user's lines kept (#line) in both bodies."""
from __future__ import annotations

import re
import shutil

import numpy as np
import pytest

from gmprof.mode import Mode
from gmprof.runtime.session import Profiler
from tests.runtime.test_block_sampled_stats import hash_measured
from tests.runtime.test_deferred_walks import (check_scaled, keep_texts, nvcc_compiles,
                                                per_block)

# test_deferred_walks' walk (per_block: each block's sectors), its value staged in a shared
# array (one request a warp, conflict-free)
SOURCE = r"""
__global__ void walk(float *y, const float *v, int by) {
    __shared__ float out[32];
    int t = threadIdx.x, b = blockIdx.x;
    int o = by ? (b * 5 + (b >> 4)) % 8 : 0;
    float sum = 0.0f;
    for (int j = 2 * t + o; j < 192 + o; j += 64)
        sum += v[j];
    out[t] = sum;
    __syncwarp();
    y[blockIdx.x * 32 + t] = out[t];
}
"""
SUM_LINE = 8  # `sum += v[j];` in SOURCE (its first line is empty)
N = 4096  # blocks of one warp
LOW = 64  # --access-stats-blocks 64: 1 block in 2^6 measured


def run(source, by, mode, texts=None, monkeypatch=None, backend="cpu"):
    if monkeypatch is not None:
        keep_texts(monkeypatch, texts)
    prof = Profiler(text=source, name="walk.cu", backend=backend)
    y = np.zeros(32 * N, np.float32)
    report = prof.launch("walk", N, 32, [y, np.ones(200, np.float32), np.int32(by)], mode=mode)
    np.testing.assert_array_equal(y, 3.0)  # the kernel computes what it computes natively
    return {s.text: s for s in report.sites}, report


def sampled():
    return Mode.parse("default", warps=True, warps_blocks=LOW)


def kernel_text(texts) -> str:
    text = texts[-1][3]
    return text[text.index("__global__ void walk("):]


def logical_lines(text: str):
    """(file, line) of every physical line of text, as the compiler reads its #line markers."""
    out, name, line = [], None, 1
    for physical in text.split("\n"):
        m = re.match(r'#line (\d+) "([^"]*)"$', physical)
        if m:
            out.append((None, None))
            line, name = int(m.group(1)), m.group(2)
            continue
        out.append((name, line))
        line += 1
    return out


def test_two_bodies_give_the_hand_counts_and_keep_the_users_lines(monkeypatch):
    texts = []
    sites, report = run(SOURCE, 0, sampled(), texts, monkeypatch)
    # lanes 8 bytes apart: 256 bytes a request, 8 sectors, 2 lines; ideal 32 x 4 / 32 = 4
    w = sites["v[j]"].warps
    assert (w.requests, w.units, w.lines, w.ideal) == (3 * N, 24 * N, 6 * N, 12 * N)
    assert w.to_dict()["sample"]["units_interval"] == [24 * N, 24 * N]
    # the counts, made in both bodies alike: v 3 reads a thread, y and out[t] written once
    arrays = {a.name: a for a in report.arrays}
    assert int(arrays["v"].reads) == 3 * 32 * N and int(arrays["y"].writes) == 32 * N
    assert int(arrays["out"].reads) == 32 * N and int(arrays["out"].writes) == 32 * N
    text = kernel_text(texts)
    assert "if (::gmprof::block_hashed_in()) { ::gmprof::enter_measured();" in text
    assert "::gmprof_u::" in text and "replay" not in text and "defer_walk" not in text
    # the shared array declared once, before the branch
    assert text.count("__shared__ float out[32];") == 1
    assert text.index("__shared__ float out[32];") < text.index("block_hashed_in()")
    # both bodies' walk on the user's line
    whole = texts[-1][3]
    lines = logical_lines(whole)
    where = [lines[k] for k, physical in enumerate(whole.split("\n"))
             if "sum += v[j];" in physical]
    assert where == [("walk.cu", SUM_LINE), ("walk.cu", SUM_LINE)]


def test_differing_blocks_scale_the_measured_sums():
    check_scaled(run(SOURCE, 1, sampled())[0]["v[j]"].warps, per_block())


def test_a_kernel_that_returns_and_calls_a_device_function(monkeypatch):
    # `return` in both bodies (each leaves through its own pass's leave); a device function's
    # hooks (first pass) read the block's flags, so the entry sets them unmeasured
    source = SOURCE.replace("__global__", "__device__ float get(const float *v, int j) "
                            "{ return v[j]; }\n__global__", 1)
    source = source.replace("sum += v[j];", "sum += get(v, j);")
    source = source.replace("float sum = 0.0f;", "float sum = 0.0f; if (o < 0) return;")
    texts = []
    sites, report = run(source, 1, sampled(), texts, monkeypatch)
    text = kernel_text(texts)
    assert "::gmprof::enter<false, true>();" in text and "::gmprof_u::leave();" in text
    arrays = {a.name: a for a in report.arrays}
    assert int(arrays["v"].reads) == 3 * 32 * N
    assert int(arrays["out"].writes) == 32 * N


def test_a_nested_shared_declaration_keeps_one_body(monkeypatch):
    texts = []
    source = SOURCE.replace("__syncwarp();", "__syncwarp(); { __shared__ int unused[1]; }")
    sites, _ = run(source, 0, sampled(), texts, monkeypatch)
    assert "block_hashed_in" not in kernel_text(texts)
    w = sites["v[j]"].warps
    assert (w.requests, w.units) == (3 * N, 24 * N)


def test_exact_mode_keeps_one_body(monkeypatch):
    texts = []
    sites, _ = run(SOURCE, 0, Mode.parse("default", warps=True, warps_blocks=0), texts,
                   monkeypatch)
    assert "gmprof_u" not in kernel_text(texts)
    assert (sites["v[j]"].warps.requests, sites["v[j]"].warps.units) == (3 * N, 24 * N)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
def test_nvcc_compiles_both_passes_for_sm_90(monkeypatch, tmp_path):
    texts = []
    run(SOURCE, 0, sampled(), texts, monkeypatch)
    assert nvcc_compiles(texts, tmp_path).dual == ("walk",)


@pytest.mark.gpu
def test_on_a_gpu_alike_and_differing_blocks():
    m = hash_measured(N, 6, 1)
    for by, per in ((0, np.full(N, 3 * 8)), (1, per_block())):
        sites, report = run(SOURCE, by, sampled(), backend="gpu")
        w = sites["v[j]"].warps
        assert w.requests == 3 * N and w.units == round(per[m].sum() * N / int(m.sum()))
        arrays = {a.name: a for a in report.arrays}
        assert int(arrays["v"].reads) == 3 * 32 * N


# a template kernel whose shared array is declared after a statement and sized by the
# template's parameter, its loop under `#pragma unroll 2`; each thread reads idx[j] and
# v[idx[j]] for j = t, t + 32, t + 64 (idx reversed: 32 consecutive floats a request)
TEMPLATE = r"""
template <int B>
__global__ void tk(float *y, const float *v, const int *idx) {
    int t = threadIdx.x;
    __shared__ float s[B];
    float sum = 0.0f;
    #pragma unroll 2
    for (int j = t; j < 3 * B; j += B)
        sum += v[idx[j]];
    s[t] = sum;
    __syncthreads();
    y[blockIdx.x * B + t] = s[(t + 1) % B];
}
"""


def test_a_template_kernel_its_declaration_hoisted_and_its_pragma_in_both_bodies(monkeypatch):
    texts = []
    keep_texts(monkeypatch, texts)
    prof = Profiler(text=TEMPLATE, name="tk.cu", backend="cpu")
    y = np.zeros(32 * N, np.float32)
    idx = np.arange(96, dtype=np.int32)[::-1].copy()
    report = prof.launch("tk<32>", N, 32, [y, np.ones(96, np.float32), idx], mode=sampled())
    np.testing.assert_array_equal(y, 3.0)
    text = texts[-1][3]
    assert "block_hashed_in()) { ::gmprof::enter_measured();" in text
    assert text.count("#pragma unroll 2") == 2 and text.count("__shared__ float s[B];") == 1
    arrays = {a.name: a for a in report.arrays}
    # 3 reads of idx and of v a thread; s written and read once a thread
    assert (int(arrays["v"].reads), int(arrays["idx"].reads)) == (96 * N, 96 * N)
    assert (int(arrays["s"].reads), int(arrays["s"].writes)) == (32 * N, 32 * N)
    # v[idx[j]]: 3 requests a warp of 32 consecutive floats (128 bytes): 4 sectors each; the
    # blocks alike, so the sampled estimate is the count
    w = {s.text: s for s in report.sites}["v[idx[j]]"].warps
    assert (w.requests, w.units) == (3 * N, 12 * N)
