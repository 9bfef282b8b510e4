"""Grid-stride loops as virtual blocks: a static site's counts without enumerating the grid.

Stage: host runtime, under static_counts.py (applied to a formula evaluated at a launch, before
its counting method is chosen). A grid-stride loop

    for (first = blockIdx.x * C + C0; first < N; first += gridDim.x * C)   // em_v1, jcb_v2
    for (t = blockIdx.x * blockDim.x + threadIdx.x; t < n; t += gridDim.x * blockDim.x)

gives each value first = C0 + C v (v = 0, 1, ... while first < N) to exactly one block, block
v mod gridDim.x. Counts do not depend on which block made an access, so the launch counts as
one with gridDim.x = V (the number of such v) in which block v runs the loop's body once, at
first = C0 + C v: blockIdx.x + gridDim.x * iter becomes the virtual block index. That holds
when blockIdx.x enters the address, the other loops and the conditions only through the
loop's iterator (every affine form's iteration coefficient is gridDim.x times its blockIdx.x
coefficient). The virtual launch has no loop whose bound depends on the block index, so the
block-class method (static_blocks.py) counts it by classes of blocks; at em_v1's large size the
grid-stride sites were past the enumeration budget and counted on the device instead.
"""
from __future__ import annotations

from gmprof.passes import symbolic as S

from .static_points import derived


class _NotVirtual(Exception):
    pass


_THREADS = {"tid.x": 0, "tid.y": 1, "tid.z": 2}


def virtual_blocks(inputs: tuple) -> tuple | None:
    """The prepared inputs (static_counts.prepare) with one grid-stride loop over blockIdx.x
    replaced by virtual blocks, or None when no loop is one.

    The loop's iterator may also hold thread indices (`t = blockIdx.x * blockDim.x +
    threadIdx.x; t < n; t += gridDim.x * blockDim.x`, the common CUDA idiom): with
    b' = blockIdx.x + gridDim.x * iter the iterator is C b' + (thread part) + C0, the thread
    indices are unchanged, and the loop's condition becomes a condition of the virtual launch
    (mixed block and thread terms, which static_blocks.py decides per block)."""
    addr_terms, addr_const, loops, constraint, grid, block, *rest = inputs
    g = int(grid[0])
    for k, (cmp, it, ic, bt, bc, step) in enumerate(loops):
        if "bid.x" not in it or not set(it) <= {"bid.x", *_THREADS} or bt or \
                cmp not in ("<", "<=") or g < 1:
            continue
        c = int(it["bid.x"])
        if c <= 0 or step != c * g:
            continue
        try:
            fix = _Rewrite(k, g)
            new_loops = []
            for j, (cj, itj, icj, btj, bcj, sj) in enumerate(loops):
                if j != k:
                    new_loops.append((cj, fix.terms(itj), icj, fix.terms(btj), bcj, sj))
            new_inputs = (fix.terms(addr_terms), addr_const, tuple(new_loops),
                          fix.constraint(constraint))
        except _NotVirtual:
            continue
        # virtual blocks: enough for the thread whose part of the iterator is smallest
        least = ic + sum(min(0, int(x) * (int(block[_THREADS[v]]) - 1))
                         for v, x in it.items() if v in _THREADS)
        n = max(int(S.trip_value(cmp, least, bc, c, 1)), 0)
        addr, const, new_loops, cons = new_inputs
        if len(it) > 1:  # the loop's own condition, per virtual block and thread
            own = ("cmp", cmp, dict(it), ic - bc)
            cons = own if cons == ("true",) else ("and", cons, own)
        return (addr, const, new_loops, cons, (n, int(grid[1]), int(grid[2])), block, *rest)
    return None


class _Rewrite:
    """blockIdx.x + gridDim.x * iter_k -> the virtual blockIdx.x, in every affine form; the
    loops after k are renumbered (k is gone)."""

    def __init__(self, k: int, g: int):
        self.k, self.g = k, g

    def terms(self, terms: dict) -> dict:
        if terms.get(("iter", self.k), 0) != self.g * terms.get("bid.x", 0):
            raise _NotVirtual
        out: dict = {}
        for v, x in terms.items():
            if v != ("iter", self.k):
                key = self.var(v)
                out[key] = out.get(key, 0) + x
        return {v: x for v, x in out.items() if x}

    def var(self, v):
        if derived(v):
            tag, (at, ac), other = v
            left = (self._sorted(self.terms(dict(at))), ac)
            if tag in ("qmin", "qmax"):
                bt, bc = other
                other = (self._sorted(self.terms(dict(bt))), bc)
            return (tag, left, other)
        if isinstance(v, tuple) and v[0] == "iter" and v[1] > self.k:
            return ("iter", v[1] - 1)
        return v

    @staticmethod
    def _sorted(terms: dict) -> tuple:
        return tuple(sorted(terms.items(), key=str))

    def constraint(self, c):
        tag = c[0]
        if tag in ("true", "false"):
            return c
        if tag == "cmp":
            return ("cmp", c[1], self.terms(c[2]), c[3])
        if tag == "not":
            return ("not", self.constraint(c[1]))
        return (tag, self.constraint(c[1]), self.constraint(c[2]))


__all__ = ["virtual_blocks"]
