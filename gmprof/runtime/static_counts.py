"""Count static accesses at launch, from their formulas, without running them.

Takes a StaticFormula (passes/classify.py: an affine byte address over thread, block and loop
indices, loop bounds, affine constraints), the launch's values (an `env` that evaluates launch
symbols: arguments, blockDim, macros, sizeof...) and the object's counter unit; returns the
number of accesses per counter (per element of a device array, per 4-byte word of a shared
array), the accesses that fall outside the object, and the total executions.

Three methods:
  box        every loop's bounds are constants and every condition holds everywhere in the
             box: the histogram of an affine function over a box, built one variable at a
             time with a strided prefix sum (O(range) per variable, whatever the trip counts)
  (a grid-stride loop over the blocks first becomes a grid of virtual blocks, one a trip:
  static_gridstride.py)
  blocks     block and thread indices enter as a sum (static_blocks.py): one block enumerated,
             the blocks where the conditions are decided counted as its copies, the boundary
             blocks enumerated
  enumerate  otherwise: the executions are enumerated with numpy, block chunk by block chunk,
             loops expanded per point (triangular and thread-dependent bounds are fine), the
             conditions applied as masks; bounded by a budget of executions
             (static_enumerate.py)
If none applies (a budget is exceeded), Unknown is raised and the runtime counts the site on
the device instead.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import gcd

import numpy as np

from gmprof.passes import symbolic as S

from . import layout as LY
from . import static_enumerate as E
from .static_blocks import count_by_block_class
from .static_gridstride import virtual_blocks
from .static_enumerate import BLOCK_DIMS as _BLOCK_DIMS, ENUMERATION_BUDGET, \
    VAR_DIMS as _VAR_DIMS, conjuncts as _conjuncts, constraint_vars as _constraint_vars
from .static_points import CMP as _CMP, bases as _bases, derived as _derived


@dataclass
class StaticCount:
    counts: np.ndarray  # int64, one per counter unit of the object
    out_of_range: int
    executions: int
    method: str


def _ival(sym, env) -> int:
    v = S.evaluate(sym, env)
    if isinstance(v, float):
        if not v.is_integer():
            raise S.Unknown(f"{S.describe(sym)} is not an integer ({v})")
        v = int(v)
    return int(v)


def _affine(aff: S.Affine, env) -> tuple[dict, int]:
    """{variable: coefficient}, constant, evaluated at launch. A derived variable (a quotient,
    remainder, min or max, symbolic.DERIVED) becomes a hashable key holding its evaluated
    operands: ('qdiv', (terms, const), divisor) ..."""
    terms: dict = {}
    for v, c in aff.terms:
        key = _var(v, env)
        terms[key] = terms.get(key, 0) + _ival(c, env)
    return {v: x for v, x in terms.items() if x}, _ival(aff.const, env)


def _var(v, env):
    if not S.is_derived(v):
        return v
    tag, a, b = v
    at, ac = _affine(a, env)
    left = (tuple(sorted(at.items(), key=str)), ac)
    if tag in ("qmin", "qmax"):
        bt, bc = _affine(b, env)
        return (tag, left, (tuple(sorted(bt.items(), key=str)), bc))
    if tag == "qtab":
        return (tag, left, tuple(b[1:]))
    den = _ival(b, env)
    if den == 0:
        raise S.Unknown("division by zero in an index")
    return (tag, left, den)


def count_static(formula, env, grid, block, n_units: int, unit: int, access_size: int,
                 per_word: bool, nbytes: int | None = None) -> StaticCount:
    """Accesses per counter unit for one static site in one launch.

    unit: bytes per counter (4 for shared words; the element size for device arrays).
    nbytes: the object's size; accesses past it are out of range even inside the last counter
    unit (the padding of a byte array's last word).
    per_word: shared memory, where an access touches every 4-byte word it covers; for device
    arrays it touches every element it covers.
    """
    return count_prepared(prepare(formula, env, grid, block, n_units, unit, access_size,
                                  per_word, nbytes))


def prepare(formula, env, grid, block, n_units, unit, access_size, per_word,
            nbytes=None) -> tuple:
    """The formula evaluated at a launch: plain ints, strings, tuples and dicts, all that
    count_prepared reads (and a key for static_cache.py)."""
    addr_terms, addr_const = _affine(formula.address, env)
    loops = []
    for cmp, init, bound, step, sign in formula.loops:
        it, ic = _affine(init, env)
        bt, bc = _affine(bound, env)
        loops.append((cmp, it, ic, bt, bc, _ival(step, env) * sign))
    return (addr_terms, addr_const, tuple(loops), _prepare(formula.constraints, env),
            tuple(int(g) for g in grid), tuple(int(b) for b in block), int(n_units), int(unit),
            int(access_size), bool(per_word), None if nbytes is None else int(nbytes))


def count_prepared(inputs: tuple) -> StaticCount:
    # a grid-stride loop over the blocks counts as a grid of virtual blocks, one per trip
    inputs = virtual_blocks(inputs) or inputs
    addr_terms, addr_const, loops, constraint, grid, block, n_units, unit, access_size, \
        per_word, nbytes = inputs
    loops = list(loops)
    ranges = {**{name: int(block[k]) for name, k in _VAR_DIMS.items()},
              **{name: int(grid[k]) for name, k in _BLOCK_DIMS.items()}}
    touched = max(1, -(-access_size // unit)) if not per_word else None
    derived = any(_derived(v) for v in addr_terms) or \
        any(_derived(v) for _, it, _, bt, _, _ in loops for v in list(it) + list(bt)) or \
        any(_derived(v) for v in _constraint_vars(constraint))
    box = not derived and all(not it and not bt for _, it, _, bt, _, _ in loops)
    if box:
        trips = [S.trip_value(cmp, ic, bc, abs(step) if step else 0, 1 if step > 0 else -1)
                 for cmp, _, ic, _, bc, step in loops]
        for k in range(len(loops)):
            ranges[("iter", k)] = trips[k]
        # conditions on one variable (`if (tid < K)`) shrink that variable's range instead;
        # the tightened (shifted) ranges, address and conditions serve the box alone: when
        # other conditions remain undecided, the enumeration below takes the launch's own
        # ranges and the whole condition (`threadIdx.x < R && g >= R`)
        tight, box_const, box_ranges = _tighten(constraint, addr_terms, addr_const, ranges)
        if tight is None:
            return StaticCount(np.zeros(n_units, np.int64), 0, 0, "box")
        verdict = _always(tight, box_ranges, loops, trips)
        if verdict is False:
            return StaticCount(np.zeros(n_units, np.int64), 0, 0, "box")
        if verdict is True:
            return _box(addr_terms, box_const, box_ranges, n_units, unit, access_size, per_word,
                        touched, nbytes)
    # Thread and block indices the formula never uses only multiply the counts: enumerate one
    # value of each (a shared-memory site usually does not depend on blockIdx: one block stands
    # for all of them).
    used = _bases(addr_terms)
    for _, it, _, bt, _, _ in loops:
        used |= _bases(it) | _bases(bt)
    used |= _bases(_constraint_vars(constraint))
    factor = 1
    grid_e, block_e = list(grid), list(block)
    for name, k in _BLOCK_DIMS.items():
        if name not in used:
            factor *= int(grid_e[k])
            grid_e[k] = 1
    for name, k in _VAR_DIMS.items():
        if name not in used:
            factor *= int(block_e[k])
            block_e[k] = 1
    # Loops (and the indices they alone use) that the address and the conditions never see only
    # multiply the counts too: `for (first = blockIdx.x * B; first < N; first += gridDim.x * B)`
    # around a tile loop. Count their points apart and enumerate the rest.
    loops_e, constraint, factor_sep, grid_e, block_e = _separate(
        addr_terms, loops, constraint, grid_e, block_e)
    factor *= factor_sep
    if factor == 0:
        return StaticCount(np.zeros(n_units, np.int64), 0, 0, "enumerate")
    args = (addr_terms, addr_const, loops_e, constraint, tuple(grid_e), tuple(block_e),
            n_units, unit, access_size, per_word, touched, nbytes)
    parts = count_by_block_class(*args)
    method = "blocks" if parts is not None else "enumerate"
    result = StaticCount(*(parts if parts is not None else E.count(*args)), method)
    if factor != 1:
        result = StaticCount(result.counts * factor, result.out_of_range * factor,
                             result.executions * factor, result.method)
    return result


def _separate(addr_terms, loops, constraint, grid_e, block_e):
    """Split the enumeration into independent parts: the part the address depends on, which is
    enumerated point by point, and parts (loops, conditions and indices that share nothing with
    it) whose number of points is all that matters. Returns the address part's loops (as
    (k, loop) pairs), its constraint, the product of the other parts' point counts, and grid and
    block with the other parts' indices set to 1."""
    parent: dict = {}

    def find(v):
        parent.setdefault(v, v)
        while parent[v] != v:
            parent[v] = parent[parent[v]]
            v = parent[v]
        return v

    def union(vs):
        vs = list(vs)
        for v in vs[1:]:
            parent[find(v)] = find(vs[0])
        for v in vs[:1]:
            find(v)

    anchor = ("address",)
    union([anchor] + sorted(_bases(addr_terms), key=str))
    for k, (_, it, _, bt, _, _) in enumerate(loops):
        union([("iter", k)] + sorted(_bases(it) | _bases(bt), key=str))
    conjuncts = [c for c in _conjuncts(constraint) if c[0] != "true"]
    for c in conjuncts:
        vs = sorted(_bases(_constraint_vars(c)), key=str)
        if vs:
            union(vs)
    for name in list(_VAR_DIMS) + list(_BLOCK_DIMS):
        find(name)
    main = find(anchor)
    groups: dict = {}
    for v in list(parent):
        if v != anchor:
            groups.setdefault(find(v), set()).add(v)
    factor = 1
    for root, members in groups.items():
        if root == main:
            continue
        part_loops = [(k, l) for k, l in enumerate(loops) if ("iter", k) in members]
        part_c = _join([c for c in conjuncts
                        if _bases(_constraint_vars(c)) and _bases(_constraint_vars(c)) <= members])
        g = [grid_e[k] if n in members else 1 for n, k in _BLOCK_DIMS.items()]
        b = [block_e[k] if n in members else 1 for n, k in _VAR_DIMS.items()]
        if not part_loops and part_c == ("true",):
            # indices alone: they were factored out already when unused; keep them here
            continue
        points = E.count({}, 0, part_loops, part_c, tuple(g), tuple(b), 1, 1, 1, False, 1)[2]
        factor *= points
        for n, k in _BLOCK_DIMS.items():
            if n in members:
                grid_e = list(grid_e)
                grid_e[k] = 1
        for n, k in _VAR_DIMS.items():
            if n in members:
                block_e = list(block_e)
                block_e[k] = 1
    main_loops = [(k, l) for k, l in enumerate(loops) if find(("iter", k)) == main]
    main_c = _join([c for c in conjuncts if not _bases(_constraint_vars(c)) or
                    find(next(iter(_bases(_constraint_vars(c))))) == main])
    return main_loops, main_c, factor, grid_e, block_e


