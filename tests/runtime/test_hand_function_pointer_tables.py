"""A table of function pointers declared through a typedef (`typedef float (*op_t)(float);
__device__ op_t d_ops[3] = {f0, f1, f2};`, issue 24) has 8-byte elements: its elements were
sized as 4 bytes (the typedef's return type), so accesses to its last elements were reported
out of range and gmprof failed a correct kernel. The typedef's name is the one inside
`(*name)`, and a pointer type, through typedefs and `using` too, is 8 bytes, as are the
elements of `float (*d_raw[3])(float)` and `float *d_ptrs[3]` (declared without a typedef).
Expected counts derived by hand."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from gmprof.mode import Mode
from gmprof.passes.pipeline import Pipeline
from gmprof.runtime.session import Profiler

SOURCE = r"""
typedef float (*op_t)(float);
typedef op_t op2_t;                    // a typedef of the typedef
using op3_t = float (*)(float);
typedef float (*const cop_t)(float);   // a const pointer (sized only: see below)
__device__ float f0(float x) { return x + 1.f; }
__device__ float f1(float x) { return 2.f * x; }
__device__ float f2(float x) { return x * x; }
__device__ op_t d_ops[3] = {f0, f1, f2};
__device__ op2_t d_two[4] = {f2, f1, f0, f2};
__device__ op3_t d_use[3] = {f2, f2, f0};
// (not `__constant__ cop_t`: the CPU backend crashes on a __constant__ const table, whatever
// its type, issue of the CPU backend)
__constant__ op_t c_ops[3] = {f1, f0, f2};
__device__ float (*d_raw[3])(float) = {f1, f0, f2};   // no typedef
__device__ float buf[8];
__device__ float *d_ptrs[3] = {buf, buf + 4, nullptr};  // data pointers: 8 bytes too

