"""Whole programs on a GPU (marked gpu: skipped without one; the integrator runs them on the H100
and, for the two-GPU test, on a 2-GPU H200): samples/app_stencil built with
`make NVCC="gmprof nvcc"` against the real nvcc, its output unchanged and its report equal to
`gmprof profile` on the same launch and to the numpy model; two instrumented files linked with
-rdc=true; two processes merged; one process on two GPUs merged per device."""
from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from conftest import APP, env, gmprof, report_json
from stencil_model import stencil_counts

pytestmark = pytest.mark.gpu

GPU = {"GMPROF_BACKEND": "gpu"}


def _make(d, nvcc, **extra):
    p = subprocess.run(["make", f"NVCC={nvcc}", "NVCCFLAGS=-O2 -arch=sm_90"], cwd=d,
                       env=env(**GPU, **extra), capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr


def _copy_app(d):
    d.mkdir()
    for f in APP.iterdir():
        if f.is_file():
            shutil.copy(f, d / f.name)
    return d


def _run(d, exe, *args, **extra):
    return subprocess.run([str(d / exe), *map(str, args)], cwd=d, env=env(**GPU, **extra),
                          capture_output=True, text=True)


@pytest.fixture(scope="module")
def gpu_app(tmp_path_factory):
    from conftest import GMPROF

    base = tmp_path_factory.mktemp("gpuapp")
    native = _copy_app(base / "native")
    _make(native, "nvcc")
    inst = _copy_app(base / "gmprof")
    _make(inst, f"{GMPROF} nvcc")
    return native, inst


def test_app_output_unchanged_and_report_equals_profile(gpu_app):
    from gmprof.mode import Mode
    from gmprof.report.render import to_json
    from gmprof.runtime.session import Profiler

    native, inst = gpu_app
    want = _run(native, "app_stencil", 40, 24, 3)
    out = inst / "r.json"
    got = _run(inst, "app_stencil", 40, 24, 3, GMPROF_KERNEL="stencil", GMPROF_LAUNCH_COUNT=1,
               GMPROF_OUTPUT=out)
    assert (got.returncode, got.stdout) == (want.returncode, want.stdout) == (0, want.stdout)
    whole = report_json(inst, out)["kernels"]["stencil"]
    a = np.random.default_rng(0).random(40 * 24).astype(np.float32)
    single = Profiler(inst / "kernels.cu", backend="gpu").launch(
        "stencil", (3, 2), (16, 16), [a, np.zeros_like(a), np.int32(40), np.int32(24)],
        mode=Mode.parse("default"))
    ref = to_json(single, include_counts=True)
    model = stencil_counts(40, 24)
    for g, w in zip(whole["arrays"], ref["arrays"]):
        for key in ("name", "accesses", "reads", "writes", "min", "max", "out_of_range",
                    "counters"):
            assert g[key] == w[key], (g["name"], key)
        r, wr = model[g["name"]]
        assert g["reads"] == r.sum() and g["writes"] == wr.sum()


def test_two_processes_merge_on_gpu(gpu_app):
    _, inst = gpu_app
    files = []
    for k in range(2):
        out = inst / f"p{k}.json"
        assert _run(inst, "app_stencil", 40, 24, 1 + k, GMPROF_KERNEL="stencil",
                    GMPROF_OUTPUT=out).returncode == 0
        files.append(out)
    rep = report_json(inst, *files)
    st = rep["kernels"]["stencil"]
    assert st["run"]["launches"] == 3
    one = stencil_counts(40, 24)
    assert {a["name"]: a["accesses"] for a in st["arrays"]} == \
        {n: 3 * int((r + w).sum()) for n, (r, w) in one.items()}
    assert len({b["pid"] for b in rep["breakdown"]}) == 2


PART = r"""
__device__ int {name}_helper(int x) {{ return x + {add}; }}
__global__ void {name}(int *a, int n) {{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = {name}_helper(a[i]);
}}
void launch_{name}(int *a, int n) {{ {name}<<<(n + 63) / 64, 64>>>(a, n); }}
"""

MAIN = r"""#include <cstdio>
void launch_inc(int *a, int n);
void launch_dec(int *a, int n);
int main() {
  const int n = 200;
  int h[n], *d;
  for (int i = 0; i < n; ++i) h[i] = i;
  cudaMalloc(&d, sizeof h);
  cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
  launch_inc(d, n);
  launch_inc(d, n);
  launch_dec(d, n);
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  printf("%d %d\n", h[0], h[199]);
  return 0;
}
"""


def test_rdc_multi_file_links_and_reports(tmp_path):
    (tmp_path / "inc.cu").write_text(PART.format(name="inc", add=1))
    (tmp_path / "dec.cu").write_text(PART.format(name="dec", add=-3))
    (tmp_path / "main.cu").write_text(MAIN)
    for f in ("inc", "dec", "main"):
        gmprof("nvcc", "-rdc=true", "-arch=sm_90", "-c", f"{f}.cu", "-o", f"{f}.o",
               cwd=tmp_path, **GPU)
    gmprof("nvcc", "-rdc=true", "-arch=sm_90", "inc.o", "dec.o", "main.o", "-o", "app",
           cwd=tmp_path, **GPU)
    p = _run(tmp_path, "app", GMPROF_OUTPUT=tmp_path / "r.json")
    assert p.returncode == 0 and p.stdout == "-1 198\n"
    rep = report_json(tmp_path, tmp_path / "r.json")
    # 200 threads in range read and write their element once per launch
    for kernel, launches in (("inc", 2), ("dec", 1)):
        k = rep["kernels"][kernel]
        assert k["run"]["launches"] == launches
        a = {x["name"]: x for x in k["arrays"]}["a"]
        assert (a["reads"], a["writes"]) == (200 * launches, 200 * launches)


TWO_GPUS = r"""#include <cstdio>
__global__ void scale(float *a, int n, float s) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] *= s;
}
int main() {
  int count = 0;
  cudaGetDeviceCount(&count);
  if (count < 2) { printf("one GPU\n"); return 3; }
  const int n[2] = {1000, 3000};
  for (int dev = 0; dev < 2; ++dev) {
    cudaSetDevice(dev);
    float *d;
    cudaMalloc(&d, n[dev] * sizeof(float));
    cudaMemset(d, 0, n[dev] * sizeof(float));
    scale<<<(n[dev] + 255) / 256, 256>>>(d, n[dev], 2.0f);
    cudaDeviceSynchronize();
    cudaFree(d);
  }
  printf("done\n");
  return 0;
}
"""


def test_two_gpus_merge_per_device(tmp_path):
    cupy = pytest.importorskip("cupy")
    if cupy.cuda.runtime.getDeviceCount() < 2:
        pytest.skip("needs two GPUs")
    (tmp_path / "two.cu").write_text(TWO_GPUS)
    gmprof("nvcc", "-arch=sm_90", "two.cu", "-o", "two", cwd=tmp_path, **GPU)
    p = _run(tmp_path, "two", GMPROF_OUTPUT=tmp_path / "r.json")
    assert p.returncode == 0 and p.stdout == "done\n"
    rep = report_json(tmp_path, tmp_path / "r.json")
    a = {x["name"]: x for x in rep["kernels"]["scale"]["arrays"]}["a"]
    assert (a["reads"], a["writes"]) == (4000, 4000)
    # `a[i] *= s` is one read-write site: each execution counts one access on a[i] (and one
    # read and one write, docs/report.md), so each device's accesses are its n elements
    rows = sorted((b["device"].split(":")[0], b["accesses"]["a"]) for b in rep["breakdown"])
    assert rows == [("0", 1000), ("1", 3000)]


CAPTURE = r"""#include <cstdio>
__global__ void add(int *a, int v) { a[threadIdx.x] += v; }
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
  printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)
int main() {
  int *a;
  CK(cudaMalloc(&a, 32 * sizeof(int)));
  CK(cudaMemset(a, 0, 32 * sizeof(int)));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraph_t g;
  cudaGraphExec_t x;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  add<<<1, 32, 0, s>>>(a, 1);
  add<<<1, 32, 0, s>>>(a, 10);
  CK(cudaStreamEndCapture(s, &g));
  CK(cudaGraphInstantiate(&x, g, 0));
  for (int r = 0; r < 3; ++r) CK(cudaGraphLaunch(x, s));
  CK(cudaStreamSynchronize(s));
  add<<<1, 32, 0, s>>>(a, 100);
  int h[32];
  CK(cudaMemcpy(h, a, sizeof h, cudaMemcpyDeviceToHost));
  printf("%d %d\n", h[0], h[31]);
  return 0;
}
"""


def test_stream_capture_is_profiled_per_replay(tmp_path):
    """Launches made during a stream capture are captured as the program made them (nothing
    synchronises or reads back inside the capture: cuda-samples' simpleCudaGraphs failed with
    cudaErrorStreamCaptureInvalidated when it did); gmprof's copy of the graph, instantiated in
    its place, has each one's fill, instrumented launch and fold, so each replay of the graph is
    counted; the launch after the capture is profiled as usual."""
    (tmp_path / "cap.cu").write_text(CAPTURE)
    gmprof("nvcc", "-arch=sm_90", "cap.cu", "-o", "cap", cwd=tmp_path, **GPU)
    p = _run(tmp_path, "cap", GMPROF_OUTPUT=tmp_path / "r.json", GMPROF_GRAPHS=1)
    # three replays of +1, +10, then +100
    assert p.returncode == 0 and p.stdout == "133 133\n", p.stdout + p.stderr
    rep = report_json(tmp_path, tmp_path / "r.json")
    # 2 captured launches x 3 replays, and the launch after: 7 launches ran, all profiled
    assert rep["processes"][0]["launches"] == 7 and rep["processes"][0]["profiled"] == 7
    assert rep["processes"][0]["captured"] == {}
    assert rep["kernels"]["add"]["run"]["launches"] == 7
    a = rep["kernels"]["add"]["arrays"][0]
    # `a[threadIdx.x] += v`: 32 threads each read and write a[t] once per launch
    assert (a["reads"], a["writes"]) == (7 * 32, 7 * 32)


COOPERATIVE = r"""#include <cstdio>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void rotate(int *a, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  a[i] = i;
  cg::this_grid().sync();
  out[i] = a[(i + 1) % n];
}
int main() {
  const int n = 128;
  int *a, *out, h[n];
  cudaMalloc(&a, n * sizeof(int));
  cudaMalloc(&out, n * sizeof(int));
  int nn = n;
  void *args[] = {&a, &out, &nn};
  cudaError_t e = cudaLaunchCooperativeKernel((void *)rotate, dim3(2), dim3(64), args, 0, 0);
  cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
  printf("%s %d %d\n", cudaGetErrorName(e), h[0], h[127]);
  return 0;
}
"""


def test_cooperative_launch_is_profiled(tmp_path):
    """cudaLaunchCooperativeKernel is routed (cuda-samples' simpleAWBarrier and
    reductionMultiBlockCG were not seen at all): the instrumented copy is launched
    cooperatively, so its grid-wide barrier holds."""
    (tmp_path / "coop.cu").write_text(COOPERATIVE)
    gmprof("nvcc", "-arch=sm_90", "coop.cu", "-o", "coop", cwd=tmp_path, **GPU)
    p = _run(tmp_path, "coop", GMPROF_OUTPUT=tmp_path / "r.json")
    assert p.returncode == 0 and p.stdout == "cudaSuccess 1 0\n", p.stdout + p.stderr
    rep = report_json(tmp_path, tmp_path / "r.json")
    assert rep["processes"][0]["profiled"] == 1
    arrays = {x["name"]: (x["reads"], x["writes"]) for x in rep["kernels"]["rotate"]["arrays"]}
    # 128 threads: each writes a[i], then reads a[(i + 1) % n] and writes out[i]
    assert arrays == {"a": (128, 128), "out": (0, 128)}


FULL_GRID = r"""#include <cstdio>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void staged(int *a, int *out, int n) {
  extern __shared__ int s[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = i;
  a[i] = s[threadIdx.x];
  cg::this_grid().sync();
  out[i] = a[(i + 1) % n];
}
int main() {
  const size_t dyn = 100 * 1024;  // 2 blocks a multiprocessor fit natively, 1 with counters
  cudaFuncSetAttribute((const void *)staged, cudaFuncAttributeMaxDynamicSharedMemorySize,
                       (int)dyn);
  int per_sm = 0, sms = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, staged, 256, dyn);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  int blocks = per_sm * sms, n = blocks * 256;
  int *a, *out, last;
  cudaMalloc(&a, n * sizeof(int));
  cudaMalloc(&out, n * sizeof(int));
  void *args[] = {&a, &out, &n};
  cudaError_t e = cudaLaunchCooperativeKernel((void *)staged, dim3(blocks), dim3(256), args,
                                              dyn, 0);
  cudaMemcpy(&last, out + n - 1, sizeof last, cudaMemcpyDeviceToHost);
  printf("%s %d %d\n", cudaGetErrorName(e), n, last);
  return 0;
}
"""


def test_cooperative_full_grid_counts_in_device_memory(tmp_path):
    """A cooperative grid sized to the original kernel's occupancy (as reductionMultiBlockCG and
    simpleAWBarrier size theirs): counters in shared memory would leave too few blocks resident,
    so they go to device memory and the launch is profiled (it ran unprofiled before)."""
    (tmp_path / "full.cu").write_text(FULL_GRID)
    gmprof("nvcc", "-arch=sm_90", "full.cu", "-o", "full", cwd=tmp_path, **GPU)
    p = _run(tmp_path, "full", GMPROF_OUTPUT=tmp_path / "r.json")
    status, n, last = p.stdout.split()
    assert p.returncode == 0 and status == "cudaSuccess" and last == "0", p.stdout + p.stderr
    n = int(n)
    rep = report_json(tmp_path, tmp_path / "r.json")
    assert rep["processes"][0]["profiled"] == 1, rep["doc"]["program"]["notes"]
    arrays = {x["name"]: (x["reads"], x["writes"]) for x in rep["kernels"]["staged"]["arrays"]
              if x["space"] == "device"}
    # n threads: each writes a[i] once, reads a[(i + 1) % n] once, writes out[i] once
    assert arrays == {"a": (n, n), "out": (0, n)}