def _join(cs):
    out = ("true",)
    for c in cs:
        out = c if out == ("true",) else ("and", out, c)
    return out


# -- affine helpers -----------------------------------------------------------------------

def _prepare(c, env):
    tag = c[0]
    if tag in ("true", "false"):
        return c
    if tag == "cmp":
        _, op, a, b = c
        at, ac = _affine(a, env)
        bt, bc = _affine(b, env)
        diff = dict(at)
        for v, x in bt.items():
            diff[v] = diff.get(v, 0) - x
        return ("cmp", op, {v: x for v, x in diff.items() if x}, ac - bc)
    if tag == "not":
        return ("not", _prepare(c[1], env))
    return (tag, _prepare(c[1], env), _prepare(c[2], env))


def _always(c, ranges, loops, trips):
    """True/False if the constraint holds everywhere/nowhere in the box; None if it varies."""
    tag = c[0]
    if tag == "true":
        return True
    if tag == "false":
        return False
    if tag == "not":
        v = _always(c[1], ranges, loops, trips)
        return None if v is None else not v
    if tag in ("and", "or"):
        a = _always(c[1], ranges, loops, trips)
        b = _always(c[2], ranges, loops, trips)
        if tag == "and":
            if a is False or b is False:
                return False
            return True if (a and b) else None
        if a is True or b is True:
            return True
        return False if (a is False and b is False) else None
    _, op, terms, const = c
    lo = hi = const
    for v, x in terms.items():
        n = ranges.get(v, 0)
        if n <= 0:
            return False  # an empty dimension: nothing executes
        lo += min(0, x * (n - 1))
        hi += max(0, x * (n - 1))
    f = _CMP[op]
    if op in ("<", "<=", ">", ">="):
        if f(lo) and f(hi):
            return True
        if not f(lo) and not f(hi):
            return False
        return None
    if op == "==":
        if lo == hi:
            return lo == 0
        return False if (lo > 0 or hi < 0) else None
    if lo == hi:
        return lo != 0
    return True if (lo > 0 or hi < 0) else None


