"""Sharing between blocks and warps per element (--sharing, issue 27; passes/tallies.py
Sharing), hand-derived, on the CPU backend, where blocks run one after another and the counts
are exact: every block reads all of b (each element: every block), each block its own slice
(one block), a stencil with a halo (two blocks at the blocks' edges). Blocks of 64 threads are
two warps (threads 0-31 and 32-63). In default mode (the sites are static: they get hooks
while --sharing is on) and in basic mode alike."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from gmprof.mode import Mode
from gmprof.passes import tallies as T
from gmprof.report.check import check
from gmprof.report.document import document, dumps
from gmprof.report.fromdoc import report as from_doc
from gmprof.runtime.session import Profiler

SOURCE = r"""
__global__ void all_read(float *out, const float *b, int n) {
    float s = b[0];
    for (int i = threadIdx.x; i < n; i += blockDim.x) s += b[i];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

__global__ void own_slice(float *out, const float *b) {
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    out[g] = 2.0f * b[g];
}

__device__ float get(const float *p, int i) { return p[i]; }

__global__ void helper(float *out, const float *b, const float *c) {
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    out[g] = get(b, g) + get(c, 0);
}

__global__ void stencil(float *out, const float *b, int n) {
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g > 0 && g < n - 1) out[g] = b[g - 1] + b[g] + b[g + 1];
}
"""

MODES = ["default", "basic"]
BLOCKS, THREADS = 4, 64


@pytest.fixture(scope="module")
def prof():
    return Profiler(text=SOURCE, name="sharing.cu", backend="cpu")


def sharing(report, name):
    arr = report.array(name)
    s = arr.tallies.get("sharing")
    assert s is not None, name
    assert s.label == "exact"
    return s


@pytest.mark.parametrize("mode", MODES)
def test_every_block_reads_all_of_b(prof, mode):
    n = 256
    out = np.zeros(BLOCKS * THREADS, np.float32)
    b = np.ones(n, np.float32)
    report = prof.launch("all_read", BLOCKS, THREADS, [out, b, np.int32(n)],
                         mode=Mode.parse(mode, tallies=["sharing"]))
    s = sharing(report, "b")
    # every block reads every b[i] (i = t, t + 64, t + 128, t + 192 for thread t): 4 blocks
    assert s.blocks.tolist() == [4] * n
    # b[i], i > 0, is read by thread i % 64 of each block, in warp (i % 64) // 32: one warp a
    # block, 4 warps; b[0] by every thread (s = b[0]): both warps of the 4 blocks, 8 warps
    assert s.warps.tolist() == [8] + [4] * (n - 1)
    # out[g] is written by thread g alone: one block, one warp
    o = sharing(report, "out")
    assert o.blocks.tolist() == [1] * (BLOCKS * THREADS) == o.warps.tolist()
    # the access counts are those without --sharing: b[0] 256 times (once a thread) plus the
    # loop's reads (every element once a block: 4)
    assert report.array("b").counts.tolist() == [4 + BLOCKS * THREADS] + [4] * (n - 1)


@pytest.mark.parametrize("mode", MODES)
def test_each_block_its_own_slice(prof, mode):
    n = BLOCKS * THREADS
    out = np.zeros(n, np.float32)
    b = np.arange(n, dtype=np.float32)
    report = prof.launch("own_slice", BLOCKS, THREADS, [out, b],
                         mode=Mode.parse(mode, tallies=["sharing"]))
    s = sharing(report, "b")
    # b[g] is read by thread g alone: one block, one warp per element
    assert s.blocks.tolist() == [1] * n
    assert s.warps.tolist() == [1] * n
    assert np.array_equal(out, 2 * b)  # (the program computes what it did)


@pytest.mark.parametrize("mode", MODES)
def test_through_a_helper_whose_array_is_found_at_run_time(prof, mode):
    n = BLOCKS * THREADS
    out = np.zeros(n, np.float32)
    b = np.ones(n, np.float32)
    c = np.ones(4, np.float32)
    report = prof.launch("helper", BLOCKS, THREADS, [out, b, c],
                         mode=Mode.parse(mode, tallies=["sharing"]))
    # get's p[i] is b or c (its hook finds which by the address): b[g] by thread g alone;
    # c[0] by every thread: 4 blocks, 2 warps each, 8 warps; c[1..3] by none
    s = sharing(report, "b")
    assert s.blocks.tolist() == [1] * n == s.warps.tolist()
    s = sharing(report, "c")
    assert s.blocks.tolist() == [4, 0, 0, 0] and s.warps.tolist() == [8, 0, 0, 0]


def _stencil_by_hand(n):
    """Blocks and warps reading each element: thread g (0 < g < n - 1) reads g - 1, g and
    g + 1; its block is g // 64, its warp (g // 64, g % 64 // 32)."""
    blocks = [set() for _ in range(n)]
    warps = [set() for _ in range(n)]
    for g in range(1, n - 1):
        for e in (g - 1, g, g + 1):
            blocks[e].add(g // THREADS)
            warps[e].add((g // THREADS, g % THREADS // 32))
    return [len(x) for x in blocks], [len(x) for x in warps]


@pytest.mark.parametrize("mode", MODES)
def test_stencil_halo(prof, mode):
    n = BLOCKS * THREADS
    out = np.zeros(n, np.float32)
    b = np.ones(n, np.float32)
    report = prof.launch("stencil", BLOCKS, THREADS, [out, b, np.int32(n)],
                         mode=Mode.parse(mode, tallies=["sharing"]))
    s = sharing(report, "b")
    blocks, warps = _stencil_by_hand(n)
    assert s.blocks.tolist() == blocks and s.warps.tolist() == warps
    # by hand: b[63] is read by threads 62, 63 (block 0, warp 1) and 64 (block 1, warp 0):
    # 2 blocks, 2 warps; b[31] by threads 30, 31 (warp 0) and 32 (warp 1) of block 0: 1 block,
    # 2 warps; b[10] by threads 9, 10, 11: 1 block, 1 warp; b[0] by thread 1 only
    assert (s.blocks[63], s.warps[63], s.blocks[64], s.warps[64]) == (2, 2, 2, 2)
    assert (s.blocks[31], s.warps[31], s.blocks[10], s.warps[10]) == (1, 2, 1, 1)
    assert (s.blocks[0], s.warps[0]) == (1, 1)
    # the block edges 63/64, 127/128, 191/192: 6 elements in 2 blocks
    assert int((s.blocks > 1).sum()) == 6


def test_document_schema_merge_and_load(prof):
    n = BLOCKS * THREADS
    out = np.zeros(n, np.float32)
    b = np.ones(n, np.float32)
    mode = Mode.parse("default", tallies=["sharing"])
    r1 = prof.launch("stencil", BLOCKS, THREADS, [out, b, np.int32(n)], mode=mode)
    r2 = prof.launch("stencil", BLOCKS, THREADS, [out, b, np.int32(n)], mode=mode)
    r1.merge(r2)
    blocks, warps = _stencil_by_hand(n)
    # two launches: their blocks are other blocks, the counts add
    s = r1.array("b").tallies["sharing"]
    assert s.blocks.tolist() == [2 * x for x in blocks]
    doc = json.loads(dumps(document([r1])))
    check(doc, "run.json")  # the schema, with the family's field (report/check.full_schema)
    entry = next(a for a in doc["kernels"][0]["arrays"] if a["name"] == "b")["sharing"]
    assert entry["label"] == "exact"
    assert entry["touched"] == n and entry["blocks_max"] == 4
    assert entry["reused_across_blocks"] == n  # two launches: every element in 2+ blocks
    assert entry["blocks_per_element"] == [2 * x for x in blocks]
    assert entry["warps_per_element"] == [2 * x for x in warps]
    back = from_doc(doc["kernels"][0]).array("b").tallies["sharing"]
    assert back.blocks.tolist() == [2 * x for x in blocks]


def test_off_by_default_and_compiled_out():
    assert "GMPROF_SHARING" not in Mode.parse("default").defines()
    assert Mode.parse("default", tallies=["sharing"]).defines()["GMPROF_SHARING"] == 1
    # its place in an element's record, as gmprof.cuh declares it
    sharing = T.by_name("sharing")
    assert T.at(sharing) == sharing.constants["SHARE_AT"]
    assert sharing.words == sharing.constants["SHARE_WORDS"] == T.record_words()


def test_a_mode_it_cannot_run_in_is_refused_from_python(prof):
    from gmprof.errors import GmprofError

    out = np.zeros(64, np.float32)
    with pytest.raises(GmprofError, match="not in trace mode"):
        prof.launch("own_slice", 1, 64, [out, np.ones(64, np.float32)],
                    mode=Mode.parse("trace", tallies=["sharing"]))


def test_option_and_terminal(tmp_path):
    src = tmp_path / "k.cu"
    src.write_text(SOURCE)
    base = [sys.executable, "-m", "gmprof", "profile", str(src), "--kernel", "own_slice",
            "--grid", "2", "--block", "64", "--arg", "out=float32[128]",
            "--arg", "b=float32[128]:arange", "--backend", "cpu"]
    run = subprocess.run(base + ["--sharing", "--mode", "trace"], capture_output=True,
                         text=True)
    assert run.returncode == 2
    assert run.stderr.strip() == ("gmprof: error: --sharing counts in the hooks, not in "
                                  "trace mode (use another --mode)")
    run = subprocess.run(base + ["--sharing"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "sharing per element (--sharing)" in run.stdout
