"""Member functions defined in their class's body get an instrumented copy beside them, in
their class (gmprof/program/copies.py): a kernel calling `obj.f(x)` (obj's type a typedef
too), `p->f(x)`, `S::f(x)` or, inside a member, `f(x)` / `this->f(x)` is profiled, with the
accesses made in the members counted
(cuda-samples' interval: `global_stack<T, N, THREADS>::push`; cdpQuadtree: `Points::get_point`,
`__host__ __device__`). What cannot be copied is said: a kernel that reaches counted accesses
only through a constructor, an operator or a member defined outside its class runs unprofiled
with a warning naming it, and a constructor a declaration runs labels the arrays handed to it
lower bounds. Hand-written programs, counts derived by hand in the comments."""
from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from conftest import env, gmprof, report_json

# a class template (a stack in device memory, interleaved between threads, as interval's
# global_stack), a stack in local memory (interval's local_stack), and a template kernel that
# reaches the members directly, through a helper's reference, by overloads, and from a member
STACKS = r"""
#include <cstdio>
template <class T, int STRIDE> class gstack {
  T *buf;
  int top;
public:
  __device__ gstack(T *b, int t) : buf(b), top(t) {}
  __device__ void push(T const &v) { buf[top] = v; top += STRIDE; }
  __device__ T pop() { top -= STRIDE; return buf[top]; }
  __device__ T under() const { return buf[top - STRIDE]; }
  __device__ T under(int d) const { return buf[top - d * STRIDE]; }
  __device__ int size() const { return top / STRIDE; }
  __device__ void push_two(T v) { push(v); this->push(v + 1); }
};
template <class T, int N> struct lstack {
  T buf[N];
  int tos;
  __device__ lstack() : tos(-1) {}
  __device__ void push(T v) { buf[++tos] = v; }
  __device__ T pop() { return buf[tos--]; }
};
template <class T> __device__ void push_n(gstack<T, 32> &s, int n) {
  for (int k = 0; k < n; ++k) s.push((T)k);
}
template <class T>
__global__ void stacks(T *b, int *n) {
  int t = threadIdx.x;
  gstack<T, 32> s(b, t);
  push_n(s, 3);
  T a = s.under();
  T c = s.under(2);
  lstack<T, 4> l;
  l.push(s.pop());
  n[t] = s.size() + (int)l.pop() + (int)(a * 10 + c);
}
template <class T>
__global__ void twice(T *b) {
  gstack<T, 32> s(b, threadIdx.x);
  s.push_two((T)5);
}
int main() {
  float *b, *e; int *n;
  cudaMalloc(&b, 128 * sizeof(float));
  cudaMalloc(&e, 64 * sizeof(float));
  cudaMalloc(&n, 32 * sizeof(int));
  stacks<float><<<1, 32>>>(b, n);
  twice<float><<<1, 32>>>(e);
  int h[32];
  cudaMemcpy(h, n, sizeof h, cudaMemcpyDeviceToHost);
  printf("%d %d\n", h[0], h[31]);
  return 0;
}
"""

# a plain class whose __host__ __device__ members read and write device arrays (cdpQuadtree's
# Points), called on a local object and through a pointer to one; and a constructor that reads
# one (no copy can be called for it: its array is labelled)
POINTS = r"""
#include <cstdio>
class Points {
  float *m_x, *m_y;
public:
  __host__ __device__ Points(float *x, float *y) : m_x(x), m_y(y) {}
  __host__ __device__ float2 get(int i) const { return make_float2(m_x[i], m_y[i]); }
  __host__ __device__ void set(int i, const float2 &p) { m_x[i] = p.x; m_y[i] = p.y; }
};
struct First {
  float v;
  __device__ First(const float *p, int i) { v = p[i]; }
};
__global__ void swap_xy(float *x, float *y, float *u, float *v, int n) {
  int i = threadIdx.x;
  Points in(x, y), out(u, v);
  Points *o = &out;
  if (i < n) { float2 p = in.get(i); o->set(i, make_float2(p.y, p.x)); }
}
__global__ void first(const float *p, float *q) {
  First f(p, threadIdx.x);
  q[threadIdx.x] = f.v;
}
int main() {
  float *x, *y, *u, *v;
  cudaMalloc(&x, 64 * sizeof(float)); cudaMalloc(&y, 64 * sizeof(float));
  cudaMalloc(&u, 64 * sizeof(float)); cudaMalloc(&v, 64 * sizeof(float));
  float h[64];
  for (int k = 0; k < 64; ++k) h[k] = k;
  cudaMemcpy(x, h, sizeof h, cudaMemcpyHostToDevice);
  for (int k = 0; k < 64; ++k) h[k] = 100 + k;
  cudaMemcpy(y, h, sizeof h, cudaMemcpyHostToDevice);
  swap_xy<<<1, 64>>>(x, y, u, v, 40);
  cudaMemcpy(h, u, sizeof h, cudaMemcpyDeviceToHost);
  printf("%g\n", h[3]);
  first<<<1, 16>>>(x, v);
  return 0;
}
"""


