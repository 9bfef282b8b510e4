"""A loop-invariant site in a loop body written without braces (issue 11):
`for (...) s += w[idx[t]];`. Its count, weighted by the trip count, is placed before the
statement; it must land after the loop's trip count is computed (it was counted 0). Expected
counts derived by hand (numpy)."""
from __future__ import annotations

import numpy as np
import pytest

from gmprof.mode import Mode
from gmprof.runtime.session import Profiler

MODES = ["default", "SA", "basic", "trace"]

SOURCE = r"""
__global__ void one_loop(float *out, const float *w, const int *idx, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (int j = 0; j < n; j++) s += w[idx[t]];
    out[t] = s;
}

__global__ void nested(float *out, const float *w, const int *idx, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < 3; j++)
            s += w[idx[t]];
    out[t] = s;
}

__global__ void braced_outer(float *out, const float *w, const int *idx, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (int i = 0; i < n; i++) {
        s += 1.0f;
        for (int j = i; j < i + 2; j++) s += w[idx[t] + 1];
    }
    out[t] = s;
}
"""

CASES = {"one_loop": (lambda n: n, 0), "nested": (lambda n: 3 * n, 0),
         "braced_outer": (lambda n: 2 * n, 1)}


@pytest.fixture(scope="module")
def prof():
    return Profiler(text=SOURCE, name="braceless.cu", backend="cpu")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kernel", list(CASES))
@pytest.mark.parametrize("n", [0, 5])
def test_braceless_loop_body(prof, mode, kernel, n):
    grid, block = 2, 40
    threads = grid * block
    idx = (np.arange(threads) % 3).astype(np.int32)
    w, out = np.ones(4, np.float32), np.zeros(threads, np.float32)
    report = prof.launch(kernel, grid, block, [out, w, idx, np.int32(n)], mode=Mode.parse(mode))
    per_thread, shift = CASES[kernel]
    # thread t reads idx[t] and w[idx[t] + shift] per_thread(n) times
    expect_w = np.bincount(idx + shift, minlength=4) * per_thread(n)
    for name, expect in (("w", expect_w), ("idx", np.full(threads, per_thread(n)))):
        arr = report.array(name)
        np.testing.assert_array_equal(arr.counts, expect, err_msg=name)
        assert arr.label == "exact" and arr.out_of_range == 0, name
    assert report.run.outputs_identical
