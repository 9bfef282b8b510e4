"""A kernel that faults on the GPU is the user's bug: one located line naming the kernel, exit
status 1 (or --error-exitcode), no traceback, no "Error in sys.excepthook" (issue 25)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from gmprof.runtime.backend import gpu_fault

FAR = r"""
__global__ void far(float *a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    a[i + (1 << 28)] = 1.0f;   // a quarter of a gigafloat past a 256-element array
}
"""


@pytest.mark.parametrize("text,kind", [
    ("CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered", "invalid-address"),
    ("cudaErrorMisalignedAddress: misaligned address", "invalid-address"),
    ("CUDA_ERROR_ASSERT: device-side assert triggered", "assert"),
    ("CUDA_ERROR_LAUNCH_FAILED: unspecified launch failure", "trap"),
])
def test_cuda_fault_errors_are_the_users_faults(text, kind):
    fault = gpu_fault("k", RuntimeError(text))
    assert fault.kind == kind and fault.exit_status == 1
    assert "kernel `k` faulted on the GPU" in fault.render()


def test_other_cuda_errors_are_not_faults():
    assert gpu_fault("k", RuntimeError("CUDA_ERROR_OUT_OF_MEMORY: out of memory")) is None


@pytest.mark.gpu
@pytest.mark.parametrize("extra,status", [([], 1), (["--error-exitcode", "7"], 7)])
def test_far_write_on_the_gpu_is_a_located_error(tmp_path, extra, status):
    src = tmp_path / "far.cu"
    src.write_text(FAR)
    r = subprocess.run([sys.executable, "-m", "gmprof", "profile", str(src), "--kernel", "far",
                        "--grid", "1", "--block", "256", "--arg", "a=float32[256]",
                        "--arg", "n=256", "--backend", "gpu", *extra],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == status, r.stderr
    assert "Traceback" not in r.stderr and "excepthook" not in r.stderr, r.stderr
    assert f"{src}:2:" in r.stderr and "kernel `far` faulted on the GPU" in r.stderr, r.stderr
