"""The GPU backend (CuPy): the same checks as on the CPU, where a GPU is present."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import gmprof
from gmprof.mode import Mode

pytestmark = pytest.mark.gpu
ROOT = Path(__file__).resolve().parents[2]


def test_counts_equal_hand_derived_expectations_on_the_gpu():
    sys.path.insert(0, str(ROOT / "bench"))
    import check_counts

    ok, rows = check_counts.run("gpu", 64, quiet=True)
    assert ok, [r for r in rows if not r[4]]
    assert all(r[3] for r in rows)  # outputs identical in every mode


@pytest.mark.parametrize("name", ["matmul_tiled", "transpose_naive", "jcb_v1", "spmv", "dxtc",
                                  "co", "em_v1", "nbody_shared"])
def test_samples_default_mode_match_the_trace_on_the_gpu(name):
    from gmprof.runtime.samples import run_sample, sample_profiler
    from gmprof.driver import load_sample

    sample = load_sample(ROOT / "samples" / name)
    prof = sample_profiler(sample, "gpu")
    traced = run_sample(sample, "small", mode=Mode.parse("trace"), backend="gpu", profiler=prof)
    got = run_sample(sample, "small", mode=Mode(), backend="gpu", profiler=prof)
    assert traced.ok and got.ok
    for kernel, ref in traced.reports.items():
        rep = got.reports[kernel]
        assert rep.run.outputs_identical
        for a in ref.arrays:
            np.testing.assert_array_equal(rep.array(a.name).counts, a.counts, err_msg=a.name)


def test_rawkernel_on_cupy_arrays():
    import cupy as cp

    src = ("extern \"C\" __global__ void scale(float *y, const float *x, int n) {"
           " int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = 3.0f * x[i]; }")
    n = 1000
    x = cp.arange(n, dtype=cp.float32)
    y = cp.zeros(n, cp.float32)
    k = gmprof.RawKernel(src, "scale", device="gpu")
    k(((n + 255) // 256,), (256,), (y, x, np.int32(n)))
    np.testing.assert_array_equal(cp.asnumpy(y), 3 * np.arange(n, dtype=np.float32))
    assert k.report.array("x").counts.tolist() == [1] * n
