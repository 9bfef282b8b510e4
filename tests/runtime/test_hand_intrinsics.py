"""Load, store and atomic intrinsics that take an address (issue 11): `__ldg(&a[i])`,
`__ldg(a + i)`, `__ldcg`, `__ldca`, `__ldcs`, `__ldlu`, `__ldcv`, `__stcg`, `__stcs`, `__stwb`,
`__stwt`, and the atomics' pointer forms are access sites in every mode (they were none, trace
included). Expected counts derived by hand; the instrumented file compiles with nvcc too."""
from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from gmprof.mode import Mode
from gmprof.runtime.session import Profiler

MODES = ["default", "SA", "basic", "trace"]
NVCC = shutil.which("nvcc")

SOURCE = r"""
__global__ void loads_stores(float *out, const float *a, const int *idx, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float s = __ldg(&a[i]) + __ldg(a + i) + __ldcg(&a[idx[i]]) + __ldca(a + idx[i]);
    s += __ldcs(&a[0]) + __ldlu(a + (i + 1) % n) + __ldcv(&a[n - 1]);
    __stcg(&out[i], s);
    __stcs(out + i, s);
    __stwb(&out[n + idx[i]], 2.0f);  // one value for every writer: no race
    __stwt(out + 2 * n, 3.0f);
}

__global__ void atomics(int *h, const int *v, unsigned *u, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    atomicAdd(h + v[i], 1);
    atomicMax(&h[v[i]], 2);
    atomicInc(u + (i % 4), 1000u);
    atomicCAS(u + 4, 0u, 1u);
    atomicExch(&u[5], 7u);
}
"""


@pytest.fixture(scope="module")
def prof():
    return Profiler(text=SOURCE, name="intrinsics.cu", backend="cpu")


def check(report, name, expect):
    arr = report.array(name)
    np.testing.assert_array_equal(arr.counts, expect, err_msg=name)
    assert arr.label == "exact" and arr.out_of_range == 0, name


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("grid,block,n", [(2, 40, 70), (2, 32, 64)])
def test_load_and_store_intrinsics(prof, mode, grid, block, n):
    a = np.arange(n, dtype=np.float32)
    idx = ((np.arange(n) * 3) % 5).astype(np.int32)
    out = np.zeros(2 * n + 1, np.float32)
    report = prof.launch("loads_stores", grid, block, [out, a, idx, np.int32(n)],
                         mode=Mode.parse(mode))
    reads = np.zeros(n, np.int64)
    writes = np.zeros(2 * n + 1, np.int64)
    for i in range(n):  # the threads with i < n
        reads[i] += 2                  # __ldg(&a[i]), __ldg(a + i)
        reads[idx[i]] += 2             # __ldcg(&a[idx[i]]), __ldca(a + idx[i])
        reads[0] += 1                  # __ldcs(&a[0])
        reads[(i + 1) % n] += 1        # __ldlu
        reads[n - 1] += 1              # __ldcv
        writes[i] += 2                 # __stcg, __stcs
        writes[n + idx[i]] += 1        # __stwb
        writes[2 * n] += 1             # __stwt
    check(report, "a", reads)
    check(report, "out", writes)
    check(report, "idx", np.full(n, 3))  # idx[i] three times: __ldcg, __ldca, __stwb
    assert report.run.outputs_identical
    assert report.array("a").reads == reads.sum() and report.array("a").writes == 0
    assert report.array("out").writes == writes.sum() and report.array("out").reads == 0


@pytest.mark.parametrize("mode", MODES)
def test_atomic_pointer_forms(prof, mode):
    grid, block, n = 3, 40, 100
    v = ((np.arange(n) * 7) % 6).astype(np.int32)
    h, u = np.zeros(6, np.int32), np.zeros(6, np.uint32)
    report = prof.launch("atomics", grid, block, [h, v, u, np.int32(n)], mode=Mode.parse(mode))
    # thread i < n: h[v[i]] twice (add, max); u[i % 4] once; u[4] and u[5] once each
    check(report, "h", 2 * np.bincount(v, minlength=6))
    check(report, "v", np.full(n, 2))
    expect_u = np.bincount(np.arange(n) % 4, minlength=6)
    expect_u[4] = expect_u[5] = n
    check(report, "u", expect_u)
    assert report.run.outputs_identical


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
@pytest.mark.parametrize("mode", MODES)
def test_instrumented_intrinsics_compile_with_nvcc(tmp_path, mode):
    from gmprof.cli import main

    src = tmp_path / "intrinsics.cu"
    src.write_text(SOURCE)
    out = tmp_path / "inst.cu"
    assert main(["instrument", str(src), "-o", str(out), "--mode", mode]) == 0
    text = out.read_text()
    if mode in ("basic", "trace"):
        # every access has a hook: 14 + 7 sites (default and SA count most from formulas)
        assert text.count("::gmprof::dm<") == 21
    run = subprocess.run([NVCC, "-cubin", "-arch=sm_90", "-o", str(tmp_path / "k.cubin"),
                          str(out)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
