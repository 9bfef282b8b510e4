"""Every profiling mode on the CPU backend against the trace (the oracle), plus launch errors
and the Python API. Expected counts come from the trace of every access, or by hand."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import gmprof
from gmprof.errors import ArgumentError, GmprofError
from gmprof.mode import Mode
from gmprof.runtime.samples import run_sample, sample_profiler
from gmprof.driver import load_sample

ROOT = Path(__file__).resolve().parents[2]
PAPER = ROOT / "tests" / "passes" / "kernels" / "paper.cu"


@pytest.fixture(scope="module")
def prof():
    return gmprof.api.profiler(PAPER, backend="cpu")


def matmul_args(n=32, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32),
            np.zeros((n, n), np.float32), np.int32(n)]


def launch(prof, mode, n=32):
    return prof.launch("matmul_tiled", (n // 16, n // 16), (16, 16), matmul_args(n), mode=mode)


@pytest.fixture(scope="module")
def traced(prof):
    return launch(prof, Mode.parse("trace"))


@pytest.mark.parametrize("mode", ["basic", "SA", "SM", "SA-SM", "NA", "NA-SM", "SA-NA",
                                  "SA-NA-SM", "default"])
def test_exact_and_na_modes_equal_the_trace(prof, traced, mode):
    r = launch(prof, Mode.parse(mode))
    for a in traced.arrays:
        np.testing.assert_array_equal(r.array(a.name).counts, a.counts, err_msg=f"{mode} {a.name}")
    assert r.run.outputs_identical
    # with SA the tiled product is entirely static (its formulas are proven: exact even
    # with NA); without SA every count comes from a non-atomic hook under NA
    label = "approximate" if "NA" in mode and "SA" not in mode else "exact"
    assert {a.label for a in r.arrays} == {label}


@pytest.mark.parametrize("bits,thr", [(32, 100), (16, 130), (8, 120)])
def test_threshold_saturates_and_is_labelled(prof, traced, bits, thr):
    # without SA: every count comes from a saturating counter (with SA the product is
    # entirely static, and static counts are exact and not capped)
    r = launch(prof, Mode.parse("SM-TH", threshold=thr, counter_bits=bits))
    for a in traced.arrays:
        got = r.array(a.name)
        np.testing.assert_array_equal(np.minimum(got.counts, thr), np.minimum(a.counts, thr),
                                      err_msg=f"{bits}-bit {a.name}")
        assert got.label == "thresholded" and got.threshold == thr
    shared = r.array("As")
    assert shared.saturated == shared.counters and shared.fmt(shared.max) == f">={thr}"


def test_basic_mode_counts_every_site_at_run_time(prof):
    r = launch(prof, Mode.parse("basic"))
    assert {s.how for s in r.sites} == {"measured"}
    d = launch(prof, Mode())
    assert {s.how for s in d.sites} == {"static"}  # the tiled product is entirely static
    assert [s.executions for s in r.sites] == [s.executions for s in d.sites]


def test_sampling_scales_counts_and_says_so(prof, traced):
    r = launch(prof, Mode.parse("SM", sampling=0.5), n=64)
    t = launch(prof, Mode.parse("trace"), n=64)
    for a in t.arrays:
        got = r.array(a.name)
        assert got.label == "sampled" and got.sampling == 0.5
        assert abs(got.accesses - a.accesses) / a.accesses < 0.05  # 2x scaling, ~n*n*k samples
    assert {s.how for s in r.sites} == {"sampled"}


def test_counters_fall_back_to_device_memory_when_shared_memory_is_full(prof):
    # 200 KB of dynamic shared memory leaves no room for the counters in one block's limit;
    # s[(int)s[t]] (= s[t]) is data-dependent, so the kernel has counters on the device (a
    # kernel counted entirely by formulas has none, test_hand_no_counters.py)
    src = ("__global__ void big(float *out) { extern __shared__ float s[]; "
           "s[threadIdx.x] = threadIdx.x; __syncthreads(); "
           "out[threadIdx.x] = s[(int)s[threadIdx.x]]; }")
    p = gmprof.api.profiler(src, backend="cpu")
    out = np.zeros(64, np.float32)
    r = p.launch("big", 1, 64, [out], shared_mem=227 * 1024 - 64, mode=Mode())
    assert r.run.counters_in == "device memory" and "exceed" in r.run.counters_why
    assert r.array("s").counts[:64].tolist() == [3] * 64  # written once, read twice
    np.testing.assert_array_equal(out, np.arange(64, dtype=np.float32))


def test_enhanced_mode_live_ranges_jacobi_v1_loaded_once_read_once():
    sample = load_sample(ROOT / "samples" / "jcb_v1")
    run = run_sample(sample, "small", mode=Mode(enhanced=True), backend="cpu")
    assert run.ok
    (report,) = run.reports.values()
    tile = report.array("otile")
    lr = tile.live_ranges
    assert lr["ranges"] > 0
    # the output tile: each word written once and read once per live range
    assert lr["accesses"] / lr["ranges"] == pytest.approx(2.0)
    v2 = run_sample(load_sample(ROOT / "samples" / "jcb_v2"), "small",
                    mode=Mode(enhanced=True), backend="cpu")
    (r2,) = v2.reports.values()
    lr2 = r2.array("itile").live_ranges
    assert lr2["accesses"] / lr2["ranges"] > 3.0  # the input tile is reused


# -- errors ---------------------------------------------------------------------------------

@pytest.mark.parametrize("call,kind,message", [
    (lambda p: p.launch("nope", 1, 1, []), "no-kernel", "'nope'"),
    (lambda p: p.launch("matmul_tiled", (0, 1), (16, 16), matmul_args()), "bad-option", "grid"),
    (lambda p: p.launch("matmul_tiled", 1, (64, 32), matmul_args()), "bad-option", "block"),
    (lambda p: p.launch("matmul_tiled", 1, 16, matmul_args()[:3]), "bad-argument",
     "matmul_tiled"),
    (lambda p: p.launch("matmul_tiled", 1, 16, [np.zeros(4, np.float64)] + matmul_args()[1:]),
     "bad-argument", "'A'"),
    (lambda p: p.launch("matmul_tiled", 1, 16, matmul_args()[:3] + [np.zeros(3)]),
     "bad-argument", "'N'"),
    (lambda p: p.launch("matmul_tiled", 1, 16, [1.0] + matmul_args()[1:]), "bad-argument",
     "'A'"),
    (lambda p: p.launch("matmul_tiled", 1, 16, matmul_args(), shared_mem=1 << 30), "bad-option",
     "shared"),
])
def test_launch_errors_have_a_kind_and_name_the_problem(prof, call, kind, message):
    with pytest.raises(GmprofError) as info:
        call(prof)
    assert info.value.kind == kind
    assert message in info.value.message  # the parameter or option at fault


def test_profile_api_and_rawkernel_leave_outputs_as_the_kernel_does():
    src = ("extern \"C\" __global__ void saxpy(float *y, const float *x, float a, int n) {"
           " int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }")
    n = 100
    x = np.arange(n, dtype=np.float32)
    y = np.ones(n, np.float32)
    report = gmprof.profile(src, "saxpy", grid=(4,), block=(32,), args=[y, x, 2.0, n],
                            backend="cpu")
    np.testing.assert_array_equal(y, 2 * x + 1)
    assert report.array("x").counts.tolist() == [1] * n
    assert report.array("y").reads == n and report.array("y").writes == n
    k = gmprof.RawKernel(src, "saxpy", device="cpu")
    y2 = np.ones(n, np.float32)
    k((4,), (32,), (y2, x, np.float32(2.0), np.int32(n)))
    k((4,), (32,), (y2, x, np.float32(2.0), np.int32(n)))
    np.testing.assert_array_equal(y2, 4 * x + 1)
    assert k.report.array("x").counts.tolist() == [2] * n and k.report.run.launches == 2


def test_template_kernel_through_a_name_expression():
    sample = load_sample(ROOT / "samples" / "matmul_tiled")
    prof = sample_profiler(sample, backend="cpu")
    n = 32
    a, b = np.ones((n, n), np.float32), np.full((n, n), 2, np.float32)
    c = np.zeros((n, n), np.float32)
    r = prof.launch("matmul_tiled<16>", (n // 16, n // 16), (16, 16),
                    [c, a, b, np.int32(n), np.int32(n), np.int32(n)])
    assert r.run.outputs_identical
    np.testing.assert_array_equal(c, np.full((n, n), 2 * n, np.float32))
    # each shared word: written once per tile and read 16 times per tile, in every block
    assert r.array("As").counts.tolist() == [(n // 16) ** 3 * 17] * 256


LOCAL_THROUGH_POINTER = r"""
struct Pair { int lo[2]; int hi[2]; };
__device__ int pick(const Pair *p, const int *t, int k)
{
    // p points to the caller's local struct: local memory, not profiled; t is a device pointer
    // chosen by a condition, which gmprof resolves by address at run time
    return p->lo[k] + p->hi[k] + t[threadIdx.x];
}
__global__ void local_ptr(int *out, const int *a, const int *b)
{
    Pair st;
    st.lo[0] = st.lo[1] = threadIdx.x;
    st.hi[0] = st.hi[1] = 1;
    const int *t = (threadIdx.x & 1) ? a : b;
    out[threadIdx.x] = pick(&st, t, 0) + pick(&st, t, 1);
}
"""


def test_unresolved_pointers_into_local_memory_are_not_device_accesses(tmp_path):
    """`p->lo[k]` through a pointer to a local struct is not a device-memory access: neither
    counted nor reported as going outside every object; `t[i]` (a pointer chosen by a
    condition) is found by address and counted in its array."""
    src = tmp_path / "local_ptr.cu"
    src.write_text(LOCAL_THROUGH_POINTER)
    prof = gmprof.api.profiler(src, backend="cpu")
    a = np.arange(32, dtype=np.int32)
    b = np.arange(32, dtype=np.int32) * 10
    out = np.zeros(32, np.int32)
    rep = prof.launch("local_ptr", 1, 32, [out, a, b], mode=Mode.parse("default", profile="dm"))
    i = np.arange(32)
    assert out.tolist() == (2 * (i + 1 + np.where(i & 1, a, b))).tolist()
    assert not [n for n in rep.notes if "outside" in n], rep.notes
    odd = (i & 1).astype(np.int64)
    assert rep.array("a").counts.tolist() == (2 * odd).tolist()
    assert rep.array("b").counts.tolist() == (2 * (1 - odd)).tolist()


def test_pointer_to_pointer_arguments_take_arrays_of_addresses(tmp_path):
    """`const int *const *tables` is an array of device addresses (uint64), not of ints."""
    src = tmp_path / "pp.cu"
    src.write_text("__global__ void k(int *out, const int *const *tables) "
                   "{ out[threadIdx.x] = 1; }\n")
    prof = gmprof.api.profiler(src, backend="cpu")
    with pytest.raises(ArgumentError, match=r"'tables'.*uint64"):
        prof.launch("k", 1, 4, [np.zeros(4, np.int32), np.zeros(2, np.int32)])
    rep = prof.launch("k", 1, 4, [np.zeros(4, np.int32), np.zeros(2, np.uint64)])
    assert rep.array("out").counts.tolist() == [1, 1, 1, 1]
