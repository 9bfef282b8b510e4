"""The instrumented copies of a whole program's device functions compile where the user's code
does, and count: calls that would find both a copy and its original (argument-dependent lookup
on a file-scope struct), kernels launched without their defaulted arguments, a `#pragma once`
header included twice, a function whose head opens inside `#if`, template arguments that are
a host function's constants, a function with nothing to count that shares a name with CUDA's
own (helper_math.h's `make_float2(float)`), comments that are not UTF-8, and kernels launched
from device code (cuda-samples' scan, shfl_scan, p2pBandwidthLatencyTest, dct8x8, eigenvalues,
cdpQuadtree, lineOfSight, interval, cdpSimpleQuicksort). Hand-written programs; the counts are
derived by hand in the comments."""
from __future__ import annotations

import subprocess

import pytest

from conftest import env, gmprof, report_json

HEADER = """#pragma once
struct P { float x; };
"""

USES_HEADER = """#pragma once
#include "p.h"
#if 1
__device__
#endif
inline float load2(const float *p) { return 2.0f * p[0]; }
"""

PROGRAM = rb"""
#include <cstdio>
#include "p.h"
#include "uses.h"
// a comment that is not UTF-8: Herv\xe9
__device__ float get(P p, const float *a, int i) { return a[i] * p.x; }
__global__ void scale(float *a, P p, int n = 8) {
  int i = threadIdx.x;
  if (i < n) a[i] = get(p, a, i);
}
template <int N> __global__ void fill(float *b) { b[threadIdx.x] = N + load2(b + threadIdx.x); }
inline __host__ __device__ float2 make_float2(float s) { return make_float2(s, s); }
__global__ void pair(float2 *o) { o[threadIdx.x] = make_float2(1.5f); }
int main() {
  float h[16];
  for (int i = 0; i < 16; ++i) h[i] = i;
  float *a, *b;
  float2 *o;
  cudaMalloc(&a, sizeof h);
  cudaMalloc(&b, sizeof h);
  cudaMalloc(&o, 4 * sizeof(float2));
  cudaMemcpy(a, h, sizeof h, cudaMemcpyHostToDevice);
  cudaMemset(b, 0, sizeof h);
  P p = {2.0f};
  scale<<<1, 16>>>(a, p);
  const int N = 3;
  fill<N><<<1, 8>>>(b);
  pair<<<1, 4>>>(o);
  float2 r[4];
  cudaMemcpy(h, a, sizeof h, cudaMemcpyDeviceToHost);
  cudaMemcpy(r, o, sizeof r, cudaMemcpyDeviceToHost);
  printf("a[7] = %g, a[9] = %g, o = %g\n", h[7], h[9], r[3].x + r[3].y);
  cudaMemcpy(h, b, sizeof h, cudaMemcpyDeviceToHost);
  printf("b[5] = %g, b[9] = %g\n", h[5], h[9]);
  return 0;
}
"""


def _write(d):
    (d / "p.h").write_text(HEADER)
    (d / "uses.h").write_text(USES_HEADER)
    (d / "prog.cu").write_bytes(PROGRAM)


def test_copies_compile_and_count(tmp_path, need_gxx):
    _write(tmp_path)
    # basic mode: every site is counted at run time, so every function with one has a copy
    built = gmprof("nvcc", "--gmprof-mode", "basic", "prog.cu", "-o", "prog", cwd=tmp_path)
    assert "does not compile" not in built.stderr and "unprofiled" not in built.stderr, \
        built.stderr
    p = subprocess.run([str(tmp_path / "prog")], cwd=tmp_path, capture_output=True, text=True,
                       env=env(GMPROF_OUTPUT=tmp_path / "r.json", GMPROF_QUIET=1))
    assert p.returncode == 0, p.stderr
    # a[i] = 2 i for the 8 threads below n = 8 (the default), the rest kept; o = 1.5 + 1.5;
    # b[i] = 3 + 2 * 0 for the 8 threads, the rest 0
    assert p.stdout.splitlines() == ["a[7] = 14, a[9] = 9, o = 3", "b[5] = 3, b[9] = 0"]
    rep = report_json(tmp_path, tmp_path / "r.json")
    assert sorted(rep["kernels"]) == ["fill<3>", "pair", "scale"]
    assert rep["processes"][0]["launches"] == rep["processes"][0]["profiled"] == 3

    def arrays(k):
        return {x["name"]: (x["reads"], x["writes"]) for x in rep["kernels"][k]["arrays"]}

    # scale: threads 0-7 read a[i] (in get) and write it; 8-15 do nothing
    assert arrays("scale") == {"a": (8, 8)}
    # fill<3>: 8 threads read b[i] (in load2) and write it
    assert arrays("fill<3>") == {"b": (8, 8)}
    # pair: 4 threads write one float2 each
    assert arrays("pair") == {"o": (0, 4)}


