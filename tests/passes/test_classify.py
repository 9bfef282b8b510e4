"""Static analysis: the paper's examples give the paper's answers; every class has negatives.

Expectations are written by hand from the kernels in tests/passes/kernels/.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from gmprof.frontend.program import load
from gmprof.passes.pipeline import analyze

KERNELS = Path(__file__).parent / "kernels"


@pytest.fixture(scope="module")
def paper():
    return analyze(load(KERNELS / "paper.cu"))


@pytest.fixture(scope="module")
def negative():
    return analyze(load(KERNELS / "negative.cu"))


def classes(program, kernel):
    return {(sc.site.location.line, sc.site.text): sc for sc in
            program.kernels[kernel].classes}


def invariant_loops(sc):
    return [lf.loop.short for lf in sc.loops if lf.invariant]


def test_figure_2_rowcs_is_r_loop_invariant_and_tid_invariant(paper):
    c = classes(paper, "coclustering")
    rowcs = c[(32, "rowCS[rc]")]
    assert rowcs.tid_invariant and invariant_loops(rowcs) == ["for r"]
    assert "index uses no thread id" in rowcs.tid_reason
    assert rowcs.chain  # analysed inside RClusterCnt, in the kernel's call context
    acomp = c[(35, "Acomp[rc * nRowCL + colCL[c]]")]
    assert not acomp.static and "reads colCL" in acomp.static_reason
    assert acomp.tid_invariant  # colCL is never written, so colCL[c] is the same for all threads
    data = c[(34, "data[(r + n_idx) * nCol + c]")]
    assert not data.tid_invariant and not data.static


def test_tiled_matrix_product_is_entirely_static(paper):
    c = classes(paper, "matmul_tiled")
    assert len(c) == 7 and all(sc.static for sc in c.values())
    a_tile = c[(63, "As[ty][k]")]
    assert a_tile.warp_uniform and not a_tile.tid_invariant  # depends on threadIdx.y only
    assert invariant_loops(a_tile) == ["for t"]
    assert not c[(63, "Bs[k][tx]")].warp_uniform


def test_figure_1_transpose_sites_are_static_under_the_bounds_check(paper):
    c = classes(paper, "transpose")
    assert len(c) == 4 and all(sc.static for sc in c.values())
    assert all(sc.formula.constraints != ("true",) for sc in c.values())
    assert not any(sc.block_convergent for sc in c.values())  # the bounds check uses threadIdx


def test_jacobi_tile_live_ranges(paper):
    lr = paper.facts("jacobi_tile").liveranges
    (tile,) = lr.arrays()
    assert tile.name == "tile"
    assert sorted(x.site.location.line for x in lr.starts[tile]) == [76, 77, 78, 79, 80]
    assert all(x.copy and [o.name for o in x.other] == ["in"] for x in lr.starts[tile])
    (end,) = lr.ends[tile]
    assert end.site.text == "out[i * n + j]" and not end.copy


def test_access_under_if_inside_loop_is_not_loop_invariant(negative):
    c = classes(negative, "negatives")
    s0 = c[(13, "s[0]")]
    assert invariant_loops(s0) == []
    assert "under a condition inside the loop" in s0.loops[0].reason
    s1 = c[(14, "s[1]")]
    assert invariant_loops(s1) == ["for k"] and s1.tid_invariant


def test_index_through_variable_written_in_loop_is_not_invariant(negative):
    aj = classes(negative, "negatives")[(15, "a[j]")]
    assert invariant_loops(aj) == [] and "changes with 'for k'" in aj.loops[0].reason
    assert not aj.static


def test_threadidx_through_a_temporary_is_not_tid_invariant(negative):
    btmp = classes(negative, "negatives")[(19, "b[tmp]")]
    assert not btmp.tid_invariant and not btmp.warp_uniform
    assert "threadIdx.x" in btmp.tid_reason
    assert btmp.static  # still affine: 2*threadIdx.x


def test_pointer_that_may_alias_is_conservative(negative):
    p0 = classes(negative, "negatives")[(21, "p[0]")]
    assert p0.site.object is None and "may point into a or b" in p0.site.unresolved
    assert not (p0.static or p0.tid_invariant or p0.warp_uniform)


def test_unknown_call_and_data_dependent_index_are_conservative(negative):
    c = classes(negative, "negatives")
    call = c[(22, "b[opaque(3)]")]
    assert not (call.static or call.tid_invariant or call.warp_uniform)
    data = c[(23, "b[idx[t]]")]
    assert not data.static and not data.tid_invariant


def test_read_of_an_object_the_kernel_writes_is_not_uniform(negative):
    c = classes(negative, "negatives")
    st = c[(24, "s[t]")]
    assert not st.tid_invariant
    b0 = c[(24, "b[0]")]
    assert b0.tid_invariant  # its address is uniform; its value is not (b is written)


def test_loop_with_break_is_not_invariant_and_not_static(negative):
    c = classes(negative, "negatives")
    s2 = c[(28, "s[2]")]
    assert invariant_loops(s2) == [] and "end an iteration early" in s2.loops[0].reason
    assert not s2.static


def test_early_exit_becomes_a_static_constraint(negative):
    out = classes(negative, "early_exit")[(36, "out[i]")]
    assert out.static and out.formula.constraints[0] == "not"
    assert not out.block_convergent  # the exit depends on the thread


def test_while_loop_counter_is_an_iterator(negative):
    ak = classes(negative, "while_counter")[(43, "a[k]")]
    assert ak.static and ak.formula.loops  # a[k], k = 0, 1, ... n-1
