"""Families of code that public CUDA code bases contain and the frontend once lost (issue 14).

Each family is a small snippet written for this test (never code copied from the suites), with
its access sites asserted as read by the frontend and its counts measured on the CPU backend.
Expected counts are derived by hand from the snippet and its launch shape, and the kernel's
outputs are checked against numpy.
"""
from __future__ import annotations

import numpy as np
import pytest

import gmprof
from gmprof.frontend.program import load
from gmprof.passes.pipeline import analyze


def sites(text, function, **kw):
    """(line, object, kind) of every access site of `function`, in source order."""
    tu = load(text=text, name="t.cu", **kw)
    bad = [w.render() for w in tu.warnings if w.kind in ("unparsed-function", "internal")]
    assert not bad, bad
    facts = analyze(tu, upto="accesses").facts(function)
    assert facts is not None, f"{function} not parsed"
    return [(s.location.line, s.object_name if s.object else None, s.kind) for s in facts.sites]


def run(text, kernel, grid, block, args, **kw):
    report = gmprof.profile(text, kernel, grid=grid, block=block, args=args, backend="cpu",
                            **kw)
    bad = [w for w in report.warnings if getattr(w, "failed_check", False)]
    assert not bad, bad
    return report


# -- pycparser releases: compound literals and enums inside a function ----------------------

COMPOUND_AND_ENUM = """\
struct P { int x, y; };
__global__ void k(int *a, int n) {
    enum Side { LEFT = 1, RIGHT = 2 };
    int i = threadIdx.x;
    struct P p = (struct P){i, LEFT};
    if (i < n)
        a[i] += p.x + p.y + RIGHT;
}
"""


def test_compound_literal_and_enum_in_a_function():
    assert sites(COMPOUND_AND_ENUM, "k") == [(7, "a", "read-write")]
    a = np.arange(8, dtype=np.int32)
    r = run(COMPOUND_AND_ENUM, "k", (1,), (8,), [a, np.int32(6)])
    # threads 0..5 each update their own element once (one read-write access: one count, one
    # read and one write); threads 6 and 7 do nothing
    np.testing.assert_array_equal(a, np.arange(8) + np.r_[np.arange(6) + 3, 0, 0])
    np.testing.assert_array_equal(r.array("a").counts, [1] * 6 + [0, 0])
    assert (r.array("a").reads, r.array("a").writes) == (6, 6)
