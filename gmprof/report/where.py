"""Where an array of counts lives: on the host (numpy) or on the GPU (CuPy).

Stage: report (imports nothing from gmprof). A sample's launches keep their device objects'
counts on the GPU, where they were counted: the static sites' counts are added and the
launches merged there (a 16M-element array is 0.1 ms of GPU time an add, 50 ms on the host),
and the report reads them back once at the end (Report.to_host). CuPy is never imported here:
an array from CuPy is recognised by its type's module.
"""
from __future__ import annotations

import numpy as np


def on_device(array) -> bool:
    return type(array).__module__.split(".", 1)[0] == "cupy"


def xp(array):
    """The array module of `array`: cupy for a CuPy array, else numpy."""
    if on_device(array):
        import cupy

        return cupy
    return np


def to_host(array):
    """A host numpy array (the same object when it is one already)."""
    return array.get() if on_device(array) else array


def like(array, ref):
    """`array` (host) where `ref` lives: a device copy when ref is on the GPU."""
    return xp(ref).asarray(array) if on_device(ref) else array


__all__ = ["on_device", "xp", "to_host", "like"]
