"""The CPU backend (gmprof/runtime/cpu.py + runtime_cu/cpu/) end to end: kernels compiled with
g++, launched on numpy arrays, results checked against values computed here with numpy.

Every module compiles into a fresh cache directory (one per test session), so the compile path
is exercised every run; kernels are grouped into a few .cu files to keep the session short.
"""
from __future__ import annotations

import ctypes
import signal
import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest

from gmprof._paths import runtime_cu_dir
from gmprof.errors import GmprofError
from gmprof.runtime.cpu import COMPILE_FLAGS, LINK_FLAGS, CpuModule, CpuPointer

KERNELS = Path(__file__).resolve().parent / "cpu_kernels"


def marker_line(path: Path, name: str) -> int:
    """The 1-based line carrying `// LINE: name`."""
    for k, text in enumerate(path.read_text().splitlines(), 1):
        if f"// LINE: {name}" in text:
            return k
    raise AssertionError(f"no marker {name} in {path}")


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("gmprof-cpu-cache"))


def load(cache_dir, name, kernels, **kw) -> CpuModule:
    path = KERNELS / name
    return CpuModule(path.read_text(), kernels, filename=str(path), cache_dir=cache_dir, **kw)


@pytest.fixture(scope="session")
def basics(cache_dir):
    return load(cache_dir, "basics.cu",
                ["vadd", "block_sum", "use_block_max", "reverse_dynamic", "scale_add<float, 3>",
                 "scale_add<double, 2>", "dims", "early_return", "sync_votes", "use_globals",
                 "print_some", "take_struct"],
                globals=["counter", "table", "coef"])


@pytest.fixture(scope="session")
def warp(cache_dir):
    return load(cache_dir, "warp.cu", ["shuffles", "shuffle_double", "votes", "half_warps"])


@pytest.fixture(scope="session")
def errors(cache_dir):
    return load(cache_dir, "errors.cu", ["fine", "deadlock", "wild_write", "trap", "failed_assert",
                                         "divide", "overflow", "livelock", "spin_forever"])


# ------------------------------------------------------------------------------ basics

