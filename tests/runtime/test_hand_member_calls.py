"""A call of a member function, `acc.at(d, t)` or `objs[0].at(d, t)`, is not a memory access at
the object: it names code, and what that code reads is counted where it reads it (here `p[i]` in
the member's body, through the pointer it is given). It was a site whose hook took the address
of a bound member function, so cuda-samples' globalToShmemAsyncCopy (`bar.arrive_and_wait()` of
a `__shared__` cuda::barrier) did not compile instrumented. Expected counts derived by hand."""
from __future__ import annotations

import numpy as np
import pytest

from gmprof.mode import Mode
from gmprof.runtime.session import Profiler

SOURCE = r"""
struct Acc {
    int base;
    __device__ int at(const int *p, int i) const { return p[i]; }
};
__global__ void calls(const int *d, const Acc *objs, int *out) {
    __shared__ Acc acc;
    int t = threadIdx.x;
    if (t == 0) acc.base = 1;
    __syncthreads();
    out[t] = acc.base + acc.at(d, t) + objs[0].at(d, t);
}
"""


@pytest.fixture(scope="module")
def prof():
    return Profiler(text=SOURCE, name="member_calls.cu", backend="cpu")


@pytest.mark.parametrize("mode", ["default", "SA", "basic", "trace"])
def test_member_calls_are_no_access_of_their_object(prof, mode):
    n = 8
    d = np.arange(n, dtype=np.int32) * 3
    objs = np.zeros(2, np.int32)  # one Acc (an int), and one more
    out = np.zeros(n, np.int32)
    report = prof.launch("calls", 1, n, [d, objs, out], mode=Mode.parse(mode))
    np.testing.assert_array_equal(out, 1 + 2 * d)
    # d[t] is read twice by each thread (two calls of at), out[t] written once; objs is never
    # read (at reads no member); acc's one word: thread 0 writes it, every thread reads it
    np.testing.assert_array_equal(report.array("d").counts, 2 * np.ones(n))
    np.testing.assert_array_equal(report.array("out").counts, np.ones(n))
    np.testing.assert_array_equal(report.array("objs").counts, np.zeros(2))
    np.testing.assert_array_equal(report.array("acc").counts, [1 + n])
    # both calls of at are followed (objs[0].at through objs' class), so d's counts are exact
    assert report.array("d").label == "exact"
    assert report.run.outputs_identical
