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


__all__ = ["device_request", "shared_request"]
