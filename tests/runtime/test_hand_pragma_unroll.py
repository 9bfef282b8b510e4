"""`#pragma unroll N`, `#pragma unroll`, `#pragma nounroll` and `_Pragma("unroll")` in front of
an instrumented loop stay directly on their loop (issue 24): the code gmprof puts before the
loop (the loop-entry counts of passes/entry.py, the first-iteration flag and trip count) goes
before the pragmas. Between a pragma and its loop, nvcc warned "the #pragma unroll must
precede a loop" and the instrumented kernel lost the unrolling the user asked for. Checked on
the instrumented text, with nvcc, and by counts derived by hand."""
from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest

from gmprof.mode import Mode
from gmprof.passes.pipeline import Pipeline
from gmprof.passes.targets import NVCC
from gmprof.runtime.session import Profiler

SOURCE = r"""
__global__ void rows(const int *ptr, const float *val, float *out, int *hist) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.f;
    int lo = ptr[r], hi = ptr[r + 1];  // a comment after the statement
#pragma unroll 4
    for (int j = lo; j < hi; ++j) s += val[j];               // a range, at the loop's entry
    // a comment between
    #pragma unroll
    for (int j = lo; j < hi; ++j) s += val[j] * val[lo];     // val[lo]: weighted by the trips
    for (int i = 0; i < 2; ++i) {
        _Pragma("unroll 2") for (int j = lo; j < hi; ++j) {  // first-iteration flags
            hist[j] += 1;
            s += val[ptr[r] + j - lo];
        }
    }
    {
#pragma nounroll
        for (int j = lo; j < hi; j += 2) s += 2.f * val[j];  // first statement of a block
    }
    out[r] = s;
}

// pragmas between a statement's head and its loop: the loop is the statement (it was the
// pragma, and the loop ran, for the analyses, whatever the condition)
__global__ void bodies(const int *ptr, const float *val, float *out, int c) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.f;
    int lo = ptr[r], hi = ptr[r + 1];
    if (c > 0)
#pragma unroll 2
        for (int j = lo; j < hi; ++j) s += val[j];
    else
        _Pragma("unroll") for (int j = lo; j < hi; ++j) s += 2.f * val[j];
    for (int i = 0; i < 2; ++i)
        #pragma unroll
        for (int j = lo; j < hi; ++j) s += val[j];
    switch (c) {
    case 1:
#pragma unroll 4
        for (int j = lo; j < hi; ++j) s += val[j];
        break;
    default: break;
    }
    out[r] = s;
}
"""

MODES = ["default", "SA", "basic"]
PRAGMA = re.compile(r'#[ \t]*pragma[^\n]*|_Pragma\("[^"]*"\)')


def _instrumented(mode):
    pipeline = Pipeline()
    program = pipeline.analyze(pipeline.load(text=SOURCE, name="unroll.cu"))
    plan = pipeline.plan(program, Mode.parse(mode))
    text, _ = pipeline.instrumented_source(program, plan, NVCC)
    return plan, text[text.index("__global__ void rows"):]


BODIES = ["#pragma unroll 2", '_Pragma("unroll")', "#pragma unroll", "#pragma unroll 4"]


@pytest.mark.parametrize("mode", MODES)
def test_pragmas_stay_on_their_loops(mode):
    plan, text = _instrumented(mode)
    pragmas = list(PRAGMA.finditer(text))
    assert [m.group(0).strip() for m in pragmas] == [
        "#pragma unroll 4", "#pragma unroll", '_Pragma("unroll 2")', "#pragma nounroll"] + BODIES
    for m in pragmas:  # the pragma, white space, then its loop
        assert re.match(r"\s*for \(int j = lo;", text[m.end():]), text[m.start():m.end() + 80]
    if mode != "basic":  # code before the loops there is: it went before the pragmas
        assert plan.loops and "__gmprof_trip_" in text
        assert re.search(r"__gmprof_trip_\d+ = 0u; _Pragma\(\"unroll 2\"\) for", text)
        # the code for a loop that is an if's (a case's, a loop's) statement goes after the
        # head, braced with the loop
        assert re.search(r"if \(c > 0\)\{ \{ int j = lo;.*\n#pragma unroll 2\n", text)
        assert re.search(r"case 1:\{ \{ int j = lo;.*\n#pragma unroll 4\n", text)
        assert re.search(r"for \(int i = 0; i < 2; \+\+i\)\{ if \(__gmprof_first_\d+\).*\n"
                         r"        #pragma unroll\n", text)
    # each directive still starts its line (nothing was put in front of it)
    for line in text.splitlines():
        if "#" in line and "pragma" in line:
            assert line.lstrip().startswith("#pragma"), line


