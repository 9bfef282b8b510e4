"""Enumerate a static site's executions with numpy: the points (block, thread, loop iterations)
at which its formula runs, chunk by chunk, and the accesses per counter unit they make.

Stage: host runtime, under static_counts.py (which tries closed forms first) and beside
static_blocks.py (which enumerates one block and the boundary blocks only). Takes evaluated
formulas (plain dicts of {variable: coefficient}, see static_counts.prepare); returns counts
per unit, accesses out of range and executions, or raises symbolic.Unknown past a budget, and
the runtime counts the site on the device instead.

Thread indices a condition bounds on its own (`if (tid <= rowsPerBlock)`, `if (lane == 0)`) are
enumerated over their bounded range only: spmv's 256-thread blocks stage 9 rowPtr entries, and
enumerating 9 threads a block instead of 256 is what keeps a 4M-row launch inside the budget.
"""
from __future__ import annotations

import numpy as np

from gmprof.passes import symbolic as S

from . import layout as LY
from .static_points import Points, bases, eval_constraint, lin, trips

# Executions enumerated at most, per site per launch: about a second of numpy. Beyond it the site
# is counted on the device (a few atomics) rather than on the host (seconds per launch).
ENUMERATION_BUDGET = 20_000_000
# threads (points) enumerated, whether or not a condition keeps them: `if (i < n)` over a grid
# of 2^31 blocks executes n times but would enumerate 2^37 points (hours, in numpy)
POINTS_BUDGET = 8 * ENUMERATION_BUDGET
CHUNK = 4_000_000  # points per numpy chunk

VAR_DIMS = {"tid.x": 0, "tid.y": 1, "tid.z": 2}
BLOCK_DIMS = {"bid.x": 0, "bid.y": 1, "bid.z": 2}


def conjuncts(c) -> list:
    if c[0] == "and":
        return conjuncts(c[1]) + conjuncts(c[2])
    return [c]


def constraint_vars(c) -> set:
    tag = c[0]
    if tag == "cmp":
        return set(c[2])
    if tag == "not":
        return constraint_vars(c[1])
    if tag in ("and", "or"):
        return constraint_vars(c[1]) | constraint_vars(c[2])
    return set()