# a static member called by its qualified name, and a member called on an object whose type is
# a typedef of a class template's specialisation
STATIC = r"""
#include <cstdio>
struct Ops {
  static __device__ float at(const float *p, const int *ix, int i) { return p[ix[i]]; }
};
template <class T> struct St {
  T *b;
  __device__ void put(int i, T v) { b[i * 2] = v; }
};
typedef St<float> FS;
__global__ void gather(const float *p, const int *ix, float *q) {
  q[threadIdx.x] = Ops::at(p, ix, threadIdx.x);
}
__global__ void every_other(float *q) { FS s; s.b = q; s.put(threadIdx.x, 1.f); }
int main() {
  float *p, *q; int *ix;
  cudaMalloc(&p, 64 * sizeof(float)); cudaMalloc(&q, 64 * sizeof(float));
  cudaMalloc(&ix, 64 * sizeof(int)); cudaMemset(ix, 0, 64 * sizeof(int));
  gather<<<1, 16>>>(p, ix, q);
  every_other<<<1, 16>>>(q);
  cudaDeviceSynchronize();
  printf("ok\n");
  return 0;
}
"""

def _build_run(d, name, text):
    (d / f"{name}.cu").write_text(text)
    b = gmprof("nvcc", f"{name}.cu", "-o", name, cwd=d)
    p = subprocess.run([str(d / name)], cwd=d, env=env(GMPROF_OUTPUT=d / f"{name}.json"),
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return b, p, report_json(d, f"{name}.json")


def _array(kernel, name):
    return next(a for a in kernel["arrays"] if a["name"] == name)


@pytest.fixture(scope="module")
def stacks(tmp_path_factory, need_gxx):
    return _build_run(tmp_path_factory.mktemp("stacks"), "stacks", STACKS)


@pytest.fixture(scope="module")
def points(tmp_path_factory, need_gxx):
    return _build_run(tmp_path_factory.mktemp("points"), "points", POINTS)


def test_class_template_members_are_counted(stacks):
    b, p, rep = stacks
    assert "unprofiled" not in b.stderr, b.stderr
    # thread t: push_n writes b[t], b[t+32], b[t+64] (0, 1, 2; top = t+96); under() reads
    # b[t+64] (a = 2), under(2) b[t+32] (c = 1), pop b[t+64] (top = t+64); the local stack
    # touches no device array. n[t] = (t+64)/32 + 2 + (2*10 + 1) = 2 + 2 + 21 = 25
    assert p.stdout.split() == ["25", "25"]
    assert rep["processes"][0]["launches"] == rep["processes"][0]["profiled"] == 2
    k = rep["kernels"]["stacks<float>"]
    b_ = _array(k, "b")
    # b[t]: 1 write; b[t+32]: 1 write + 1 read; b[t+64]: 1 write + 2 reads; b[96..127]: none
    assert np.array_equal(b_["counts"], [1] * 32 + [2] * 32 + [3] * 32 + [0] * 32)
    assert sum(b_["counts"]) == 32 * (1 + 2 + 3)
    assert b_["reads"] in (None, 3 * 32) and b_["writes"] in (None, 3 * 32)
    n = _array(k, "n")
    assert (n["reads"], n["writes"]) == (0, 32)


def test_members_called_from_members_are_counted(stacks):
    # push_two: push(v) writes e[t], this->push(v + 1) writes e[t+32]
    _, _, rep = stacks
    e = _array(rep["kernels"]["twice<float>"], "b")
    assert np.array_equal(e["counts"], [1] * 64)


def test_host_device_members_of_a_class_are_counted(points):
    b, p, rep = points
    assert "unprofiled" not in b.stderr, b.stderr
    assert p.stdout.split() == ["103"]  # u[3] = y[3] = 100 + 3
    k = rep["kernels"]["swap_xy"]
    # threads 0..39: get reads x[i], y[i]; set writes u[i], v[i]
    for name in "xyuv":
        a = _array(k, name)
        assert np.array_equal(a["counts"], [1] * 40 + [0] * 24), name
        assert a["label"] == "exact", a


def test_a_constructors_accesses_are_labelled_not_dropped(points):
    _, _, rep = points
    k = rep["kernels"]["first"]
    # First(p, i) reads p[i] in its constructor, which no copy is called for: p's counts (0)
    # are lower bounds, said so; q is written once by each of the 16 threads
    p_ = _array(k, "p")
    assert p_["label"] == "approximate"
    assert any("constructor First::First" in n for n in k["notes"]), k["notes"]
    q = _array(k, "q")
    assert (q["writes"], q["label"]) == (16, "exact")


def test_static_and_typedef_members_are_counted(tmp_path, need_gxx):
    b, p, rep = _build_run(tmp_path, "static", STATIC)
    assert "unprofiled" not in b.stderr, b.stderr
    k = rep["kernels"]
    # gather: 16 threads read ix[t] (all 0) and then p[0], and write q[t]
    assert _array(k["gather"], "p")["counts"] == [16] + [0] * 63
    assert _array(k["gather"], "ix")["counts"] == [1] * 16 + [0] * 48
    # every_other: thread t writes q[2 t], through St<float>::put
    assert _array(k["every_other"], "q")["counts"] == [1, 0] * 16 + [0] * 32


def test_a_constructor_called_as_an_expression_is_labelled(tmp_path, need_gxx):
    """`A(p, i)` is a call the analysis sees but no copy can be made for: p's counts are
    labelled lower bounds, naming the constructor, and the rest stays exact."""
    prog = ("struct A { float v; __device__ A(const float *p, int i) { v = p[i * i]; } };\n"
            "__device__ A make(const float *p, int i) { return A(p, i); }\n"
            "__global__ void k(const float *p, float *q) {\n"
            "  q[threadIdx.x] = make(p, threadIdx.x).v; }\n"
            "int main() { float *p, *q; cudaMalloc(&p, 256 * 4); cudaMalloc(&q, 64);\n"
            "  k<<<1, 16>>>(p, q); cudaDeviceSynchronize(); return 0; }\n")
    _, _, rep = _build_run(tmp_path, "ctor", prog)
    k = rep["kernels"]["k"]
    assert _array(k, "p")["label"] == "approximate"
    assert any("constructor A::A may access it" in n for n in k["notes"]), k["notes"]
    # q: each of the 16 threads writes q[t] once
    q = _array(k, "q")
    assert (q["writes"], q["label"], q["counts"]) == (16, "exact", [1] * 16)


def test_a_kernel_reaching_counts_only_through_a_virtual_member_says_so(tmp_path):
    """A virtual member gets no copy (a copy would add a slot to its class's virtual table):
    the kernel that reaches its counted access runs unprofiled, and the warning says why."""
    from gmprof.mode import Mode
    from gmprof.program.translate import translate

    f = tmp_path / "v.cu"
    f.write_text("struct B { float *p;\n"
                 "  __device__ virtual float get(int i) { return p[i * i]; } };\n"
                 "__global__ void k(float *p, float *q) {\n"
                 "  B b; b.p = p; q[threadIdx.x] = b.get(threadIdx.x); }\n")
    t = translate(f, mode=Mode(), cpu=True)
    said = [w.render() for w in t.warnings if w.kind == "kernel-not-instrumented"]
    assert len(said) == 1 and "kernel k reaches counted accesses through B::get (a virtual " \
        "member), which gmprof cannot copy; the kernel runs unprofiled" in said[0], said
    assert "__gmprof_" not in t.text.split("struct B", 1)[1].split("};", 1)[0]


def test_a_member_call_whose_class_is_unknown_is_labelled(tmp_path, need_gxx):
    """`h.s.put(i, v)`: the class of a member of a member is not told; a member put of the file
    accesses memory, so every array's counts are lower bounds, the note naming the call."""
    prog = ("template <class T> struct St { T *b;\n"
            "  __device__ void put(int i, T v) { b[i * 2] = v; } };\n"
            "struct Holder { St<float> s; };\n"
            "__global__ void k(float *q, float *r) {\n"
            "  Holder h; h.s.b = q; h.s.put(threadIdx.x, 1.f); r[threadIdx.x] = 2.f; }\n"
            "int main() { float *q, *r; cudaMalloc(&q, 256); cudaMalloc(&r, 256);\n"
            "  k<<<1, 16>>>(q, r); cudaDeviceSynchronize(); return 0; }\n")
    _, _, rep = _build_run(tmp_path, "unknown", prog)
    k = rep["kernels"]["k"]
    for name in ("q", "r"):
        assert _array(k, name)["label"] == "approximate", name
    assert any("h.s.put() may access it" in n for n in k["notes"]), k["notes"]
    # r: the 16 threads write r[t] once (counted: a lower bound that is here exact)
    assert _array(k, "r")["counts"] == [1] * 16 + [0] * 48


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_member_copies_compile_for_a_gpu(tmp_path):
    """nvcc for sm_90 compiles the copies (built without running: no GPU needed): a member's
    copy is named in its class, a __host__ __device__ one is a __device__ function (its hooks
    are device code, which a host function cannot call), and the kernels' copies exist."""
    for name, text in (("stacks", STACKS), ("points", POINTS), ("static", STATIC)):
        (tmp_path / f"{name}.cu").write_text(text)
        b = gmprof("nvcc", "-arch=sm_90", "-c", f"{name}.cu", "-o", f"{name}.o", cwd=tmp_path,
                   GMPROF_BACKEND="gpu")
        assert "does not compile" not in b.stderr and "unprofiled" not in b.stderr, b.stderr
        nm = subprocess.run(["nm", "-C", str(tmp_path / f"{name}.o")], capture_output=True,
                            text=True).stdout
        kernels = {"stacks": ("stacks<float>", "twice<float>"), "points": ("swap_xy",),
                   "static": ("gather", "every_other")}[name]
        for k in kernels:
            assert f"::{k}(" in nm and "__gmprof_" in nm, k
