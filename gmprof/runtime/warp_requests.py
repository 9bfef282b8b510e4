"""What one warp's request of a memory access costs: shared-memory wavefronts (bank conflicts)
and device-memory sectors and lines (coalescing), from its lanes' addresses.

Stage: host runtime (the static sites' statistics, static_warps.py) and the reference for the
device's hooks (gmprof.cuh warp_shared / warp_device), which follow the same model:

shared memory  32 banks of 4 bytes (every architecture since Kepler). Lanes that read the same
               4-byte word share it (broadcast). An access of 8 bytes is served a half-warp at a
               time, of 16 bytes a quarter-warp at a time (a phase moves at most 128 bytes);
               each phase needs as many wavefronts as its most used bank holds distinct words.
               Other sizes (a 12-byte struct, a misaligned access) count as their 4-byte words,
               each a request of its own. ideal: one wavefront a phase with lanes (a word each).
device memory  the distinct 32-byte sectors and 128-byte lines the lanes' accesses touch;
               ideal: the sectors the distinct bytes would fill if they were contiguous.

shared_request and device_request cost one request; requests() costs many at once (numpy, one
pass, for the static sites' enumerated requests): the same model, checked against the two on
random requests by tests/runtime/test_static_warp_requests.py.
"""
from __future__ import annotations

import numpy as np


def shared_request(offsets: np.ndarray, size: int) -> tuple[int, int]:
    """(wavefronts, ideal) of one warp's request: offsets are the active lanes' byte offsets
    (index = lane), size the bytes each lane accesses."""
    offsets = np.asarray(offsets, np.int64)
    lanes = np.arange(len(offsets))
    if size in (8, 16) and not (offsets % size).any():
        k = size // 4
        per_phase = 32 // k
        wave = ideal = 0
        for p in range(k):
            sel = (lanes // per_phase) == p
            if not sel.any():
                continue
            words = (offsets[sel][:, None] // 4 + np.arange(k)[None, :]).ravel()
            wave += _most_in_a_bank(words)
            ideal += 1
        return wave, ideal
    k = 1 if size <= 4 else -(-size // 4)
    wave = sum(_most_in_a_bank(offsets // 4 + j) for j in range(k))
    return wave, k


def _most_in_a_bank(words: np.ndarray) -> int:
    distinct = np.unique(words)
    return int(np.bincount(distinct % 32, minlength=32).max()) if len(distinct) else 0


def device_request(addresses: np.ndarray, size: int) -> tuple[int, int, int]:
    """(sectors, ideal sectors, lines) of one warp's request of size-byte accesses (aligned to
    their size, as typed accesses are) at the active lanes' byte addresses."""
    a = np.asarray(addresses, np.int64)
    per = -(-size // 32) if size > 32 else 1
    sectors = len(np.unique(a // 32)) * per
    lines = len(np.unique(a // 128)) * (-(-size // 128) if size > 128 else 1)
    ideal = -(-len(np.unique(a)) * size // 32)
    return sectors, max(ideal, 1), lines


BINS = 32  # the histogram of units a request: 1, 2, ..., 31, 32 or more


def requests(group: np.ndarray, lane: np.ndarray, addr: np.ndarray, size: int,
             shared: bool) -> tuple[int, int, int, int, list]:
    """(requests, units, ideal, lines, histogram) of many requests at once: access k belongs
    to request group[k] (0 .. n-1, every one used), made by lane lane[k] (0..31, its warp's
    lane) at addr[k] (shared: the byte offset in the array; device: the byte address)."""
    group = np.asarray(group, np.int64)
    n = int(group.max()) + 1 if len(group) else 0
    if n == 0:
        return 0, 0, 0, 0, [0] * BINS
    a = np.asarray(addr, np.int64)
    if shared:
        units, ideal = _shared_requests(group, np.asarray(lane, np.int64), a, size, n)
        lines = 0
    else:
        per = -(-size // 32) if size > 32 else 1
        units = _distinct(group, a >> 5, n) * per
        lines = int(_distinct(group, a >> 7, n).sum()) * (-(-size // 128) if size > 128 else 1)
        ideal = np.maximum(-(-_distinct(group, a, n) * size // 32), 1)
    hist = np.bincount(np.clip(units, 1, BINS) - 1, minlength=BINS)
    return n, int(units.sum()), int(np.sum(ideal)), lines, [int(h) for h in hist]


def _distinct(group, key, n) -> np.ndarray:
    """Per group, how many distinct keys its accesses have."""
    order = np.lexsort((key, group))
    g, k = group[order], key[order]
    new = np.ones(len(g), bool)
    new[1:] = (g[1:] != g[:-1]) | (k[1:] != k[:-1])
    return np.bincount(g[new], minlength=n)


def _most_per_bank(sub, word, n) -> np.ndarray:
    """Per sub-request (0 .. n-1), the most distinct words any one bank holds."""
    order = np.lexsort((word, sub))
    s, w = sub[order], word[order]
    new = np.ones(len(s), bool)
    new[1:] = (s[1:] != s[:-1]) | (w[1:] != w[:-1])
    s, bank = s[new], w[new] % 32
    per_bank = np.bincount(s * 32 + bank, minlength=n * 32).reshape(n, 32)
    return per_bank.max(axis=1)


def _shared_requests(group, lane, off, size, n):
    """(wavefronts, ideal) per request: 8- and 16-byte accesses whose lanes are all aligned
    in phases of 32 / k lanes (k = size / 4 words each, a phase's wavefronts the most of any
    of its words' banks); the rest word by word, each a request of its own (shared_request)."""
    if size in (8, 16):
        k = size // 4
        aligned = np.bincount(group, weights=(off % size != 0), minlength=n) == 0
    else:
        k = 1 if size <= 4 else -(-size // 4)
        aligned = np.zeros(n, bool)
    units = np.zeros(n, np.int64)
    ideal = np.where(aligned, 0, k).astype(np.int64)
    a = aligned[group]
    if a.any():
        g, ln, o = group[a], lane[a], off[a]
        phase = ln // (32 // k)
        sub = g * k + phase
        most = np.zeros(n * k, np.int64)
        for j in range(k):
            most = np.maximum(most, _most_per_bank(sub, o // 4 + j, n * k))
        units += most.reshape(n, k).sum(axis=1)
        has = np.zeros(n * k, bool)
        has[sub] = True
        ideal += has.reshape(n, k).sum(axis=1)
    if (~a).any():
        g, o = group[~a], off[~a]
        for j in range(k):
            units += _most_per_bank(g, o // 4 + j, n)
    return units, ideal


__all__ = ["BINS", "device_request", "requests", "shared_request"]
