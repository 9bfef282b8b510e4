"""Small whole programs on the CPU backend: the emulated CUDA runtime (memory, symbols, managed
memory, streams, events, properties, errors), kernel and host printf in order, faults as sticky
errors, calls outside the subset as plain errors, `gmprof run --check`."""
from __future__ import annotations

import json

import pytest

from conftest import env, gmprof, report_json

RUNTIME = r"""
#include <cstdio>
#include <vector>
__constant__ int table[4];
__device__ int counter;
template <class T>
__global__ void axpy(T *y, const T *x, T a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
__global__ void use_table(int *out) {
  out[threadIdx.x] = table[threadIdx.x % 4];
  atomicAdd(&counter, 1);
  if (threadIdx.x == 0) printf("kernel says %d\n", table[1]);
}
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
  printf("%s failed: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)
int main() {
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
  printf("sm %d.%d, warp %d\n", p.major, p.minor, p.warpSize);
  const int n = 100;
  float *x, *y;
  CK(cudaMallocManaged(&x, n * sizeof(float)));
  CK(cudaMalloc(&y, n * sizeof(float)));
  for (int i = 0; i < n; ++i) x[i] = i;
  CK(cudaMemset(y, 0, n * sizeof(float)));
  cudaStream_t s; CK(cudaStreamCreate(&s));
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  CK(cudaEventRecord(a, s));
  axpy<<<(n + 31) / 32, 32, 0, s>>>(y, x, 2.0f, n);   // deduced template arguments
  axpy<float><<<(n + 31) / 32, 32, 0, s>>>(y, x, 1.0f, n);
  CK(cudaEventRecord(b, s));
  CK(cudaStreamSynchronize(s));
  float ms; CK(cudaEventElapsedTime(&ms, a, b));
  std::vector<float> h(n);
  CK(cudaMemcpyAsync(h.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost, s));
  printf("y[7] = %g\n", h[7]);
  int t[4] = {10, 20, 30, 40}, *out, c = 0, back[4];
  CK(cudaMemcpyToSymbol(table, t, sizeof t));
  CK(cudaMemcpyFromSymbol(back, table, sizeof back));
  CK(cudaMalloc(&out, 8 * sizeof(int)));
  printf("before\n");
  use_table<<<1, 8>>>(out);
  CK(cudaDeviceSynchronize());
  printf("after\n");
  CK(cudaMemcpyFromSymbol(&c, counter, sizeof c));
  printf("counter %d, back %d\n", c, back[3]);
  std::printf("std::printf works\n");
  CK(cudaFree(out)); CK(cudaFree(y)); CK(cudaFree(x));
  return 0;
}
"""


@pytest.fixture(scope="module")
def runtime_program(tmp_path_factory, need_gxx):
    d = tmp_path_factory.mktemp("rt")
    (d / "rt.cu").write_text(RUNTIME)
    gmprof("nvcc", "rt.cu", "-o", "rt", cwd=d)
    return d