__global__ void apply(const float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = d_ops[i % 3](in[i]) + d_two[(i + 1) % 4](in[i]) + d_use[2](1.f) +
                 c_ops[i % 3](in[i]) + d_raw[(i + 2) % 3](in[i]) +
                 (d_ptrs[i % 3] != nullptr ? 1.f : 0.f);
}
"""

OPS = [lambda x: x + 1, lambda x: 2 * x, lambda x: x * x]


def test_typedef_names_and_sizes():
    pipeline = Pipeline()
    tu = pipeline.load(text=SOURCE, name="tables.cu")
    oracle = tu.oracle
    assert {"op_t", "op2_t", "op3_t", "cop_t"} <= oracle.types
    from gmprof.runtime.launchenv import LaunchEnv
    program = pipeline.analyze(tu)
    facts = next(f for f in program.functions if f.name == "apply")
    env = LaunchEnv(program, facts, [], (1, 1, 1), (1, 1, 1), {}, {})
    assert [env.sizeof(t) for t in ("op_t", "op2_t", "op3_t", "cop_t")] == [8, 8, 8, 8]


@pytest.fixture(scope="module", params=["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
def prof(request):
    return Profiler(text=SOURCE, name="tables.cu", backend=request.param)


@pytest.mark.parametrize("mode", ["default", "SA", "basic"])
def test_function_pointer_tables(prof, mode):
    grid, block, n = 2, 32, 50
    inp = (np.arange(64) % 7).astype(np.float32)
    out = np.zeros(64, np.float32)
    report = prof.launch("apply", grid, block, [inp, out, np.int32(n)], mode=Mode.parse(mode))
    assert report.run.outputs_identical
    i = np.arange(n)
    d_ops, d_two, d_use, c_ops = [0, 1, 2], [2, 1, 0, 2], [2, 2, 0], [1, 0, 2]
    d_raw = [1, 0, 2]
    want = np.zeros(64, np.float32)
    for k in range(n):
        x = inp[k]
        want[k] = OPS[d_ops[k % 3]](x) + OPS[d_two[(k + 1) % 4]](x) + OPS[d_use[2]](1.0) + \
            OPS[c_ops[k % 3]](x) + OPS[d_raw[(k + 2) % 3]](x) + (k % 3 != 2)
    np.testing.assert_allclose(out, want)
    for name, size in (("d_ops", 3), ("d_two", 4), ("d_use", 3), ("c_ops", 3), ("d_raw", 3),
                       ("d_ptrs", 3)):
        a = report.array(name)
        assert (a.elem_size, a.out_of_range, a.label) == (8, 0, "exact"), name
        assert a.counts.size == size
    # threads 0..49 (i < n) each read d_ops[i % 3], d_two[(i + 1) % 4], d_use[2], c_ops[i % 3],
    # d_raw[(i + 2) % 3] and d_ptrs[i % 3]
    np.testing.assert_array_equal(report.array("d_ops").counts, np.bincount(i % 3))  # 17 17 16
    np.testing.assert_array_equal(report.array("d_two").counts, np.bincount((i + 1) % 4))
    np.testing.assert_array_equal(report.array("d_use").counts, [0, 0, n])
    np.testing.assert_array_equal(report.array("c_ops").counts, np.bincount(i % 3))
    np.testing.assert_array_equal(report.array("d_raw").counts, np.bincount((i + 2) % 3))
    np.testing.assert_array_equal(report.array("d_ptrs").counts, np.bincount(i % 3))


def test_cli_exits_0(tmp_path):
    src = tmp_path / "tables.cu"
    src.write_text(SOURCE)
    r = subprocess.run([sys.executable, "-m", "gmprof", "profile", str(src), "--kernel", "apply",
                        "--grid", "2", "--block", "32", "--arg", "in=float32[64]:arange",
                        "--arg", "out=float32[64]:zeros", "--arg", "n=50", "--backend", "cpu"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "out of range" not in r.stderr and "error" not in r.stderr


HOST_PROGRAM = r"""
#include <cstdio>
typedef float (*op_t)(float);
__device__ float f0(float x) { return x + 1.f; }
__device__ float f1(float x) { return 2.f * x; }
__device__ float f2(float x) { return x * x; }
__device__ op_t p0 = f0, p1 = f1, p2 = f2;
__device__ op_t d_ops[3];  // filled by the host
__global__ void apply(const float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = d_ops[i % 3](in[i]);
}
int main() {
    op_t h[3];
    cudaMemcpyFromSymbol(&h[0], p0, sizeof(op_t));
    cudaMemcpyFromSymbol(&h[1], p1, sizeof(op_t));
    cudaMemcpyFromSymbol(&h[2], p2, sizeof(op_t));
    cudaMemcpyToSymbol(d_ops, h, sizeof(h));
    const int n = 50;
    float hin[n], hout[n];
    for (int i = 0; i < n; ++i) hin[i] = i % 7;
    float *in, *out;
    cudaMalloc(&in, sizeof(hin));
    cudaMalloc(&out, sizeof(hout));
    cudaMemcpy(in, hin, sizeof(hin), cudaMemcpyHostToDevice);
    apply<<<2, 32>>>(in, out, n);
    cudaMemcpy(hout, out, sizeof(hout), cudaMemcpyDeviceToHost);
    float s = 0;
    for (int i = 0; i < n; ++i) s += hout[i];
    printf("sum %g\n", s);
    return 0;
}
"""


@pytest.mark.slow
def test_host_initialised_table_in_a_whole_program(tmp_path):
    import shutil
    if shutil.which("g++") is None or shutil.which("make") is None:
        pytest.skip("needs g++ and make")
    src = tmp_path / "fpt.cu"
    src.write_text(HOST_PROGRAM)
    r = subprocess.run([sys.executable, "-m", "gmprof", "run", "--backend", "cpu", "--json",
                        "--check", str(src)], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    x = np.arange(50) % 7
    want = sum(OPS[k % 3](x[k]) for k in range(50))
    # (with --json the program's own output goes to standard error)
    assert f"sum {want:g}\n" in r.stderr and "check passed" in r.stderr
    import json
    run = json.loads(r.stdout[r.stdout.index("{"):])
    arrays = {a["name"]: a for k in run["kernels"] for a in k["arrays"]}
    # i = 0..49 reads d_ops[i % 3]: 17, 17, 16 times; 8-byte elements, none out of range
    assert arrays["d_ops"]["counts"] == [17, 17, 16]
    assert arrays["d_ops"]["elem_size"] == 8 and arrays["d_ops"]["out_of_range"] == 0
