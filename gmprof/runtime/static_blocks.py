"""Count a static site over a large grid by classes of blocks: one block's points enumerated
once, the blocks where every condition is decided counted as copies of it, and only the
boundary blocks enumerated.

Stage: host runtime, under static_counts.py (tried before the plain enumeration). spmv's
`if (row < nRows)` with `row = blockIdx.x * rowsPerBlock + threadIdx.x / 32` runs 134M times
over 524,288 blocks at its large size: enumerating it went past the budget and the site was
counted on the device (its overhead) after seconds of numpy (the user's wait). Here it is one
block of 256 threads and a test per block.

The split applies when every term of the address, the loops and the conditions depends on the
block indices alone (B) or on the thread and loop indices alone (I): address = A_B(b) + A_I(p),
loops over I only, and each condition either B-only, I-only, or `c_B(b) + c_I(p) OP 0`.
The I-part's points P (one block's threads and iterations, kept where the I-only conditions
hold) are the same in every block, so in block b the site runs at the points of P where the
mixed conditions hold, at addresses A_B(b) + A_I(p). For each block and mixed condition, the
condition holds at every point of P when it holds at c_I's minimum and maximum over P (for
<, <=, >, >=; for == and != see _decided), and at none when it fails at both; a block where
every mixed condition holds everywhere (and the B-only ones hold) makes exactly P's
histogram shifted by A_B(b); one where some condition holds nowhere makes nothing; the rest
are enumerated point by point (static_enumerate.count), as before.
Anything else (a derived term mixing B and I, `min(firstRow + tid, n)`; a loop bound on the
block index) returns None and the caller enumerates the whole grid.
"""
from __future__ import annotations

import numpy as np

from gmprof.passes import symbolic as S

from . import layout as LY
from . import static_enumerate as E
from .static_points import CMP, Points, bases, eval_constraint, lin

_B = frozenset(E.BLOCK_DIMS)


def _side(terms: dict) -> tuple[dict, dict] | None:
    """terms split into (B part, I part); None if one term mixes them."""
    b, i = {}, {}
    for v, x in terms.items():
        vs = bases({v: x})
        if vs <= _B:
            b[v] = x
        elif not vs & _B:
            i[v] = x
        else:
            return None
    return b, i


def split(addr_terms, loops, constraint):
    """((A_B, A_I), block-only conditions, thread-and-loop-only conditions, mixed conditions
    as (op, c_B, c_I, constant)), or None when the formula does not split."""
    address = _side(addr_terms)
    if address is None:
        return None
    for _, (_, it, _, bt, _, _) in loops:
        if (bases(it) | bases(bt)) & _B:
            return None
    block_cs, inner_cs, mixed = [], [], []
    for c in E.conjuncts(constraint):
        vs = bases(E.constraint_vars(c))
        if not vs & _B:
            inner_cs.append(c)
        elif vs <= _B:
            block_cs.append(c)
        elif c[0] == "cmp":
            parts = _side(c[2])
            if parts is None:
                return None
            mixed.append((c[1], parts[0], parts[1], c[3]))
        else:
            return None
    return address, block_cs, inner_cs, mixed


