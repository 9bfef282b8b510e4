"""Values at the points of an enumeration (runtime/static_counts._enumerate): each variable's
value at every point of a chunk, derived values (quotients, remainders, minima, a geometric
loop's table) with C's integer semantics, conditions as masks, and loops' trip counts.

Stage: host runtime (imports only passes/symbolic). A chunk's Points keep the derived values
made so far: an address and its condition read the same ones (jcb_v1: i and j, from t / tilesX
and t % tilesX), and each is a few passes over millions of points.
"""
from __future__ import annotations

import numpy as np

from gmprof.passes import symbolic as S

CMP = {"<": lambda d: d < 0, "<=": lambda d: d <= 0, ">": lambda d: d > 0,
       ">=": lambda d: d >= 0, "==": lambda d: d == 0, "!=": lambda d: d != 0}


def derived(v) -> bool:
    return isinstance(v, tuple) and v[0] in S.DERIVED


def bases(terms) -> set:
    """The base variables (thread, block, iteration) behind evaluated terms: a derived one's
    (('qdiv', ((('tid.x', 1),), 0), 32) -> tid.x) are those of its operands."""
    out = set()
    for v in terms:
        if derived(v):
            out |= bases(dict(v[1][0]))
            if v[0] in ("qmin", "qmax"):
                out |= bases(dict(v[2][0]))
        else:
            out.add(v)
    return out


class Points(dict):
    """Values at every point of a chunk; .made: the derived ones (t / tilesX, ...) made so far (an
    address and its condition read the same ones, each a few passes over millions of points)."""
    made: dict


def lin(terms: dict, pts: dict):
    total = 0
    for v, x in terms.items():
        values = point_values(v, pts)
        if isinstance(total, np.ndarray) and isinstance(values, np.ndarray) and \
                total.shape == values.shape:
            total += values if x == 1 else x * values  # into the sum made here: no new array
        else:
            total = total + x * values  # (a fresh array: never pts' own, nor a memo's)
    return total if not isinstance(total, int) else np.int64(total)


def point_values(v, pts):
    """A variable's value at every point; derived ones computed with C's integer semantics."""
    if not derived(v):
        return pts[v]
    memo = pts.__dict__.setdefault("made", {}) if isinstance(pts, Points) else None
    try:
        if memo is not None and v not in memo:
            memo[v] = derived_values(v, pts)
        return memo[v] if memo is not None else derived_values(v, pts)
    except TypeError:  # a table that cannot be a key: made each time
        return derived_values(v, pts)


def derived_values(v, pts):
    tag, (at, ac), b = v
    a = ac + lin(dict(at), pts)
    if tag in ("qmin", "qmax"):
        bt, bc = b
        other = bc + lin(dict(bt), pts)
        return np.minimum(a, other) if tag == "qmin" else np.maximum(a, other)
    a = np.asarray(a, np.int64)
    if tag == "qtab":  # a geometric loop's iterator: its iteration's value
        return np.asarray(b, np.int64)[a]
    if b > 0 and a.size and int(a.min()) >= 0:  # here floor and truncation agree
        return a // b if tag == "qdiv" else a % b
    q = np.abs(a) // abs(b)  # C division truncates toward zero
    q = np.where((a < 0) != (b < 0), -q, q)
    return q if tag == "qdiv" else a - q * b


def trips(cmp, start, bound, step):
    start = np.broadcast_to(np.asarray(start, np.int64), np.shape(bound) if np.ndim(bound)
                            else np.shape(start))
    bound = np.broadcast_to(np.asarray(bound, np.int64), start.shape)
    if step == 0:
        raise S.Unknown("a loop with step 0")
    s = abs(step)
    if cmp in ("<", "<=") and step > 0:
        d = bound - start + (1 if cmp == "<=" else 0)
        return np.maximum(0, (d + s - 1) // s)
    if cmp in (">", ">=") and step < 0:
        d = start - bound + (1 if cmp == ">=" else 0)
        return np.maximum(0, (d + s - 1) // s)
    if cmp == "!=":
        d = bound - start
        if np.any(d % step != 0) or np.any(d // step < 0):
            raise S.Unknown("a != loop that does not land on its bound")
        return d // step
    raise S.Unknown("a loop that does not terminate as written")


def eval_constraint(c, pts):
    tag = c[0]
    if tag == "true":
        return None
    if tag == "false":
        return np.zeros(len(next(iter(pts.values()))), bool)
    if tag == "not":
        m = eval_constraint(c[1], pts)
        return np.zeros(len(next(iter(pts.values()))), bool) if m is None else ~m
    if tag in ("and", "or"):
        a, b = eval_constraint(c[1], pts), eval_constraint(c[2], pts)
        if tag == "and":
            if a is None:
                return b
            return a if b is None else (a & b)
        if a is None or b is None:
            return None
        return a | b
    _, op, terms, const = c
    d = const + lin(terms, pts)
    n = len(next(iter(pts.values())))
    return np.broadcast_to(CMP[op](d), (n,)).copy()


__all__ = ["CMP", "Points", "bases", "derived", "eval_constraint", "lin", "point_values",
           "trips"]
