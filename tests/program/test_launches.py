"""Launch rewriting in host code (gmprof/program/launches.py) and the translated file around it
(gmprof/program/translate.py): what changes, what is left byte for byte, lines kept."""
from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from gmprof.program.launches import find_edits, kernel_name_of, rewrite_text
from gmprof.program.translate import translate


@pytest.mark.parametrize("src,want", [
    ("k<<<g, b>>>(a, b);", "::gmprof_host::launch(k, g, b)(a, b);"),
    ("k<<<g, b, 0, s>>>();", "::gmprof_host::launch(k, g, b, 0, s)();"),
    ("ns::k<float, 16><<<dim3(1, 2), 32>>>(p);",
     "::gmprof_host::launch(ns::k<float, 16>, dim3(1, 2), 32)(p);"),
    ("k<T<int>><<<1, 1>>>(x);", "::gmprof_host::launch(k<T<int>>, 1, 1)(x);"),
    ("(*tab[i])<<<1, f(2, g<3>(x))>>>();", "::gmprof_host::launch((*tab[i]), 1, f(2, g<3>(x)))();"),
    ("k <<< n / 256, 256 >>> (x);", "::gmprof_host::launch(k ,  n / 256, 256 ) (x);"),
    # every spacing nvcc takes: `<<` and `<` (and `>>` and `>`) apart, comments between;
    # Rodinia's particlefilter writes `k << < g, b >> > (args)`
    ("k << < g, b >> > (a);", "::gmprof_host::launch(k ,  g, b ) (a);"),
    ("k<</*c*/<1, 1>>/*d*/>(p);", "::gmprof_host::launch(k, 1, 1)(p);"),
    ("k<<<1, 1>> >(p);", "::gmprof_host::launch(k, 1, 1)(p);"),
    ("k<< <1, (2 >> 1)>>>(p);", "::gmprof_host::launch(k, 1, (2 >> 1))(p);"),
    ("e = cudaLaunchKernel((void *)k, g, b, a, 0, 0);",
     "e = ::gmprof_host::launch_kernel((void *)k, g, b, a, 0, 0);"),
    ("::cudaLaunchKernelEx(&c, k, 1);", "::gmprof_host::launch_kernel_ex(&c, k, 1);"),
    ("cudaLaunchKernelExC(&c, f, a);", "::gmprof_host::launch_kernel_ex_c(&c, f, a);"),
])
def test_rewrites(src, want):
    assert rewrite_text(src) == want


@pytest.mark.parametrize("src", [
    "if (a<<b) c = d>>e;",                  # shifts
    "x = y << 3 >> 2;",
    "x = y << (z < 3);",
    'puts("k<<<1,1>>>(x)");',               # a string
    "// k<<<1,1>>>(x);",                    # a comment
    "obj.cudaLaunchKernel(1);",             # a member
    "k<<<g, b;",                             # unterminated: left alone
])
def test_left_alone(src):
    assert rewrite_text(src) == src


def test_multiline_launch_keeps_lines():
    src = "k<<<grid,\n    block>>>(a,\n b);\nint z;\n"
    out = rewrite_text(src)
    assert out.count("\n") == src.count("\n")
    assert out.endswith("int z;\n")
    edits, launches = find_edits(src)
    assert len(launches) == 1 and launches[0].line == 1


def test_spaced_launch_keeps_lines():
    src = "k<<\n<grid, block>>\n>(a);\nint z;\n"
    out = rewrite_text(src)
    assert out == "::gmprof_host::launch(k, \ngrid, block)\n(a);\nint z;\n"


SPACED = r"""#include <cstdio>
__global__ void k(int *a) { a[threadIdx.x] = 1; }
int main() {
  int *a; cudaMalloc(&a, 32 * sizeof(int));
  k << < 1, 32 >> > (a);
  cudaDeviceSynchronize();
  printf("ok\n");
  return 0;
}
"""


def test_spaced_launch_is_profiled(tmp_path, need_gxx):
    import json

    from conftest import gmprof

    (tmp_path / "s.cu").write_text(SPACED)
    p = gmprof("run", "--json", "s.cu", cwd=tmp_path)
    doc = json.loads(p.stdout)
    # one launch of 32 threads, each writing a[threadIdx.x] once: 32 writes, one per element
    assert [k["kernel"] for k in doc["kernels"]] == ["k"]
    a = doc["kernels"][0]["arrays"][0]
    assert (a["name"], a["reads"], a["writes"]) == ("a", 0, 32)
    assert doc["program"]["processes"][0]["profiled"] == 1


def test_kernel_name_of():
    assert kernel_name_of("ns::k<float, 16>") == ("ns::k", "float, 16")
    assert kernel_name_of("k") == ("k", "")
    assert kernel_name_of("(*p)") == ("", "")


SOURCE = r"""#include <cstdio>
__device__ float twice(float x) { return 2 * x; }
template <int B>
__global__ void scale(float *a, int n) {
  int i = blockIdx.x * B + threadIdx.x;
  if (i < n) a[i] = twice(a[i]);
}
__global__ void where(int *line) { line[0] = __LINE__; }
int main() {
  float *a; int *l;
  cudaMalloc(&a, 64 * sizeof(float));
  cudaMalloc(&l, sizeof(int));
  scale<32><<<2, 32>>>(a, 64);
  where<<<1, 1>>>(l);
  printf("%d\n", __LINE__);
  return 0;
}
"""


