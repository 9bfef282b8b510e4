"""`p->arr[i]` where arr is an array member of the struct p points to (passes/struct_members.py,
issue 17: dxtc's `st->hi[ch]` with st = &a local struct cost a run-time hook per access): the
access lies inside *p. Through &local it is the thread's own memory (not counted, no hook);
into a device array of structs it counts on p's element, as p->field does; a pointer member
(`p->ptr[k]`) is followed to the memory it points to, and so is a pointer member of a struct
held by value (`v.ptr[k]`: once taken for the struct's own bytes and counted nowhere). Expected
counts derived by hand."""
from __future__ import annotations

import numpy as np
import pytest

from gmprof.mode import Mode
from gmprof.passes.pipeline import Pipeline
from gmprof.runtime.session import Profiler

SOURCE = r"""
struct Box {
    int lo[3];
    int hi[3];  // an array member
    int n;
};
struct Ref { const int *ptr; int pad[2]; };

__device__ int span(const Box *b, int ch) { return b->hi[ch] - b->lo[ch]; }
__device__ int width(const Box *w, int ch) { return w->hi[ch] - w->lo[ch]; }
__device__ int first_two(const Ref *r) { return r->ptr[0] + r->ptr[1]; }

__global__ void local_box(int *out) {
    Box b;
    for (int ch = 0; ch < 3; ch++) { b.lo[ch] = ch; b.hi[ch] = 10 * ch + threadIdx.x; }
    int s = 0;
    for (int ch = 0; ch < 3; ch++) s += width(&b, ch);
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

__global__ void device_boxes(int *out, const Box *boxes) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int s = 0;
    for (int ch = 0; ch < 3; ch++) s += span(&boxes[i], ch);
    out[i] = s;
}

struct View { const int *ptr; int n; };

__global__ void value_member(int *out, const int *in) {
    View v;
    v.ptr = in + 2 * threadIdx.x;
    v.n = 2;
    int s = 0;
    for (int k = 0; k < v.n; ++k) s += v.ptr[k];
    out[threadIdx.x] = s;
}

__global__ void pointer_member(int *out, const int *in) {
    Ref r;
    r.ptr = in + 2 * threadIdx.x;
    out[threadIdx.x] = first_two(&r);
}
"""

BOX = np.dtype([("lo", np.int32, 3), ("hi", np.int32, 3), ("n", np.int32)])


def test_planned():
    pipeline = Pipeline()
    program = pipeline.analyze(pipeline.load(text=SOURCE, name="members.cu"))
    plan = pipeline.plan(program, Mode.parse("default"))
    assert not plan.counts_on_device("local_box")  # b->hi[ch], b->lo[ch]: registers
    by_text = {}
    for sp in plan.sites.values():
        by_text.setdefault(sp.site.text, []).append(sp)
    assert {sp.site.object.name for sp in by_text["w->hi[ch]"]} == {"w"}
    assert {sp.strategy for sp in by_text["w->hi[ch]"]} == {"none"}
    # a pointer member is not the struct's memory: r->ptr[k] is found at run time
    assert all(sp.site.object is None for sp in by_text["r->ptr[0]"])
    # so is a pointer member of a struct held by value
    assert [sp.site.object for sp in by_text["v.ptr[k]"]] == [None]


@pytest.fixture(scope="module", params=["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
def prof(request):
    return Profiler(text=SOURCE, name="members.cu", backend=request.param)


@pytest.mark.parametrize("mode", ["default", "SA", "basic", "trace"])
def test_local_struct_through_a_pointer_is_not_counted(prof, mode):
    grid, block = 2, 32
    out = np.zeros(grid * block, np.int32)
    report = prof.launch("local_box", grid, block, [out], mode=Mode.parse(mode))
    assert report.run.outputs_identical
    t = np.tile(np.arange(block), grid)
    np.testing.assert_array_equal(out, sum(10 * ch + t - ch for ch in range(3)))
    np.testing.assert_array_equal(report.array("out").counts, np.ones(grid * block))
    assert {a.name for a in report.arrays} == {"out"}


@pytest.mark.parametrize("mode", ["default", "SA", "basic", "trace"])
def test_device_structs_count_on_their_element(prof, mode):
    grid, block = 2, 32
    n = grid * block
    boxes = np.zeros(n, BOX)
    boxes["lo"] = np.arange(3 * n).reshape(n, 3)
    boxes["hi"] = 5 * np.arange(3 * n).reshape(n, 3) + 7
    out = np.zeros(n, np.int32)
    report = prof.launch("device_boxes", grid, block, [out, boxes.view(np.int32)],
                         mode=Mode.parse(mode))
    assert report.run.outputs_identical
    np.testing.assert_array_equal(out, (boxes["hi"] - boxes["lo"]).sum(axis=1))
    # thread i reads boxes[i].hi[ch] and boxes[i].lo[ch] for ch = 0..2: 6 reads of its box
    # (a struct array's unit is the struct, as for p->field)
    np.testing.assert_array_equal(report.array("boxes").counts, np.full(n, 6))
    assert report.array("boxes").label == "exact"


@pytest.mark.parametrize("mode", ["default", "SA", "basic"])
@pytest.mark.parametrize("kernel", ["pointer_member", "value_member"])
def test_pointer_member_is_followed(prof, mode, kernel):
    """r->ptr[k] (through a pointer to a local struct) and v.ptr[k] (a struct held by value)."""
    block = 32
    inp = np.arange(2 * block + 5, dtype=np.int32)
    out = np.zeros(block, np.int32)
    report = prof.launch(kernel, 1, block, [out, inp], mode=Mode.parse(mode))
    assert report.run.outputs_identical
    np.testing.assert_array_equal(out, inp[0:2 * block:2] + inp[1:2 * block:2])
    expect = np.zeros(inp.size)
    expect[:2 * block] = 1  # thread t reads in[2t] and in[2t + 1]
    np.testing.assert_array_equal(report.array("in").counts, expect)
