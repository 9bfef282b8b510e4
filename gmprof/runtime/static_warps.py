"""A static site's per-warp requests at a launch, from its formula (--access-stats).

Stage: host runtime, beside the static counts (static_launch.py). Takes a site's formula as
evaluated at the launch (static_counts.prepare), its executions there and the byte address its
object starts at in the instrumented run (0 for shared arrays: the hooks measure offsets in the
array); returns its warp statistics (requests, wavefronts or sectors, ideal, lines, and
requests by wavefronts or sectors), or None when they cannot be had within the enumeration's
budget, and the site is then counted by a hook (measured).

A request is the accesses of one warp's lanes at one execution of the site: the lanes of one
block (linear thread index / 32) at the same iterations of the site's loops, where its
conditions hold (what a hook's __activemask sees when the warp runs the loop together; the
device's model too, which Nsight Compute's request counts confirm, docs/results/access_stats.md).
Three ways, cheapest first:

uniform    no thread index in a loop bound or a condition: every warp of a block runs the site
           equally often, each lane at its thread's part of the address plus the same base.
           Banks and sectors depend on the base only through its residue modulo 128 bytes: the
           residues the block and loop terms can give (multiples of their coefficients' gcd,
           from the constant) are tried, and the statistics must agree for all of them.
classes    the address is a block part plus a thread-and-loop part (static_blocks.py's split):
           one block's requests are enumerated once; a block where every condition is decided
           issues them all at its own base, whose residue modulo 128 is all that matters (one
           cost per residue, times its blocks); the undecided blocks are enumerated.
enumerate  the grid's points, grouped into requests (static_enumerate.Enumeration's budget).
The costs are warp_requests.py's model, the device hooks' too.
"""
from __future__ import annotations

from math import gcd

import numpy as np

from gmprof.passes import symbolic as S

from . import static_enumerate as E
from .static_blocks import _join, decided_blocks, split
from .static_gridstride import virtual_blocks
from .static_points import Points, bases, eval_constraint, lin
from .warp_requests import BINS, device_request, requests, shared_request

_TIDS = frozenset(E.VAR_DIMS)
_BIDS = frozenset(E.BLOCK_DIMS)


def warp_stats(inputs: tuple, executions: int, base: int = 0) -> dict | None:
    """The site's statistics with its object at byte address `base`, or None (measured)."""
    stats = _uniform(inputs, executions, base)
    if stats is None:
        try:
            stats = _enumerated(inputs, base)
        except S.Unknown:
            return None
    requests_, units, ideal, lines, hist = stats
    return {"requests": requests_, "units": units, "ideal": ideal, "lines": lines,
            "histogram": list(hist)}


