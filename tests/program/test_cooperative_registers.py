"""The copy of a kernel that can be launched cooperatively keeps the original's registers
(gmprof/program/registers.py): a program sizes a cooperative grid with the original kernel's
occupancy, so the copy must have at least its blocks per multiprocessor. Registers are read from
ptxas's own report (`-Xptxas -v`), not from gmprof; the GPU test runs such a grid."""
from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from conftest import env, gmprof, report_json

GPU = {"GMPROF_BACKEND": "gpu"}

# one body, three kernels: launched cooperatively (grid barrier), with __launch_bounds__ and a
# grid barrier, and plainly (no barrier: its copy is not capped, and needs more registers)
BODY = """
  extern __shared__ double sdata[];
  double acc = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    acc += in[i] * w[i % 7] + in[(i * 3) % n];
  sdata[threadIdx.x] = acc;
  __syncthreads();
  block_sum(sdata);
  if (threadIdx.x == 0) part[blockIdx.x] = sdata[0];
  SYNC;
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    double t = 0;
    for (int b = 0; b < gridDim.x; ++b) t += part[b];
    *out = t;
  }
}
"""
HEAD = "(const float *in, const float *w, double *part, double *out, int n) {"
KERNELS = r"""
#include <cstdio>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__device__ void block_sum(double *s) {
  for (int k = blockDim.x / 2; k > 0; k /= 2) {
    if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
    __syncthreads();
  }
}
""" + "__global__ void coop" + HEAD + BODY.replace("SYNC", "cg::this_grid().sync()") + \
    "__global__ void __launch_bounds__(256) bounded" + HEAD + \
    BODY.replace("SYNC", "cg::this_grid().sync()") + \
    "__global__ void plain" + HEAD + BODY.replace("SYNC", "__threadfence()")

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None or shutil.which("c++filt") is None,
                                reason="needs nvcc and c++filt")


def _registers(report: str) -> dict:
    """ptxas's report (-v) or nvlink's (-v: the final counts under -rdc=true, callees included)
    -> {(kernel, is the copy): registers}."""
    out, current = {}, None
    for line in report.splitlines():
        m = re.search(r"(?:Compiling entry function|nvlink info +: Function properties for) "
                      r"'(_Z(N19__gmprof_\w{10})?\d+(\w+?)E?P\w*)'", line)
        if m:
            current = (m.group(3), m.group(2) is not None)
        m = re.search(r"[Uu]sed (\d+) registers", line)
        if m and current is not None:
            out[current] = int(m.group(1))
            current = None
    return out


