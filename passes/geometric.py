"""Geometric loops: `for (int s = C; s CMP B; s >>= k)` with C, B and k known when compiling.

Analysis helpers (loops.py finds such loops: Loop.geometric) for values.py (the iterator's value) and
classify.py (the loop's domain). The iterator takes a fixed list of values, computed here in C's
integer arithmetic, so iteration number i gives s = table[i]: a quasi-affine derived variable
('qtab', iter, ('table', v0, v1, ...)) that the static counter evaluates point by point. A tree
reduction's sites then get static counts (spmv's and em's `partial[tid] += partial[tid + s]`
under `if (lane < s)`) instead of a counter update per iteration:

    for (int s = THREADS_PER_ROW / 2; s > 0; s >>= 1)   ->  s = (16, 8, 4, 2, 1)[iter]

Also `s /= 2`, `s = s >> 1`, `s = s / 2`. The iterator must be declared in the loop's init and
changed only by that step; the loop has no early exit or `continue`; at most 64 values.
"""
from __future__ import annotations

from . import symbolic as S
from .value_domain import Value

MAX_VALUES = 64


def table(values, loop) -> tuple | None:
    """The iterator's values, in order (None: not known when compiling, or too many)."""
    g = loop.geometric
    if g is None:
        return None
    nums = []
    for part in (g.init, g.bound, g.amount):
        v = values.value(part)
        n = values._compile_time_int(v.affine.const) \
            if not v.deps and v.affine is not None and v.affine.is_constant else None
        if n is None:
            return None
        nums.append(n)
    s, bound, amount = nums
    if (g.op == ">>" and not 0 < amount < 63) or (g.op == "/" and amount in (0, 1, -1)):
        return None
    test = {"<": lambda a: a < bound, "<=": lambda a: a <= bound, ">": lambda a: a > bound,
            ">=": lambda a: a >= bound, "!=": lambda a: a != bound}[g.compare]
    out = []
    while test(s):
        if len(out) == MAX_VALUES:
            return None
        out.append(s)
        s = s >> amount if g.op == ">>" else int(s / amount)  # C: toward zero
    return tuple(out)


def geometric_value(values, loop, sym, node) -> Value | None:
    """The iterator's value inside its geometric loop: table[iteration]."""
    g = loop.geometric
    if g is None or g.iterator is not sym:
        return None
    reaching = values.reaching
    inside = [d for d in reaching.defs.get(sym, []) if d.node is not None and
              values._in_loop(d.node, loop)]
    step_def = reaching.def_of_node.get(g.step_node)
    if step_def is None or inside != [step_def] or sym in reaching.address_taken:
        return None
    vals = table(values, loop)
    if vals is None:
        return None
    k = S.Affine.var(("iter", loop))
    return Value(frozenset({("loop", loop)}),
                 S.Affine.var(("qtab", k, ("table",) + vals)), ())


def geometric_domain(values, loop):
    """(domain, problem) for classify's static formulas: iterations 0 .. len(table) - 1."""
    if loop.has_early_exit or loop.continues:
        return None, f"{loop.label} may end an iteration early"
    vals = table(values, loop)
    if vals is None:
        return None, f"the values of {loop.label} are not known when compiling"
    return ("<", S.Affine.constant(S.ZERO), S.Affine.constant(S.const(len(vals))), S.ONE,
            1), None


__all__ = ["table", "geometric_value", "geometric_domain"]
