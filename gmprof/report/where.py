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


def counts_to_host(array):
    """Counts (int64) on the host. From the GPU they cross in the narrowest unsigned type that
    holds them (a sample's counts are mostly small: spmv's 1 GB of int64 crosses as 134 MB of
    uint8) and are widened on the host."""
    if not on_device(array) or array.size == 0:
        return to_host(array)
    lo, hi = int(array.min()), int(array.max())
    if lo >= 0:
        for t in (np.uint8, np.uint16, np.uint32):
            if hi <= np.iinfo(t).max:
                return array.astype(t).get().astype(np.int64)
    return array.get()


def like(array, ref):
    """`array` (host) where `ref` lives: a device copy when ref is on the GPU."""
    return xp(ref).asarray(array) if on_device(ref) else array


__all__ = ["on_device", "xp", "to_host", "counts_to_host", "like"]
