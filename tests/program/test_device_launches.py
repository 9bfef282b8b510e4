"""Launches from device code (CUDA dynamic parallelism, `child<<<g, b>>>(x)` in a kernel compiled
with -rdc=true) in a whole program: a profiled parent's copy launches the child's child copy,
profiled (gmprof/program/children.py; its counts are checked by hand in
test_device_children.py), or, for a child gmprof cannot profile (here `tchild<3>`, a
template), the original child, unprofiled, and counts the launch, so that the report says
how many ran uncounted (gmprof/program/copies.py qualify_calls, gmprof.cuh
count_device_launch, the host runtime's `device_launches`, records.py's note). The rewriting
is checked here, and that nvcc
-arch=sm_90 -rdc=true compiles it; the CPU backend runs device-side launches (queued after the
launching grid's blocks), natively and instrumented, with hand-derived counts; the run on a GPU
is marked gpu (the integrator runs it on the H100)."""
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
template <int N> __global__ void tchild(int *p) { p[threadIdx.x] = N; }
#define LAUNCH(k, p) k<<<1, 2>>>(p, 2)
__global__ void parent(int *p, int *q, int use_macro) {
  q[threadIdx.x] = threadIdx.x;
  if (threadIdx.x < 2) child<<<2, 4>>>(p + 8 * threadIdx.x, 8);
  if (threadIdx.x == 0) ns::nchild<<<1, 2>>>(q + 4);
  if (threadIdx.x == 0) tchild<3><<<1, 2>>>(q + 6);
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
  printf("p %ld q %d %d %d %d %d %d %d %d\n", sum, h[0], h[1], h[2], h[3], h[4], h[5], h[6],
         h[7]);
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
    """The parent's copy launches child's child copy with its description last, counts each
    launch of a child it cannot profile (one counter per parent and child, in order), and the
    module's tables name the counters and the children for the host; the original parent is
    untouched."""
    t = _translate(tmp_path)
    copy = t.text[t.text.index("namespace __gmprof_"):]
    copy = copy[copy.index("void parent"):]
    ns = f"__gmprof_{t.module_id}_dp"
    assert f"::{ns}::child<<<2, 4>>>(p + 8 * threadIdx.x, 8, ::gmprof::child_desc(0));" in copy
    # a child named with its namespace: its child copy is in that namespace
    assert f"::ns::{ns}::nchild<<<1, 2>>>(q + 4, ::gmprof::child_desc(1));" in copy
    assert "(::gmprof::count_device_launch(0)), ::tchild<3><<<1, 2>>>(q + 6);" in copy
    assert "if (threadIdx.x < 2) child<<<2, 4>>>(p + 8 * threadIdx.x, 8);" in t.text
    assert "#define GMPROF_DEVICE_LAUNCHES 1\n" in t.text
    assert '{"parent\\ttchild"}' in t.text
    assert "1, __gmprof_device_launch_names, &__gmprof_device_launches_read, 2, " \
        "__gmprof_children}" in t.text
    assert '__gmprof_children[] = {{"child", 1, __gmprof_dp_objects_0, "parent\\n"}, ' \
        '{"nchild", 1, __gmprof_dp_objects_1, "parent\\n"}}' in t.text
    msgs = [w.message for w in t.warnings if w.kind == "launch-not-profiled"]
    # the launch a macro writes cannot be edited: the build says it is not even counted
    assert any("parent launches LAUNCH(...), tchild from the device" in m and
               "LAUNCH(...): written by a macro, or not by name; not even counted" in m
               for m in msgs), msgs


def test_qualified_child_is_profiled(tmp_path):
    from gmprof.mode import Mode
    from gmprof.program.translate import translate

    f = tmp_path / "q.cu"
    f.write_text("__global__ void child(int *p) { p[threadIdx.x] = 1; }\n"
                 "__global__ void parent(int *p) {\n"
                 "  p[0] = 2;\n"
                 "  if (threadIdx.x == 0) ::child<<<1, 2>>>(p);\n"
                 "}\n")
    t = translate(f, mode=Mode(), cpu=False)
    assert f"::__gmprof_{t.module_id}_dp::child<<<1, 2>>>(p, ::gmprof::child_desc(0));" in t.text
    assert "count_device_launch" not in t.text


def test_child_in_an_unnamed_namespace_is_its_child_copy(tmp_path, need_nvcc):
    """A child in an unnamed namespace: its child copy is in `__gmprof_ID_dp_u` there (found
    as `::__gmprof_ID_dp_u::child`, through the unnamed namespace's using-directive), and nvcc
    compiles it."""
    from gmprof.mode import Mode
    from gmprof.program.translate import translate

    f = tmp_path / "un.cu"
    f.write_text("namespace {\n"
                 "__global__ void child(int *p) { p[threadIdx.x] = 1; }\n"
                 "__global__ void parent(int *p) { p[0] = 2; if (threadIdx.x == 0) "
                 "child<<<1, 2>>>(p); }\n"
                 "}\n")
    t = translate(f, mode=Mode(), cpu=False)
    assert f"::__gmprof_{t.module_id}_dp_u::child<<<1, 2>>>(p, ::gmprof::child_desc(0));" \
        in t.text
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
def test_device_side_launches_are_profiled_or_reported_on_gpu(tmp_path):
    native = _build(tmp_path / "native", native=True)
    assert native.returncode == 0, native.stderr
    inst = _build(tmp_path / "gmprof")
    assert inst.returncode == 0 and "does not compile" not in inst.stderr, inst.stderr
    want = subprocess.run(["./dp"], cwd=tmp_path / "native", capture_output=True, text=True)
    got = subprocess.run(["./dp"], cwd=tmp_path / "gmprof", capture_output=True, text=True,
                         env=env(GMPROF_BACKEND="gpu", GMPROF_OUTPUT="r.json"))
    # p: two parents x two children x 8 elements + 1, and the host's child adds 1 to p[0..7]:
    # 2 * 16 + 8 = 40; q[0..3] = 0, 1, 2, 3, ns::nchild writes 3 to q[4], q[5], tchild<3> 3 to
    # q[6], q[7]
    assert want.stdout == "p 40 q 0 1 2 3 3 3 3 3\n"
    assert (got.returncode, got.stdout) == (want.returncode, want.stdout), got.stderr
    doc = report_json(tmp_path / "gmprof", "r.json")

    def arrays(k):
        return {a["name"]: (a["reads"], a["writes"]) for a in doc["kernels"][k]["arrays"]}

    # parent: 2 launches x 4 threads write q[tid] once; p is only passed on (no access here,
    # the children's accesses are not counted under the parent)
    par = arrays("parent")
    assert par["q"] == (0, 8) and par.get("p", (0, 0)) == (0, 0)
    # child: the host's launch: 8 threads read and write p[i] once
    assert arrays("child") == {"p": (8, 8)}
    # child from the device: 2 parents x threads 0 and 1 = 4 grids of 2 x 4 threads, each
    # adding 1 to its 8 elements (p + 8 * tid): p[0..15] twice each, 32 reads and 32 writes
    assert arrays("child (launched from the device)") == {"p": (32, 32)}
    assert doc["kernels"]["child (launched from the device)"]["run"]["launches"] == 4
    # ns::nchild from the device: 2 parents x thread 0 = 2 grids of 2 threads writing q[4],
    # q[5] (q + 4): twice each, 4 writes
    nch = doc["kernels"]["nchild (launched from the device)"]
    assert nch["run"]["launches"] == 2
    assert [(a["name"], a["reads"], a["writes"], a["counts"][:8]) for a in nch["arrays"]] == \
        [("p", 0, 4, [0, 0, 0, 0, 2, 2, 0, 0])]
    # tchild<3> (a template) runs the original: 2 parents x thread 0 = 2 counted (use_macro
    # is 0: the macro's launch never runs)
    (proc,) = doc["processes"]
    assert proc["device_launches"] == [{"parent": "parent", "child": "tchild", "count": 2}]
    notes = "\n".join(doc["notes"])
    assert "2 launch(es) of tchild made from the device by profiled parent" in notes
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


CPU_PROGRAM = r"""#include <cstdio>
__global__ void child(int *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += 1;
}
__global__ void parent(int *p, int *q) {
  q[threadIdx.x] = threadIdx.x;
  if (threadIdx.x < 2) child<<<2, 4>>>(p + 8 * threadIdx.x, 8);
}
__global__ void rec(int *d, int depth) {
  if (threadIdx.x == 0) atomicAdd(&d[depth], 1);
  if (depth < 5 && threadIdx.x < 2) rec<<<1, 2>>>(d, depth + 1);
}
int main() {
  int *p, *q, *d, h[64];
  cudaMalloc(&p, sizeof h);
  cudaMalloc(&q, sizeof h);
  cudaMalloc(&d, sizeof h);
  cudaMemset(p, 0, sizeof h);
  cudaMemset(q, 0, sizeof h);
  cudaMemset(d, 0, sizeof h);
  for (int r = 0; r < 2; ++r) parent<<<1, 4>>>(p, q);
  child<<<1, 8>>>(p, 8);
  rec<<<1, 2>>>(d, 0);
  cudaMemcpy(h, p, sizeof h, cudaMemcpyDeviceToHost);
  long sum = 0;
  for (int i = 0; i < 64; ++i) sum += h[i];
  printf("p %ld", sum);
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  for (int i = 0; i < 7; ++i) printf(" %d", h[i]);
  printf("\n");
  return cudaGetLastError() != cudaSuccess;
}
"""


def test_device_side_launches_run_on_the_cpu_backend(tmp_path, need_gxx):
    """The CPU backend queues a launch from device code and runs it after the launching grid's
    blocks (runtime_cu/cpu/gmprof_cpu_launch.h), natively and instrumented: the output is the
    same, the children run their child copies, profiled (none is left to count as unprofiled),
    and a kernel that launches itself runs to the depth it asks for."""
    (tmp_path / "dp.cu").write_text(CPU_PROGRAM)
    out = {}
    for extra in (("--gmprof-native",), ()):
        p = subprocess.run([*GMPROF.split(), "nvcc", *extra, "-rdc=true", "dp.cu", "-o", "dp"],
                           cwd=tmp_path, env=env(), capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        r = subprocess.run(["./dp"], cwd=tmp_path, env=env(GMPROF_OUTPUT="r.json"),
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        out[extra] = r.stdout
    # p: 2 parents x threads 0, 1 each launch child on 8 elements (+1 each): 2 * 16 = 32, and
    # the host's child adds 1 to p[0..7]: 40. d[k]: rec at depth k runs 2^k grids (threads 0
    # and 1 of each launch one more, to depth 5), thread 0 of each adds 1: 1 2 4 8 16 32, d[6] 0
    assert out[()] == out[("--gmprof-native",)] == "p 40 1 2 4 8 16 32 0\n"
    raw = json.loads((tmp_path / "r.json").read_text())
    # every device-side launch ran a profiled child copy: none counted as unprofiled
    assert raw["device_launches"] == []
    doc = report_json(tmp_path, "r.json")

    def arrays(k):
        return {a["name"]: (a["reads"], a["writes"]) for a in doc["kernels"][k]["arrays"]}

    # parent: 2 launches x 4 threads write q[tid] once; p is only passed on
    par = arrays("parent")
    assert par["q"] == (0, 8) and par.get("p", (0, 0)) == (0, 0)
    # child: only the host's launch is profiled: 8 threads read and write p[i] once
    assert arrays("child") == {"p": (8, 8)}
    # rec: the host's launch only: thread 0's atomicAdd reads and writes d[0] once
    assert arrays("rec") == {"d": (1, 1)}
    # from the device: 2 parents x threads 0, 1 = 4 grids of child, each 2 x 4 threads adding
    # 1 to its 8 elements: p[0..15] read and written twice each, 32 and 32; rec's grids at
    # depths 1..5, 2^k at depth k (2 + 4 + 8 + 16 + 32 = 62), thread 0 of each reads and
    # writes d[depth] once: 62 and 62 (test_device_children.py checks them element by element)
    assert arrays("child (launched from the device)") == {"p": (32, 32)}
    assert arrays("rec (launched from the device)") == {"d": (62, 62)}


def test_a_fault_in_a_child_fails_the_hosts_launch(tmp_path, need_gxx):
    """A child that faults on the CPU backend fails the launch of the grid that launched it
    (as on a GPU, the error is sticky), the message saying where it happened."""
    (tmp_path / "f.cu").write_text(
        "#include <cstdio>\n"
        "__global__ void child(int *p) { p[threadIdx.x] = 1; }\n"
        "__global__ void parent(int *p) { if (threadIdx.x == 0) child<<<1, 2>>>(nullptr); }\n"
        "int main() {\n"
        "  int *p;\n"
        "  cudaMalloc(&p, 64);\n"
        "  parent<<<1, 4>>>(p);\n"
        "  printf(\"%s\\n\", cudaGetErrorName(cudaDeviceSynchronize()));\n"
        "  return 0;\n"
        "}\n")
    p = subprocess.run([*GMPROF.split(), "nvcc", "--gmprof-native", "-rdc=true", "f.cu", "-o",
                        "f"], cwd=tmp_path, env=env(), capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    r = subprocess.run(["./f"], cwd=tmp_path, env=env(), capture_output=True, text=True)
    assert r.stdout == "cudaErrorIllegalAddress\n"
    assert "thread (0,0,0) of a grid launched from device code: address (nil) is not mapped" \
        in r.stderr, r.stderr
