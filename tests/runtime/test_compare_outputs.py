"""Outputs compared byte for byte where they live (launchargs.same_bytes), as tobytes did."""
from __future__ import annotations

import numpy as np
import pytest

from gmprof.runtime import launchargs
from gmprof.runtime.backend import get_backend


CASES = [
    (np.array([1.0, np.nan], np.float32), np.array([1.0, np.nan], np.float32)),
    (np.array([0.0], np.float64), np.array([-0.0], np.float64)),  # == says equal; bytes differ
    (np.arange(7, dtype=np.uint8), np.arange(7, dtype=np.uint8)),
    (np.arange(12, dtype=np.int32).reshape(3, 4), np.arange(12, dtype=np.int32).reshape(3, 4)),
    (np.zeros(0, np.float32), np.zeros(0, np.float32)),
    (np.zeros(4, np.int16), np.zeros(2, np.int32)),  # same bytes, other type: tobytes equal
    (np.zeros(4, np.int16), np.zeros(3, np.int16)),
]


def _want(a, b):
    return a.tobytes() == b.tobytes()


@pytest.mark.parametrize("a,b", CASES)
def test_host(a, b):
    assert launchargs.host_same_bytes(a, b) == _want(a, b)
    big_a = np.random.default_rng(0).random(1 << 16).astype(np.float32)
    big_b = big_a.copy()
    assert launchargs.host_same_bytes(big_a, big_b)
    big_b[12345] = np.nextafter(big_b[12345], 2)
    assert not launchargs.host_same_bytes(big_a, big_b)


@pytest.mark.parametrize("a,b", CASES)
def test_cpu_backend(a, b):
    be = get_backend("cpu")
    assert launchargs.same_bytes(be, be.copy(a), be.copy(b)) == _want(a, b)


@pytest.mark.gpu
@pytest.mark.parametrize("a,b", CASES)
def test_gpu_backend(a, b):
    be = get_backend("gpu")
    assert launchargs.same_bytes(be, be.to_device(a), be.copy(be.to_device(b))) == _want(a, b)
