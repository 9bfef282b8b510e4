"""Shared test set-up: GPU tests are marked `gpu` and skipped where CuPy sees no device."""
from __future__ import annotations

import functools

import pytest


@functools.lru_cache(maxsize=None)
def gpu_available() -> bool:
    try:
        import cupy  # noqa: F401

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def pytest_collection_modifyitems(config, items):
    if gpu_available():
        return
    skip = pytest.mark.skip(reason="no CUDA GPU visible to CuPy")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