def thread_bounds(constraint, block) -> list | None:
    """[(low, count)] per thread dimension: the range a conjunct `a*tid.d + b OP 0` on that
    index alone leaves it (the conjunct stays in the constraint: it holds on the range).
    None: some dimension is left empty (the site never runs)."""
    lo = [0, 0, 0]
    hi = [int(n) - 1 for n in block]
    for c in conjuncts(constraint):
        if c[0] != "cmp" or len(c[2]) != 1:
            continue
        (v, a), = c[2].items()
        if v not in VAR_DIMS or a == 0:
            continue
        d, op, b = VAR_DIMS[v], c[1], c[3]
        if op in ("==", "!="):
            if op == "==" and (-b) % a == 0:
                lo[d] = max(lo[d], -b // a)
                hi[d] = min(hi[d], -b // a)
            elif op == "==":
                return None
            continue
        lo[d], hi[d] = bound(a, b, op, lo[d], hi[d])
    if any(h < l for l, h in zip(lo, hi)):
        return None
    return [(l, h - l + 1) for l, h in zip(lo, hi)]


def bound(a: int, b: int, op: str, lo: int, hi: int) -> tuple[int, int]:
    """[lo, hi] narrowed by `a*v + b OP 0` (a != 0, OP an ordering)."""
    if a < 0:
        a, b = -a, -b
        op = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}[op]
    if op == "<":  # a*v < -b  <=>  v <= floor((-b - 1) / a)
        return lo, min(hi, (-b - 1) // a)
    if op == "<=":
        return lo, min(hi, (-b) // a)
    if op == ">":
        return max(lo, (-b) // a + 1), hi
    return max(lo, -(b // a)), hi


class Enumeration:
    """The points of a formula's loop nest over some blocks, one chunk at a time.

    `for pts in e.chunks(): ...; e.executions += kept` : the caller adds the executions it keeps
    (after its conditions), which the budget checks of the next chunk read."""

    def __init__(self, loops, used, grid, block, blocks=None, constraint=("true",)):
        self.loops = loops  # [(k, (cmp, init terms, init const, bound terms, bound const, step))]
        self.used = set(used)
        for _, (_, it, _, bt, _, _) in loops:
            self.used |= bases(it) | bases(bt)
        self.grid = tuple(int(g) for g in grid)
        self.blocks = blocks  # linear block indices (None: every block of the grid)
        self.thread_ranges = thread_bounds(constraint, block)
        self.executions = 0

    @property
    def n_blocks(self) -> int:
        return len(self.blocks) if self.blocks is not None else \
            self.grid[0] * self.grid[1] * self.grid[2]

    def chunks(self):
        if self.thread_ranges is None:
            return
        (lx, nx), (ly, ny), (lz, nz) = self.thread_ranges
        threads = nx * ny * nz
        blocks = self.n_blocks
        if blocks * threads > POINTS_BUDGET:
            raise S.Unknown(f"more than {POINTS_BUDGET} threads to enumerate")
        grid = self.grid
        per_chunk = max(1, CHUNK // max(threads, 1))
        n_chunks = -(-blocks // per_chunk)
        for b0 in range(0, blocks, per_chunk):
            b1 = min(blocks, b0 + per_chunk)
            lin_b = np.repeat(self.blocks[b0:b1] if self.blocks is not None
                              else np.arange(b0, b1, dtype=np.int64), threads)
            lin_t = np.tile(np.arange(threads, dtype=np.int64), b1 - b0)
            pts = Points({k: a for k, a in {
                "bid.x": lin_b % grid[0], "bid.y": (lin_b // grid[0]) % grid[1],
                "bid.z": lin_b // (grid[0] * grid[1]),
                "tid.x": lx + lin_t % nx, "tid.y": ly + (lin_t // nx) % ny,
                "tid.z": lz + lin_t // (nx * ny),
            }.items() if k in self.used or k == "bid.x"})  # (bid.x: the points' count)
            for k, (cmp, it, ic, bt, bc, step) in self.loops:
                npoints = len(next(iter(pts.values())))
                start = np.broadcast_to(ic + lin(it, pts), (npoints,))
                bound = np.broadcast_to(bc + lin(bt, pts), (npoints,))
                trip = np.broadcast_to(trips(cmp, start, bound, step),
                                       (npoints,)).astype(np.int64)
                total = int(trip.sum())
                # give up early: this chunk's share, extrapolated to all the blocks
                if self.executions + total > ENUMERATION_BUDGET or \
                        (b0 == 0 and total * n_chunks > ENUMERATION_BUDGET):
                    raise S.Unknown(f"more than {ENUMERATION_BUDGET} executions to enumerate")
                idx = np.repeat(np.arange(len(trip)), trip)
                pts = Points({v: a[idx] for v, a in pts.items()})
                # iteration number within each point's run
                offsets = np.cumsum(trip) - trip
                pts[("iter", k)] = np.arange(total, dtype=np.int64) - np.repeat(offsets, trip)
            yield pts


def count(addr_terms, addr_const, loops, constraint, grid, block, n_units, unit, access_size,
          per_word, touched, nbytes=None, blocks=None) -> tuple[np.ndarray, int, int]:
    """(counts per unit, out of range, executions) of the points of `blocks` (linear block
    indices; None: the whole grid) where the constraint holds."""
    counts = np.zeros(n_units, np.int64)
    oor = 0
    e = Enumeration(loops, bases(addr_terms) | bases(constraint_vars(constraint)), grid, block,
                    blocks, constraint)
    for pts in e.chunks():
        mask = eval_constraint(constraint, pts)
        npoints = len(next(iter(pts.values())))
        addr = np.broadcast_to(addr_const + lin(addr_terms, pts), (npoints,))
        if mask is not None:
            addr = addr[mask]
        e.executions += len(addr)
        if e.executions > ENUMERATION_BUDGET:
            raise S.Unknown(f"more than {ENUMERATION_BUDGET} executions to enumerate")
        c, o = LY.count_units(addr, access_size, n_units, unit, per_word=per_word,
                              touched=touched, nbytes=nbytes)
        counts += c
        oor += o
    return counts, oor, e.executions


__all__ = ["BLOCK_DIMS", "CHUNK", "ENUMERATION_BUDGET", "Enumeration", "POINTS_BUDGET",
           "VAR_DIMS", "bound", "conjuncts", "constraint_vars", "count", "thread_bounds"]
