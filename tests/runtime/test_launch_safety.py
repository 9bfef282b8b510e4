"""A profiled launch never corrupts the user's data: each run gets its own copies (also behind
pointers to pointers), the user's arrays end as the native run leaves them, written once
whatever `repeat` is, __device__ variables advance once per profiled launch, and writes past an
array's end land in red zones (reported, with the site) or fault at a guard page. Expected
values are derived by hand from what each kernel does."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import gmprof
from gmprof.errors import ArgumentError, KernelFault, KernelTimeout
from gmprof.runtime import guarded
from gmprof.runtime.cpu_backend import CpuBackend

KERNELS = Path(__file__).resolve().parents[1] / "badinput" / "kernels.cu"


def marker_line(name: str) -> int:
    for k, text in enumerate(KERNELS.read_text().splitlines(), 1):
        if f"// LINE: {name}" in text:
            return k
    raise AssertionError(name)


@pytest.fixture(scope="module")
def prof():
    return gmprof.api.profiler(KERNELS, backend="cpu")


def test_pointer_to_pointers_rows_are_written_once(prof):
    rows = [np.full(3, 10.0, np.float32) for _ in range(5)]
    report = prof.launch("rows", 1, 32, [rows, 5], repeat=4)
    # row r gets r + 1 added to its first element, once (not by the instrumented run, nor by
    # the four timing repetitions)
    assert [r.tolist() for r in rows] == [[11.0 + k, 10.0, 10.0] for k in range(5)]
    assert report.run.outputs_identical


def test_raw_addresses_that_the_kernel_may_write_are_refused(prof):
    rows = [np.zeros(3, np.float32) for _ in range(2)]
    table = np.array([r.ctypes.data for r in rows], np.uint64)
    with pytest.raises(ArgumentError, match="'r'.*list") as e:
        prof.launch("rows", 1, 32, [table, 2])
    assert isinstance(e.value, TypeError)
    assert all(not r.any() for r in rows)


def test_repeats_do_not_write_the_users_arrays_again(prof):
    y = np.arange(64, dtype=np.float32)
    x = np.ones(64, np.float32)
    prof.launch("saxpy", 1, 64, [y, x, 2.0, 64], repeat=5)
    np.testing.assert_array_equal(y, np.arange(64, dtype=np.float32) + 2.0)


def test_device_variables_advance_once_per_profiled_launch(prof):
    outs = []
    for _ in range(3):
        out = np.zeros(1, np.int32)
        report = prof.launch("count_launches", 1, 32, [out], repeat=3)
        assert report.run.outputs_identical  # the counter was compared, and agrees
        outs.append(int(out[0]))
    # consecutive: one per profiled launch, whatever the timing runs did
    assert outs[1] == outs[0] + 1 and outs[2] == outs[1] + 1


def test_outputs_that_differ_leave_the_native_results(prof):
    """clock64() stamps: the native run comes first, so each of its stamps is smaller than the
    instrumented run's; the user's array holds the smaller ones."""
    out = np.zeros(32, np.int64)
    report = prof.launch("stamp", 1, 32, [out])
    assert report.run.outputs_identical is False
    kinds = [w.kind for w in report.warnings]
    assert "outputs-differ" in kinds
    assert any(w.failed_check for w in report.warnings)
    # a native run after the profiled one stamps later still
    later = np.zeros(32, np.int64)
    prof.run_native("stamp", 1, 32, [later])
    assert (out > 0).all() and (out < later).all()


def test_writes_past_the_end_are_reported_with_the_site(prof):
    y = np.zeros(100, np.float32)
    report = prof.launch("overrun", 2, 64, [y, 100])
    # the user's array: exactly the 100 in-range writes
    np.testing.assert_array_equal(y, np.ones(100, np.float32))
    found = [w for w in report.warnings if w.kind == "out-of-range"]
    assert len(found) == 1 and found[0].failed_check
    assert found[0].location.line == marker_line("overrun")
    # 128 threads, 100 elements: 28 writes past the end (bytes 400 to 511 of the red zone)
    assert report.array("y").out_of_range == 28
    assert "bytes 400 to 511" in found[0].message


def test_a_write_far_past_the_end_faults_at_the_guard_page(prof):
    y = np.zeros(100, np.float32)
    with pytest.raises(KernelFault) as e:
        prof.launch("overrun", 64, 64, [y, 100])
    assert e.value.kind == "invalid-address" and e.value.exit_status == 1
    assert e.value.location.line == marker_line("overrun")
    assert not y.any()  # nothing ran to completion: the user's array is untouched


def test_a_launch_that_never_ends_times_out(prof):
    out = np.zeros(32, np.int32)
    with pytest.raises(KernelTimeout) as e:
        prof.launch("spin", 1, 32, [out], timeout=0.3)
    assert e.value.kind == "timeout" and "spin" in e.value.message
    assert e.value.location.line == marker_line("spin")


def test_red_zones_and_guard_pages():
    backend = CpuBackend()
    a = backend.to_device(np.arange(10, dtype=np.float32))
    assert a.ctypes.data % 256 == 0  # as cudaMalloc's
    region = guarded.region_of(a)
    assert region.damage() is None
    raw = a.view(np.uint8)
    base = raw.ctypes.data
    import ctypes

    ctypes.memset(base + 40 + 3, 0, 2)     # bytes 43 and 44 past the start
    ctypes.memset(base - 8, 0, 1)          # 8 bytes before it
    assert region.damage() == ((-8, -8), (43, 44))
    region.repair()
    assert region.damage() is None
    assert backend.check_guards([a]) == []


def test_zero_sized_and_0d_arrays():
    backend = CpuBackend()
    assert backend.to_device(np.zeros(0, np.float32)).shape == (0,)
    assert backend.to_device(np.float64(3.0)).shape == ()
    rec = backend.to_device(np.zeros(3, dtype=[("a", "i4"), ("b", "f8")]))
    assert rec.dtype.names == ("a", "b") and rec.shape == (3,)