def test_vector_add(basics):
    rng = np.random.default_rng(1)
    n = 1000
    a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    c = np.zeros(n, np.float32)
    seconds = basics.launch("vadd", (n + 127) // 128, 128, (c, a, b, np.int32(n)))
    np.testing.assert_array_equal(c, a + b)
    assert seconds > 0


def test_shared_tree_reduction(basics):
    rng = np.random.default_rng(2)
    n = 256 * 7 - 30
    x = rng.integers(-100, 100, n).astype(np.float32)  # small integers: exact sums
    out = np.zeros(7, np.float32)
    basics.launch("block_sum", 7, 256, (x, out, np.int32(n)))
    padded = np.concatenate([x, np.zeros(256 * 7 - n, np.float32)])
    np.testing.assert_array_equal(out, padded.reshape(7, 256).sum(axis=1))


def test_shared_array_in_device_function(basics):
    rng = np.random.default_rng(3)
    x = rng.integers(-10**6, 10**6, 4 * 256).astype(np.int32)
    out = np.zeros_like(x)
    basics.launch("use_block_max", 4, 256, (x, out))
    np.testing.assert_array_equal(out, np.repeat(x.reshape(4, 256).max(axis=1), 256))


def test_dynamic_shared_memory(basics):
    per_block = 3001  # 12004 bytes of dynamic shared memory, not a multiple of the block
    blocks = 3
    x = np.arange(per_block * blocks, dtype=np.float32) * 0.25
    out = np.zeros_like(x)
    addr = np.zeros(3, np.uint64)
    basics.launch("reverse_dynamic", blocks, 128, (x, out, addr, np.int32(per_block)),
                  shared_mem=per_block * 4)
    np.testing.assert_array_equal(out, x.reshape(blocks, per_block)[:, ::-1].ravel())
    assert addr[0] == addr[1] and addr[0] % 16 == 0  # both declarations alias one aligned buffer
    # `words` read the first float of the last block's segment through the alias
    last = x.reshape(blocks, per_block)[-1, 0]
    assert int(addr[2]) == int(np.float32(last).view(np.uint32))


def test_template_kernels_by_name_expression(basics):
    xf = np.arange(64, dtype=np.float32)
    xd = np.arange(64, dtype=np.float64)
    basics.launch("scale_add<float, 3>", 2, 32, (xf, np.float32(0.5)))
    basics.launch("scale_add<double, 2>", 2, 32, (xd, np.float64(-1.0)))
    np.testing.assert_array_equal(xf, np.arange(64, dtype=np.float32) * 3 + 0.5)
    np.testing.assert_array_equal(xd, np.arange(64, dtype=np.float64) * 2 - 1)
    assert [p.type for p in basics.params("scale_add<double, 2>")] == ["double*", "double"]


@pytest.mark.parametrize("grid,block", [((3, 2), (8, 4)), ((2, 3, 2), (4, 2, 3)), (5, (7, 1, 3))])
def test_builtin_variables_2d_3d(basics, grid, block):
    g = tuple(grid) + (1,) * (3 - len(grid)) if isinstance(grid, tuple) else (grid, 1, 1)
    b = tuple(block) + (1,) * (3 - len(block)) if isinstance(block, tuple) else (block, 1, 1)
    nthreads = g[0] * g[1] * g[2] * b[0] * b[1] * b[2]
    out = np.full((nthreads, 12), 0xDEAD, np.uint32)
    basics.launch("dims", grid, block, (out,))
    expected = []
    for bz in range(g[2]):
        for by in range(g[1]):
            for bx in range(g[0]):
                for tz in range(b[2]):
                    for ty in range(b[1]):
                        for tx in range(b[0]):
                            expected.append([tx, ty, tz, bx, by, bz, *b, *g])
    np.testing.assert_array_equal(out, np.array(expected, np.uint32))


def test_early_return_then_barrier(basics):
    live = 100
    x = np.arange(256, dtype=np.int32)
    out = np.full(256, -1, np.int32)
    basics.launch("early_return", 1, 256, (x, out, np.int32(live)))
    np.testing.assert_array_equal(out[:live], (x[:live] * 10)[::-1])
    assert (out[live:] == -1).all()


def test_syncthreads_count_and_or(basics):
    pred = np.zeros((3, 64), np.int32)
    pred[0, [1, 5, 63]] = 1        # some
    pred[1, :] = 7                 # all (any non-zero counts as true)
    out = np.zeros((3, 64, 3), np.int32)
    basics.launch("sync_votes", 3, 64, (pred, out))
    for blk, (count, all_, any_) in enumerate([(3, 0, 1), (64, 1, 1), (0, 0, 0)]):
        assert (out[blk, :, 0] == count).all()
        assert (out[blk, :, 1] == all_).all()
        assert (out[blk, :, 2] == any_).all()


def test_device_globals_through_get_global(basics):
    coef_addr, coef_size = basics.get_global("coef")
    table_addr, table_size = basics.get_global("table")
    counter_addr, counter_size = basics.get_global("counter")
    assert (coef_size, table_size, counter_size) == (16, 64, 4)
    coef = np.array([1.5, -2.0, 0.25, 3.0], np.float32)
    ctypes.memmove(coef_addr, coef.ctypes.data, 16)
    ctypes.c_int.from_address(counter_addr).value = 5
    basics.launch("use_globals", 1, 16, ())
    table = np.ctypeslib.as_array((ctypes.c_float * 16).from_address(table_addr))
    np.testing.assert_array_equal(table, coef[np.arange(16) % 4] * np.arange(16))
    assert ctypes.c_int.from_address(counter_addr).value == 5 + 16
    with pytest.raises(GmprofError, match="not asked for"):
        basics.get_global("nonexistent")


def test_globals_are_per_module(cache_dir, basics):
    other = load(cache_dir, "basics.cu", ["use_globals"], globals=["counter"])
    assert other.get_global("counter")[0] != basics.get_global("counter")[0]


def test_pointer_argument_from_get_global(basics):
    table_addr, _ = basics.get_global("table")
    basics.launch("scale_add<float, 3>", 1, 16, (CpuPointer(table_addr), np.float32(1.0)))
    basics.launch("use_globals", 1, 16, ())
    before = np.ctypeslib.as_array((ctypes.c_float * 16).from_address(table_addr)).copy()
    basics.launch("scale_add<float, 3>", 1, 16, (CpuPointer(table_addr), np.float32(1.0)))
    after = np.ctypeslib.as_array((ctypes.c_float * 16).from_address(table_addr))
    np.testing.assert_array_equal(after, before * 3 + 1)


def test_printf_reaches_stdout(basics, capfd):
    basics.launch("print_some", 1, 8, (np.int32(3),))
    out = capfd.readouterr().out
    assert out.splitlines() == [f"thread {t} of 8 says {0.5 * t:.1f}" for t in range(3)]


def test_struct_and_vector_parameters_and_layouts(basics):
    pair = np.zeros((), np.dtype([("a", "<i4"), ("b", "<f4"), ("c", "<f8")], align=True))
    pair["a"], pair["b"], pair["c"] = -7, 2.5, 1e3
    v = np.array([1, 2, 3, 4], np.float32).view(np.dtype((np.void, 16)))[0]
    out = np.zeros(13, np.float32)
    basics.launch("take_struct", 1, 1, (pair, v, out))
    np.testing.assert_array_equal(out[:7], [-7, 2.5, 1e3, 1, 2, 3, 4])
    # sizeof + 100 * alignof, as CUDA's vector_types.h declares them
    np.testing.assert_array_equal(out[7:], [16 + 1600, 12 + 400, 16 + 1600, 8 + 800, 8 + 800, 4 + 400])


def test_argument_checks(basics):
    c = np.zeros(4, np.float32)
    for kind, launch in [
            ("bad-argument", lambda: basics.launch("vadd", 1, 4, (c, c, c))),
            ("bad-argument", lambda: basics.launch(
                "vadd", 1, 4, (np.zeros(8, np.float32)[::2], c, c, np.int32(4)))),
            ("bad-argument", lambda: basics.launch("vadd", 1, 4, (c, c, c, np.float64(4)))),
            ("bad-argument", lambda: basics.launch("vadd", 1, 4, (c, c, c, np.float32(4)))),
            ("bad-option", lambda: basics.launch("vadd", 1, (32, 33), (c, c, c, np.int32(4)))),
            ("bad-option", lambda: basics.launch("vadd", (1, 0), 4, (c, c, c, np.int32(4)))),
            ("bad-argument", lambda: basics.launch("vsub", 1, 4, (c, c, c, np.int32(4))))]:
        with pytest.raises(GmprofError) as info:
            launch()
        assert info.value.kind == kind
    # a Python int converts to the parameter's type
    a, b = np.ones(4, np.float32), np.full(4, 2, np.float32)
    basics.launch("vadd", 1, 4, (c, a, b, 4))
    np.testing.assert_array_equal(c, 3)


# ------------------------------------------------------------------------------ warps

@pytest.mark.parametrize("width", [32, 16, 8, 4])
def test_warp_shuffles(warp, width):
    rng = np.random.default_rng(width)
    x = rng.integers(-1000, 1000, 128).astype(np.int32)
    out = np.zeros((128, 5), np.int32)
    warp.launch("shuffles", 2, 64, (x, out, np.int32(width)))
    warps = x.reshape(4, 32)
    lane0 = out[::32, 0]
    np.testing.assert_array_equal(lane0, warps.sum(axis=1))
    np.testing.assert_array_equal(out[:, 1], np.repeat(warps.sum(axis=1), 32))
    segs = x.reshape(-1, width)
    np.testing.assert_array_equal(out[:, 2], np.repeat(segs.sum(axis=1), width))
    np.testing.assert_array_equal(out[:, 3], np.cumsum(segs, axis=1).ravel())
    np.testing.assert_array_equal(out[:, 4], np.repeat(segs[:, 3], width))


def test_warp_shuffle_double(warp):
    x = np.arange(32, dtype=np.float64) * 1.5
    out = np.zeros(32)
    warp.launch("shuffle_double", 1, 32, (x, out))
    # lane l sums x[l], x[l+16], ... as shfl_down keeps the lane's own value past the end
    expected = x.copy()
    for off in (16, 8, 4, 2, 1):
        shifted = np.array([expected[l + off] if l + off < 32 else expected[l] for l in range(32)])
        expected = expected + shifted
    np.testing.assert_array_equal(out, expected)
    assert out[0] == x.sum()


def test_votes_activemask_match(warp):
    rng = np.random.default_rng(7)
    n = 96  # three warps
    x = rng.integers(0, 20, n).astype(np.int32)
    x[32:64] = np.abs(x[32:64]) + 1  # all() true in every warp; warp 1 avoids 7 below
    x[32:64][x[32:64] == 7] = 8
    out = np.zeros((n, 8), np.uint32)
    warp.launch("votes", 1, n, (x, out))
    for w in range(3):
        lanes = x[32 * w: 32 * w + 32]
        rows = out[32 * w: 32 * w + 32]
        bits = lambda sel: sum(1 << l for l in range(32) if sel[l])
        ballot = bits(lanes & 1)
        assert (rows[:, 0] == ballot).all()
        assert (rows[:, 1] == int((lanes == 7).any())).all()
        assert (rows[:, 2] == 1).all()
        in_branch = lanes % 3 == 0
        np.testing.assert_array_equal(rows[:, 3], np.where(in_branch, bits(in_branch), 0))
        for l in range(32):
            assert rows[l, 4] == bits(lanes // 4 == lanes[l] // 4)
        assert (rows[:, 5] == 0xFFFFFFFF).all() and (rows[:, 6] == 1).all()
        assert (rows[:, 7] == bin(ballot).count("1")).all()


def test_half_warp_masks_and_exited_lanes(warp):
    out = np.full(64, -1, np.int32)
    warp.launch("half_warps", 1, 64, (out,))
    for w in range(2):
        got = out[32 * w: 32 * w + 32]
        assert (got[28:] == -1).all()  # returned early
        lo, hi = range(0, 16), range(16, 28)
        # lanes 16..27 (the others of their half exited): the xor tree reads its own value
        # where the partner lane has exited
        assert (got[:16] == sum(lo) + 1000 * 16).all()
        expected_hi = []
        for lane in hi:
            vals = {l: l for l in hi}
            v = dict(vals)
            for off in (8, 4, 2, 1):
                v = {l: v[l] + (v[l ^ off] if (l ^ off) in v else v[l]) for l in v}
            expected_hi.append(v[lane] + 1000 * 12)
        np.testing.assert_array_equal(got[16:28], expected_hi)


# ------------------------------------------------------------------------------ atomics

CELL_FIELDS = [("add_i", "i4"), ("sub_i", "i4"), ("min_i", "i4"), ("max_i", "i4"), ("and_i", "i4"),
               ("or_i", "i4"), ("xor_i", "i4"), ("exch_i", "i4"), ("cas_i", "i4"),
               ("add_u", "u4"), ("inc_u", "u4"), ("dec_u", "u4"), ("sub_u", "u4"), ("min_u", "u4"),
               ("max_u", "u4"), ("and_u", "u4"), ("or_u", "u4"), ("xor_u", "u4"), ("cas_u", "u4"),
               ("exch_u", "u4"), ("add_ull", "u8"), ("min_ull", "u8"), ("max_ull", "u8"),
               ("and_ull", "u8"), ("or_ull", "u8"), ("xor_ull", "u8"), ("cas_ull", "u8"),
               ("exch_ull", "u8"), ("min_ll", "i8"), ("max_ll", "i8"), ("add_f", "f4"),
               ("exch_f", "f4"), ("add_d", "f8"), ("cas_us", "u2"), ("pad", "u2"),
               ("add_blk", "i4"), ("add_sys", "i4")]
CELLS = np.dtype(CELL_FIELDS, align=True)
OLD = [f for f, _ in CELL_FIELDS if f != "pad"]


@pytest.fixture(scope="session")
def atomics(cache_dir):
    return load(cache_dir, "atomics.cu", ["global_atomics", "shared_atomics", "spin_lock",
                                           "lock_and_activemask"])


@pytest.mark.parametrize("kernel", ["global_atomics", "shared_atomics"])
def test_every_atomic(atomics, kernel):
    n = 256
    rng = np.random.default_rng(11)
    val = rng.permutation(np.arange(n, dtype=np.int32) * 7 + 3).astype(np.int32)
    c = np.zeros((), CELLS)
    c["sub_i"], c["sub_u"] = n, 2 * n
    c["min_i"], c["max_i"] = 10**6, -1
    c["min_u"], c["max_u"] = 0xFFFFFFFF, 0
    c["min_ull"], c["max_ull"] = 2**64 - 1, 0
    c["min_ll"], c["max_ll"] = 10**12, -(10**12)
    c["and_i"], c["and_u"], c["and_ull"] = -1, 0xFFFFFFFF, 2**64 - 1
    old = np.zeros((n, len(OLD)), np.int64)
    atomics.launch(kernel, 1, n, (c, val, old))
    o = {name: old[:, k] for k, name in enumerate(OLD)}
    t = np.arange(n)
    perm = lambda a, expect: np.testing.assert_array_equal(np.sort(a), np.sort(expect))
    # counters: the old values are the running totals, in some order
    perm(o["add_i"], t); assert c["add_i"] == n
    perm(o["sub_i"], t + 1); assert c["sub_i"] == 0
    perm(o["add_u"], 3 * t); assert c["add_u"] == 3 * n
    perm(o["sub_u"], 2 * t + 2); assert c["sub_u"] == 0
    perm(o["add_ull"], t.astype(np.int64) << 33); assert c["add_ull"] == n << 33
    perm(o["add_f"], t); assert c["add_f"] == n
    perm(o["add_d"], t); assert c["add_d"] == n / 2
    perm(o["add_blk"], 2 * t); assert c["add_blk"] == 2 * n
    perm(o["add_sys"], 5 * t); assert c["add_sys"] == 5 * n
    # atomicInc/atomicDec wrap at 9: the sequence of values is fixed whatever the order
    inc_seq = [k % 10 for k in range(n)]
    dec_seq, d = [], 0
    for _ in range(n):
        dec_seq.append(d)
        d = 9 if d == 0 else d - 1
    perm(o["inc_u"], inc_seq); assert c["inc_u"] == n % 10
    perm(o["dec_u"], dec_seq); assert c["dec_u"] == d
    # min/max: the final value, and every old value is the initial one or some thread's
    for f, init, vals, fn in [("min_i", 10**6, val, min), ("max_i", -1, val, max),
                              ("min_u", 0xFFFFFFFF, val, min), ("max_u", 0, val, max),
                              ("min_ll", 10**12, val.astype(np.int64) - 1000, min),
                              ("max_ll", -(10**12), val.astype(np.int64) - 1000, max)]:
        assert c[f] == fn(int(v) for v in vals), f
        seen = np.sort(o[f] if not f.endswith("_u") else o[f] & 0xFFFFFFFF)
        assert set(seen.tolist()) <= {init, *map(int, vals)}, f
    assert c["min_ull"] == int(val.min()) << 32 and c["max_ull"] == int(val.max()) << 32
    # and/or/xor: thread t updates bit t % 31 (int), t % 32 (unsigned), t % 64 (64-bit), and the
    # threads sharing a bit see it in a fixed sequence whatever their order: for and (from set),
    # exactly one sees it set; for or (from clear), exactly one sees it clear; for xor (from
    # clear), it alternates, so m threads see it set m // 2 times
    for f, mod in [("and_i", 31), ("and_u", 32), ("and_ull", 64), ("or_i", 31), ("or_u", 32),
                   ("or_ull", 64), ("xor_i", 31), ("xor_u", 32), ("xor_ull", 64)]:
        seen = (o[f] >> (t % mod)) & 1
        for k in range(mod):
            group = seen[t % mod == k]
            want = {"and": 1, "or": len(group) - 1, "xor": len(group) // 2}[f.split("_")[0]]
            assert group.sum() == want, (f, k)
    assert c["and_i"] == -(2**31) and c["and_u"] == 0 and c["and_ull"] == 0
    assert c["or_i"] == 2**31 - 1 and c["or_u"] == 2**32 - 1 and c["or_ull"] == 2**64 - 1
    parity = lambda mod: sum(1 << k for k in range(mod) if (t % mod == k).sum() % 2)
    assert c["xor_i"] == parity(31) and c["xor_u"] == parity(32) and c["xor_ull"] == parity(64)
    # exchange: old values plus the final value are the initial 0 and every thread's t + 1
    for f in ("exch_i", "exch_u", "exch_ull", "exch_f"):
        perm(np.append(o[f], int(c[f])), np.arange(n + 1))
    # CAS from 0: exactly one thread wins and sees 0; the others see the winner's value
    for f in ("cas_i", "cas_u", "cas_ull", "cas_us"):
        winners = np.flatnonzero(o[f] == 0)
        assert len(winners) == 1, f
        assert c[f] == winners[0] + 1 and (np.delete(o[f], winners) == winners[0] + 1).all(), f


def test_spin_lock_excludes(atomics):
    lock = np.zeros(1, np.int32)
    total = np.zeros(1, np.int32)
    atomics.launch("spin_lock", 2, 64, (lock, total))
    assert total[0] == 2 * 64 * 3 and lock[0] == 0


def test_activemask_in_a_critical_section_does_not_wait_for_spinners(atomics):
    lock = np.zeros(1, np.int32)
    masks = np.zeros(64, np.uint32)
    atomics.launch("lock_and_activemask", 1, 64, (lock, masks))
    np.testing.assert_array_equal(masks, 1 << (np.arange(64, dtype=np.uint64) % 32))


# ------------------------------------------------------------------------------ errors

def test_deadlock_names_the_barrier_line(errors):
    path = KERNELS / "errors.cu"
    out = np.zeros(64, np.int32)
    with pytest.raises(GmprofError) as e:
        errors.launch("deadlock", 2, 64, (out,))
    err = e.value
    assert err.kind == "deadlock"
    assert err.location.file == str(path)
    assert err.location.line == marker_line(path, "deadlock-barrier")
    msg = err.message
    assert "block (0,0,0)" in msg
    assert f"threads 0-15 (16 threads) wait at __syncthreads() at {path}:" \
           f"{marker_line(path, 'deadlock-barrier')}" in msg
    assert f"threads 16-31 (16 threads) wait at __syncwarp() (mask 0xffffffff) at {path}:" \
           f"{marker_line(path, 'deadlock-syncwarp')}" in msg
    assert "threads 32-63 (32 threads) have exited" in msg
    assert "__syncthreads();  // LINE" in err.render()  # the source line under the message


def test_wild_write_is_caught_and_module_survives(errors):
    path = KERNELS / "errors.cu"
    out = np.zeros(64, np.int32)
    with pytest.raises(GmprofError) as e:
        errors.launch("wild_write", 2, 32, (out, np.int64(1 << 44)))
    assert e.value.kind == "invalid-address"
    assert "invalid memory access in block (1,0,0) thread (5,0,0)" in e.value.message
    assert e.value.location is not None and e.value.location.line == marker_line(path, "wild-write")
    # the module (and the process) carry on
    errors.launch("fine", 1, 64, (out,))
    np.testing.assert_array_equal(out, 2 * np.arange(64))


def test_trap_assert_and_division_by_zero(errors):
    path = KERNELS / "errors.cu"
    out = np.zeros(32, np.int32)
    with pytest.raises(GmprofError) as e:
        errors.launch("trap", 1, 32, (out,))
    assert e.value.kind == "trap" and "thread (7,0,0)" in e.value.message
    assert e.value.location.line == marker_line(path, "trap")
    bad = np.arange(32, dtype=np.int32)
    bad[9] = 1000
    with pytest.raises(GmprofError) as e:
        errors.launch("failed_assert", 1, 32, (bad,))
    assert e.value.kind == "assert" and "thread (9,0,0)" in e.value.message
    assert "in[threadIdx.x] < 100" in e.value.message
    assert e.value.location.line == marker_line(path, "assert")
    den = np.ones(32, np.int32)
    den[20] = 0
    with pytest.raises(GmprofError) as e:
        errors.launch("divide", 1, 32, (np.arange(32, dtype=np.int32), den, out))
    assert e.value.kind == "arithmetic" and "integer division by zero" in e.value.message
    assert e.value.location.line == marker_line(path, "divide")
    errors.launch("divide", 1, 32, (np.arange(32, dtype=np.int32) * 6, np.full(32, 3, np.int32), out))
    np.testing.assert_array_equal(out, 2 * np.arange(32))


def test_stack_overflow_hits_the_guard_page(errors, monkeypatch):
    monkeypatch.setenv("GMPROF_CPU_STACK_KB", "64")
    out = np.zeros(4, np.int32)
    with pytest.raises(GmprofError) as e:
        errors.launch("overflow", 1, 4, (out, np.int32(100)))  # ~400 KiB of frames
    assert e.value.kind == "stack-overflow" and "64 KiB" in e.value.message
    monkeypatch.setenv("GMPROF_CPU_STACK_KB", "1024")
    errors.launch("overflow", 1, 4, (out, np.int32(100)))
    assert (out == sum(range(101)) - 0).all()


def test_livelock_is_reported(errors, monkeypatch):
    monkeypatch.setenv("GMPROF_CPU_LIVELOCK_S", "0.2")  # spinning this long without progress
    path = KERNELS / "errors.cu"
    out = np.zeros(64, np.int32)
    with pytest.raises(GmprofError) as e:
        errors.launch("livelock", 1, 64, (out,))
    assert e.value.kind == "livelock"
    assert f"spin at __nanosleep() at {path}:{marker_line(path, 'livelock-spin')}" in e.value.message
    assert f"wait at __syncthreads() at {path}:{marker_line(path, 'livelock-barrier')}" in e.value.message


def test_ctrl_c_stops_a_kernel_that_never_yields(errors):
    flag = np.zeros(1, np.int32)
    main = threading.main_thread().ident
    timer = threading.Timer(0.3, signal.pthread_kill, (main, signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt, match="interrupted"):
            errors.launch("spin_forever", 1, 32, (flag,))
    finally:
        timer.cancel()
    flag[0] = 1
    errors.launch("spin_forever", 1, 32, (flag,))  # the module still works
    out = np.zeros(32, np.int32)
    errors.launch("fine", 1, 32, (out,))
    np.testing.assert_array_equal(out, 2 * np.arange(32))


def test_line_directives_locate_errors(cache_dir):
    src = ('#line 40 "user_kernel.cu"\n'
           "__global__ void k(int *out) {\n"
           "  if (threadIdx.x == 3) __trap();\n"
           "  out[threadIdx.x] = 1;\n"
           "}\n")
    m = CpuModule(src, ["k"], filename="generated.cu", cache_dir=cache_dir)
    with pytest.raises(GmprofError) as e:
        m.launch("k", 1, 8, (np.zeros(8, np.int32),))
    assert (e.value.location.file, e.value.location.line) == ("user_kernel.cu", 41)
    bad = '#line 7 "user_kernel.cu"\n__global__ void k(int *out) { out[0] = undefined_name; }\n'
    with pytest.raises(GmprofError) as e:
        CpuModule(bad, ["k"], filename="generated.cu", cache_dir=cache_dir)
    assert (e.value.location.file, e.value.location.line) == ("user_kernel.cu", 7)
    assert "undefined_name" in e.value.message


@pytest.mark.parametrize("body,quote", [
    ("__global__ void k(cudaTextureObject_t tex, float *out)\n"
     "{\n"
     "    out[threadIdx.x] = tex2D<float>(tex, threadIdx.x, 0);\n"
     "}\n", "cudaTextureObject_t"),
    ("__global__ void k(float *out)\n"
     "{\n"
     "    __half h = __float2half(1.0f);\n"
     "    out[0] = __half2float(h);\n"
     "}\n", "__half"),
])
def test_unsupported_features_fail_to_compile_with_location(cache_dir, body, quote):
    with pytest.raises(GmprofError) as e:
        CpuModule(body, ["k"], filename="unsupported.cu", cache_dir=cache_dir)
    err = e.value
    assert "does not compile on the CPU path" in err.message and quote in err.message
    expected_line = 1 + next(k for k, l in enumerate(body.splitlines()) if quote in l)
    assert err.location.file == "unsupported.cu" and err.location.line == expected_line
    assert quote in err.location.source_line


def test_undefined_device_function_is_a_located_error(cache_dir):
    src = "__device__ int f(int);\n__global__ void k(int *o)\n{\n    o[0] = f(3);\n}\n"
    with pytest.raises(GmprofError) as e:
        CpuModule(src, ["k"], filename="link.cu", cache_dir=cache_dir)
    assert "undefined reference to `f(int)'" in e.value.message
    assert (e.value.location.file, e.value.location.line) == ("link.cu", 4)


def test_bad_name_expression(cache_dir):
    src = "template <int N> __global__ void k(int *o) { o[0] = N; }\n"
    with pytest.raises(GmprofError, match="`k<float>` does not name a __global__ function"):
        CpuModule(src, ["k<3>", "k<float>"], cache_dir=cache_dir)


# ------------------------------------------------------------------------------ integration

def test_gmprof_device_runtime_compiles_and_counts_exits(cache_dir):
    """gmprof.cuh as gmprof emits it (its `extern __shared__` counter area included): every
    thread's leave() adds one to the block's exit word in dynamic shared memory."""
    header = (runtime_cu_dir() / "gmprof.cuh").read_text()
    src = header + """
__global__ void k(unsigned *out)
{
    ::gmprof::enter();
    out[::gmprof::linear_tid()] = ::gmprof::lane_id();
    ::gmprof::leave();
    __syncthreads();  // every thread has left: the exit word holds the block's thread count
    if (threadIdx.x == 0) out[blockDim.x] = ::gmprof::area_words()[::gmprof::AREA_EXITED];
}
"""
    m = CpuModule(src, ["k"], globals=["__gmprof_launch"], cache_dir=cache_dir,
                  options=["-DGMPROF_SM=1"])
    addr, size = m.get_global("__gmprof_launch")
    assert size > 64 * 64 and addr
    out = np.zeros(97, np.uint32)
    m.launch("k", 1, 96, (out,), shared_mem=64)
    np.testing.assert_array_equal(out[:96], np.arange(96) % 32)
    assert out[96] == 96


def test_header_alone_is_enough_without_the_runtime_object(tmp_path):
    """Compiled by hand with only `-include gmprof_cpu.h`, a kernel still links completely (the
    header then carries the runtime itself)."""
    src = tmp_path / "k.cpp"
    src.write_text((KERNELS / "matmul.cu").read_text() +
                   'extern "C" GMPROF_CPU_EXPORT void e(void **a) '
                   "{ ::gmprof_cpu::invoke(&matmul_tiled<16>, a); }\n")
    so = tmp_path / "k.so"
    subprocess.run(["g++", *COMPILE_FLAGS, "-include", str(runtime_cu_dir() / "cpu" / "gmprof_cpu.h"),
                    str(src), *LINK_FLAGS, "-o", str(so)], check=True, capture_output=True)
    lib = ctypes.CDLL(str(so))
    assert lib.gmprof_cpu_launch and lib.e


# ------------------------------------------------------------------------------ fallback, speed

def test_ucontext_fallback_runs_barriers_and_reports_deadlock(cache_dir):
    m = load(cache_dir, "errors.cu", ["fine", "deadlock"], options=["-DGMPROF_CPU_UCONTEXT"])
    out = np.zeros(64, np.int32)
    m.launch("fine", 1, 64, (out,))
    np.testing.assert_array_equal(out, 2 * np.arange(64))
    with pytest.raises(GmprofError) as e:
        m.launch("deadlock", 1, 64, (out,))
    assert e.value.location.line == marker_line(KERNELS / "errors.cu", "deadlock-barrier")


def test_tiled_matmul_256(cache_dir):
    m = load(cache_dir, "matmul.cu", ["matmul_tiled<16>"])
    n = 256
    rng = np.random.default_rng(5)
    a = rng.random((n, n), dtype=np.float32)
    b = rng.random((n, n), dtype=np.float32)
    c = np.zeros((n, n), np.float32)
    seconds = m.launch("matmul_tiled<16>", (n // 16, n // 16), (16, 16),
                       (c, a, b, np.int32(n), np.int32(n), np.int32(n)))
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5)
    # the target is well under a second; allow a loaded CI machine some slack
    assert seconds < 2.0
