"""Kernels launched from the device (dynamic parallelism) are profiled in whole programs: the
parent's copy launches the child's child copy with a description the host laid out with the
parent's group (gmprof/program/children.py, gmprof.cuh gmprof_dp::bind,
runtime_cu/host/gmprof_host_children.h), and the report has the child as its own kernel,
`k (launched from the device)`, with the grids as its launches (decode.py decode_child_group).

Every expected count below is derived by hand from the program (comments give the arithmetic),
never from gmprof's output. The CPU backend runs the program here; the same checks on a GPU
are marked gpu."""
from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from conftest import GMPROF, env, report_json

PROGRAM = r"""#include <cstdio>
#include <cstdlib>
__device__ int *g_far;  // set by the host: an allocation no argument of parent names
__device__ float twice(const float *x, int i) { return 2.0f * x[i]; }
__global__ void scale(float *out, const float *in, int n) {
  __shared__ float tile[8];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = i < n ? twice(in, i) : 0.0f;
  __syncthreads();
  if (i < n) out[i] = tile[threadIdx.x] + 1.0f;
}
__global__ void far(int *p) { p[threadIdx.x] += 1; }
__global__ void parent(float *out, const float *in) {
  if (threadIdx.x < 3) scale<<<2, 4>>>(out + 8 * threadIdx.x, in + 8 * threadIdx.x, 6);
  if (threadIdx.x == 3) far<<<1, 2>>>(g_far);
}
__global__ void inc(int *p) { p[threadIdx.x] += 1; }
__global__ void split(int *a, int *b) { inc<<<1, 2>>>(threadIdx.x == 0 ? a : b + 2); }
__global__ void rec(int *d, const int *w, int depth, int k) {
  if (threadIdx.x == 0) atomicAdd(&d[depth], w[depth]);
  if (depth < k && threadIdx.x < 2) rec<<<1, 4>>>(d, w, depth + 1, k);
}
int main(int argc, char **argv) {
  int k = argc > 1 ? atoi(argv[1]) : 4;
  float *out, *in, h[32];
  int *d, *w, *farp, *sa, *sb, hd[16], hf[2], hs[8];
  cudaMalloc(&out, sizeof h);
  cudaMalloc(&in, sizeof h);
  cudaMalloc(&d, sizeof hd);
  cudaMalloc(&w, sizeof hd);
  cudaMalloc(&farp, sizeof hf);
  cudaMalloc(&sa, 4 * sizeof(int));
  cudaMalloc(&sb, 4 * sizeof(int));
  cudaMemset(sa, 0, 4 * sizeof(int));
  cudaMemset(sb, 0, 4 * sizeof(int));
  for (int i = 0; i < 32; ++i) h[i] = (float)i;
  for (int i = 0; i < 16; ++i) hd[i] = i + 1;
  cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice);
  cudaMemcpy(w, hd, sizeof hd, cudaMemcpyHostToDevice);
  cudaMemset(out, 0, sizeof h);
  cudaMemset(d, 0, sizeof hd);
  cudaMemset(farp, 0, sizeof hf);
  cudaMemcpyToSymbol(g_far, &farp, sizeof farp);
  parent<<<1, 4>>>(out, in);
  rec<<<1, 4>>>(d, w, 0, k);
  split<<<1, 2>>>(sa, sb);
  cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
  float s = 0;
  for (int i = 0; i < 32; ++i) s += h[i];
  cudaMemcpy(hd, d, sizeof hd, cudaMemcpyDeviceToHost);
  cudaMemcpy(hf, farp, sizeof hf, cudaMemcpyDeviceToHost);
  printf("out %g d", s);
  for (int i = 0; i < 7; ++i) printf(" %d", hd[i]);
  cudaMemcpy(hs, sa, 4 * sizeof(int), cudaMemcpyDeviceToHost);
  cudaMemcpy(hs + 4, sb, 4 * sizeof(int), cudaMemcpyDeviceToHost);
  printf(" far %d %d split", hf[0], hf[1]);
  for (int i = 0; i < 8; ++i) printf(" %d", hs[i]);
  printf("\n");
  return cudaGetLastError() != cudaSuccess;
}
"""

DEVICE = " (launched from the device)"


