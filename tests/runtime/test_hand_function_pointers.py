"""A call through a function pointer, `(*op)(t)`, is not a memory access at the `*` (it calls the
code the pointer names): only reading the pointer `op` (a `__device__` variable) is. It was a site
whose hook took a function type, so cuda-samples' FunctionPointers did not compile instrumented.
Expected counts derived by hand."""
from __future__ import annotations

import numpy as np
import pytest

from gmprof.mode import Mode
from gmprof.runtime.session import Profiler

SOURCE = r"""
__device__ int twice(int v) { return 2 * v; }
typedef int (*op_t)(int);
__device__ op_t op = twice;
__global__ void apply(int *out) {
    int t = threadIdx.x;
    out[t] = (*op)(t) + op(1);
}
"""


@pytest.fixture(scope="module")
def prof():
    return Profiler(text=SOURCE, name="fp.cu", backend="cpu")


@pytest.mark.parametrize("mode", ["default", "SA", "basic", "trace"])
def test_calls_through_a_function_pointer(prof, mode):
    n = 8
    out = np.zeros(n, np.int32)
    report = prof.launch("apply", 1, n, [out], mode=Mode.parse(mode))
    np.testing.assert_array_equal(out, 2 * np.arange(n) + 2)
    # every thread reads op twice ((*op) and op), writes out[t] once
    np.testing.assert_array_equal(report.array("op").counts, [2 * n])
    np.testing.assert_array_equal(report.array("out").counts, np.ones(n))
    assert report.array("op").label == "exact" and report.run.outputs_identical