def test_device_side_launch_runs_the_child_copy(tmp_path):
    """A kernel launched from an instrumented copy is its child copy, with a description of its
    own (gmprof/program/children.py; the first copy would count into block counters its launch
    never laid out), not the first copy; the original parent is untouched."""
    from gmprof.mode import Mode
    from gmprof.program.translate import translate

    f = tmp_path / "dp.cu"
    f.write_text("struct B { int *p; };\n"
                 "__global__ void child(B b) { b.p[threadIdx.x] = 1; }\n"
                 "__global__ void parent(B b, int *q) {\n"
                 "  q[0] = 2;\n"
                 "  if (threadIdx.x == 0) child<<<1, 4>>>(b);\n"
                 "}\n")
    t = translate(f, mode=Mode(), cpu=False)
    copy = t.text[t.text.index("namespace __gmprof_"):]
    copy = copy[copy.index("void parent"):]
    assert f"::__gmprof_{t.module_id}_dp::child<<<1, 4>>>(b, ::gmprof::child_desc(0))" in copy
    assert "if (threadIdx.x == 0) child<<<1, 4>>>(b);" in t.text  # the original, untouched
    assert not [w for w in t.warnings if w.kind == "launch-not-profiled"]


def test_defaults_and_qualified_calls_in_the_translation(tmp_path):
    """The translation passes a kernel's defaulted arguments at the launch, and the copies call
    the copies by qualified name; nothing else of the user's text changes."""
    from gmprof.mode import Mode
    from gmprof.program.translate import translate

    _write(tmp_path)
    t = translate(tmp_path / "prog.cu", mode=Mode.parse("basic"), cpu=False)
    assert "scale, 1, 16)(a, p, 8);" in t.text
    ns = t.text[t.text.index("namespace __gmprof_") + 10:].split(" ", 1)[0]
    assert f"{ns}::get(p, a, i)" in t.text  # in the copy of scale
    assert "if (i < n) a[i] = get(p, a, i);" in t.text  # the original
    # make_float2(float) counts nothing: no copy to hide CUDA's make_float2(float, float)
    assert f"{ns} {{ inline __host__ __device__ float2 make_float2" not in t.text
    assert '{"fill<3>"' in t.text


REPEATED = r"""
#include <cstdio>
__global__ void k(float *a, int off) { a[off + blockIdx.x * blockDim.x + threadIdx.x] += 1.0f; }
int main() {
  const int n = 1 << 16;
  float *a;
  cudaMalloc(&a, n * sizeof(float));
  cudaMemset(a, 0, n * sizeof(float));
  for (int r = 0; r < 30; ++r) k<<<2, 128>>>(a, 0);
  for (int r = 0; r < 10; ++r) k<<<2, 128>>>(a, r * 256);
  float h[2];
  cudaMemcpy(h, a, sizeof h, cudaMemcpyDeviceToHost);
  printf("%g\n", h[0]);
  return 0;
}
"""


def test_repeated_launches_decode_once_and_sum_exactly(tmp_path, need_gxx):
    """Forty launches of one kernel over a 64 K-element allocation, thirty of them alike: the
    decoder evaluates each distinct launch's static counts once and multiplies (cuda-samples'
    transpose and BlackScholes time hundreds of alike launches), exactly."""
    (tmp_path / "rep.cu").write_text(REPEATED)
    gmprof("nvcc", "rep.cu", "-o", "rep", cwd=tmp_path)
    p = subprocess.run([str(tmp_path / "rep")], cwd=tmp_path, capture_output=True, text=True,
                       env=env(GMPROF_OUTPUT=tmp_path / "r.json", GMPROF_QUIET=1))
    assert p.returncode == 0 and p.stdout == "31\n", p.stderr
    rep = report_json(tmp_path, tmp_path / "r.json")
    k = rep["kernels"]["k"]
    assert k["run"]["launches"] == 40
    (a,) = k["arrays"]
    # 40 launches x 256 threads, each one read-modify-write of one element (one access, a
    # read and a write: docs/samples.md); elements 0-255 are touched by the 30 alike launches
    # and the first shifted one, 256-2559 by one shifted launch each, the rest of 65536 never
    assert (a["reads"], a["writes"], a["accesses"]) == (10240, 10240, 10240)
    assert a["untouched"] == 65536 - 2560
    assert a["max"] == 31 and a["min"] == 0


