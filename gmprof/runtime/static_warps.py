"""A static site's per-warp requests at a launch, from its formula (--access-stats).

Stage: host runtime, beside the static counts (static_launch.py). Takes a site's formula as
evaluated at the launch (static_counts.prepare) and its executions there; returns its warp
statistics (requests, wavefronts or sectors, ideal, lines, and requests by wavefronts or
sectors), or None when the formula does not make every warp's request the same at every
execution, and the site is then counted by a hook (measured).

Every warp of a block runs the site equally often when no thread index enters a loop bound or a
condition; each of a block's warps then issues E / T requests (E executions, T threads a block),
each lane at its thread's part of the address plus the same base. Banks and sectors depend on
the base only through its residue modulo 128 bytes: the residues the block and loop terms can
give (multiples of their coefficients' gcd, from the constant) are tried, and the statistics
must agree for all of them. The costs are warp_requests.py's model, the device hooks' too.
"""
from __future__ import annotations

from math import gcd

import numpy as np

from . import static_enumerate as E
from .static_points import Points, bases, lin
from .warp_requests import device_request, shared_request

_TIDS = frozenset(E.VAR_DIMS)
BINS = 32


def warp_stats(inputs: tuple, executions: int) -> dict | None:
    addr_terms, addr_const, loops, constraint, grid, block, _n, _unit, size, per_word, _nb = \
        inputs
    for _, it, _, bt, _, _ in loops:
        if (bases(it) | bases(bt)) & _TIDS:
            return None
    if bases(E.constraint_vars(constraint)) & _TIDS:
        return None
    lane_terms, g = {}, 0
    for v, x in addr_terms.items():
        vs = bases({v: x})
        if vs & _TIDS:
            if not vs <= _TIDS:
                return None  # a term mixing the thread index with others
            lane_terms[v] = x
        else:
            g = gcd(g, abs(int(x)))
    threads = int(block[0]) * int(block[1]) * int(block[2])
    if threads == 0 or executions % threads:
        return None
    per_warp = executions // threads
    linear = np.arange(threads, dtype=np.int64)
    bx, by = int(block[0]), int(block[1])
    pts = Points({"tid.x": linear % bx, "tid.y": (linear // bx) % by,
                  "tid.z": linear // (bx * by)})
    rel = np.broadcast_to(np.int64(0) + lin(lane_terms, pts), (threads,))
    residues = sorted({(int(addr_const) + g * i) % 128 for i in range(128 if g else 1)})
    result = None
    for r in residues:
        stats = _block_requests(rel + r, size, per_word)
        if result is None:
            result = stats
        elif stats != result:
            return None  # the base's alignment changes the cost: measured instead
    units, ideal, lines, hist = result
    n_warps = -(-threads // 32)
    return {"requests": per_warp * n_warps, "units": per_warp * units,
            "ideal": per_warp * ideal, "lines": per_warp * lines,
            "histogram": [per_warp * h for h in hist]}


def _block_requests(addresses: np.ndarray, size: int, shared: bool) -> tuple:
    """(units, ideal, lines, histogram) summed over one block's warps, one request each."""
    units = ideal = lines = 0
    hist = [0] * BINS
    for w0 in range(0, len(addresses), 32):
        lanes = addresses[w0:w0 + 32]
        if shared:
            u, i = shared_request(lanes, size)
            li = 0
        else:
            u, i, li = device_request(lanes, size)
        units += u
        ideal += i
        lines += li
        hist[min(max(u, 1), BINS) - 1] += 1
    return units, ideal, lines, tuple(hist)


__all__ = ["warp_stats"]
