"""The launch description shared with the device: numpy mirrors of gmprof.cuh's structs.

`Launch` and `Object` in runtime_cu/gmprof.cuh hold only 4- and 8-byte fields, laid out by the C
rules that numpy's `align=True` follows, so the same bytes mean the same thing to nvcc, NVRTC,
g++ and numpy (tests/runtime/test_layout.py checks the offsets against the compiler's).

The constants below are the layout's one declaration in Python; gmprof.cuh, the whole-program
host runtime (runtime_cu/host/gmprof_host.cpp, gmprof_host.h) repeat them as C++ enums, and
tests/runtime/test_layout_constants.py reads those enums and checks each against this file.
"""
from __future__ import annotations

import numpy as np

MAX_OBJECTS = 64
AREA_HEADER = 2  # words: exited threads, logical clock
SITE_WORDS = 2   # a site's execution count: one u64 (gmprof.cuh site_count_t)
LR_BINS = 12
LR_STRIDE = 2 + LR_BINS

KIND_NONE, KIND_DEVICE, KIND_SHARED = 0, 1, 2  # Object.kind
FLAG_WARP_UNIFORM_OK, FLAG_AREA_SHARED = 1, 2  # Launch.flags
# Launch.flags: no two device objects of the launch overlap (gmprof.cuh find_device_object_at)
FLAG_DEVICE_DISJOINT = 4


def device_disjoint(ranges) -> bool:
    """Whether no two of the (base, bytes) ranges (device objects of known size) overlap."""
    rs = sorted((b, n) for b, n in ranges if n)
    return all(b1 + n1 <= b2 for (b1, n1), (b2, _) in zip(rs, rs[1:]))

# Launch.flags >> 8: rows of per-warp statistics at the end of the block's area (SM mode), one
# per measured site, flushed at block exit into the warp_stats buffer after its per-site rows
# (then each site's u32 row number: gmprof.cuh warp_row)
FLAG_WS_ROWS_SHIFT = 8
# a whole program's object table (gmprof_host.h ObjectDesc.kind): what a slot is at a launch
OBJ_PARAM, OBJ_GLOBAL, OBJ_SHARED, OBJ_SHARED_DYNAMIC = 1, 2, 3, 4
TRACE_CAPACITY = 1 << 22  # trace records (4 x u64 each) a launch keeps
CLOCK_CAPACITY = 1 << 16  # enhanced mode's live-range clock records

OBJECT = np.dtype([
    ("base", "<u8"), ("bytes", "<u8"), ("counters", "<u8"), ("oor", "<u8"),
    ("kind", "<u4"), ("n_counters", "<u4"), ("area_offset", "<u4"), ("lr_offset", "<u4"),
    ("unit", "<u4"), ("unit_shift", "<u4"), ("reserved", "<u4", (2,)),
], align=True)

LAUNCH = np.dtype([
    ("flags", "<u4"), ("area_words", "<u4"), ("dyn_user_bytes", "<u4"), ("n_sites", "<u4"),
    ("obj_counters", "<u4"), ("lr_offset", "<u4"), ("area_replicas", "<u4"), ("n_objects", "<u4"),
    ("sample_state", "<u8"),
    ("area_global", "<u8"), ("unknown_oor", "<u8"), ("trace", "<u8"), ("trace_capacity", "<u8"),
    ("trace_count", "<u8"), ("sample_seq", "<u8"), ("sample_seq_len", "<u4"),
    ("sample_threshold", "<u4"), ("sampler", "<u4"), ("seed", "<u4"),
    ("clock_log", "<u8"), ("clock_capacity", "<u8"), ("clock_count", "<u8"),
    ("warp_stats", "<u8"),
    ("tally", "<u8"), ("tally_words", "<u4"), ("stats_sampling", "<u4"),
    ("sample_sq", "<u8"),
    ("defer", "<u8"), ("defer_ticket", "<u8"), ("defer_capacity", "<u4"), ("defer_walks", "<u4"),
    ("block_rows", "<u8"),
    ("children", "<u8"),  # whole programs: child kernels' descriptions (dynamic parallelism)
    ("obj", OBJECT, (MAX_OBJECTS,)),
], align=True)

# (the counter families' storage, per site or in the per-element records at `tally`, and their
# constants: gmprof/passes/tallies.py)


def new_launch() -> np.ndarray:
    return np.zeros((), LAUNCH)


def counter_dtype(bits: int) -> np.dtype:
    return {8: np.dtype("<u1"), 16: np.dtype("<u2"), 32: np.dtype("<u4"),
            64: np.dtype("<u8")}[bits]


def sites_end(n_sites: int) -> int:
    """The first word after the per-site counts: where the shared objects' counters start."""
    return AREA_HEADER + SITE_WORDS * n_sites


