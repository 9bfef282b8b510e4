"""gmprof.RawKernel / gmprof.RawModule keep CuPy's signatures: `backend` is CuPy's compiler
('nvrtc' or 'nvcc') or, as in every gmprof API function, the device; gmprof's choice of device
is also `device`. print(report) is a summary."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import gmprof
from gmprof.errors import ArgumentError, OptionError

TEMPLATE = """
template <int N> __global__ void fill(float *a) { a[threadIdx.x] = N; }
__global__ void twice(float *a) { a[threadIdx.x] *= 2; }
"""


def test_raw_module_as_in_cupy():
    mod = gmprof.RawModule(code=TEMPLATE, options=("-std=c++17",),
                           name_expressions=["fill<3>"], device="cpu")
    a = np.zeros(8, np.float32)
    fill = mod.get_function("fill<3>")
    fill((1,), (8,), (a,))
    twice = mod.get_function("twice")
    twice((1,), (4,), (a,))
    assert a.tolist() == [6] * 4 + [3] * 4
    assert fill.report.array("a").counts.tolist() == [1] * 8  # one write each
    assert twice.report.array("a").counts.tolist() == [1] * 4 + [0] * 4  # read-modify-write


def test_raw_module_from_a_path(tmp_path):
    p = tmp_path / "k.cu"
    p.write_text(TEMPLATE)
    k = gmprof.RawModule(path=str(p), device="cpu").get_function("twice")
    a = np.ones(2, np.float32)
    k((1,), (2,), (a,))
    assert a.tolist() == [2, 2]


@pytest.mark.parametrize("call", [
    lambda: gmprof.RawModule(device="cpu"),
    lambda: gmprof.RawModule(code=TEMPLATE, path="k.cu", device="cpu"),
    lambda: gmprof.RawModule(code=TEMPLATE, device="cpu").get_function(""),
])
def test_raw_module_misuse(call):
    with pytest.raises(ArgumentError):
        call()


def test_backend_is_cupys_compiler_and_device_is_ours():
    for backend in ("nvrtc", "nvcc"):
        gmprof.RawKernel(TEMPLATE, "twice", backend=backend, device="cpu")
    with pytest.raises(OptionError, match="CuPy's compiler"):
        gmprof.RawKernel(TEMPLATE, "twice", backend="clang", device="cpu")
    with pytest.raises(OptionError, match="device="):
        gmprof.RawKernel(TEMPLATE, "twice", device="tpu")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # backend= means the same in every API function: where it runs, as for
        # gmprof.profile(backend="cpu"), or CuPy's compiler
        k = gmprof.RawKernel(TEMPLATE, "twice", backend="cpu")
    assert k.device == "cpu"
    with pytest.raises(OptionError, match="disagree"):
        gmprof.RawKernel(TEMPLATE, "twice", backend="cpu", device="gpu")


def test_print_report_is_a_summary():
    k = gmprof.RawKernel(TEMPLATE, "twice", device="cpu")
    a = np.ones(4, np.float32)
    k((1,), (4,), (a,))
    k((1,), (4,), (a,))
    text = str(k.report)
    assert "kernel twice: 2 launches" in text and "array(" not in text
    assert repr(k.report) == ("<gmprof.Report twice: 1 arrays, 1 sites, 2 launches, "
                              "default mode on cpu>")
