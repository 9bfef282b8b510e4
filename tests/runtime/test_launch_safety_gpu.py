"""Launch safety on the GPU backend (CuPy): the checks of test_launch_safety.py that hold on a
GPU, with numpy arrays (copied to the device and back) and with CuPy arrays (the user's device
memory). Expected values are derived by hand from what each kernel does."""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import gmprof
pytestmark = pytest.mark.gpu
KERNELS = Path(__file__).resolve().parents[1] / "badinput" / "kernels.cu"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def prof():
    return gmprof.api.profiler(KERNELS, backend="gpu")


@pytest.fixture(params=["numpy", "cupy"])
def xp(request):
    if request.param == "numpy":
        return np
    import cupy

    return cupy


def host(a):
    return a.get() if hasattr(a, "get") else a


def test_pointer_to_pointers_rows_are_written_once(prof, xp):
    rows = [xp.full(3, 10.0, xp.float32) for _ in range(5)]
    report = prof.launch("rows", 1, 32, [rows, 5], repeat=4)
    assert [host(r).tolist() for r in rows] == [[11.0 + k, 10.0, 10.0] for k in range(5)]
    assert report.run.outputs_identical


def test_repeats_do_not_write_the_users_arrays_again(prof, xp):
    y = xp.arange(64, dtype=xp.float32)
    x = xp.ones(64, xp.float32)
    prof.launch("saxpy", 1, 64, [y, x, 2.0, 64], repeat=5)
    np.testing.assert_array_equal(host(y), np.arange(64, dtype=np.float32) + 2.0)


def test_device_variables_advance_once_per_profiled_launch(prof, xp):
    outs = []
    for _ in range(3):
        out = xp.zeros(1, xp.int32)
        report = prof.launch("count_launches", 1, 32, [out], repeat=3)
        assert report.run.outputs_identical
        outs.append(int(host(out)[0]))
    assert outs[1] == outs[0] + 1 and outs[2] == outs[1] + 1


def test_outputs_that_differ_leave_the_native_results(prof, xp):
    out = xp.zeros(32, xp.int64)
    report = prof.launch("stamp", 1, 32, [out])
    assert report.run.outputs_identical is False
    assert "outputs-differ" in [w.kind for w in report.warnings]
    later = xp.zeros(32, xp.int64)
    prof.run_native("stamp", 1, 32, [later])
    assert (host(out) > 0).all() and (host(out) < host(later)).all()


def test_a_launch_that_never_ends_times_out():
    """A GPU kernel cannot be stopped from the host: the launch raises KernelTimeout, the CLI
    exits 1 with one located line, and the process ends (ending the kernel with its context)."""
    t0 = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "gmprof.cli", "profile", str(KERNELS), "--kernel", "spin",
         "--grid", "1", "--block", "32", "--arg", "out=int32[32]", "--backend", "gpu",
         "--timeout", "2"], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "timeout" in proc.stderr or "did not finish" in proc.stderr
    assert time.monotonic() - t0 < 90


def test_timeout_in_the_api_is_a_typed_error():
    # in a child: the spinning kernel keeps the GPU until its process ends
    code = ("import numpy as np, gmprof, sys\n"
            "from gmprof.errors import KernelTimeout\n"
            f"p = gmprof.api.profiler({str(KERNELS)!r}, backend='gpu')\n"
            "try:\n"
            "    p.launch('spin', 1, 32, [np.zeros(32, np.int32)], timeout=1)\n"
            "except KernelTimeout as e:\n"
            "    print('KIND', e.kind); sys.stdout.flush(); import os; os._exit(0)\n"
            "os._exit(3)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert proc.returncode == 0 and "KIND timeout" in proc.stdout, proc.stderr