def test_translation_keeps_user_text_and_lines(tmp_path):
    from gmprof.mode import Mode

    f = tmp_path / "t.cu"
    f.write_text(SOURCE)
    t = translate(f, mode=Mode(), cpu=True)
    assert t.instrumented == ["scale<32>", "where"]
    body = t.text[t.text.index('#line 1 "'):]
    # every user line is there, in order; the launches are rewritten in place
    lines = [ln for ln in SOURCE.splitlines() if "<<<" not in ln]
    pos = 0
    for ln in lines:
        pos = body.index(ln, pos)
    assert "::gmprof_host::launch(scale<32>, 2, 32)(a, 64);" in body
    # the copies are in the module's namespace, right after their originals
    assert re.search(r"namespace __gmprof_\w+ \{ template <int B>\n__global__ void scale", body)
    assert t.manifest["kernels"] == ["scale<32>", "where"]


def test_translation_line_numbers(tmp_path, need_gxx):
    """__LINE__ in host code and in the instrumented copy is the user's line (g++ -E)."""
    from gmprof.mode import Mode
    from gmprof.program import build as B

    f = tmp_path / "t.cu"
    f.write_text(SOURCE)
    t = translate(f, mode=Mode(), cpu=True)
    g = tmp_path / "t.cpp"
    g.write_text(t.text)
    out = subprocess.run([B.CXX, "-std=c++17", *B.CPU_FLAGS, *B.cpu_includes(), "-E", "-P",
                          "-x", "c++", str(g)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    # `line[0] = __LINE__` twice (original, copy): 8 both times; the host printf's 15
    assert out.stdout.count("line[0] = 8;") == 2
    assert 'gmprof_cpu_printf("%d\\n", 15)' in out.stdout


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_nvcc_compiles_translation_rdc(tmp_path):
    """The GPU translation compiles with nvcc, and two instrumented files link with
    -rdc=true (each keeps its own launch description)."""
    from gmprof.mode import Mode

    objs = []
    for name in ("a", "b"):
        src = tmp_path / f"{name}.cu"
        src.write_text(SOURCE.replace("int main()", f"int main_{name}()").replace(
            "scale", f"scale_{name}").replace("where", f"where_{name}").replace(
            "twice", f"twice_{name}"))
        t = translate(src, mode=Mode(), cpu=False)
        gen = tmp_path / f"{name}.gen.cu"
        gen.write_text(t.text)
        obj = tmp_path / f"{name}.o"
        p = subprocess.run(["nvcc", "-rdc=true", "-arch=sm_90", "-c", str(gen), "-o", str(obj)],
                           capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        objs.append(str(obj))
    main = tmp_path / "m.cu"
    main.write_text("int main_a(); int main_b(); int main() { return main_a() + main_b(); }\n")
    from gmprof.program.build import gpu_link_flags

    p = subprocess.run(["nvcc", "-rdc=true", "-arch=sm_90", str(main), *objs,
                        *gpu_link_flags(), "-o", str(tmp_path / "app")],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr


def test_launch_with_enclosing_template_parameters(tmp_path):
    """`k<T><<<...>>>` inside `template <class T> void run()` names no specialisation at file
    scope: it is not put in the module's kernel table (which would not compile) but goes
    through the runtime by address, and the translation says which kernels need their
    specialisations found (cuda-samples' simpleTemplates; instances.py finds them by compiling,
    tests/program/test_template_launches.py runs them)."""
    from gmprof.mode import Mode

    f = tmp_path / "t.cu"
    f.write_text("template <class T> __global__ void k(T *a) { a[threadIdx.x] = 0; }\n"
                 "template <class T> void run(T *d) { k<T><<<1, 32>>>(d); }\n"
                 "void go(float *d) { run(d); k<float><<<1, 8>>>(d); }\n")
    for cpu in (False, True):
        t = translate(f, mode=Mode(), cpu=cpu)
        assert '{"k<T>"' not in t.text and '{"k<float>"' in t.text
        assert "::gmprof_host::launch(k<T>, 1, 32)(d)" in t.text
        assert t.warnings == [] and t.generic == {"::k": "k"}
        t = translate(f, mode=Mode(), cpu=cpu, instances={"k": ["int", "float"]})
        assert '{"k<int>"' in t.text and t.text.count('{"k<float>"') == 1


def test_host_template_launch_of_a_kernel_without_deduce_helper(tmp_path, monkeypatch):
    """`k<T><<<...>>>` in a host template goes through the runtime by address even when the
    kernel gets no deduce helper (instances.deduce_helper cannot read its head); a deduced
    launch of it then stays unprofiled, with the warning."""
    from gmprof.mode import Mode
    from gmprof.program import instances

    monkeypatch.setattr(instances, "deduce_helper", lambda fn, text: None)
    f = tmp_path / "p.cu"
    f.write_text("template <class T> __global__ void k(T *a) { a[0] = 0; }\n"
                 "template <class T> void run(T *d) { k<T><<<1, 32>>>(d); }\n"
                 "void go(float *d) { run(d); k<<<1, 8>>>(d); }\n")
    t = translate(f, mode=Mode(), cpu=True)
    assert "::gmprof_host::launch(k<T>, 1, 32)(d)" in t.text and t.generic == {"::k": "k"}
    assert "__gmprof_deduce_k" not in t.text
    assert [(w.kind, w.location.line) for w in t.warnings] == [("launch-not-profiled", 3)]
