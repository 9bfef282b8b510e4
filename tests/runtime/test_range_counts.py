"""Range counting (passes/ranges.py, gmprof.cuh dm_range) on the CPU backend (and the GPU): which sites are
counted as ranges, and their counts against numpy (every expected count is derived here from
the kernels' loops, not from gmprof), with ranges on and off."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

import gmprof
from gmprof.mode import Mode
from gmprof.passes.hooks import DmGather, DmTwin
from gmprof.passes.pipeline import Pipeline

KERNELS = Path(__file__).resolve().parent / "cpu_kernels" / "ranges.cu"
DEFAULT = Mode.parse("default")
MODES = {"ranges": DEFAULT, "per-access": dataclasses.replace(DEFAULT, ranges=False)}


def test_planned_ranges():
    pipeline = Pipeline()
    program = pipeline.analyze(pipeline.load(KERNELS))
    plan = pipeline.plan(program, DEFAULT)
    ranged = {(sp.site.function.name, sp.site.text, _bare(sp.hook.range.stride))
              for sp in plan.sites.values() if sp.hook.range is not None}
    assert ranged == {
        ("csr_scalar", "val[j]", "1"),
        ("csr_vector", "val[j]", "LANES"),
        ("walks", "a[j]", "-1"),
        ("walks", "b[j]", "2"),
        ("walks", "c[k]", "3*1"),
        ("walks", "m[i][t % 8]", "1*8"),
        ("shared_row", "a[start + c]", "1"),
        ("csr_gather", "colIdx[j]", "LANES"),
        ("csr_twins", "val[j]", "LANES"),
        ("csr_twins", "colIdx[j]", "LANES"),
        ("int_gather", "idx[j]", "1"),
        ("written_index", "idx[j]", "1"),
    }
    gathers = {(sp.site.function.name, sp.site.text, sp.hook.pseudo.name)
               for sp in plan.sites.values() if isinstance(sp.hook, DmGather)}
    assert gathers == {("csr_gather", "x[colIdx[j]]", "x<-colIdx"),
                       ("csr_twins", "x[colIdx[j]]", "x<-colIdx"),
                       ("int_gather", "tab[idx[j]]", "tab<-idx")}
    # the index sites, and val[j] beside its gather, are the walk's twins
    twins = {(sp.site.function.name, sp.site.text, sp.hook.gather.site.text)
             for sp in plan.sites.values() if isinstance(sp.hook, DmTwin)}
    assert twins == {("csr_gather", "colIdx[j]", "x[colIdx[j]]"),
                     ("csr_twins", "val[j]", "x[colIdx[j]]"),
                     ("csr_twins", "colIdx[j]", "x[colIdx[j]]"),
                     ("int_gather", "idx[j]", "tab[idx[j]]")}
    # the difference arrays go only to objects that range sites count into
    assert {s.name for s in plan.slots if s.ranges} == {"val", "a", "b", "c", "m", "colIdx",
                                                        "idx", "x<-colIdx", "tab<-idx"}
    # basic, trace, sampled and thresholded modes count per access
    for text in ("basic", "trace", "SA-NA-SM"):
        p = pipeline.plan(program, Mode.parse(text))
        assert not any(sp.hook.range for sp in p.sites.values()), text
    # a difference array needs 32-bit wrapping entries and no saturation: narrow or
    # thresholded counters count per access
    for mode in (Mode.parse("default", sampling=0.5), Mode.parse("SA-SM-TH", threshold=9),
                 Mode.parse("SA-SM-TH", threshold=200, counter_bits=8),
                 Mode.parse("SA-SM-TH", threshold=60000, counter_bits=16)):
        p = pipeline.plan(program, mode)
        assert not any(sp.hook.range or isinstance(sp.hook, DmGather)
                       for sp in p.sites.values())
        assert not any(s.ranges or s.gather for s in p.slots)


def _bare(text: str) -> str:
    return text.replace(" ", "").replace("(", "").replace(")", "")


@pytest.fixture(scope="module", params=["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
def prof(request):
    # the GPU runs the warp-merged walks with the hardware's reductions (sm_80 and later)
    return gmprof.api.profiler(KERNELS, backend=request.param)


def walk_counts(n, rows):
    """Accesses per element of an n-element array from half-open index ranges."""
    c = np.zeros(n, np.int64)
    for lo, hi in rows:
        if hi > lo:
            c[lo:hi] += 1
    return c


def row_ptr(rng, n_rows, n):
    # sorted runs, some rows empty, some longer than a warp, and some reversed (empty too)
    ptr = np.sort(rng.integers(0, n + 1, n_rows + 1)).astype(np.int32)
    ptr[rng.integers(0, n_rows + 1, 3)] = rng.integers(0, n + 1, 3)
    return ptr


@pytest.mark.parametrize("mode", list(MODES))
def test_csr_scalar(prof, mode):
    rng = np.random.default_rng(1)
    n, rows = 700, 90
    ptr = row_ptr(rng, rows, n)
    args = [np.zeros(rows, np.float32), ptr, rng.random(n, dtype=np.float32), np.int32(rows)]
    r = prof.launch("csr_scalar", (3,), (32,), args, mode=MODES[mode])
    want = walk_counts(n, zip(ptr[:-1], ptr[1:]))
    np.testing.assert_array_equal(r.array("val").counts, want)
    assert r.array("val").label == "exact" and r.run.outputs_identical


@pytest.mark.parametrize("block", [64, 48])  # 48: warps that hold two rows' lanes
@pytest.mark.parametrize("mode", list(MODES))
def test_csr_vector_merges_interleaved_walks(prof, mode, block):
    rng = np.random.default_rng(2)
    n, rows = 2000, 40
    ptr = row_ptr(rng, rows, n)
    threads = rows * 32
    grid = -(-threads // block)
    args = [np.zeros(grid * block, np.float32), ptr, rng.random(n, dtype=np.float32),
            np.int32(rows)]
    r = prof.launch("csr_vector", (grid,), (block,), args, mode=MODES[mode])
    want = walk_counts(n, zip(ptr[:-1], ptr[1:]))
    np.testing.assert_array_equal(r.array("val").counts, want)
    site = next(s for s in r.sites if s.text == "val[j]")
    assert site.executions == int(want.sum())


@pytest.mark.parametrize("mode", list(MODES))
def test_strided_backward_and_column_walks(prof, mode):
    rng = np.random.default_rng(3)
    n, threads = 50, 70
    lo = rng.integers(0, n, threads).astype(np.int32)
    hi = np.minimum(lo + rng.integers(-3, 20, threads), n).astype(np.int32)
    m = rng.random((8, 8), dtype=np.float32)
    args = [np.zeros(threads, np.float32), rng.random(n, dtype=np.float32),
            rng.random(n, dtype=np.float32), rng.random(3 * n + 1, dtype=np.float32), m, lo, hi,
            np.int32(threads)]
    r = prof.launch("walks", (3,), (32,), args, mode=MODES[mode])
    want_a = walk_counts(n, zip(lo, hi))
    want_b = np.zeros(n, np.int64)
    want_c = np.zeros(3 * n + 1, np.int64)
    want_m = np.zeros(64, np.int64)
    for t in range(threads):
        for j in range(lo[t], hi[t], 2):
            want_b[j] += 1
        for j in range(lo[t], hi[t]):
            want_c[3 * j + 1] += 1
        for i in range(lo[t] % 5):
            want_m[i * 8 + t % 8] += 1
    np.testing.assert_array_equal(r.array("a").counts, want_a)
    np.testing.assert_array_equal(r.array("b").counts, want_b)
    np.testing.assert_array_equal(r.array("c").counts, want_c)
    np.testing.assert_array_equal(r.array("m").counts.reshape(-1), want_m)


@pytest.mark.parametrize("mode", list(MODES))
def test_block_shared_row(prof, mode):
    rng = np.random.default_rng(4)
    blocks, n, threads = 5, 30, 64
    length = rng.integers(0, n + 1, blocks).astype(np.int32)
    args = [np.zeros(blocks * threads, np.float32), rng.random(blocks * n, dtype=np.float32),
            length, np.int32(n)]
    r = prof.launch("shared_row", (blocks,), (threads,), args, mode=MODES[mode])
    want = walk_counts(blocks * n, [(b * n, b * n + length[b]) for b in range(blocks)]) * threads
    np.testing.assert_array_equal(r.array("a").counts, want)


def test_not_ranges_counted_per_access(prof):
    rng = np.random.default_rng(5)
    n, threads = 60, 40
    a = rng.random(n, dtype=np.float32)
    lo = rng.integers(0, n, threads).astype(np.int32)
    hi = np.minimum(lo + rng.integers(0, 15, threads), n).astype(np.int32)
    r = prof.launch("not_ranges", (2,), (32,), [np.zeros(threads, np.float32), a, lo, hi,
                                              np.int32(threads)], mode=DEFAULT)
    want = np.zeros(n, np.int64)
    for t in range(threads):
        for j in range(lo[t], hi[t]):
            want[j] += 1  # the test
            if a[j] > np.float32(0.9):
                break
            want[j] += 1
        for j in range(lo[t], hi[t]):
            if j % 3:
                want[j] += 1
        e, j = int(hi[t]), int(lo[t])
        while j < e:
            want[j] += 1
            e -= j & 1
            j += 1
    np.testing.assert_array_equal(r.array("a").counts, want)


@pytest.mark.parametrize("mode", list(MODES))
def test_gather_counted_from_its_index_walk(prof, mode):
    rng = np.random.default_rng(6)
    n, rows, cols = 900, 30, 37
    ptr = row_ptr(rng, rows, n)
    col = rng.integers(0, cols, n).astype(np.int32)
    threads = rows * 32
    args = [np.zeros(threads, np.float32), ptr, col, rng.random(cols, dtype=np.float32),
            np.int32(rows)]
    r = prof.launch("csr_gather", (threads // 64,), (64,), args, mode=MODES[mode])
    walk = walk_counts(n, zip(ptr[:-1], ptr[1:]))
    np.testing.assert_array_equal(r.array("colIdx").counts, walk)
    want_x = np.bincount(col, weights=walk, minlength=cols).astype(np.int64)
    np.testing.assert_array_equal(r.array("x").counts, want_x)
    assert [a.name for a in r.arrays if "<-" in a.name] == []
    site = next(s for s in r.sites if s.text == "x[colIdx[j]]")
    assert site.executions == int(walk.sum())


@pytest.mark.parametrize("extra", [0, 5])  # 5: val longer than colIdx, counted by itself
def test_twins_counted_from_the_gather_walk(prof, extra):
    rng = np.random.default_rng(8)
    n, rows, cols = 800, 28, 41
    ptr = row_ptr(rng, rows, n)
    col = rng.integers(0, cols, n).astype(np.int32)
    threads = rows * 32
    args = [np.zeros(threads, np.float32), ptr, col, rng.random(n + extra, dtype=np.float32),
            rng.random(cols, dtype=np.float32), np.int32(rows)]
    r = prof.launch("csr_twins", (threads // 64,), (64,), args, mode=DEFAULT)
    walk = walk_counts(n, zip(ptr[:-1], ptr[1:]))
    firsts = [lo for lo, hi in zip(ptr[:-1], ptr[1:]) if hi > lo]
    np.testing.assert_array_equal(r.array("val").counts, np.pad(walk, (0, extra)))
    np.testing.assert_array_equal(r.array("colIdx").counts,
                                  walk + np.bincount(firsts, minlength=n))
    np.testing.assert_array_equal(r.array("x").counts,
                                  np.bincount(col, weights=walk, minlength=cols).astype(np.int64))
    assert all(a.label == "exact" for a in r.arrays) and r.run.outputs_identical
    execs = {s.text: s.executions for s in r.sites}
    assert execs["val[j]"] == execs["x[colIdx[j]]"] == execs["colIdx[j]"] == int(walk.sum())
    assert (r.array("val").reads, r.array("colIdx").reads) == \
        (int(walk.sum()), int(walk.sum()) + len(firsts))


@pytest.mark.parametrize("aliased", [False, True])
def test_gather_through_aliased_memory_counts_per_access(prof, aliased):
    rng = np.random.default_rng(7)
    n, m = 50, 64
    lo = rng.integers(0, m - 4, n).astype(np.int32)
    idx = rng.integers(0, m, m).astype(np.int32)
    tab = idx if aliased else rng.integers(0, 9, m).astype(np.int32)
    r = prof.launch("int_gather", (2,), (32,), [np.zeros(n, np.int32), lo, idx, tab,
                                                np.int32(n)], mode=DEFAULT)
    walk = walk_counts(m, [(a, a + 4) for a in lo])
    want_tab = np.bincount(idx, weights=walk, minlength=m).astype(np.int64)
    if aliased:  # one array under two names: each name's counts are its own accesses
        np.testing.assert_array_equal(r.array("tab").counts, want_tab)
        np.testing.assert_array_equal(r.array("idx").counts, walk)
    else:
        np.testing.assert_array_equal(r.array("tab").counts, want_tab)
        np.testing.assert_array_equal(r.array("idx").counts, walk)


@pytest.mark.parametrize("bits,thr", [(8, 3), (16, 300), (32, 2)])
def test_narrow_and_thresholded_counters_without_ranges(prof, bits, thr):
    rng = np.random.default_rng(8)
    n, rows = 2000, 40
    ptr = row_ptr(rng, rows, n)
    args = [np.zeros(rows * 32, np.float32), ptr, rng.random(n, dtype=np.float32),
            np.int32(rows)]
    mode = Mode.parse("SA-SM-TH", threshold=thr, counter_bits=bits)
    r = prof.launch("csr_vector", (rows // 2,), (64,), args, mode=mode)
    want = walk_counts(n, zip(ptr[:-1], ptr[1:]))
    np.testing.assert_array_equal(r.array("val").counts, np.minimum(want, thr))
    assert r.array("val").label == "thresholded"


def test_weighted_site_in_a_one_statement_loop_body(prof):
    col = np.array([5], np.int32)
    a = np.arange(8, dtype=np.float32)
    r = prof.launch("invariant_one_statement", (2,), (32,),
                    [np.zeros(64, np.float32), col, a, np.int32(7)], mode=DEFAULT)
    want = np.zeros(8, np.int64)
    want[5] = 64 * 7
    np.testing.assert_array_equal(r.array("a").counts, want)
