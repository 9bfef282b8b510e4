"""Static sites' counts kept across processes (gmprof/host_cache.py), by content hash.

Stage: host runtime, inside static_counts.count_static. Takes the formula's inputs as evaluated
at a launch (plain ints, strings, tuples and dicts: the address's terms, the loops, the
conditions, grid, block, the object's counter units) and a function that counts; returns the
StaticCount, from the cache when the same inputs were counted before by the same code (the
source of static_counts.py and layout.py is part of the key). A jcb_v1 site at the large size
takes seconds to enumerate and is the same in every run of the sample.

Counts are stored run-length encoded when that is smaller (a site's counts are mostly long runs
of one value: 0 outside the interior, 1 inside), else in the narrowest integer type that holds
them. Only counts that took a while are stored: small ones cost less to count than to read. A
formula that could not be counted on the host (over the enumeration budget) is stored as such,
so the next process does not spend the budget again before counting it on the device.
"""
from __future__ import annotations

import time

import numpy as np

from gmprof import host_cache
from gmprof.passes import symbolic as S

from . import (layout, static_blocks, static_counts, static_enumerate, static_gridstride,
               static_points)

STORE_AFTER_S = 0.05
_CODE: str | None = None


def _code() -> str:
    global _CODE
    if _CODE is None:
        # every module the counting runs through (a change to any of them changes the counts)
        _CODE = host_cache.source_digest(static_counts, static_blocks, static_enumerate,
                                         static_gridstride, static_points, layout)
    return _CODE


def cached(inputs: tuple, count):
    """count() -> StaticCount for these evaluated inputs, or the one stored for them."""
    digest = host_cache.key(_code(), inputs)
    got = host_cache.load("static", digest)
    if got is not None and "unknown" in got:
        raise S.Unknown(got["unknown"])  # it could not be counted on the host before either
    if got is not None:
        try:
            return static_counts.StaticCount(unpack(got["counts"]), got["out_of_range"],
                                             got["executions"], got["method"])
        except Exception:
            pass  # an entry of another shape: count again
    t0 = time.perf_counter()
    try:
        result = count()
    except S.Unknown as exc:
        if time.perf_counter() - t0 >= STORE_AFTER_S:
            host_cache.store("static", digest, {"unknown": str(exc)})
        raise
    if time.perf_counter() - t0 >= STORE_AFTER_S:
        host_cache.store("static", digest, {
            "counts": pack(result.counts), "out_of_range": int(result.out_of_range),
            "executions": int(result.executions), "method": result.method})
    return result


def pack(counts: np.ndarray) -> tuple:
    """('rle', starts, values, n) or ('raw', array in the narrowest dtype)."""
    counts = np.asarray(counts, np.int64)
    n = len(counts)
    if n == 0:
        return ("raw", counts)
    starts = np.flatnonzero(np.diff(counts)) + 1
    starts = np.concatenate([[0], starts]).astype(np.int64)
    values = counts[starts]
    if 2 * len(starts) < n:
        return ("rle", starts, _narrow(values), n)
    return ("raw", _narrow(counts))


def unpack(packed) -> np.ndarray:
    if packed[0] == "raw":
        return np.asarray(packed[1]).astype(np.int64)
    _, starts, values, n = packed
    lengths = np.diff(np.append(starts, n))
    return np.repeat(np.asarray(values, np.int64), lengths)


def _narrow(a: np.ndarray) -> np.ndarray:
    lo, hi = (int(a.min()), int(a.max())) if len(a) else (0, 0)
    for t in (np.uint8, np.uint16, np.uint32, np.int64):
        info = np.iinfo(t)
        if info.min <= lo and hi <= info.max:
            return a.astype(t)
    return a


__all__ = ["cached", "pack", "unpack"]