def test_runtime_subset(runtime_program):
    import subprocess

    d = runtime_program
    p = subprocess.run([str(d / "rt")], cwd=d, env=env(GMPROF_OUTPUT=d / "r.json"),
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.splitlines() == [
        "sm 9.0, warp 32", "y[7] = 21", "before", "kernel says 20", "after",
        "counter 8, back 40", "std::printf works"]
    rep = report_json(d, d / "r.json")
    # both launches of axpy<float> are profiled, the deduced one too (gmprof/program/
    # instances.py); each of the 100 threads i < n reads x[i] and y[i] and writes y[i]
    assert rep["kernels"]["axpy<float>"]["run"]["launches"] == 2
    assert rep["processes"][0]["launches"] == 3
    arrays = {a["name"]: a for a in rep["kernels"]["axpy<float>"]["arrays"]}
    assert arrays["x"]["reads"] == 200 and arrays["y"]["reads"] == 200
    assert arrays["y"]["writes"] == 200
    table = {a["name"]: a for a in rep["kernels"]["use_table"]["arrays"]}
    assert table["table"]["reads"] == 9  # 8 threads, and thread 0's printf
    assert table["counter"]["accesses"] == 8


FAULT = r"""
#include <cstdio>
__global__ void bad(int *p) { p[threadIdx.x] = 1; }
int main() {
  int *p = nullptr;
  bad<<<1, 4>>>(p);
  cudaError_t e = cudaDeviceSynchronize();
  printf("sync: %s\n", cudaGetErrorName(e));
  printf("later: %s\n", cudaGetErrorName(cudaMalloc(&p, 16)));
  return e == cudaSuccess ? 0 : 3;
}
"""


def test_fault_is_a_sticky_error(tmp_path, need_gxx):
    import subprocess

    (tmp_path / "f.cu").write_text(FAULT)
    gmprof("nvcc", "f.cu", "-o", "f", cwd=tmp_path)
    p = subprocess.run([str(tmp_path / "f")], cwd=tmp_path,
                       env=env(GMPROF_OUTPUT=tmp_path / "r.json"), capture_output=True, text=True)
    assert p.returncode == 3
    assert p.stdout.splitlines() == ["sync: cudaErrorIllegalAddress",
                                     "later: cudaErrorIllegalAddress"]
    assert "kernel bad: invalid memory access in block (0,0,0) thread (" in p.stderr


def test_call_outside_subset_is_a_plain_error(tmp_path, need_gxx):
    (tmp_path / "u.cu").write_text(
        "int main() {\n  cudaArray_t a;\n  cudaMallocArray(&a, nullptr, 4, 4);\n  return 0;\n}\n")
    p = gmprof("nvcc", "u.cu", "-o", "u", cwd=tmp_path, check=False)
    assert p.returncode != 0
    assert "u.cu:2:" in p.stderr and "cudaArray_t is not part of the CUDA runtime subset" in \
        p.stderr
    assert "Traceback" not in p.stderr


CUDA_H = r"""#include <cuda.h>
#include <cstdio>
__global__ void k(int *a) { a[threadIdx.x] = 1; }
int main() {
  CUresult r = CUDA_SUCCESS;
  CUdeviceptr unused = 0;
  int *a;
  cudaMalloc(&a, 32 * sizeof(int));
  k<<<1, 32>>>(a);
  cudaDeviceSynchronize();
  printf("%d %d %d\n", (int)r, (int)unused, CUDA_VERSION >= 9000);
  return 0;
}
"""


def test_cuda_h_for_runtime_api_programs(tmp_path, need_gxx):
    """<cuda.h> with the runtime API only (Rodinia's programs) builds and runs; a call into the
    driver API is a plain error at the call."""
    import subprocess

    (tmp_path / "d.cu").write_text(CUDA_H)
    gmprof("nvcc", "d.cu", "-o", "d", cwd=tmp_path)
    p = subprocess.run([str(tmp_path / "d")], cwd=tmp_path,
                       env=env(GMPROF_OUTPUT=tmp_path / "r.json"), capture_output=True, text=True)
    assert (p.returncode, p.stdout) == (0, "0 0 1\n"), p.stderr
    (tmp_path / "e.cu").write_text("#include <cuda.h>\nint main() {\n  CUdevice d;\n"
                                   "  cuInit(0); cuDeviceGet(&d, 0);\n  return 0;\n}\n")
    p = gmprof("nvcc", "-c", "e.cu", cwd=tmp_path, check=False)
    assert p.returncode != 0 and "Traceback" not in p.stderr
    assert p.stderr.startswith("e.cu:4:9: error: cuInit is part of CUDA's driver API, which the "
                               "CPU backend does not emulate"), p.stderr


def test_host_objects_and_glued_libraries(tmp_path, need_gxx):
    """`-c host.c -o host.o` compiles (it does not link); glued `-lm`, `-lgomp` link, and the
    CUDA runtime's own `-lcudart` is the emulation's."""
    import subprocess

    (tmp_path / "host.c").write_text("#include <math.h>\n"
                                     "double host_root(double x) { return sqrt(x); }\n")
    (tmp_path / "main.cu").write_text(
        "#include <cstdio>\nextern \"C\" double host_root(double);\n"
        "int main() { printf(\"%g\\n\", host_root(16.0)); return 0; }\n")
    gmprof("nvcc", "-c", "host.c", "-o", "host.o", cwd=tmp_path)
    assert (tmp_path / "host.o").read_bytes()[:4] == b"\x7fELF"
    # e_type 1: a relocatable object, not an executable
    assert (tmp_path / "host.o").read_bytes()[16] == 1
    gmprof("nvcc", "main.cu", "host.o", "-lm", "-lgomp", "-lcudart", "-o", "app", cwd=tmp_path)
    p = subprocess.run([str(tmp_path / "app")], capture_output=True, text=True,
                       env=env(GMPROF_OUTPUT=tmp_path / "r.json"))
    assert (p.returncode, p.stdout) == (0, "4\n"), p.stderr


def test_cuda_step_writes_the_host_cpp(tmp_path, need_gxx):
    """`nvcc -cuda k.cu` (Rodinia's nn runs it before its real build) writes k.cu.cpp.ii, the
    host C++ of the file: on the CPU backend, the C++ g++ compiles, preprocessed."""
    (tmp_path / "k.cu").write_text("#define SCALE 3\n"
                                   "__global__ void k(int *a) { a[threadIdx.x] *= SCALE; }\n")
    gmprof("nvcc", "-cuda", "k.cu", cwd=tmp_path)
    text = (tmp_path / "k.cu.cpp.ii").read_text()
    assert "a[threadIdx.x] *= 3;" in text and "SCALE" not in text.split("void k")[1]
    gmprof("nvcc", "-cuda", "k.cu", "-o", "other.ii", cwd=tmp_path)
    assert "*= 3;" in (tmp_path / "other.ii").read_text()


CHECK = r"""
#include <cstdio>
#include <cstdlib>
__global__ void k(int *a) { a[threadIdx.x] += threadIdx.x; }
int main(int argc, char **argv) {
  int *a; cudaMallocManaged(&a, 32 * sizeof(int));
  for (int i = 0; i < 32; ++i) a[i] = i;
  k<<<1, 32>>>(a);
  cudaDeviceSynchronize();
  int s = 0; for (int i = 0; i < 32; ++i) s += a[i];
  printf("sum %d\n", s);
  if (argc > 1) printf("pid %d\n", (int)getpid());
  return 0;
}
"""


def test_run_check(tmp_path, need_gxx):
    src = tmp_path / "c.cu"
    src.write_text(CHECK.replace("#include <cstdlib>", "#include <cstdlib>\n#include <unistd.h>"))
    p = gmprof("run", "--check", src, cwd=tmp_path)
    assert "sum 992" in p.stdout and "check passed" in p.stderr
    assert "kernel k" in p.stdout
    # a line that differs between the runs fails the check, unless ignored
    p = gmprof("run", "--check", src, "--", "x", cwd=tmp_path, check=False)
    assert p.returncode == 1 and "check failed" in p.stderr
    p = gmprof("run", "--check", "--check-ignore", "^pid ", src, "--", "x", cwd=tmp_path)
    assert "check passed" in p.stderr


def test_run_usage_errors(tmp_path):
    for args, text in ((["run"], "needs at least one source"),
                       (["run", "missing.cu"], "missing.cu: no such file"),
                       (["run", "-c", "x", "a.cu"], "expected a non-negative integer"),
                       (["nvcc", "--gmprof-mode", "trace", "a.cu"], "trace is for single"),
                       (["nvcc", "--gmprof-nope", "a.cu"], "unknown option --gmprof-nope")):
        p = gmprof(*args, cwd=tmp_path, check=False)
        assert p.returncode == 2, (args, p.stderr)
        assert text in p.stderr and "Traceback" not in p.stderr


TWO_KERNELS = r"""#include <cstdio>
__global__ void inc(int *a) { a[threadIdx.x] += 1; }
__global__ void dbl(int *a) { a[threadIdx.x] *= 2; }
int main() {
  int *a;
  cudaMallocManaged(&a, 32 * sizeof(int));
  for (int i = 0; i < 32; ++i) a[i] = i;
  for (int r = 0; r < 3; ++r) { inc<<<1, 32>>>(a); dbl<<<1, 16>>>(a); }
  cudaDeviceSynchronize();
  printf("%d %d\n", a[0], a[31]);
  return 0;
}
"""


def test_run_selection_output_and_saved_json(tmp_path, need_gxx):
    """gmprof run's -k/-s/-c pick launches as Nsight Compute's do; -o names the kept report
    files (%q{ENV}, %p); --json prints a gmprof.run/2 document that gmprof report re-renders."""
    src = tmp_path / "two.cu"
    src.write_text(TWO_KERNELS)
    # inc launches 3 times (32 threads), dbl 3 times (16 threads): skip 1, count 1 of dbl
    p = gmprof("run", "--json", "-k", "regex:^d", "-s", "1", "-c", "1", "-o",
               "kept-%q{TAG}-%p.json", src, cwd=tmp_path, TAG="t")
    # with --json the program's own output goes to standard error: a[0] = ((1*2+1)*2+1)*2 = 14
    # (the first 16 elements are doubled after each increment), a[31] = 31 + 3
    assert "14 34" in p.stderr
    doc = json.loads(p.stdout)
    assert doc["schema"] == "gmprof.run/2" and [k["kernel"] for k in doc["kernels"]] == ["dbl"]
    a = doc["kernels"][0]["arrays"][0]
    assert (a["reads"], a["writes"], doc["kernels"][0]["run"]["launches"]) == (16, 16, 1)
    assert doc["program"]["processes"][0]["launches"] == 6
    kept = list(tmp_path.glob("kept-t-*.json"))
    assert len(kept) == 1 and kept[0].name[7:-5].isdigit()
    saved = tmp_path / "run.json"
    saved.write_text(p.stdout)
    again = gmprof("report", saved, cwd=tmp_path)
    assert "kernel dbl" in again.stdout
    # the kept raw file decodes to the same kernels and counts
    raw = report_json(tmp_path, kept[0])
    assert raw["kernels"]["dbl"]["arrays"] == doc["kernels"][0]["arrays"]


def test_report_reads_one_saved_run_or_report_files(tmp_path, need_gxx):
    src = tmp_path / "two.cu"
    src.write_text(TWO_KERNELS)
    gmprof("nvcc", src, "-o", "two", cwd=tmp_path)
    import subprocess

    files = []
    for k in range(2):
        out = tmp_path / f"r{k}.json"
        assert subprocess.run([str(tmp_path / "two")], env=env(GMPROF_OUTPUT=out),
                              capture_output=True).returncode == 0
        files.append(out)
    text = gmprof("report", *files, cwd=tmp_path).stdout
    assert "kernel inc" in text and "per process and device" in text
    saved = tmp_path / "merged.json"
    saved.write_text(gmprof("report", "--json", *files, cwd=tmp_path).stdout)
    for args, msg in (([saved, saved], "reads one saved run"),
                      ([saved, files[0]], "reads one saved run"),
                      ([files[0], tmp_path / "nothing.json"], "no such file")):
        p = gmprof("report", *args, cwd=tmp_path, check=False)
        assert p.returncode == 2 and msg in p.stderr and "Traceback" not in p.stderr, p.stderr
