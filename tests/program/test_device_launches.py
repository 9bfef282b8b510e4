"""Launches from device code (CUDA dynamic parallelism, `child<<<g, b>>>(x)` in a kernel compiled
with -rdc=true) in a whole program: a profiled parent's copy launches the original child,
unprofiled, and counts the launch, so that the report says how many ran uncounted
(gmprof/program/copies.py qualify_calls, gmprof.cuh count_device_launch, the host runtime's
`device_launches`, records.py's note). The CPU backend has no dynamic parallelism: the rewriting
is checked here (and that nvcc -arch=sm_90 -rdc=true compiles it), the run on a GPU (marked
gpu: the integrator runs it on the H100); the counter's way to the report is also checked on
the CPU backend, with the child launch stubbed out of the translation."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from conftest import GMPROF, env, report_json

PROGRAM = r"""#include <cstdio>
__global__ void child(int *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += 1;
}
namespace ns {
__global__ void nchild(int *p) { p[threadIdx.x] = 3; }
}
#define LAUNCH(k, p) k<<<1, 2>>>(p, 2)
__global__ void parent(int *p, int *q, int use_macro) {
  q[threadIdx.x] = threadIdx.x;
  if (threadIdx.x < 2) child<<<2, 4>>>(p + 8 * threadIdx.x, 8);
  if (threadIdx.x == 0) ns::nchild<<<1, 2>>>(q + 4);
  if (use_macro && threadIdx.x == 1) LAUNCH(child, q);
}
int main() {
  int *p, *q, h[64];
  cudaMalloc(&p, sizeof h);
  cudaMalloc(&q, sizeof h);
  cudaMemset(p, 0, sizeof h);
  cudaMemset(q, 0, sizeof h);
  for (int r = 0; r < 2; ++r) parent<<<1, 4>>>(p, q, 0);
  child<<<1, 8>>>(p, 8);
  cudaMemcpy(h, p, sizeof h, cudaMemcpyDeviceToHost);
  long sum = 0;
  for (int i = 0; i < 64; ++i) sum += h[i];
  cudaMemcpy(h, q, sizeof h, cudaMemcpyDeviceToHost);
  printf("p %ld q %d %d %d %d %d %d\n", sum, h[0], h[1], h[2], h[3], h[4], h[5]);
  return cudaGetLastError() != cudaSuccess;
}
"""


def _translate(tmp_path):
    from gmprof.mode import Mode
    from gmprof.program.translate import translate

    f = tmp_path / "dp.cu"
    f.write_text(PROGRAM)
    return translate(f, mode=Mode(), cpu=False)


def test_copy_counts_each_device_side_launch(tmp_path):
    """The parent's copy counts each launch it writes (one counter per parent and child, in
    order), launches the original child, and the module's tables name the counters for the
    host; the original parent is untouched."""
    t = _translate(tmp_path)
    copy = t.text[t.text.index("namespace __gmprof_"):]
    copy = copy[copy.index("void parent"):]
    assert "(::gmprof::count_device_launch(0)), ::child<<<2, 4>>>(p + 8 * threadIdx.x, 8);" \
        in copy
    assert "(::gmprof::count_device_launch(1)), ns::nchild<<<1, 2>>>(q + 4);" in copy
    assert "if (threadIdx.x < 2) child<<<2, 4>>>(p + 8 * threadIdx.x, 8);" in t.text
    assert "#define GMPROF_DEVICE_LAUNCHES 2\n" in t.text
    assert '{"parent\\tchild", "parent\\tns::nchild"}' in t.text
    assert "2, __gmprof_device_launch_names, &__gmprof_device_launches_read}" in t.text
    msgs = [w.message for w in t.warnings if w.kind == "launch-not-profiled"]
    # the launch a macro writes cannot be edited: the build says it is not even counted
    assert any("parent launches LAUNCH(...), child, ns::nchild from the device" in m and
               "LAUNCH(...): written by a macro, or not by name; not even counted" in m
               for m in msgs), msgs


def test_qualified_child_is_counted(tmp_path):
    from gmprof.mode import Mode
    from gmprof.program.translate import translate

    f = tmp_path / "q.cu"
    f.write_text("__global__ void child(int *p) { p[threadIdx.x] = 1; }\n"
                 "__global__ void parent(int *p) {\n"
                 "  p[0] = 2;\n"
                 "  if (threadIdx.x == 0) ::child<<<1, 2>>>(p);\n"
                 "}\n")
    t = translate(f, mode=Mode(), cpu=False)
    assert "(::gmprof::count_device_launch(0)), ::child<<<1, 2>>>(p);" in t.text
    assert '{"parent\\tchild"}' in t.text  # named as the report names the kernel


def test_child_in_an_unnamed_namespace_is_the_original(tmp_path, need_nvcc):
    """`::child` names the original in an unnamed namespace (unqualified, the parent's copy
    would find the child's instrumented copy first, which would count into its parent's
    description), and nvcc compiles it."""
    from gmprof.mode import Mode
    from gmprof.program.translate import translate

    f = tmp_path / "un.cu"
    f.write_text("namespace {\n"
                 "__global__ void child(int *p) { p[threadIdx.x] = 1; }\n"
                 "__global__ void parent(int *p) { p[0] = 2; if (threadIdx.x == 0) "
                 "child<<<1, 2>>>(p); }\n"
                 "}\n")
    t = translate(f, mode=Mode(), cpu=False)
    assert "(::gmprof::count_device_launch(0)), ::child<<<1, 2>>>(p);" in t.text
    out = tmp_path / "un_t.cu"
    out.write_text(t.text)
    p = subprocess.run(["nvcc", "-arch=sm_90", "-rdc=true", "-c", str(out), "-o",
                        str(tmp_path / "un.o")], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr


def test_file_without_device_launches_has_no_counters(tmp_path):
    from gmprof.mode import Mode
    from gmprof.program.translate import translate

    f = tmp_path / "k.cu"
    f.write_text("__global__ void k(int *p) { p[threadIdx.x] = 1; }\n")
    t = translate(f, mode=Mode(), cpu=False)
    assert "GMPROF_DEVICE_LAUNCHES" not in t.text and "count_device_launch" not in t.text


@pytest.fixture(scope="module")
def need_nvcc():
    if shutil.which("nvcc") is None:
        pytest.skip("needs nvcc")


def _build(d, *, native=False):
    d.mkdir(exist_ok=True)
    (d / "dp.cu").write_text(PROGRAM)
    cc = ["nvcc"] if native else [*GMPROF.split(), "nvcc"]
    return subprocess.run([*cc, "-arch=sm_90", "-rdc=true", "dp.cu", "-o", "dp"], cwd=d,
                          env=env(GMPROF_BACKEND="gpu"), capture_output=True, text=True)


def test_nvcc_compiles_the_instrumented_parent(tmp_path, need_nvcc):
    """nvcc -arch=sm_90 -rdc=true compiles the translation (a file that does not compile would
    be built as it was, with a warning: none here) and links it with the host runtime."""
    p = _build(tmp_path / "b")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "does not compile" not in p.stderr, p.stderr
    assert (tmp_path / "b" / "dp").is_file()


@pytest.mark.gpu
def test_device_side_launches_are_reported_uncounted_on_gpu(tmp_path):
    native = _build(tmp_path / "native", native=True)
    assert native.returncode == 0, native.stderr
    inst = _build(tmp_path / "gmprof")
    assert inst.returncode == 0 and "does not compile" not in inst.stderr, inst.stderr
    want = subprocess.run(["./dp"], cwd=tmp_path / "native", capture_output=True, text=True)
    got = subprocess.run(["./dp"], cwd=tmp_path / "gmprof", capture_output=True, text=True,
                         env=env(GMPROF_BACKEND="gpu", GMPROF_OUTPUT="r.json"))
    # p: two parents x two children x 8 elements + 1, and the host's child adds 1 to p[0..7]:
    # 2 * 16 + 8 = 40; q[0..3] = 0, 1, 2, 3 and ns::nchild writes 3 to q[4], q[5]
    assert want.stdout == "p 40 q 0 1 2 3 3 3\n"
    assert (got.returncode, got.stdout) == (want.returncode, want.stdout), got.stderr
    doc = report_json(tmp_path / "gmprof", "r.json")

    def arrays(k):
        return {a["name"]: (a["reads"], a["writes"]) for a in doc["kernels"][k]["arrays"]}

    # parent: 2 launches x 4 threads write q[tid] once; p is only passed on (no access here,
    # the children's accesses are not counted under the parent)
    par = arrays("parent")
    assert par["q"] == (0, 8) and par.get("p", (0, 0)) == (0, 0)
    # child: only the host's launch is profiled: 8 threads read and write p[i] once
    assert arrays("child") == {"p": (8, 8)}
    # device-side launches: 2 parents x threads 0 and 1 = 4 of child, 2 x thread 0 = 2 of
    # ns::nchild (use_macro is 0: the macro's launch never runs)
    (proc,) = doc["processes"]
    assert proc["device_launches"] == [
        {"parent": "parent", "child": "child", "count": 4},
        {"parent": "parent", "child": "ns::nchild", "count": 2}]
    notes = "\n".join(doc["notes"])
    assert "4 launch(es) of child made from the device by profiled parent" in notes
    assert "2 launch(es) of ns::nchild made from the device by profiled parent" in notes
    raw = json.loads((tmp_path / "gmprof" / "r.json").read_text())
    assert raw["profiled"] == 3  # two parents and the host's child


def test_report_notes_device_side_launches(tmp_path):
    """The decoder turns the raw file's `device_launches` into a note and keeps them in the
    process's entry (a raw file written by hand: no program needed)."""
    from gmprof.program.records import decode

    raw = {"schema": "gmprof.raw/1", "pid": 7, "host": "h", "backend": "gpu",
           "launches": 1, "profiled": 1, "not_instrumented": {}, "captured": {},
           "device_launches": [{"parent": "parent", "child": "child", "count": 4}],
           "failed": [], "notes": [], "modules": [], "groups": []}
    f = tmp_path / "r.json"
    f.write_text(json.dumps(raw))
    out = decode([f])
    assert out.processes[0]["device_launches"] == raw["device_launches"]
    assert any("4 launch(es) of child made from the device by profiled parent (dynamic "
               "parallelism) ran the original kernel, unprofiled" in n for n in out.notes)