def area_words(n_sites: int, obj_bytes: int) -> int:
    """Words of a block's area before the live-range statistics: header, sites, objects'
    counters; even, so that every copy of the area (and its u64 site counts and 64-bit
    counters) stays 8-byte aligned."""
    words = sites_end(n_sites) + -(-obj_bytes // 4)
    return words + (words & 1)


def site_counts(area_u32: np.ndarray, n_sites: int) -> np.ndarray:
    """The per-site execution counts (uint64) from an area's 32-bit words."""
    words = np.ascontiguousarray(np.asarray(area_u32, dtype=np.uint32)[AREA_HEADER:
                                                                       sites_end(n_sites)])
    return words.view(np.uint64)


# SM mode: blocks flush their area into one of this many copies in device memory (by block
# number), so that thousands of blocks do not queue on the same few hundred addresses.
MAX_AREA_REPLICAS = 32


def area_replicas(n_blocks: int, sm: bool) -> int:
    return max(1, min(MAX_AREA_REPLICAS, int(n_blocks))) if sm else 1


def fold_replicas(raw: np.ndarray, replicas: int, area_words: int, n_sites: int,
                  obj_counters: int, counter_bits: int, threshold) -> np.ndarray:
    """Sum the copies of the area (uint32 words, replicas x area_words) into one area of the
    same format: 32-bit words add up, the u64 site counts at 64 bits; the shared objects'
    counters (counter_t, packed after the sites) add up at their width and saturate at the
    threshold, as one copy would have."""
    raw = np.asarray(raw, dtype=np.uint32)[:replicas * area_words]
    copies = raw.reshape(replicas, area_words)
    out = copies.astype(np.uint64).sum(axis=0).astype(np.uint32)  # wraps as the device would
    sites = slice(AREA_HEADER, sites_end(n_sites))
    site_sum = np.ascontiguousarray(copies[:, sites]).view(np.uint64).sum(axis=0,
                                                                         dtype=np.uint64)
    out[sites] = site_sum.view(np.uint32)
    ctype = counter_dtype(counter_bits)
    start = sites_end(n_sites) * 4
    stop = start + obj_counters * ctype.itemsize
    if stop > start:
        counters = copies.view(np.uint8).reshape(replicas, area_words * 4)[:, start:stop]
        total = np.ascontiguousarray(counters).view(ctype).astype(np.uint64).sum(axis=0)
        if threshold:
            total = np.minimum(total, threshold)
        out.view(np.uint8)[start:stop] = total.astype(ctype).view(np.uint8)
    return out


def count_units(offsets, sizes, n_units: int, unit: int, *, per_word: bool = True,
                touched: int | None = None, weights=None,
                nbytes: int | None = None) -> tuple[np.ndarray, int]:
    """Accesses per counter unit, from accesses' byte offsets into an object: the arithmetic
    every count shares (gmprof.cuh's hooks, the static formulas, the trace decoder).

    An access of `sizes` bytes at byte offset `o` counts once in each unit from `o // unit`:
    with per_word, in every unit up to `(o + size - 1) // unit` (shared memory's 4-byte words,
    and the trace's records); otherwise in `touched` units (device arrays' elements). `sizes`
    is one number or one per offset; `weights` (one per offset) count an access that many
    times. `nbytes`: the object's size; an access that starts at or past it (in the padding of
    the last counter unit: bytes 70 and 71 of a 70-byte array) is out of range, as the hooks
    see it (a device access once; a shared one once per word it covers). Returns (counts per
    unit, accesses to units outside [0, n_units) or outside the object, weighted)."""
    offsets = np.asarray(offsets)
    counts = np.zeros(n_units, np.int64)
    out_of_range = 0
    if nbytes is not None and len(offsets):
        outside = (offsets < 0) | (offsets >= nbytes)
        if outside.any():
            w_out = weights[outside] if weights is not None else np.ones(int(outside.sum()),
                                                                          np.int64)
            if per_word:
                sz = sizes[outside] if np.ndim(sizes) else sizes
                o = offsets[outside]
                w_out = w_out * ((o + sz - 1) // unit - o // unit + 1)
            out_of_range += int(w_out.sum())
            keep = ~outside
            offsets = offsets[keep]
            if np.ndim(sizes):
                sizes = np.asarray(sizes)[keep]
            if weights is not None:
                weights = weights[keep]
    if not len(offsets):
        return counts, out_of_range
    firsts = offsets // unit
    if per_word:
        lasts = (offsets + sizes - 1) // unit
        width = int((lasts - firsts).max()) + 1 if len(offsets) else 1
    else:
        width = touched
    for k in range(width):
        idx = firsts + k
        w = weights
        if per_word:
            keep = idx <= lasts
            idx = idx[keep]
            if w is not None:
                w = w[keep]
        inside = (idx >= 0) & (idx < n_units)
        if w is not None and w.dtype.kind in "iu" and len(idx) > 1 and \
                bool((idx[1:] > idx[:-1]).all()):
            # distinct units in order (a box's histogram, one entry a unit): add in place,
            # in integers, without a histogram of every unit
            counts[idx[inside]] += w[inside]
            out_of_range += int(w[~inside].sum())
        elif len(idx) * 8 < n_units and (w is None or w.dtype.kind in "iu"):
            # few accesses into a large object (a whole program's allocation): add them where
            # they fall, not through a histogram of every unit
            np.add.at(counts, idx[inside], 1 if w is None else w[inside].astype(np.int64))
            out_of_range += int((~inside).sum()) if w is None else int(w[~inside].sum())
        elif w is None:
            counts += np.bincount(idx[inside], minlength=n_units)[:n_units]
            out_of_range += int((~inside).sum())
        else:
            counts += np.bincount(idx[inside], weights=w[inside],
                                  minlength=n_units)[:n_units].astype(np.int64)
            out_of_range += int(w[~inside].sum())
    return counts, out_of_range
