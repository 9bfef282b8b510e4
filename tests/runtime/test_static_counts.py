"""Static counts from formulas equal counts from enumerating every execution by brute force."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from gmprof.passes import symbolic as S
from gmprof.passes.classify import StaticFormula
from gmprof.runtime.static_counts import count_static


def aff(const=0, **terms):
    t = []
    for k, v in terms.items():
        var = {"tx": "tid.x", "ty": "tid.y", "bx": "bid.x", "by": "bid.y"}.get(k)
        if var is None:
            var = ("iter", int(k[1:]))
        t.append((var, S.const(v)))
    return S.Affine(tuple(sorted(t, key=lambda x: (0, x[0]) if isinstance(x[0], str)
                                 else (1, x[0][1]))), S.const(const))


def brute(address, loops, constraint, grid, block, n_units, unit, size, per_word):
    counts = np.zeros(n_units, np.int64)
    oor = 0
    execs = 0
    for bx, by, tx, ty in itertools.product(range(grid[0]), range(grid[1]), range(block[0]),
                                            range(block[1])):
        env = {"tid.x": tx, "tid.y": ty, "tid.z": 0, "bid.x": bx, "bid.y": by, "bid.z": 0}

        def rec(k, env):
            nonlocal oor, execs
            if k == len(loops):
                if not constraint(env):
                    return
                a = address(env)
                execs += 1
                first, last = a // unit, (a + size - 1) // unit
                idxs = range(first, last + 1) if per_word else range(first, first + max(1, -(-size // unit)))
                for i in idxs:
                    if 0 <= i < n_units:
                        counts[i] += 1
                    else:
                        oor += 1
                return
            start, bound, step = loops[k](env)
            it = 0
            v = start
            while (v < bound if step > 0 else v > bound):
                rec(k + 1, {**env, ("iter", k): it})
                v += step
                it += 1
        rec(0, env)
    return counts, oor, execs


def test_box_two_loops_matmul_like():
    # As[ty][k] read in for t (N/TILE trips) and for k (TILE trips): addr = 4*(16*ty + k)
    f = StaticFormula(aff(0, ty=64, i1=4), ("int", 4),
                      [("<", aff(0), aff(2), S.const(1), 1), ("<", aff(0), aff(16), S.const(1), 1)])
    r = count_static(f, {}, (2, 2, 1), (16, 16, 1), 256, 4, 4, True)
    assert r.method == "box"
    assert r.executions == 2 * 2 * 256 * 2 * 16
    assert (r.counts == 128).all() and r.out_of_range == 0


@pytest.mark.parametrize("seed", range(6))
def test_random_affine_formulas_match_brute_force(seed):
    rng = np.random.default_rng(seed)
    grid, block = (int(rng.integers(1, 4)), int(rng.integers(1, 3)), 1), \
        (int(rng.integers(1, 6)), int(rng.integers(1, 4)), 1)
    coeff = {k: int(rng.integers(-3, 4)) * 4 for k in ("tx", "ty", "bx", "by", "i0")}
    const = int(rng.integers(0, 40)) * 4
    lo, hi = int(rng.integers(0, 3)), int(rng.integers(2, 6))
    tri = bool(rng.integers(0, 2))  # a bound depending on threadIdx.x: not a box
    loop = ("<", aff(lo), aff(hi, tx=1) if tri else aff(hi), S.const(1), 1)
    limit = int(rng.integers(1, 6))
    constraint = ("cmp", "<", aff(0, tx=1, bx=1), aff(limit))
    f = StaticFormula(aff(const, **coeff), ("int", 4), [loop], constraint)
    n_units = 64
    r = count_static(f, {}, grid, block, n_units, 4, 4, False)

    def address(e):
        return const + coeff["tx"] * e["tid.x"] + coeff["ty"] * e["tid.y"] + \
            coeff["bx"] * e["bid.x"] + coeff["by"] * e["bid.y"] + coeff["i0"] * e[("iter", 0)]

    want, oor, execs = brute(address, [lambda e: (lo, hi + (e["tid.x"] if tri else 0), 1)],
                             lambda e: e["tid.x"] + e["bid.x"] < limit, grid, block, n_units,
                             4, 4, False)
    assert r.executions == execs
    assert r.out_of_range == oor
    np.testing.assert_array_equal(r.counts, want)


def test_wide_accesses_touch_every_word():
    # a double (8 bytes) in shared memory touches two 4-byte words
    f = StaticFormula(aff(0, tx=8), ("int", 8))
    r = count_static(f, {}, (1, 1, 1), (4, 1, 1), 8, 4, 8, True)
    np.testing.assert_array_equal(r.counts, [1] * 8)


def test_launch_symbols_are_evaluated():
    f = StaticFormula(S.Affine(((("tid.x"), ("sizeof", "float")),), S.ZERO), ("sizeof", "float"))
    env = {("sizeof", "float"): 4}
    r = count_static(f, env, (1, 1, 1), (8, 1, 1), 8, 4, 4, False)
    np.testing.assert_array_equal(r.counts, [1] * 8)


def test_a_condition_false_everywhere_counts_nothing():
    f = StaticFormula(aff(0, tx=4), ("int", 4), [], ("cmp", "<", aff(0, tx=1), aff(0)))
    r = count_static(f, {}, (1, 1, 1), (8, 1, 1), 8, 4, 4, False)
    assert r.executions == 0 and r.counts.sum() == 0


@pytest.mark.parametrize("seed", range(8))
def test_single_variable_conditions_shrink_the_box(seed):
    """`if (tx < K && by >= 1)`-style conditions take the box method, and agree with brute force."""
    rng = np.random.default_rng(100 + seed)
    grid, block = (int(rng.integers(1, 4)), int(rng.integers(1, 4)), 1), \
        (int(rng.integers(1, 7)), int(rng.integers(1, 4)), 1)
    coeff = {k: int(rng.integers(-2, 4)) * 4 for k in ("tx", "ty", "bx", "by")}
    const = int(rng.integers(0, 30)) * 4
    k1, k2 = int(rng.integers(-1, 6)), int(rng.integers(-1, 3))
    a1 = int(rng.choice([1, 2, -1]))
    op1 = str(rng.choice(["<", "<=", ">", ">="]))
    c = ("and", ("cmp", op1, aff(0, tx=a1), aff(k1)), ("cmp", ">=", aff(0, by=1), aff(k2)))
    f = StaticFormula(aff(const, **coeff), ("int", 4), [], c)
    r = count_static(f, {}, grid, block, 64, 4, 4, False)
    assert r.method == "box"
    ops = {"<": lambda x, y: x < y, "<=": lambda x, y: x <= y, ">": lambda x, y: x > y,
           ">=": lambda x, y: x >= y}

    def address(e):
        return const + coeff["tx"] * e["tid.x"] + coeff["ty"] * e["tid.y"] + \
            coeff["bx"] * e["bid.x"] + coeff["by"] * e["bid.y"]

    want, oor, execs = brute(address, [], lambda e: ops[op1](a1 * e["tid.x"], k1) and
                             e["bid.y"] >= k2, grid, block, 64, 4, 4, False)
    assert r.executions == execs and r.out_of_range == oor
    np.testing.assert_array_equal(r.counts, want)


def test_unused_block_indices_multiply_instead_of_enumerating():
    # a triangular loop nest in shared memory, independent of blockIdx: 4096 blocks would be
    # 4096x the enumeration; one block is enumerated and multiplied
    loops = [(">", aff(8), aff(0), S.const(2), -1), ("<", aff(0, tx=1), aff(8, i0=-2), S.const(4), 1)]
    f = StaticFormula(aff(0, i1=16, tx=4), ("int", 4), loops)
    r = count_static(f, {}, (4096, 1, 1), (4, 1, 1), 16, 4, 4, True)
    one = count_static(f, {}, (1, 1, 1), (4, 1, 1), 16, 4, 4, True)
    np.testing.assert_array_equal(r.counts, one.counts * 4096)
    assert r.executions == one.executions * 4096

    def address(e):
        return 16 * e[("iter", 1)] + 4 * e["tid.x"]

    want, oor, execs = brute(address, [lambda e: (8, 0, -2),
                                       lambda e: (e["tid.x"], 8 - 2 * e[("iter", 0)], 4)],
                             lambda e: True, (1, 1, 1), (4, 1, 1), 16, 4, 4, True)
    np.testing.assert_array_equal(one.counts, want)


# -- classes of blocks (runtime/static_blocks.py) ----------------------------------------------

def _quot(tag, divisor):
    return (tag, S.Affine((("tid.x", S.const(1)),), S.const(0)), S.const(divisor))


def _with(affine, *terms):
    return S.Affine(affine.terms + tuple((v, S.const(c)) for v, c in terms), affine.const)


_OPS = {"<": lambda d: d < 0, "<=": lambda d: d <= 0, ">": lambda d: d > 0,
        ">=": lambda d: d >= 0, "==": lambda d: d == 0, "!=": lambda d: d != 0}


def test_spmv_rows_count_by_block_class_with_boundary_blocks():
    # spmv: row = blockIdx.x * 4 + threadIdx.x / 8; `if (row < nRows)` reads bounds[threadIdx.x / 8]
    # (shared, 4-byte words) and writes y[row] when lane = threadIdx.x % 8 == 0. 11 rows over
    # 3 blocks of 4 rows: blocks 0 and 1 decided, block 2 holds 3 rows (its boundary).
    n_rows, grid, block = 11, (3, 1, 1), (32, 1, 1)
    row = _with(aff(0, bx=4), (_quot("qdiv", 8), 1))
    local = S.Affine(((_quot("qdiv", 8), S.const(4)),), S.const(0))
    cond = ("cmp", "<", row, aff(n_rows))
    r = count_static(StaticFormula(local, ("int", 4), [], cond), {}, grid, block, 5, 4, 4, True)
    assert r.method == "blocks"
    # words 0..3: 8 threads each in blocks 0, 1 (16); in block 2 rows 8, 9, 10 only
    assert r.counts.tolist() == [24, 24, 24, 16, 0] and r.executions == 11 * 8
    y = S.Affine(((("bid.x"), S.const(16)), (_quot("qdiv", 8), S.const(4))), S.const(0))
    lane0 = ("cmp", "==", S.Affine(((_quot("qmod", 8), S.const(1)),), S.const(0)), aff(0))
    r = count_static(StaticFormula(y, ("float", 4), [], ("and", lane0, cond)), {}, grid, block,
                     n_rows, 4, 4, False)
    assert r.method == "blocks"
    assert r.counts.tolist() == [1] * n_rows and r.executions == n_rows


@pytest.mark.parametrize("seed", range(12))
def test_block_classes_match_brute_force(seed):
    """Random formulas whose block and thread terms enter as a sum: mixed conditions of every
    comparison, a block-only and a thread-only condition, an address with a block part, a loop
    over the thread part; against the brute-force walk."""
    rng = np.random.default_rng(100 + seed)
    grid = (int(rng.integers(2, 7)), int(rng.integers(1, 3)), 1)
    block = (int(rng.integers(2, 9)), int(rng.integers(1, 3)), 1)
    q = int(rng.integers(1, 4))
    cb, ct, cq = (int(rng.integers(-3, 4)) for _ in range(3))
    op = str(rng.choice(list(_OPS)))
    k = int(rng.integers(-4, 10))
    mixed = ("cmp", op, _with(aff(0, bx=cb, tx=ct), (_quot("qdiv", q), cq)), aff(k))
    ob, k2 = str(rng.choice(["<", ">=", "!="])), int(rng.integers(0, 3))
    only_b = ("cmp", ob, aff(0, by=1), aff(k2))
    ot, k3 = str(rng.choice(["<=", ">", "=="])), int(rng.integers(0, 3))
    only_t = ("cmp", ot, _with(aff(0), (_quot("qmod", q + 1), 1)), aff(k3))
    constraint = ("and", ("and", mixed, only_b), only_t) if seed % 2 else mixed
    trips = int(rng.integers(1, 4))
    loops = [("<", aff(0), aff(trips, ty=1), S.const(1), 1)] if seed % 3 else []
    a_bx, a_by, a_tx, a_i = (int(rng.integers(0, 4)) * 4 for _ in range(4))
    a_i = a_i if loops else 0
    a0 = int(rng.integers(0, 8)) * 4
    address = _with(aff(a0, bx=a_bx, by=a_by, tx=a_tx, **({"i0": a_i} if loops else {})),
                    (_quot("qdiv", q), 4))
    n_units = 48
    f = StaticFormula(address, ("int", 4), loops, constraint)
    r = count_static(f, {}, grid, block, n_units, 4, 4, False)

    def c_of(env):
        d = cb * env["bid.x"] + ct * env["tid.x"] + cq * (env["tid.x"] // q) - k
        ok = _OPS[op](d)
        if seed % 2:
            ok = ok and _OPS[ob](env["bid.y"] - k2) and _OPS[ot](env["tid.x"] % (q + 1) - k3)
        return ok

    def a_of(env):
        return a0 + a_bx * env["bid.x"] + a_by * env["bid.y"] + a_tx * env["tid.x"] + \
            a_i * env.get(("iter", 0), 0) + 4 * (env["tid.x"] // q)

    bl = [lambda env: (0, trips + env["tid.y"], 1)] if loops else []
    want = brute(a_of, bl, c_of, grid, block, n_units, 4, 4, False)
    assert (r.counts.tolist(), r.out_of_range, r.executions) == \
        (want[0].tolist(), want[1], want[2])