STUBBED = r"""import sys
import gmprof.program.nvcc as N
translate_file = N.translate_file
def stubbed(*a, **k):
    # the CPU backend cannot launch from device code: the launch itself becomes nothing, the
    # counter before it stays
    t = translate_file(*a, **k)
    if t is not None:
        t.text = t.text.replace("::child<<<1, 2>>>(p)", "(void)0").replace(
            "child<<<1, 2>>>(p)", "(void)0")
    return t
N.translate_file = stubbed
from gmprof.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_counts_reach_the_report_on_the_cpu_backend(tmp_path, need_gxx):
    """The counter, its read-back at exit and the note, end to end on the CPU backend, with the
    child launch itself stubbed out of the translation (g++ has no `<<<` in device code)."""
    (tmp_path / "stub.py").write_text(STUBBED)
    (tmp_path / "h.cu").write_text(
        "#include <cstdio>\n"
        "__global__ void child(int *p) { p[threadIdx.x] = 1; }\n"
        "__global__ void parent(int *p) {\n"
        "  p[threadIdx.x] = 2;\n"
        "  if (threadIdx.x < 3) child<<<1, 2>>>(p);\n"
        "}\n"
        "int main() {\n"
        "  int *p;\n"
        "  cudaMalloc(&p, 64);\n"
        "  for (int r = 0; r < 2; ++r) parent<<<2, 4>>>(p);\n"
        "  cudaDeviceSynchronize();\n"
        "  return 0;\n"
        "}\n")
    p = subprocess.run([sys.executable, "stub.py", "nvcc", "-rdc=true", "h.cu", "-o", "h"],
                       cwd=tmp_path, env=env(), capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    r = subprocess.run(["./h"], cwd=tmp_path, env=env(GMPROF_OUTPUT="r.json"),
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    raw = json.loads((tmp_path / "r.json").read_text())
    # 2 launches x 2 blocks x threads 0, 1, 2 of each block = 12 launches of child
    assert raw["device_launches"] == [{"parent": "parent", "child": "child", "count": 12}]
    doc = report_json(tmp_path, "r.json")
    # the parent's own accesses are counted: 2 launches x 8 threads write p[tid] once
    (arr,) = doc["kernels"]["parent"]["arrays"]
    assert (arr["name"], arr["reads"], arr["writes"]) == ("p", 0, 16)
    assert any("12 launch(es) of child made from the device by profiled parent" in n
               for n in doc["notes"])