def _blocks_per_sm(registers: int, threads: int) -> int:
    """Blocks a multiprocessor of sm_90 holds by registers and threads alone: 65536 registers,
    allocated per warp in units of 256 (8 a thread), at most 2048 threads and 32 blocks."""
    warps = -(-threads // 32)
    per_warp = -(-registers // 8) * 8 * 32
    return min(65536 // (warps * per_warp), 2048 // threads, 32)


@needs_nvcc
@pytest.mark.parametrize("rdc", [False, True])
def test_copy_of_cooperative_kernel_keeps_the_originals_registers(tmp_path, rdc):
    """Whole-program compile (ptxas's counts are final), and -rdc=true linked (nvlink's are:
    the copy's out-of-line counting functions are only added to its count there)."""
    (tmp_path / "k.cu").write_text(KERNELS + "int main() { return 0; }\n")
    step = ["-rdc=true", "-Xnvlink", "-v", "-o", "k"] if rdc else \
        ["-Xptxas", "-v", "-c", "-o", "k.o"]
    p = gmprof("nvcc", "-arch=sm_90", "-O2", "k.cu", *step, cwd=tmp_path, **GPU)
    regs = _registers(p.stdout + p.stderr)
    assert set(regs) == {(k, c) for k in ("coop", "bounded", "plain") for c in (False, True)}, regs
    if not rdc:
        # the plain kernel shows what instrumentation costs without a cap (its copy needs more)
        assert regs["plain", True] > regs["plain", False], regs
    # the cooperative one's copy: __maxnreg__ of the original's count (the same body)
    assert regs["coop", True] <= regs["coop", False], regs
    assert _blocks_per_sm(regs["coop", True], 1024) >= _blocks_per_sm(regs["coop", False], 1024)
    # with __launch_bounds__(256): at least the original's blocks of 256 threads
    assert _blocks_per_sm(regs["bounded", True], 256) >= \
        _blocks_per_sm(regs["bounded", False], 256), regs
    assert "warning" not in p.stderr, p.stderr


@needs_nvcc
def test_cooperative_launch_by_name_only_is_capped_and_a_build_error_drops_the_caps(tmp_path):
    """A kernel with no grid barrier of its own but launched cooperatively is capped too; one
    whose __launch_bounds__ a macro hides cannot take __maxnreg__: the file is built again
    without caps (a warning), still instrumented."""
    text = KERNELS.replace("cg::this_grid().sync()", "__threadfence()").replace(
        "__launch_bounds__(256)", "BOUNDS") + r"""
void go(const float *in, const float *w, double *part, double *out, int n) {
  void *args[] = {&in, &w, &part, &out, &n};
  cudaLaunchCooperativeKernel((void *)coop, 2, 256, args, 256 * sizeof(double), 0);
}
"""
    (tmp_path / "k.cu").write_text("#define BOUNDS\n" + text)
    p = gmprof("nvcc", "-arch=sm_90", "-O2", "--resource-usage", "-c", "k.cu", "-o", "k.o",
               cwd=tmp_path, **GPU)
    regs = _registers(p.stdout + p.stderr)
    assert regs["coop", True] <= regs["coop", False] < regs["plain", True], regs
    assert "warning" not in p.stderr, p.stderr
    (tmp_path / "m.cu").write_text("#define BOUNDS __launch_bounds__(256)\n" + text.replace(
        "(void *)coop", "(void *)bounded"))
    p = gmprof("nvcc", "-arch=sm_90", "-O2", "--resource-usage", "-c", "m.cu", "-o", "m.o",
               cwd=tmp_path, **GPU)
    assert "built without them" in p.stderr and "compiled as it was" not in p.stderr, p.stderr
    assert ("bounded", True) in _registers(p.stdout + p.stderr)


FULL_GRID = KERNELS.replace("__global__ void __launch_bounds__(256) bounded", "__global__ void "
                            "bounded") + r"""
int main() {
  const int n = 100000, threads = 1024;  // n % 3 != 0: i -> 3i mod n is a permutation
  int per_sm = 0, sms = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, coop, threads, threads * sizeof(double));
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  int blocks = per_sm * sms;
  float *in, *w;
  double *part, *out;
  cudaMallocManaged(&in, n * sizeof(float));
  cudaMallocManaged(&w, 7 * sizeof(float));
  cudaMallocManaged(&part, blocks * sizeof(double));
  cudaMallocManaged(&out, sizeof(double));
  for (int i = 0; i < n; ++i) in[i] = 1.0f;
  for (int k = 0; k < 7; ++k) w[k] = 1.0f;
  int nn = n;
  void *args[] = {&in, &w, &part, &out, &nn};
  cudaError_t e = cudaLaunchCooperativeKernel((void *)coop, blocks, threads, args,
                                              threads * sizeof(double), 0);
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  printf("%s %d %d %.0f\n", cudaGetErrorName(e), per_sm, blocks, *out);
  return 0;
}
"""


@pytest.mark.gpu
def test_full_grid_cooperative_launch_of_capped_copy_is_profiled(tmp_path):
    """Grid = SMs x the original's blocks per SM of 1024 threads (2 on an H100: 30-odd
    registers); the copy uncapped needs 40-odd (1 block per SM) and ran unprofiled."""
    from gmprof.report import countcodec

    (tmp_path / "full.cu").write_text(FULL_GRID)
    gmprof("nvcc", "-arch=sm_90", "-O2", "full.cu", "-o", "full", cwd=tmp_path, **GPU)
    p = subprocess.run([str(tmp_path / "full")], cwd=tmp_path, capture_output=True, text=True,
                       env=env(**GPU, GMPROF_OUTPUT=tmp_path / "r.json"))
    status, per_sm, blocks, total = p.stdout.split()
    # every element adds in[i] * w[i % 7] + in[3i mod n] = 2
    assert p.returncode == 0 and status == "cudaSuccess" and total == str(2 * 100000), p.stdout
    assert int(per_sm) >= 2, p.stdout  # the case this guards: more than one block per SM
    n, blocks = 100000, int(blocks)
    rep = report_json(tmp_path, tmp_path / "r.json")
    assert rep["processes"][0]["profiled"] == 1, rep["doc"]["program"]["notes"]
    arrays = {x["name"]: x for x in rep["kernels"]["coop"]["arrays"] if x["space"] == "device"}
    # in: in[i] and in[3i mod n] for each i < n (a permutation): 2 reads per element
    assert (arrays["in"]["reads"], arrays["in"]["writes"]) == (2 * n, 0)
    # (n counters come packed: gmprof/report/countcodec.py)
    assert (countcodec.decode(arrays["in"]["counts"]) == 2).all()
    assert len(countcodec.decode(arrays["in"]["counts"])) == n
    # w[i % 7] for each i < n: element r read once per i = r, r + 7, ... below n
    assert arrays["w"]["counts"] == [len(range(r, n, 7)) for r in range(7)]
    # part: one write per block (its thread 0), one read of each by block 0's thread 0
    assert (arrays["part"]["reads"], arrays["part"]["writes"]) == (blocks, blocks)
    assert (arrays["out"]["reads"], arrays["out"]["writes"]) == (0, 1)


SHARED_THROUGH_POINTER = r"""
#include <cstdio>
__device__ void block_sum(int *s) {
  for (int k = blockDim.x / 2; k > 0; k /= 2) {
    if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
    __syncthreads();
  }
}
__global__ void sums(const int *a, const int *b, int *out) {
  __shared__ int s[64];
  s[threadIdx.x] = a[blockIdx.x * 64 + threadIdx.x] + b[threadIdx.x];
  __syncthreads();
  block_sum(s);
  if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}
int main() {
  int *a, *b, *out;
  cudaMallocManaged(&a, 128 * sizeof(int));
  cudaMallocManaged(&b, 64 * sizeof(int));
  cudaMallocManaged(&out, 2 * sizeof(int));
  for (int i = 0; i < 128; ++i) a[i] = 1;
  for (int i = 0; i < 64; ++i) b[i] = 1;
  sums<<<2, 64>>>(a, b, out);
  cudaDeviceSynchronize();
  printf("%d %d\n", out[0], out[1]);
  return 0;
}
"""


def test_shared_bases_table_only_as_long_as_the_shared_slots(tmp_path, need_gxx):
    """A device function reaches a shared array through a pointer: the kernel registers the
    array's base in a shared table, which has one entry per slot up to the last shared one
    (a, b, out, s: 4 entries, 32 bytes, not 64 x 8 of every block's shared memory), and the
    function's accesses are still counted in s."""
    from gmprof.mode import Mode
    from gmprof.program.translate import translate

    (tmp_path / "sb.cu").write_text(SHARED_THROUGH_POINTER)
    t = translate(tmp_path / "sb.cu", mode=Mode.parse("default"))
    assert "#define GMPROF_SHARED_BASES 4\n" in t.text
    p = gmprof("run", "--json", "sb.cu", cwd=tmp_path)
    assert "128 128" in p.stderr, p.stderr  # each block: 64 x (1 + 1)
    (kernel,) = json.loads(p.stdout)["kernels"]
    a = {x["name"]: x for x in kernel["arrays"]}
    # per block: 64 writes s[t] = ..., then block_sum's k = 32, 16, ..., 1 (63 in all) threads
    # each read 2 and write 1; thread 0 reads s[0] once more: writes 64 + 63, reads 2 x 63 + 1
    assert (a["s"]["reads"], a["s"]["writes"]) == (2 * 127, 2 * 127)
    # per word w and block (a read-modify-write is one access, docs/oracle.md): its first
    # write, one s[w] += ... per k > w, one read as s[t + k] per k <= w < 2k, and s[0] at the end
    ks = [32, 16, 8, 4, 2, 1]
    assert a["s"]["counts"] == [2 * (1 + sum(w < k for k in ks) + sum(k <= w < 2 * k for k in ks)
                                     + (w == 0)) for w in range(64)]


def test_occupancy_cap_by_hand():
    """sm_90: 64K registers, a warp's allocated 256 at a time, at most 64 warps and 32 blocks a
    SM. Up to 32 registers every block size has full occupancy: the cap is 32. 33-40 registers
    allocate 40 a thread (1,280 a warp) and 41 would allocate 48: fewer blocks of 1 warp
    (65536 / 1280 = 51 -> 32 either way) but of 2 warps 25 against 21: the cap is 40."""
    from gmprof.program.registers import occupancy_cap

    assert occupancy_cap(24, 900) == 32
    assert occupancy_cap(33, 900) == 40
    assert occupancy_cap(44, 900) == 48
    assert occupancy_cap(44, 1200) == 44  # an architecture without a table: the original's


@needs_nvcc
def test_every_copy_capped_at_the_occupancy_preserving_count(tmp_path):
    """GMPROF_REGISTER_CAP=occupancy: the plain kernel's copy, which needs more registers than
    the original uncapped, gets no more than occupancy_cap of the original's (ptxas's counts)."""
    from gmprof.program.registers import occupancy_cap

    (tmp_path / "k.cu").write_text(KERNELS + "int main() { return 0; }\n")
    p = gmprof("nvcc", "-arch=sm_90", "-O2", "k.cu", "-Xptxas", "-v", "-c", "-o", "k.o",
               cwd=tmp_path, GMPROF_REGISTER_CAP="occupancy", **GPU)
    regs = _registers(p.stdout + p.stderr)
    for k in ("coop", "bounded", "plain"):
        assert regs[k, True] <= max(occupancy_cap(max(regs[k, False], 24), 900), 24), regs
    assert "warning" not in p.stderr, p.stderr