def test_the_loop_is_the_statement():
    pipeline = Pipeline()
    program = pipeline.analyze(pipeline.load(text=SOURCE, name="unroll.cu"))
    from pycparser import c_ast
    facts = next(f for f in program.functions if f.name == "bodies")
    body = facts.function.funcdef.body.block_items
    ifs = [n for n in body if isinstance(n, c_ast.If)]
    assert len(ifs) == 1 and isinstance(ifs[0].iftrue, c_ast.For) and \
        isinstance(ifs[0].iffalse, c_ast.For)
    loops = [n for n in body if isinstance(n, c_ast.For)]
    assert len(loops) == 1 and isinstance(loops[0].stmt, c_ast.For)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
def test_nvcc_keeps_the_unrolling(tmp_path):
    pipeline = Pipeline()
    program = pipeline.analyze(pipeline.load(text=SOURCE, name="unroll.cu"))
    full, _ = pipeline.instrumented_source(program, pipeline.plan(program, Mode.parse("default")),
                                           NVCC)
    src = tmp_path / "unroll_inst.cu"
    src.write_text(full)
    r = subprocess.run(["nvcc", "-c", "-arch=sm_90", "-o", str(tmp_path / "u.o"), str(src)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[:3000]
    assert "must precede a loop" not in r.stdout + r.stderr


@pytest.fixture(scope="module", params=["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
def prof(request):
    return Profiler(text=SOURCE, name="unroll.cu", backend=request.param)


@pytest.mark.parametrize("mode", MODES)
def test_counts(prof, mode):
    grid, block = 2, 8
    rows = grid * block
    lengths = np.array([3, 0, 1, 5, 2, 4, 0, 6, 1, 1, 3, 2, 0, 7, 2, 5])
    ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    n = int(ptr[-1])
    val = (np.arange(n) % 5 + 1).astype(np.float32)
    out = np.zeros(rows, np.float32)
    hist = np.zeros(n, np.int32)
    report = prof.launch("rows", grid, block, [ptr, val, out, hist], mode=Mode.parse(mode))
    assert report.run.outputs_identical
    want_out = np.zeros(rows, np.float32)
    want_val = np.zeros(n, np.int64)
    want_ptr = np.zeros(rows + 1, np.int64)
    for r in range(rows):
        lo, hi = ptr[r], ptr[r + 1]
        row = val[lo:hi]
        want_out[r] = row.sum() + (row * val[lo]).sum() * (hi > lo) + 2 * row.sum() + \
            2 * row[::2].sum()
        # val[j] once in each of the first two loops, twice in the i loop, val[lo] once per
        # iteration of the second loop, val[j] for every other j in the last loop
        want_val[lo:hi] += 4
        want_val[lo:hi:2] += 1
        if hi > lo:
            want_val[lo] += hi - lo
        # ptr[r] and ptr[r + 1] once, ptr[r] once per iteration of the two j loops of the i loop
        want_ptr[r] += 1 + 2 * (hi - lo)
        want_ptr[r + 1] += 1
    np.testing.assert_allclose(out, want_out)
    np.testing.assert_array_equal(hist, np.full(n, 2))
    np.testing.assert_array_equal(report.array("val").counts, want_val)
    np.testing.assert_array_equal(report.array("ptr").counts, want_ptr)
    # hist[j] += 1: one read-write access (docs/analysis), in each of the 2 iterations of i
    np.testing.assert_array_equal(report.array("hist").counts, np.full(n, 2))
    np.testing.assert_array_equal(report.array("out").counts, np.ones(rows))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("c", [0, 1, 2])
def test_counts_of_loops_that_are_statements(prof, mode, c):
    grid, block = 1, 8
    lengths = np.array([3, 0, 1, 5, 2, 4, 0, 6])
    ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    n = int(ptr[-1])
    val = (np.arange(n) % 5 + 1).astype(np.float32)
    out = np.zeros(block, np.float32)
    report = prof.launch("bodies", grid, block, [ptr, val, out, np.int32(c)],
                         mode=Mode.parse(mode))
    assert report.run.outputs_identical
    want_out = np.zeros(block, np.float32)
    for r in range(block):
        row = val[ptr[r]:ptr[r + 1]]
        # the if's loop or the else's (x2), the i loop twice, the case 1 loop
        want_out[r] = (1 if c > 0 else 2) * row.sum() + 2 * row.sum() + (c == 1) * row.sum()
    np.testing.assert_allclose(out, want_out)
    # every element: once in the if or the else loop, twice in the i loop, once more if c == 1
    np.testing.assert_array_equal(report.array("val").counts, np.full(n, 3 + (c == 1)))
    want_ptr = np.ones(block + 1)  # ptr[r] by thread r, ptr[r + 1] by thread r
    want_ptr[1:block] = 2
    np.testing.assert_array_equal(report.array("ptr").counts, want_ptr)