def _uniform(inputs: tuple, executions: int, base: int):
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
    residues = sorted({(int(base) + int(addr_const) + g * i) % 128
                       for i in range(128 if g else 1)})
    result = None
    for r in residues:
        stats = _block_requests(rel + r, size, per_word)
        if result is None:
            result = stats
        elif stats != result:
            return None  # the base's alignment changes the cost: enumerated instead
    units, ideal, lines, hist = result
    n_warps = -(-threads // 32)
    return (per_warp * n_warps, per_warp * units, per_warp * ideal, per_warp * lines,
            [per_warp * h for h in hist])


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


# -- enumerated requests -----------------------------------------------------------------

_NONE = (0, 0, 0, 0, [0] * BINS)


def _add(a, b, times: int = 1):
    return (a[0] + times * b[0], a[1] + times * b[1], a[2] + times * b[2], a[3] + times * b[3],
            [x + times * y for x, y in zip(a[4], b[4])])


def _enumerated(inputs: tuple, base: int):
    inputs = virtual_blocks(inputs) or inputs
    addr_terms, addr_const, loops, constraint, grid, block, _n, _unit, size, shared, _nb = \
        inputs
    const = int(addr_const) + int(base)
    used = bases(addr_terms) | bases(E.constraint_vars(constraint))
    for _, it, _, bt, _, _ in loops:
        used |= bases(it) | bases(bt)
    # block indices nothing reads: their blocks are alike
    grid, factor = list(int(g) for g in grid), 1
    for name, k in E.BLOCK_DIMS.items():
        if name not in used:
            factor *= grid[k]
            grid[k] = 1
    if factor == 0 or any(int(b) == 0 for b in block):
        return _NONE
    args = (addr_terms, const, list(enumerate(loops)), constraint, tuple(grid), block, size,
            shared)
    stats = _by_block_class(*args)
    if stats is None:
        stats = _points(*args)
    return _add(_NONE, stats, factor)


def _request_ids(pts, n: int, grid, block, loop_ids, with_block: bool):
    """(request of each point, 0 .. m-1; its lane): points of one block, one warp and the same
    iterations of every loop are one request."""
    def col(name):
        return np.broadcast_to(np.asarray(pts.get(name, 0), np.int64), (n,))
    bx, by = int(block[0]), int(block[1])
    linear = col("tid.x") + bx * (col("tid.y") + by * col("tid.z"))
    cols = [linear // 32] + [col(("iter", k)) for k in loop_ids]
    if with_block:
        gx, gy = int(grid[0]), int(grid[1])
        cols.append(col("bid.x") + gx * (col("bid.y") + gy * col("bid.z")))
    # one int64 key in mixed radix where the columns' ranges allow it (a 1-D unique is many
    # times faster than a row-wise one)
    key, room = np.zeros(n, np.int64), 1
    for c in cols:
        lo, hi = (int(c.min()), int(c.max())) if n else (0, 0)
        room *= hi - lo + 1
        if room >= 1 << 62:
            _, ids = np.unique(np.stack(cols, axis=1), axis=0, return_inverse=True)
            return ids.reshape(-1), linear % 32
        key = key * (hi - lo + 1) + (c - lo)
    _, ids = np.unique(key, return_inverse=True)
    return ids.reshape(-1), linear % 32


def _kept(e, constraint):
    """(points, how many) of each chunk of the enumeration where the constraint holds, within
    its budget."""
    for pts in e.chunks():
        mask = eval_constraint(constraint, pts)
        n = len(next(iter(pts.values())))
        if mask is not None:
            pts = Points({v: np.broadcast_to(a, (n,))[mask] for v, a in pts.items()})
            n = int(mask.sum())
        e.executions += n
        if e.executions > E.ENUMERATION_BUDGET:
            raise S.Unknown(f"more than {E.ENUMERATION_BUDGET} executions to enumerate")
        yield pts, n


def _points(addr_terms, const, loops, constraint, grid, block, size, shared, blocks=None):
    """The requests of the enumerated points of `blocks` (None: the grid)."""
    used = set(_TIDS | _BIDS) | bases(addr_terms) | bases(E.constraint_vars(constraint))
    e = E.Enumeration(loops, used, grid, block, blocks, constraint)
    total = _NONE
    loop_ids = [k for k, _ in loops]
    for pts, n in _kept(e, constraint):
        if not n:
            continue
        addr = np.broadcast_to(const + lin(addr_terms, pts), (n,))
        ids, lane = _request_ids(pts, n, grid, block, loop_ids, True)
        total = _add(total, requests(ids, lane, addr, size, shared))
    return total


def _by_block_class(addr_terms, const, loops, constraint, grid, block, size, shared):
    """The requests by classes of blocks (static_blocks.py's split), or None where the formula
    does not split into a block part and a thread-and-loop part."""
    parts = split(addr_terms, loops, constraint)
    if parts is None:
        return None
    (a_b, a_i), block_cs, inner_cs, mixed = parts
    # one block's requests where the thread-only conditions hold
    inner = _join(inner_cs)
    e = E.Enumeration(loops, set(_TIDS) | bases(a_i) | bases(E.constraint_vars(inner)) |
                      set().union(*(bases(ci) for _, _, ci, _ in mixed)),
                      (1, 1, 1), block, None, inner)
    loop_ids = [k for k, _ in loops]
    chunks = [(pts, n) for pts, n in _kept(e, inner) if n]
    if not chunks:
        return _NONE
    if len(chunks) > 1:
        return None  # one block's points over several chunks: enumerate the grid instead
    pts, n = chunks[0]
    ids, lane = _request_ids(pts, n, grid, block, loop_ids, False)
    rel = np.broadcast_to(np.int64(0) + lin(a_i, pts), (n,))
    spans = []
    for _, _, ci, _ in mixed:
        c = np.broadcast_to(np.int64(0) + lin(ci, pts), (n,))
        spans.append((int(c.min()), int(c.max())))
    residues = np.zeros(128, np.int64)  # full blocks by (const + A_B(b)) mod 128
    undecided = []
    n_blocks = grid[0] * grid[1] * grid[2]
    for b0 in range(0, n_blocks, E.CHUNK):
        bids = np.arange(b0, min(n_blocks, b0 + E.CHUNK), dtype=np.int64)
        full, empty, bpts = decided_blocks(bids, grid, block_cs, mixed, spans)
        undecided.append(bids[~full & ~empty])
        at = np.broadcast_to(const + lin(a_b, bpts), bids.shape)[full] % 128
        residues += np.bincount(at, minlength=128)
    total = _NONE
    for r in np.flatnonzero(residues).tolist():
        total = _add(total, requests(ids, lane, rel + r, size, shared), int(residues[r]))
    rest = np.concatenate(undecided)
    if len(rest):
        total = _add(total, _points(addr_terms, const, loops, constraint, grid, block, size,
                                    shared, blocks=rest))
    return total


__all__ = ["warp_stats"]
