"""Constructs met in public CUDA code (the parse-rate measurement, docs/frontend.md), each in a
small snippet written for the test: node kinds, names and spans asserted, and failures asserted
to be located warnings."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from pycparser import c_ast

from gmprof.frontend import cxx_ast as X
from gmprof.frontend.program import load

ROOT = Path(__file__).resolve().parents[2]


def parsed(text, name="t.cu", **kw):
    tu = load(text=text, name=name, **kw)
    failures = [w.render() for w in tu.warnings if w.kind in ("unparsed-function", "internal")]
    assert not failures, failures
    return tu


def nodes(fn, cls):
    return [n for n in X.walk(fn.funcdef.body) if isinstance(n, cls)]


def text(node):
    return X.span(node).text


def test_kernel_launch_from_device_code():
    tu = parsed(
        "template <typename T> __global__ void child(T *p, int n) { p[n] = 0; }\n"
        "template <int N> struct Tile { int v[N]; };\n"
        "__global__ void parent(float *p, int n, cudaStream_t s) {\n"
        "  if (n > 1) child<float><<<n / 32, 32, 0, s>>>(p, n - 1);\n"
        "  child<<<1, 1>>>(p, n);\n"
        "  Tile<sizeof(Tile<Tile<2>>)> t;\n"  # '>>' closing template lists still splits
        "}\n")
    fn = tu.function("parent")
    launches = nodes(fn, X.KernelLaunch)
    assert [text(k) for k in launches] == ["child<float><<<n / 32, 32, 0, s>>>(p, n - 1)",
                                           "child<<<1, 1>>>(p, n)"]
    first = launches[0]
    assert isinstance(first.name, X.TemplateId) and first.name.name == "child"
    assert [text(e) for e in first.config] == ["n / 32", "32", "0", "s"]
    assert [text(e) for e in first.args.exprs] == ["p", "n - 1"]
    assert isinstance(launches[1].name, c_ast.ID)
    decl = fn.funcdef.body.block_items[-1]
    assert isinstance(decl, c_ast.Decl) and decl.name == "t"


def test_triple_angle_closes_three_template_lists():
    tu = parsed("template <typename T> struct W { T v; };\n"
                "__global__ void k(float *p) { W<W<W<float>>> w; p[0] = w.v.v.v; }\n")
    (decl,) = [d for d in tu.function("k").funcdef.body.block_items if isinstance(d, c_ast.Decl)]
    assert decl.name == "w" and decl.type.type.name == "W"
    assert text(decl.type.type) == "W<W<W<float>>>"


def test_direct_initialisation_is_a_declaration_with_an_initialiser():
    tu = parsed("__global__ void k(float *p, int n) {\n"
                "  half2 v(0.f, 0.f);\n"
                "  float w(p[n]);\n"
                "  float *q(p + 1);\n"
                "  p[0] = w + q[0];\n"
                "}\n")
    v, w, q = tu.function("k").funcdef.body.block_items[:3]
    assert (v.name, w.name, q.name) == ("v", "w", "q")
    assert isinstance(v.init, c_ast.InitList) and [text(e) for e in v.init.exprs] == \
        ["0.f", "0.f"]
    assert isinstance(w.init, c_ast.ArrayRef) and text(w.init) == "p[n]"
    assert isinstance(q.type, c_ast.PtrDecl) and text(q.init) == "p + 1"
    assert (v.coord.line, v.coord.column) == (2, 9)  # a Decl is placed at its declarator


def test_initialiser_arguments_where_a_declarator_belongs_are_a_located_warning():
    tu = load(text="__global__ void k(float *p) {\n  float w(p[0])[4];\n}\n", name="bad.cu")
    (w,) = tu.warnings
    assert w.kind == "unparsed-function" and "initialiser arguments" in w.message
    assert (w.location.line, w.location.col) == (2, 11)


def test_operator_functions_are_named_and_parsed():
    tu = parsed(
        "inline __host__ __device__ float2 operator+(float2 a, float2 b)\n"
        "{ return make_float2(a.x + b.x, a.y + b.y); }\n"
        "inline __host__ __device__ void operator*=(float2 &a, float s) { a.x *= s; a.y *= s; }\n"
        "struct Acc { float s; __device__ float operator()(float x) const { return s * x; } };\n"
        "struct H { unsigned short x; };\n"
        "__device__ bool operator<(H a, H b) { return a.x < b.x; }\n")
    names = [f.name for f in tu.functions]
    # a member defined in its class's body is named after its class
    assert names == ["operator+", "operator*=", "Acc::operator()", "operator<"]
    assert [f.funcdef.decl.name for f in tu.functions] == \
        ["operator+", "operator*=", "operator()", "operator<"]
    assert all(f.space in ("host_device", "device") for f in tu.functions)


def test_member_functions_of_a_class_template_defined_outside_it():
    tu = parsed(
        "template <class T> class Range {\n"
        " public:\n"
        "  __device__ Range(T a, T b);\n"
        "  __device__ T const &low() const;\n"
        "  __device__ Range<T> grow(T d) const;\n"
        "  T lo, hi;\n"
        "};\n"
        "template <class T> inline __device__ Range<T>::Range(T a, T b) : lo(a), hi{b} {}\n"
        "template <class T> inline __device__ T const &Range<T>::low() const { return lo; }\n"
        "template <class T> __device__ Range<T> Range<T>::grow(T d) const\n"
        "{ return Range<T>(lo - d, hi + d); }\n")
    ctor, low, grow = tu.functions
    assert [f.name for f in tu.functions] == ["Range::Range", "Range::low", "Range::grow"]
    assert [f.funcdef.decl.name for f in tu.functions] == [f.name for f in tu.functions]
    inits = ctor.parsed.member_initializers
    assert [(i.name.name, [text(a) for a in i.args.exprs]) for i in inits] == \
        [("lo", ["a"]), ("hi", ["b"])]
    assert isinstance(inits[1].args, c_ast.InitList)
    assert ctor.funcdef.body.block_items is None or ctor.funcdef.body.block_items == []
    assert [t.name for t in low.template_params] == ["T"]
    assert isinstance(low.funcdef.decl.type.type, X.RefDecl)  # returns T const &
    (ret,) = nodes(grow, c_ast.Return)
    assert isinstance(ret.expr, c_ast.FuncCall) and isinstance(ret.expr.name, X.TemplateId)


def test_constructor_of_a_plain_class_defined_outside_it():
    tu = parsed("struct Acc { __device__ Acc(float *p); float *d; };\n"
                "__device__ Acc::Acc(float *p) : d(p) { d[0] = 0; }\n")
    (fn,) = tu.functions
    assert fn.name == "Acc::Acc" and fn.funcdef.decl.name == "Acc::Acc"
    assert [text(a) for a in nodes(fn, c_ast.ArrayRef)] == ["d[0]"]


def test_explicit_specialisations_parse_with_their_arguments():
    tu = parsed(
        "template <typename T> __device__ T rsq(T x) { return rsqrt(x); }\n"
        "template <> __device__ float rsq<float>(float x) { return rsqrtf(x); }\n"
        "template <int i> __device__ float sum(const float *a) { return a[i] + sum<i - 1>(a); }\n"
        "template <> __device__ float sum<-1>(const float *a) { return 0; }\n")
    generic, special, _, stop = tu.functions
    assert [f.name for f in tu.functions] == ["rsq", "rsq", "sum", "sum"]
    assert generic.parsed.specialization_args is None
    (arg,) = special.parsed.specialization_args
    assert isinstance(arg, c_ast.Typename) and text(arg) == "float"
    assert [text(a) for a in stop.parsed.specialization_args] == ["-1"]
    assert special.funcdef.decl.name == "rsq" and special.template_params == []


def test_typename_of_a_member_of_a_template_id():
    tu = parsed(
        "template <typename T> struct vec3 { typedef float Type; };\n"
        "template <typename T> __device__ typename vec3<T>::Type\n"
        "lerp3(typename vec3<T>::Type a, typename vec3<T>::Type *b, T t) { return a; }\n")
    (fn,) = tu.functions
    a, b, _ = fn.params
    assert a.name == "a" and a.type.type.names == ["vec3<T>::Type"]
    assert isinstance(b.type, c_ast.PtrDecl) and b.type.type.type.names == ["vec3<T>::Type"]


def test_nvcc_predefined_macros_and_a_head_split_by_a_conditional():
    tu = parsed(
        "template <class T>\n"
        "#ifdef __CUDACC__\n"
        "__host__ __device__\n"
        "#endif\n"
        "T lo(const T &a, const T &b) { return a < b ? a : b; }\n"
        "#ifdef __CUDACC__\n"
        "__host__ __device__\n"
        "#endif\n"
        "inline float sgn(const float &v) { return v < 0.0f ? -1.0f : 1.0f; }\n"
        "#if defined(__NVCC__) && __cplusplus >= 201103L\n"
        "__global__ void k(float *p) { p[0] = sgn(lo(p[1], p[2])); }\n"
        "#endif\n")
    assert [(f.name, f.space) for f in tu.functions] == \
        [("lo", "host_device"), ("sgn", "host_device"), ("k", "global")]
    assert not tu.warnings


def test_directives_inside_host_code_keep_the_conditional_stack():
    # `#ifdef` opened before a host function and closed inside its head: the kernel after it
    # is in active code. Before the fix the `#endif` was never seen and `k` vanished.
    tu = parsed("#ifdef NOT_DEFINED_ANYWHERE\n"
                "static\n"
                "#endif\n"
                "inline int host_only(int x) { return x; }\n"
                "__global__ void k(int *p) { p[0] = 1; }\n")
    assert [f.name for f in tu.functions] == ["k"] and tu.function("k").parsed is not None


def test_a_user_define_overrides_a_predefined_macro():
    text_ = "#if __cplusplus >= 202002L\n__global__ void k20(int *p) { p[0] = 1; }\n#endif\n"
    assert [f.name for f in parsed(text_).functions] == []
    assert [f.name for f in parsed(text_, defines={"__cplusplus": "202002L"}).functions] == \
        ["k20"]


def test_parenthesised_names_after_keywords():
    tu = parsed(
        "__device__ cufftComplex cb(void *a, size_t i) {\n"
        "  return (cufftComplex)scale(((float2 *)a)[i]);\n"  # a cast after `return`
        "}\n"
        "__device__ float h(float x) { return (MYSTERY_T) x; }\n"
        "struct Pts { __device__ void set(int i, float2 p); };\n"
        "__global__ void k(Pts pts, bool pred, int dest, float2 p, unsigned char *raw) {\n"
        "  if (pred) pts.set(dest, p);\n"  # a condition, not a cast
        "  while (pred) pred = false;\n"
        "}\n")
    cb = tu.function("cb")
    (ret,) = nodes(cb, c_ast.Return)
    assert isinstance(ret.expr, c_ast.Cast) and text(ret.expr.to_type) == "cufftComplex"
    (ret,) = nodes(tu.function("h"), c_ast.Return)
    assert isinstance(ret.expr, c_ast.Cast) and text(ret.expr.to_type) == "MYSTERY_T"
    (if_,) = nodes(tu.function("k"), c_ast.If)
    assert isinstance(if_.cond, c_ast.ID) and isinstance(if_.iftrue, c_ast.FuncCall)


def test_new_and_delete_expressions():
    tu = parsed(
        "template <class T> class Box { public: __device__ Box(int n, T *p); T *d; };\n"
        "__global__ void k(Box<int> **out, int n, int *buf) {\n"
        "  __shared__ unsigned char raw[64];\n"
        "  *out = new Box<int>(n, buf);\n"
        "  Box<int> *b = new (raw) Box<int>(4, buf);\n"
        "  int *a = new int[n * 2];\n"
        "  float *f = new float;\n"
        "  delete *out;\n"
        "  delete[] a;\n"
        "}\n")
    fn = tu.function("k")
    news = nodes(fn, X.New)
    assert [text(n) for n in news] == ["new Box<int>(n, buf)", "new (raw) Box<int>(4, buf)",
                                       "new int[n * 2]", "new float"]
    assert [text(a) for a in news[1].placement] == ["raw"]
    assert [text(a) for a in news[1].init.exprs] == ["4", "buf"]
    assert [text(d) for d in news[2].dims] == ["n * 2"] and news[3].init is None
    deletes = nodes(fn, X.Delete)
    assert [(d.array, text(d.expr)) for d in deletes] == [(False, "*out"), (True, "a")]


def test_alignof_inside_template_arguments():
    tu = parsed("__global__ void k(float4 *p) {\n"
                "  copy(p, cuda::aligned_size_t<alignof(float4)>(sizeof(float4)));\n"
                "}\n")
    (call,) = [c for c in nodes(tu.function("k"), c_ast.FuncCall)
               if isinstance(c.name, X.TemplateId)]
    assert call.name.name == "cuda::aligned_size_t"
    assert not [b for b in nodes(tu.function("k"), c_ast.BinaryOp) if b.op in "<>"]


def test_cxx11_and_cxx17_statement_forms():
    tu = parsed(
        "template <int N> __global__ void k(int *p) {\n"
        "  using namespace cooperative_groups;\n"
        "  using std::min;\n"
        "  [[maybe_unused]] int q = 0;\n"
        "  if constexpr (N > 1) p[0] = min(N, 4);\n"
        "  else if (p[1]) [[likely]] p[1] = 2;\n"
        "}\n"
        "__device__ auto half_of(int x) -> float { return x * 0.5f; }\n")
    k = tu.function("k")
    items = k.funcdef.body.block_items
    assert isinstance(items[0], c_ast.Decl) and items[0].name == "q"  # the usings add nothing
    outer = items[1]
    assert isinstance(outer, c_ast.If) and text(outer.cond) == "N > 1"
    assert isinstance(outer.iffalse, c_ast.If) and text(outer.iffalse.iftrue) == "p[1] = 2"
    fdecl = tu.function("half_of").funcdef.decl.type
    assert isinstance(fdecl, c_ast.FuncDecl)
    assert fdecl.type.type.names == ["float"] and fdecl.type.declname == "half_of"


def test_lambdas_are_functions_of_their_own():
    tu = parsed("__global__ void k(int *p) {\n  auto f = [&](int i) -> int { return p[i]; };\n"
                "  p[0] = f(1);\n}\n", name="lam.cu")
    assert [f.name for f in tu.functions] == ["k", "k::<lambda 2:12>"]
    (lam,) = nodes(tu.function("k"), X.Lambda)
    assert text(lam) == "[&](int i) -> int { return p[i]; }" and lam.captures == [("&", None)]
    assert lam.address_uses == []  # the body assigns nothing it captured
    body = tu.function("k::<lambda 2:12>").funcdef
    assert body is lam.funcdef and body.decl.type.type.type.names == ["int"]


def test_structured_bindings_stay_a_located_warning():
    tu = load(text="__global__ void k(int2 *p) {\n  auto [x, y] = p[0];\n  p[1].x = x;\n}\n",
              name="sb.cu")
    (w,) = tu.warnings
    assert w.kind == "unparsed-function" and (w.location.line, w.location.col) == (2, 8)


def _parse_rate_module():
    spec = importlib.util.spec_from_file_location("parse_rate", ROOT / "bench" / "parse_rate.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("parse_rate", module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_parse_rate_counts_and_survives_bad_files(tmp_path):
    rate = _parse_rate_module()
    (tmp_path / "Common").mkdir()
    (tmp_path / "Common" / "util.cuh").write_text(
        "__device__ float twice(float x) { return 2 * x; }\n")
    plain = tmp_path / "Samples" / "plain"
    plain.mkdir(parents=True)
    (plain / "a.cu").write_text(
        '#include "util.cuh"\n'
        "// __global__ void in_a_comment() {}\n"
        "__global__ void ok(float *p) { p[0] = twice(p[1]); }\n"
        "__global__ void bad(float *p) { p[0] = = 1; }\n"
        "__global__ void proto(float *p);\n")
    # not UTF-8 outside a comment (in a comment it would load, with a warning)
    (plain / "latin1.cu").write_bytes(b"const char *s = \"caf\xe9\";\n"
                                      b"__global__ void k(int *p) { p[0] = 1; }\n")
    coop = tmp_path / "Samples" / "coop"
    coop.mkdir(parents=True)
    (coop / "c.cu").write_text('#include "util.cuh"\n#include <cooperative_groups.h>\n'
                               "namespace cg = cooperative_groups;\n"
                               "__global__ void grid_sync(int *p) { p[0] = 1; }\n")
    report = rate.measure(tmp_path)
    kernels = {(f.name, f.cg, f.parsed) for f in report.functions.values() if f.space == "global"}
    assert kernels == {("ok", False, True), ("bad", False, False), ("grid_sync", True, True),
                       ("(kernel 1 of 1)", False, False)}
    (twice,) = [f for f in report.functions.values() if f.name == "twice"]
    assert twice.parsed and not twice.cg  # Common/ belongs to no sample
    assert [name for name, _ in report.file_errors] == ["Samples/plain/latin1.cu"]
    assert report.crashes == []
    assert rate.text_kernel_count((plain / "a.cu").read_text()) == 2
    markdown = rate.render(report, tmp_path, 3, False, 0.0)
    assert "| 1 | 3 | 33.3% |" in markdown  # ok parsed; bad and the latin-1 kernel did not