def _tighten(constraint, terms, const, ranges):
    """Fold conjuncts `a*v + b CMP 0` on a single variable into v's range. A variable whose
    range no longer starts at 0 is shifted (its offset moves into the address constant).
    Returns (remaining constraint, address constant, ranges); constraint None: never runs."""
    lo = {v: 0 for v in ranges}
    hi = {v: n - 1 for v, n in ranges.items()}
    rest = []
    for c in _conjuncts(constraint):
        if c[0] == "true":
            continue
        if c[0] == "cmp" and len(c[2]) == 1:
            (v, a), = c[2].items()
            b = c[3]
            op = c[1]
            if v in ranges and a != 0 and op in ("<", "<=", ">", ">="):
                lo[v], hi[v] = E.bound(a, b, op, lo[v], hi[v])
                continue
        rest.append(c)
    new_ranges = {}
    for v in ranges:
        if hi[v] < lo[v]:
            return None, const, ranges
        new_ranges[v] = hi[v] - lo[v] + 1
        if lo[v]:
            const += terms.get(v, 0) * lo[v]
    # the remaining conjuncts see shifted variables: shift their constants too
    shifted = []
    for c in rest:
        shifted.append(_shift(c, lo))
    remaining = ("true",)
    for c in shifted:
        remaining = c if remaining == ("true",) else ("and", remaining, c)
    return remaining, const, new_ranges


