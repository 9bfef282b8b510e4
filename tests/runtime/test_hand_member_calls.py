"""A call of a member function, `acc.at(d, t)` or `objs[0].at(d, t)`, is not a memory access at
the object: it names code, and what that code reads is counted where it reads it (here `p[i]` in
the member's body, through the pointer it is given). It was a site whose hook took the address
of a bound member function, so cuda-samples' globalToShmemAsyncCopy (`bar.arrive_and_wait()` of
a `__shared__` cuda::barrier) did not compile instrumented. The member reads and writes its
object through `this` (`base` in `get`), which no site counts: an object a member function is
called on has counts that are lower bounds, labelled so with a note naming the call. Expected
counts derived by hand."""
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

struct Box {
    int v;
    __device__ int get() const { return v; }
    __device__ void set(int x) { v = x; }
};
__global__ void through_this(Box *boxes, int *out) {
    __shared__ Box box;
    int t = threadIdx.x;
    if (t == 0) box.set(5);
    __syncthreads();
    out[t] = box.get() + boxes[t].get() + box.v;
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
    # both calls of at are followed (objs[0].at through objs' class), so d's counts are exact;
    # acc and objs are objects of member calls: what at does through `this` is not counted
    assert report.array("d").label == "exact" and report.array("out").label == "exact"
    assert report.array("acc").label == report.array("objs").label == "approximate"
    assert any(note.startswith("acc: counts are lower bounds, acc.at()") for note in report.notes)
    assert report.run.outputs_identical


@pytest.mark.parametrize("mode", ["default", "basic"])
def test_accesses_through_this_are_labelled_lower_bounds(prof, mode):
    """get() reads v and set() writes it through `this`: not counted, so box's counts are the
    explicit `box.v` reads only (n) and labelled lower bounds; boxes likewise (0)."""
    n = 4
    boxes = np.arange(n, dtype=np.int32)
    out = np.zeros(n, np.int32)
    report = prof.launch("through_this", 1, n, [boxes, out], mode=Mode.parse(mode))
    np.testing.assert_array_equal(out, 10 + np.arange(n))
    np.testing.assert_array_equal(report.array("box").counts, [n])
    np.testing.assert_array_equal(report.array("boxes").counts, np.zeros(n))
    np.testing.assert_array_equal(report.array("out").counts, np.ones(n))
    assert report.array("box").label == report.array("boxes").label == "approximate"
    assert report.array("out").label == "exact"
    notes = " ".join(report.notes)
    assert "box.set()" in notes and "boxes[t].get()" in notes
    assert report.run.outputs_identical
