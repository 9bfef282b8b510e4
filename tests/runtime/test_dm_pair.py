"""Two sites of one statement at one element of a device array (`a[j] = a[j] + b[i]`) share
one atomic on the element's counter (gmprof.cuh dm_pair, made by passes/rewrite.py): the
counts are those of two separate accesses. Expected counts with numpy from the indices."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import gmprof
from gmprof.mode import Mode

KERNELS = Path(__file__).resolve().parent / "cpu_kernels" / "pair.cu"


def test_the_statement_gets_one_pair_call(tmp_path):
    from gmprof.passes.targets import NVRTC
    from gmprof.passes.pipeline import Pipeline

    pipeline = Pipeline()
    program = pipeline.analyze(pipeline.load(KERNELS))
    plan = pipeline.plan(program, Mode.parse("default"))
    text, _ = pipeline.instrumented_source(program, plan, NVRTC)
    assert text.count("::gmprof::dm_pair<") == 2, text[-3000:]


@pytest.fixture(scope="module", params=["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
def prof(request):
    return gmprof.api.profiler(KERNELS, backend=request.param)


@pytest.mark.parametrize("mode", ["default", "basic"])
def test_pair_counts(prof, mode):
    n, size = 300, 512
    rng = np.random.default_rng(1)
    # distinct elements (no two threads race on one), in no order
    idx = rng.permutation(size)[:n].astype(np.int32)
    a = np.zeros(size, np.float32)
    b = np.ones(n, np.float32)
    r = prof.launch("pair", (3,), (128,), [a, b, idx, np.int32(n)], mode=Mode.parse(mode))
    # each of the n threads reads and writes a[idx[i]]: 2 accesses a thread at its element
    want = 2 * np.bincount(idx, minlength=size)
    np.testing.assert_array_equal(r.array("a").counts, want)
    np.testing.assert_array_equal(r.array("b").counts, np.ones(n))
    assert r.run.outputs_identical


def test_pair_counts_doubles(prof):
    n, size = 100, 128
    idx = (np.arange(n) * 7 % size).astype(np.int32)  # 7 and 128 coprime: distinct
    a = np.ones(size, np.float64)
    r = prof.launch("pair_double", (1,), (128,), [a, idx, np.int32(n)],
                    mode=Mode.parse("default"))
    np.testing.assert_array_equal(r.array("a").counts, 2 * np.bincount(idx, minlength=size))


@pytest.mark.parametrize("mode", ["default", "basic"])
def test_pair_out_of_range_counts_two_accesses(mode):
    """Two threads' index points past `a` (the CPU backend's arrays have room past their end):
    each thread's read and write are 2 out-of-range accesses, paired (default) or not (basic),
    4 in all; the other 38 threads count 2 at their element."""
    prof = gmprof.api.profiler(KERNELS, backend="cpu")
    n, size = 40, 64
    idx = np.arange(n, dtype=np.int32)
    idx[5], idx[7] = size + 2, size + 3
    a = np.zeros(size, np.float32)
    r = prof.launch("pair", (1,), (64,), [a, np.ones(n, np.float32), idx, np.int32(n)],
                    mode=Mode.parse(mode))
    assert r.array("a").out_of_range == 2 * 2
    want = np.zeros(size, np.int64)
    want[[i for i in range(n) if i not in (5, 7)]] = 2
    np.testing.assert_array_equal(r.array("a").counts, want)