def _shift(c, lo):
    tag = c[0]
    if tag == "cmp":
        _, op, terms, const = c
        return ("cmp", op, terms, const + sum(x * lo.get(v, 0) for v, x in terms.items()))
    if tag == "not":
        return ("not", _shift(c[1], lo))
    if tag in ("and", "or"):
        return (tag, _shift(c[1], lo), _shift(c[2], lo))
    return c


# -- box ------------------------------------------------------------------------------

def _box(terms, const, ranges, n_units, unit, access_size, per_word, touched,
         nbytes=None) -> StaticCount:
    for v, n in ranges.items():
        if n <= 0 and v in terms:
            return StaticCount(np.zeros(n_units, np.int64), 0, 0, "box")
    executions = 1
    for v, n in ranges.items():
        executions *= max(n, 0)
    if executions == 0:
        return StaticCount(np.zeros(n_units, np.int64), 0, 0, "box")
    coeffs = [(x, ranges[v]) for v, x in terms.items() if x != 0]
    multiplier = executions
    for _, n in coeffs:
        multiplier //= n
    g = 0
    for x, _ in coeffs:
        g = gcd(g, abs(x))
    g = gcd(g, unit) if g else unit
    g = max(g, 1)
    lo = const + sum(min(0, x * (n - 1)) for x, n in coeffs)
    hi = const + sum(max(0, x * (n - 1)) for x, n in coeffs)
    span_units = (hi - lo) // g + 1
    if span_units > 8 * max(n_units * unit // g, 1) + 1_000_000:
        raise S.Unknown("the addresses spread far beyond the object")
    hist = np.zeros(span_units, np.int64)
    # start from the point where every variable is 0, then add one variable at a time
    start = (const - lo) // g
    hist[start] = multiplier
    for x, n in coeffs:
        hist = _strided_box_sum(hist, x // g, n)
    positions = lo + g * np.arange(span_units, dtype=np.int64)
    nz = np.nonzero(hist)[0]
    return _to_units(positions[nz], hist[nz], n_units, unit, access_size, per_word, touched,
                     executions, "box", nbytes)


def _strided_box_sum(hist: np.ndarray, a: int, n: int) -> np.ndarray:
    """out[x] = sum_{j=0}^{n-1} hist[x - a*j] (a may be negative): a strided prefix sum."""
    if n == 1:
        return hist
    if a < 0:
        return _strided_box_sum(hist[::-1].copy(), -a, n)[::-1].copy()
    length = len(hist)
    pad = (-length) % a
    h = np.concatenate([hist, np.zeros(pad, np.int64)]).reshape(-1, a)
    c = np.cumsum(h, axis=0)
    out = c.copy()
    out[n:] -= c[:-n]
    return out.reshape(-1)[:length]


# -- from addresses to counters ------------------------------------------------------------

def _to_units(positions, weights, n_units, unit, access_size, per_word, touched, executions,
              method, nbytes=None) -> StaticCount:
    counts, oor = LY.count_units(positions, access_size, n_units, unit, per_word=per_word,
                                 touched=touched, weights=weights, nbytes=nbytes)
    return StaticCount(counts, oor, executions, method)