def decided_blocks(ids, grid, block_cs, mixed, spans):
    """(blocks where every condition holds at every point, blocks where one holds at none,
    their block points) of the linear block ids, given each mixed condition's c_I span."""
    bpts = Points({"bid.x": ids % grid[0], "bid.y": (ids // grid[0]) % grid[1],
                   "bid.z": ids // (grid[0] * grid[1])})
    full = eval_constraint(_join(block_cs), bpts)
    full = np.ones(len(ids), bool) if full is None else full
    empty = ~full
    for (op, cb, _, const), (lo, hi) in zip(mixed, spans):
        vb = np.broadcast_to(const + lin(cb, bpts), ids.shape)
        always, never = _decided(op, vb + lo, vb + hi, lo == hi)
        full &= always
        empty |= never
    return full, empty, bpts


def count_by_block_class(addr_terms, addr_const, loops, constraint, grid, block, n_units,
                         unit, access_size, per_word, touched, nbytes=None):
    """(counts, out of range, executions), or None when the formula does not split."""
    n_blocks = int(grid[0]) * int(grid[1]) * int(grid[2])
    if n_blocks <= 1:
        return None
    parts = split(addr_terms, loops, constraint)
    if parts is None:
        return None
    (a_b, a_i), block_cs, inner_cs, mixed = parts
    if not mixed and not a_b:
        return None  # nothing to gain: the caller factors out unused block indices

    # one block's points where the I-only conditions hold: their I-addresses and the I-parts
    # of the mixed conditions
    inner = _join(inner_cs)
    e = E.Enumeration(loops, bases(a_i) | bases(E.constraint_vars(inner)) |
                      set().union(*(bases(ci) for _, _, ci, _ in mixed)),
                      (1, 1, 1), block, None, inner)
    addr_parts, c_parts = [], [[] for _ in mixed]
    for pts in e.chunks():
        mask = eval_constraint(inner, pts)
        n = len(next(iter(pts.values())))
        keep = (lambda a: a[mask]) if mask is not None else (lambda a: a)
        addr_parts.append(keep(np.broadcast_to(np.int64(0) + lin(a_i, pts), (n,))))
        for k, (_, _, ci, _) in enumerate(mixed):
            c_parts[k].append(keep(np.broadcast_to(np.int64(0) + lin(ci, pts), (n,))))
        e.executions += len(addr_parts[-1])
        if e.executions > E.ENUMERATION_BUDGET:
            raise S.Unknown(f"more than {E.ENUMERATION_BUDGET} executions in one block")
    inner_addr = np.concatenate(addr_parts) if addr_parts else np.zeros(0, np.int64)
    counts = np.zeros(n_units, np.int64)
    if not len(inner_addr):
        return counts, 0, 0
    spans = [(int(np.min(np.concatenate(p))), int(np.max(np.concatenate(p)))) for p in c_parts]
    positions, weights = np.unique(inner_addr, return_counts=True)

    oor = executions = 0
    undecided = []
    offsets: dict = {}  # A_B(b) of the full blocks -> how many
    grid = tuple(int(g) for g in grid)
    per_chunk = E.CHUNK
    for b0 in range(0, n_blocks, per_chunk):
        ids = np.arange(b0, min(n_blocks, b0 + per_chunk), dtype=np.int64)
        full, empty, bpts = decided_blocks(ids, grid, block_cs, mixed, spans)
        undecided.append(ids[~full & ~empty])
        if full.any():
            off = np.broadcast_to(addr_const + lin(a_b, bpts), ids.shape)[full]
            u, n = np.unique(off, return_counts=True)
            for o, m in zip(u.tolist(), n.tolist()):
                offsets[o] = offsets.get(o, 0) + m
    # the full blocks: P's histogram at each block offset, weighted by its blocks
    if offsets:
        offs = np.fromiter(offsets, np.int64, len(offsets))
        mult = np.fromiter(offsets.values(), np.int64, len(offsets))
        oor += _shifted_copies(counts, offs, mult, positions, weights, access_size, n_units,
                               unit, per_word, touched, nbytes)
        executions += int(mult.sum()) * len(inner_addr)
    rest = np.concatenate(undecided)
    if len(rest):
        c, o, x = E.count(addr_terms, addr_const, loops, constraint, grid, block, n_units, unit,
                          access_size, per_word, touched, nbytes, blocks=rest)
        counts += c
        oor += o
        executions += x
    return counts, oor, executions


# Element additions the shifted copies may cost (about a second of numpy): bo_v1 at its large
# size is 32,768 blocks x 1,025 addresses = 34M, over the old budget of offsets x addresses.
COPIES_BUDGET = 1_000_000_000


def _shifted_copies(counts, offs, mult, positions, weights, access_size, n_units, unit,
                    per_word, touched, nbytes) -> int:
    """Add to counts one block's accesses (byte positions, weights) copied at each block
    offset (offs, unique, each mult blocks); returns the accesses out of range. The copy's
    histogram is made once per offset residue modulo the unit, in units, and added at each
    offset's unit shift: the cost is offsets x histogram width additions, not offsets x
    positions histograms. Offsets whose copy reaches outside the object (out-of-range
    accesses, the padding of its last unit) are counted access by access, as before."""
    oor = 0
    lo, hi = int(positions.min()), int(positions.max()) + int(access_size)
    limit = n_units * unit if nbytes is None else min(int(nbytes), n_units * unit)
    inside = (offs + lo >= 0) & (offs + hi <= limit)
    edge_offs, edge_mult = offs[~inside], mult[~inside]
    if len(edge_offs):
        if len(edge_offs) * len(positions) > COPIES_BUDGET:
            raise S.Unknown(f"more than {COPIES_BUDGET} block offsets x addresses")
        at = (edge_offs[:, None] + positions[None, :]).ravel()
        w = (edge_mult[:, None] * weights[None, :]).ravel()
        c, o = LY.count_units(at, access_size, n_units, unit, per_word=per_word,
                              touched=touched, weights=w, nbytes=nbytes)
        counts += c
        oor += o
    offs, mult = offs[inside], mult[inside]
    for r in np.unique(offs % unit).tolist():
        pick = offs % unit == r
        shifts, m = (offs[pick] - r) // unit, mult[pick]
        # one copy at byte offset r, in units [first, first + width)
        first = (lo + r) // unit
        width = (hi + r + unit - 1) // unit - first
        if len(shifts) * min(width, len(positions)) > COPIES_BUDGET:
            raise S.Unknown(f"more than {COPIES_BUDGET} block offsets x counter units")
        if len(positions) < width:
            # a sparse copy (a tile's rows, a row apart): its accesses at each offset
            _add_accesses(counts, offs[pick], m, positions, weights, access_size, n_units,
                          unit, per_word, touched)
            continue
        h, _ = LY.count_units(positions + r - first * unit, access_size, width, unit,
                              per_word=per_word, touched=touched, weights=weights)
        _add_copies(counts, np.sort(shifts + first), m[np.argsort(shifts)], h)
    return oor


def _add_accesses(counts, offs, mult, positions, weights, access_size, n_units, unit,
                  per_word, touched) -> None:
    """counts += the accesses at every offset, a few offsets at a time (each offset's copy
    inside the object)."""
    per = max(1, (1 << 22) // max(len(positions), 1))
    for k in range(0, len(offs), per):
        at = (offs[k:k + per, None] + positions[None, :]).ravel()
        w = (mult[k:k + per, None] * weights[None, :]).ravel()
        c, _ = LY.count_units(at, access_size, n_units, unit, per_word=per_word,
                              touched=touched, weights=w)
        counts += c


def _add_copies(counts, starts, m, h) -> None:
    """counts[s + j] += m_s * h[j] for every start s (sorted, unique, each copy inside counts).
    Starts a constant step apart (one block after another: bo's `opt * (numSteps + 1)`) are
    rows of one strided view, added in whole columns of `step` units, which never overlap
    within a column; other starts, one fancy-indexed add per unit of the copy."""
    width = len(h)
    steps = np.diff(starts)
    if len(starts) > 1 and (steps == steps[0]).all():
        step = int(steps[0])
        for j0 in range(0, width, step):
            cols = h[j0:j0 + step]
            view = np.lib.stride_tricks.as_strided(
                counts[int(starts[0]) + j0:], shape=(len(starts), len(cols)),
                strides=(step * counts.itemsize, counts.itemsize))
            view += m[:, None] * cols[None, :]
        return
    if len(starts) <= width:
        for s, k in zip(starts.tolist(), m.tolist()):
            counts[s:s + width] += k * h
        return
    for j in np.flatnonzero(h).tolist():
        counts[starts + j] += m * h[j]


def _decided(op, at_lo, at_hi, constant):
    """(holds at every point, holds at none) of `v OP 0` for v over a block's values, given
    its values at c_I's minimum and maximum (constant: c_I takes one value). For the
    orderings, v's extremes decide; for == and != only a value range that excludes 0 (or a
    single value) does."""
    f = CMP[op]
    if op in ("<", "<=", ">", ">="):
        a, b = f(at_lo), f(at_hi)
        return a & b, ~a & ~b
    excludes_zero = (at_lo > 0) | (at_hi < 0)
    if op == "==":
        return (at_lo == 0) & constant, excludes_zero
    return excludes_zero, (at_lo == 0) & constant


def _join(cs):
    out = ("true",)
    for c in cs:
        out = c if out == ("true",) else ("and", out, c)
    return out


__all__ = ["count_by_block_class", "decided_blocks", "split"]