def test_cudart_version_is_defined_as_nvcc_defines_it(tmp_path):
    """nvcc always includes cuda_runtime_api.h, which defines CUDART_VERSION: a kernel header
    included only `#if CUDART_VERSION >= 2020` (cuda-samples' threadFenceReduction) is read,
    and its launches are routed (they ran unseen when gmprof read the #if as false)."""
    from gmprof.mode import Mode
    from gmprof.program.translate import translate

    (tmp_path / "k.cuh").write_text(
        "__global__ void k(float *a) { a[threadIdx.x] = 1.0f; }\n"
        "void go(float *a) { k<<<1, 32>>>(a); }\n")
    (tmp_path / "m.cu").write_text(
        "#if CUDART_VERSION >= 2020 && __CUDACC_VER_MAJOR__ >= 2\n#include \"k.cuh\"\n#endif\n"
        "int main() { return 0; }\n")
    t = translate(tmp_path / "m.cu", mode=Mode(), cpu=False)
    assert t.instrumented == ["k"]
    assert "::gmprof_host::launch(k, 1, 32)(a);" in t.text


def test_cooperative_launch_is_routed():
    """cudaLaunchCooperativeKernel goes through the runtime on a GPU (launched cooperatively
    there, tests/program/test_whole_gpu.py) and on the CPU backend (its blocks run in phases
    between grid barriers, tests/program/test_cooperative.py)."""
    from gmprof.program.launches import find_edits

    src = "e = cudaLaunchCooperativeKernel((void *)k, g, b, args, 0, s);"
    gpu, _ = find_edits(src)
    cpu, _ = find_edits(src, cpu=True)
    assert [e.text for e in gpu] == [e.text for e in cpu] == [
        "::gmprof_host::launch_cooperative_kernel"]


def test_only_functions_that_count_and_their_callers_get_copies(tmp_path):
    """Only functions with something to count at run time, and their callers, get copies (a
    caller without one would run the original callee, whose sites never count); a function
    with nothing to count keeps one definition, so it hides no overload of its name."""
    from gmprof.mode import Mode
    from gmprof.program.translate import translate

    f = tmp_path / "m.cu"
    f.write_text("__device__ float helper(const float *p, int i) { return p[i]; }\n"
                 "__device__ float mid(const float *p, int i) { return helper(p, i) * 2; }\n"
                 "__device__ float none(float x) { return x * 2; }\n"
                 "__global__ void k(const float *a, float *o) {\n"
                 "  o[threadIdx.x] = none(mid(a, threadIdx.x));\n}\n")
    t = translate(f, mode=Mode.parse("basic"), cpu=False)
    ns = t.text[t.text.index("namespace __gmprof_") + 10:].split(" ", 1)[0]
    for name in ("float helper(", "float mid(", "void k("):
        assert f"namespace {ns} {{ __device__ {name}" in t.text or \
            f"namespace {ns} {{ __global__ {name}" in t.text, name
    assert f"namespace {ns} {{ __device__ float none(" not in t.text
    assert f"return {ns}::helper(p, i) * 2;" in t.text


def test_a_call_before_its_callee_is_declared_stays_unqualified(tmp_path):
    """In a template, `h(p)` may name a function declared after it (found when the template is
    instantiated); `__gmprof_ID::h(p)` there would not compile, so it is left as written."""
    from gmprof.mode import Mode
    from gmprof.program.translate import translate

    f = tmp_path / "t.cu"
    f.write_text("struct S { int i; };\n"
                 "template <class T> __device__ float g(T s, float *p) { return h(s, p); }\n"
                 "__device__ float h(S s, float *p) { return p[s.i]; }\n"
                 "__global__ void k(S s, float *a) { a[1] = g(s, a); }\n")
    t = translate(f, mode=Mode.parse("basic"), cpu=False)
    ns = t.text[t.text.index("namespace __gmprof_") + 10:].split(" ", 1)[0]
    assert f"namespace {ns} {{ template <class T> __device__ float g(" in t.text
    assert f"{ns}::h(s, p)" not in t.text and f"{ns}::g(s, a)" in t.text
