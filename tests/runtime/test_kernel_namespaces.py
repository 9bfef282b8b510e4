"""A kernel declared in a namespace is launched by its name or by its qualified name (the
backend's module is asked for `ns::k`, as the file's scope finds it; a kernel in an unnamed
namespace is found from the namespace around it). Counts by hand: each of 32 threads reads
x[t] and writes y[t] once."""
from __future__ import annotations

import numpy as np
import pytest

from gmprof.errors import GmprofError
from gmprof.runtime.session import Profiler

SOURCE = r"""
namespace ns { namespace {
__global__ void scale(float *y, const float *x) { y[threadIdx.x] = 2.0f * x[threadIdx.x]; }
} }
__global__ void top(float *y) { y[threadIdx.x] = 1.0f; }
"""


@pytest.fixture(scope="module")
def prof():
    return Profiler(text=SOURCE, name="ns.cu", backend="cpu")


@pytest.mark.parametrize("name", ["scale", "ns::scale", "::ns::scale"])
def test_a_kernel_in_a_namespace(prof, name):
    x = np.arange(32, dtype=np.float32)
    y = np.zeros(32, np.float32)
    report = prof.launch(name, 1, 32, [y, x])
    np.testing.assert_array_equal(y, 2 * x)
    for array, reads, writes in (("x", 32, 0), ("y", 0, 32)):
        arr = report.array(array)
        assert (arr.label, arr.reads, arr.writes) == ("exact", reads, writes), array
        np.testing.assert_array_equal(arr.counts, np.ones(32), err_msg=array)


def test_a_kernel_at_file_scope_beside_it(prof):
    y = np.zeros(32, np.float32)
    prof.launch("top", 1, 32, [y])
    np.testing.assert_array_equal(y, 1.0)


def test_another_namespace_names_no_kernel(prof):
    with pytest.raises(GmprofError, match="no kernel named 'other::scale'"):
        prof.launch("other::scale", 1, 32, [np.zeros(32, np.float32), np.zeros(32, np.float32)])
