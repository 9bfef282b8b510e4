"""Kernel declarations that once kept a whole program's kernel from being profiled:
an overloaded kernel name (cuda-samples' cdpAdvancedQuicksort declares qsort_warp with 7
parameters in a header and defines it with 8: gmprof/program/overloads.py), kernels of one name
in two files' unnamed namespaces (two kernels in the report, gmprof/program/records.py), and a
kernel with its own `__maxnreg__` or a three-argument `__launch_bounds__` (parsed; the copy of a
cooperative one gets no second cap: gmprof/program/registers.py). Hand-written programs on the
CPU backend, counts derived by hand in the comments."""
from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from conftest import env, gmprof, report_json


def _build_run(d, name, files: dict, backend="cpu"):
    for f, text in files.items():
        (d / f).write_text(text)
    arch = ["-arch=sm_90"] if backend == "gpu" else []
    b = gmprof("nvcc", *arch, *[f for f in files if f.endswith(".cu")], "-o", name, cwd=d,
               GMPROF_BACKEND=backend)
    p = subprocess.run([str(d / name)], cwd=d, env=env(GMPROF_OUTPUT=d / f"{name}.json",
                                                       GMPROF_BACKEND=backend),
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return b, p, report_json(d, f"{name}.json")


def _array(kernel, name):
    return next(a for a in kernel["arrays"] if a["name"] == name)


# the header declares scale with 2 parameters, the file defines it with 4, the last with a
# default (two C++ functions); the launches pass 4 and 3 arguments: the definition. put is declared twice with 2 parameters of
# other types: a launch of it cannot be told apart by its arguments' number
OVERLOADS = {
    "scale.h": "__global__ void scale(float *a, unsigned n);\n"
               "__global__ void put(float *a, int v);\n",
    "scale.cu": r"""
#include <cstdio>
#include "scale.h"
__global__ void scale(float *a, unsigned off, unsigned n, float f = 2.f) {
  unsigned i = off + threadIdx.x;
  if (i < n) a[i] = a[i] * f;
}
__global__ void put(float *a, float v) { a[threadIdx.x] = v; }
int main() {
  float *a;
  cudaMalloc(&a, 64 * sizeof(float));
  cudaMemset(a, 0, 64 * sizeof(float));
  scale<<<1, 32>>>(a, 8u, 30u, 3.f);
  scale<<<2, 16>>>(a, 0u, 4u);
  put<<<1, 4>>>(a, 1.f);
  cudaDeviceSynchronize();
  printf("ok\n");
  return 0;
}
""",
}


@pytest.fixture(scope="module")
def overloads(tmp_path_factory, need_gxx):
    return _build_run(tmp_path_factory.mktemp("overloads"), "scale", OVERLOADS)


def test_a_kernel_declared_with_other_parameters_is_profiled(overloads):
    b, p, rep = overloads
    assert "'scale'" not in b.stderr, b.stderr
    assert p.stdout.split() == ["ok"]
    a = _array(rep["kernels"]["scale"], "a")
    # launch 1: i = 8 + t (t < 32), i < 30: a[8..29] read and written once each (22 + 22);
    # launch 2: two blocks of 16, i = t (threadIdx only), i < 4: a[0..3] twice each (default f)
    assert a["counts"] == [4] * 4 + [0] * 4 + [2] * 22 + [0] * 34
    assert (a["reads"], a["writes"], a["label"]) == (22 + 8, 22 + 8, "exact")
    assert len(rep["kernels"]["scale"]["launches"]) == 2


def test_an_overload_the_arguments_cannot_tell_runs_unprofiled(overloads):
    b, _, rep = overloads
    # put(float *, int) and put(float *, float): both take 2 arguments
    assert "launch of kernel 'put', declared with different parameter lists" in b.stderr
    assert "put" not in rep["kernels"]
    assert rep["processes"][0]["profiled"] == 2


def test_the_launch_names_the_definitions_signature(tmp_path):
    """The launch and the tables name the 4-parameter function through a pointer type written
    after each declaration, on its own line (no line added)."""
    from gmprof.program.translate import translate

    for f, text in OVERLOADS.items():
        (tmp_path / f).write_text(text)
    t = translate(tmp_path / "scale.cu", cpu=True)
    assert "launch(static_cast<::__gmprof_sig_scale_0>(scale), 1, 32)(a, 8u, 30u, 3.f)" in t.text
    assert "(a, 0u, 4u, 2.f)" in t.text  # the definition's default, written out
    assert "__global__ void scale(float *a, unsigned n); typedef void (*__gmprof_sig_scale_1)(" \
        "float *a, unsigned n);\n" in t.text
    assert "\n} typedef void (*__gmprof_sig_scale_0)(float *a, unsigned off, unsigned n, " \
        "float f);\n" in t.text


# two files, each with its own kernel k in an unnamed namespace (ua's launched from inside the
# namespace, ub's from outside), a kernel template there launched by a host template, and
# kernels outside it (at file scope, in a named namespace) calling device functions of another
# namespace: a file scope kernel one of the unnamed namespace, a named namespace's one at file
# scope
UNNAMED = {
    "ua.cu": "namespace {\n"
             "__global__ void k(float *a) { a[threadIdx.x] = 1; }\n"
             "void run(float *a) { k<<<1, 8>>>(a); }\n"
             "}\n"
             "void run_a(float *a) { run(a); }\n",
    "ub.cu": r"""
#include <cstdio>
namespace {
__global__ void k(float *a, int s) { a[threadIdx.x * s] = 2; }
template <class T> __global__ void fill(T *a) { a[threadIdx.x + 32] = (T)3; }
template <class T> void go(T *a) { fill<T><<<1, 16>>>(a); }
__device__ float at(const float *a, const int *ix, int i) { return a[ix[i]]; }
}
__device__ float last(const float *a, const int *ix) { return a[ix[0] + 63]; }
__global__ void outer(const float *a, const int *ix, float *q) { q[threadIdx.x] = at(a, ix, 1); }
namespace ns {
__global__ void inner(const float *a, const int *ix, float *q) { q[threadIdx.x] = last(a, ix); }
}
void run_a(float *a);
int main() {
  float *a, *q;
  int *ix;
  cudaMalloc(&a, 64 * sizeof(float));
  cudaMalloc(&q, 8 * sizeof(float));
  cudaMalloc(&ix, 8 * sizeof(int));
  cudaMemset(ix, 0, 8 * sizeof(int));
  run_a(a);
  k<<<1, 4>>>(a, 3);
  go(a);
  outer<<<1, 8>>>(a, ix, q);
  ns::inner<<<1, 4>>>(a, ix, q);
  cudaDeviceSynchronize();
  printf("ok\n");
  return 0;
}
""",
}


def test_kernels_of_one_name_in_two_unnamed_namespaces_are_two_kernels(tmp_path, need_gxx):
    b, p, rep = _build_run(tmp_path, "un", UNNAMED)
    assert "unprofiled" not in b.stderr, b.stderr
    k = rep["kernels"]
    assert set(k) == {"k (ua.cu:2)", "k (ub.cu:4)", "fill<float>", "outer", "inner"}, set(k)
    # ua's k: 8 threads write a[t]; ub's k: 4 threads write a[3 t]; fill: a[32 + t], t < 16
    assert _array(k["k (ua.cu:2)"], "a")["counts"] == [1] * 8 + [0] * 56
    assert _array(k["k (ub.cu:4)"], "a")["counts"] == [1, 0, 0] * 4 + [0] * 52
    assert _array(k["fill<float>"], "a")["counts"] == [0] * 32 + [1] * 16 + [0] * 16
    # device functions of another namespace (the unnamed one, the file's scope) run their
    # instrumented copies: outer's 8 threads read ix[1] (0), then a[0]; inner's 4 threads read
    # ix[0] (0), then a[63]
    assert _array(k["outer"], "ix")["counts"] == [0, 8] + [0] * 6
    assert _array(k["outer"], "a")["counts"] == [8] + [0] * 63
    assert _array(k["inner"], "ix")["counts"] == [4] + [0] * 7
    assert _array(k["inner"], "a")["counts"] == [0] * 63 + [4]
    for name in ("outer", "inner"):
        assert {a["label"] for a in k[name]["arrays"]} == {"exact"}, k[name]


# a kernel with its own register cap, one with three launch bounds, and a cooperative one with
# its own cap (its copy takes the original's registers: in place of the cap, never beside it)
HEADS = r"""
#include <cstdio>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void __maxnreg__(32) capped(float *a);
__global__ void __maxnreg__(32) capped(float *a) { a[threadIdx.x] = 1; }
__global__ void __launch_bounds__(128, 2, 1) bounded(float *a) { a[threadIdx.x] += 1; }
__global__ __maxnreg__(40) void coop(float *a) {
  cg::grid_group g = cg::this_grid();
  a[g.thread_rank()] = 2;
  g.sync();
  a[63 - g.thread_rank()] += 1;
}
int main() {
  float *a;
  cudaMalloc(&a, 64 * sizeof(float));
  capped<<<1, 32>>>(a);
  bounded<<<1, 16>>>(a);
  void *args[] = {&a};
  cudaLaunchCooperativeKernel((void *)coop, 2, 8, args, 0, 0);
  cudaDeviceSynchronize();
  printf("ok\n");
  return 0;
}
"""


def test_kernels_with_register_qualifiers_are_profiled(tmp_path, need_gxx):
    b, p, rep = _build_run(tmp_path, "heads", {"heads.cu": HEADS})
    assert "cannot parse" not in b.stderr and "unprofiled" not in b.stderr, b.stderr
    k = rep["kernels"]
    assert _array(k["capped"], "a")["counts"] == [1] * 32 + [0] * 32
    # a[t] += 1: one read-write access by each of 16 threads (counted in reads and writes)
    bounded = _array(k["bounded"], "a")
    assert bounded["counts"] == [1] * 16 + [0] * 48
    assert (bounded["reads"], bounded["writes"]) == (16, 16)
    # 2 blocks x 8 threads, rank r < 16: writes a[r], then a[63 - r] += 1 (one access)
    assert _array(k["coop"], "a")["counts"] == [1] * 16 + [0] * 32 + [1] * 16


def test_a_cooperative_copy_takes_one_cap_in_place_of_its_own(tmp_path):
    from gmprof.mode import Mode
    from gmprof.program import registers as R
    from gmprof.program.translate import translate

    (tmp_path / "heads.cu").write_text(HEADS)
    t = translate(tmp_path / "heads.cu", mode=Mode(), cpu=False)
    assert t.capped == ["coop"]
    copy = next(ln for ln in t.text.splitlines() if "void coop(" in ln and "namespace" in ln)
    assert "GMPROF_OWN_MAXNREG_coop(40) void coop" in copy and "__maxnreg__" not in copy, copy
    assert "GMPROF_MAXNREG_coop " not in t.text
    # measured: the original's registers (here 30); not measured: the kernel's own cap
    assert "#define GMPROF_OWN_MAXNREG_coop(N) __maxnreg__(30)" in R.defines({"coop": {900: 30}})
    assert "#define GMPROF_OWN_MAXNREG_coop __maxnreg__\n" in R.fallback(["coop"])
    # the other kernels' copies keep their own heads
    assert "{ __global__ void __maxnreg__(32) capped(float *a)" in t.text
    assert "{ __global__ void __launch_bounds__(128, 2, 1) bounded(float *a)" in t.text


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_nvcc_compiles_the_heads_and_the_overloads(tmp_path):
    """The GPU build (nvcc, host and device) of both programs: the overloads' pointer types and
    the copies' caps compile; the copy of coop has at most its original's registers."""
    for f, text in {**OVERLOADS, "heads.cu": HEADS}.items():
        (tmp_path / f).write_text(text)
    regs = {}
    for f in ("scale.cu", "heads.cu"):
        p = gmprof("nvcc", "-arch=sm_90", "-Xptxas", "-v", "-c", f, "-o", f + ".o",
                   cwd=tmp_path, GMPROF_BACKEND="gpu")
        assert "compiled as it was" not in p.stderr and "built without" not in p.stderr, p.stderr
        for m in re.finditer(r"entry function '_Z(N19__gmprof_\w{10})?\d+([a-z]+)E?Pf\w*' "
                             r"(?:.*\n){1,3}?.*Used (\d+) registers", p.stdout + p.stderr):
            regs[m.group(2), m.group(1) is not None] = int(m.group(3))
    assert {("scale", True), ("capped", True), ("bounded", True)} <= set(regs), regs
    assert regs["coop", True] <= max(regs["coop", False], 24), regs


def test_registers_of_a_kernel_of_internal_linkage_are_read_under_rdc():
    """With -rdc=true ptxas names a kernel of an unnamed namespace (or `static`) with a prefix
    (`__nv_static_<n>_<n characters>_`); its registers are still read, so a cooperative
    kernel there gets its cap."""
    from gmprof.program.registers import parse_usage

    report = ("ptxas info    : Compiling entry function '__nv_static_27__f0ebd054_6_un5_cu_"
              "a56f462c__ZN38_GLOBAL__N__f0ebd054_6_un5_cu_a56f462c2coEPf' for 'sm_90'\n"
              "ptxas info    : Used 14 registers, used 1 barriers\n")
    assert parse_usage(report, ["co"]) == {"co": {900: 14}}


@pytest.mark.gpu
def test_overloads_and_register_qualifiers_on_a_gpu(tmp_path):
    """The same programs built for a GPU: the same hand-derived counts."""
    _, _, rep = _build_run(tmp_path, "scale", OVERLOADS, backend="gpu")
    assert _array(rep["kernels"]["scale"], "a")["counts"] == [4] * 4 + [0] * 4 + [2] * 22 + \
        [0] * 34
    _, _, rep = _build_run(tmp_path, "heads", {"heads.cu": HEADS}, backend="gpu")
    k = rep["kernels"]
    assert _array(k["capped"], "a")["counts"] == [1] * 32 + [0] * 32
    assert _array(k["bounded"], "a")["counts"] == [1] * 16 + [0] * 48
    assert _array(k["coop"], "a")["counts"] == [1] * 16 + [0] * 32 + [1] * 16