def _expected_output(k: int) -> str:
    # out: scale's grid t (t = 0, 1, 2) writes out[8t + i] = 2 * in[8t + i] + 1 = 2 (8t + i) + 1
    # for i < 6; the sum over t and i is 2 * sum(8t + i) + 18
    s = sum(2 * (8 * t + i) + 1 for t in range(3) for i in range(6))
    # d[j]: the grids at depth j (2^j of them: threads 0 and 1 of each grid above launch one)
    # each add w[j] = j + 1 once (thread 0), up to depth k
    d = [2 ** j * (j + 1) if j <= k else 0 for j in range(7)]
    # far: one grid of 2 threads adds 1 to p[0] and p[1]; split: a[0], a[1] and b[2], b[3]
    return f"out {s} d {' '.join(map(str, d))} far 1 1 split 1 1 0 0 0 0 1 1\n"


def _build(d, *, native=False, gpu=False):
    d.mkdir(exist_ok=True)
    (d / "ch.cu").write_text(PROGRAM)
    cc = ["nvcc"] if native and gpu else [*GMPROF.split(), "nvcc"]
    extra = (["--gmprof-native"] if native and not gpu else []) + \
        (["-arch=sm_90"] if gpu else [])
    p = subprocess.run([*cc, *extra, "-rdc=true", "ch.cu", "-o", "ch"], cwd=d,
                       env=env(GMPROF_BACKEND="gpu" if gpu else "cpu"), capture_output=True,
                       text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "does not compile" not in p.stderr, p.stderr


def _run(d, k, report=None, gpu=False):
    extra = {"GMPROF_BACKEND": "gpu" if gpu else "cpu"}
    if report:
        extra["GMPROF_OUTPUT"] = report
    r = subprocess.run(["./ch", str(k)], cwd=d, env=env(**extra), capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout


def _check(d, k, gpu=False):
    """The instrumented run's output is the native one's, and its report's counts of the
    children are the hand-derived ones."""
    assert _run(d / "native", k, gpu=gpu) == _expected_output(k)
    assert _run(d / "gmprof", k, f"r{k}.json", gpu=gpu) == _expected_output(k)
    doc = report_json(d / "gmprof", f"r{k}.json")
    kernels = doc["kernels"]

    def arrays(name):
        return {a["name"]: a for a in kernels[name]["arrays"]}

    def sites(name):
        return sorted((s["text"], s["kind"], s["executions"], s["how"])
                      for s in kernels[name]["sites"])

    # ---- scale, launched by parent's threads 0, 1, 2: 3 grids of 2 blocks x 4 threads (i = 0..7),
    # n = 6; grid t gets out + 8t and in + 8t
    sc = "scale" + DEVICE
    assert kernels[sc]["run"]["launches"] == 3
    assert sites(sc) == sorted([
        # where i < 6: 6 threads a grid x 3 grids; twice's x[i] (in), out[i], the read of tile
        ("x[i]", "read", 18, "measured"),
        ("out[i]", "write", 18, "measured"),
        ("tile[threadIdx.x]", "read", 18, "measured"),
        # every thread writes tile[threadIdx.x]: 8 a grid x 3
        ("tile[threadIdx.x]", "write", 24, "measured"),
    ])
    a = arrays(sc)
    # in and out: elements 8t .. 8t + 5 of each grid t, once each: read (in) and written (out)
    once = np.zeros(32, np.int64)
    for t in range(3):
        once[8 * t:8 * t + 6] = 1
    assert a["in"]["counts"] == once.tolist() and (a["in"]["reads"], a["in"]["writes"]) == (18, 0)
    assert a["out"]["counts"] == once.tolist() and \
        (a["out"]["reads"], a["out"]["writes"]) == (0, 18)
    assert a["in"]["label"] == a["out"]["label"] == "exact"
    # tile (per 4-byte word of each block, summed over blocks and grids): word j is written by
    # thread j of both blocks of the 3 grids (6 writes, j < 4); read where i < 6: block 0 reads
    # words 0..3, block 1 (i = 4..7) words 0 and 1: per grid 2, 2, 1, 1, x 3 grids
    tile = [6 + 6, 6 + 6, 6 + 3, 6 + 3, 0, 0, 0, 0]
    assert a["tile"]["counts"] == tile and (a["tile"]["reads"], a["tile"]["writes"]) == (18, 24)
    # ---- far, given a pointer into an allocation parent's group does not have (g_far): its
    # one grid's 2 accesses are counted out of range of every known object, and said so
    fa = "far" + DEVICE
    assert kernels[fa]["run"]["launches"] == 1
    assert sites(fa) == [("p[threadIdx.x]", "read-write", 2, "measured")]
    assert arrays(fa)["p"]["counts"] == []
    notes = "\n".join(kernels[fa]["notes"])
    assert "2 accesses went to addresses outside every known object" in notes
    assert "p: no grid's pointer was in an allocation of the host launches' group" in notes
    # ---- rec from the device: depths 1..k, 2^j grids at depth j (2^(k+1) - 2 in all), thread
    # 0 of each reads w[j] and reads and writes d[j] once (the host's grid, depth 0, is `rec`)
    rd = "rec" + DEVICE
    grids = 2 ** (k + 1) - 2
    assert kernels[rd]["run"]["launches"] == grids
    assert sites(rd) == [("d[depth]", "read-write", grids, "measured"),
                         ("w[depth]", "read", grids, "measured")]
    per = [2 ** j if 1 <= j <= k else 0 for j in range(16)]
    assert arrays(rd)["d"]["counts"] == per and arrays(rd)["w"]["counts"] == per
    # ---- inc, launched by split's thread 0 on a (a[0], a[1]) and thread 1 on b + 2 (b[2],
    # b[3]): 2 grids; its p is in two allocations of 4 ints, decoded one at a time and summed
    # element by element as a host kernel's launches on two arrays of one size are: 1 1 1 1
    ic = "inc" + DEVICE
    assert kernels[ic]["run"]["launches"] == 2
    assert sites(ic) == [("p[threadIdx.x]", "read-write", 4, "measured")]
    assert arrays(ic)["p"]["counts"] == [1, 1, 1, 1]
    assert (arrays(ic)["p"]["reads"], arrays(ic)["p"]["writes"]) == (4, 4)
    host = {x["name"]: x["counts"] for x in kernels["rec"]["arrays"]}
    assert host["d"] == host["w"] == [1] + [0] * 15  # the host's grid: depth 0 only
    # every device-side launch ran a child copy: none is left to count as unprofiled
    (proc,) = doc["processes"]
    assert proc["device_launches"] == []


@pytest.fixture(scope="module")
def cpu_builds(tmp_path_factory, need_gxx):
    d = tmp_path_factory.mktemp("children")
    _build(d / "native", native=True)
    _build(d / "gmprof")
    return d


@pytest.mark.parametrize("k", [2, 4])
def test_children_counted_by_hand_on_the_cpu_backend(cpu_builds, k):
    """A parent launching a child over sub-ranges of its arrays (with a device function and a
    shared array), a child given memory outside them, and a kernel launching itself to depth k:
    the output is unchanged, each child's counts per element and per site are the hand-derived
    ones, and the recursion's in closed form for two depths."""
    _check(cpu_builds, k)


def test_the_run_document_of_children_reads_back(cpu_builds):
    """`gmprof report --json` keeps a child's entry (its shape [0, 0, 0]: not recorded), and
    the document is read back and rendered again (run.schema.json allows that shape)."""
    from conftest import gmprof

    d = cpu_builds / "gmprof"
    _run(d, 2, "rd.json")
    (d / "run.json").write_text(gmprof("report", "--json", "rd.json", cwd=d).stdout)
    out = gmprof("report", "run.json", cwd=d).stdout
    assert "kernel rec (launched from the device): 6 launches, launched from the device " \
        "(shapes not recorded)" in " ".join(out.split())  # 2 + 4 grids at depths 1 and 2


def test_a_child_no_kernel_was_expected_to_launch_runs_into_a_sink(cpu_builds):
    """Should the analysis miss a path from a kernel to a child's launch (a test variable
    pretends it missed every one), the child's grids run their copies into a sink, never
    through a null description: the output is unchanged, no child entry is reported, and a note
    says how many grids went uncounted."""
    d = cpu_builds / "gmprof"
    r = subprocess.run(["./ch", "2"], cwd=d, capture_output=True, text=True,
                       env=env(GMPROF_OUTPUT="sink.json", GMPROF_TEST_CHILD_SINKS="1"))
    assert r.returncode == 0 and r.stdout == _expected_output(2), r.stderr
    doc = report_json(d, "sink.json")
    assert not [k for k in doc["kernels"] if k.endswith(DEVICE)]
    notes = "\n".join(doc["notes"])
    # scale: 3 grids, far: 1, inc: 2, rec: 2 + 4 (depth 2)
    for n, k in ((3, "scale"), (1, "far"), (2, "inc"), (6, "rec")):
        assert f"{n} grid(s) of {k} were launched from the device by a kernel gmprof did not " \
            "expect to launch it" in notes, notes


@pytest.mark.gpu
@pytest.mark.parametrize("k", [2, 4])
def test_children_counted_by_hand_on_gpu(tmp_path, k):
    _build(tmp_path / "native", native=True, gpu=True)
    _build(tmp_path / "gmprof", gpu=True)
    _check(tmp_path, k, gpu=True)


def _translate(tmp_path, text, **mode):
    from gmprof.mode import Mode
    from gmprof.program.translate import translate

    f = tmp_path / "t.cu"
    f.write_text(text)
    return translate(f, mode=Mode(**mode), cpu=False)


def test_nvcc_compiles_the_child_copies(tmp_path):
    """The translation, with the child copies and gmprof.cuh's second pass, compiles with
    `nvcc -arch=sm_90 -rdc=true` (the GPU build of the program above)."""
    if shutil.which("nvcc") is None:
        pytest.skip("needs nvcc")
    t = _translate(tmp_path, PROGRAM)
    ns = f"__gmprof_{t.module_id}_dp"
    assert f"::{ns}::scale<<<2, 4>>>(out + 8 * threadIdx.x, in + 8 * threadIdx.x, 6, " \
        "::gmprof::child_desc(" in t.text
    assert f"::{ns}::rec<<<1, 4>>>(d, w, depth + 1, k, ::gmprof_dp::child_desc(" in t.text
    (tmp_path / "t_gm.cu").write_text(t.text)
    p = subprocess.run(["nvcc", "-arch=sm_90", "-rdc=true", "-c", "t_gm.cu", "-o", "t.o"],
                       cwd=tmp_path, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr


@pytest.mark.parametrize("text, mode, why", [
    # defined after the parent that launches it (declared before): its child copy would not
    # be declared at the launch
    ("__global__ void child(int *p);\n"
     "__global__ void parent(int *p) { p[0] = 1; child<<<1, 2>>>(p); }\n"
     "__global__ void child(int *p) { p[threadIdx.x] = 2; }\n", {}, "defined after"),
    # a template child: its specialisations are not named at the launch
    ("template <int N> __global__ void child(int *p) { p[threadIdx.x] = N; }\n"
     "__global__ void parent(int *p) { p[0] = 1; child<3><<<1, 2>>>(p); }\n", {}, "template"),
    # per-warp statistics (and live ranges, sampling): not in the child copies' runtime
    ("__global__ void child(int *p) { p[threadIdx.x] = 2; }\n"
     "__global__ void parent(int *p) { p[0] = 1; child<<<1, 2>>>(p); }\n", {"warps": True},
     "access stats"),
])
def test_children_gmprof_cannot_profile_keep_the_original(tmp_path, text, mode, why):
    """Such a child runs the original kernel, unprofiled, and its launches are counted, as
    before (the report says how many ran unprofiled)."""
    t = _translate(tmp_path, text, **mode)
    assert "(::gmprof::count_device_launch(0)), ::child" in t.text, why
    assert "_dp::child" not in t.text, why
    assert "__gmprof_children" not in t.text, why


def test_children_are_laid_out_with_the_kernels_that_may_launch_them(tmp_path):
    """The host lays a child out only with the groups of kernels from which a chain of calls
    may reach its launch (ChildKernelDesc.parents): here `parent` through a file-scope table of
    function pointers (`go` launches it), not `other`, which reaches nothing."""
    t = _translate(tmp_path,
                   "__global__ void child(int *p) { p[threadIdx.x] = 1; }\n"
                   "__device__ void go(int *p) { child<<<1, 2>>>(p); }\n"
                   "__device__ void stay(int *p) { p[0] = 2; }\n"
                   "typedef void (*fn_t)(int *);\n"
                   "__device__ fn_t table[] = {go, stay};\n"
                   "__global__ void parent(int *p, int i) { table[i](p); }\n"
                   "__global__ void other(int *p) { p[1] = 3; }\n")
    assert '__gmprof_children[] = {{"child", 1, __gmprof_dp_objects_0, "parent\\n"}};' in t.text
