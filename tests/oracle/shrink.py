"""Shrink a generated kernel that gmprof miscounts to a minimal one that still does.

Greedy on the kernel's tree: every candidate is one step smaller (a statement removed, an `if`
or a loop replaced by its body, an expression by a child or a constant, the launch made
smaller); candidates are tried a batch at a time in one translation unit and the first that
still miscounts (in a mode where the original did, on an array where it did) is kept. A
candidate whose model or CUDA does not stand (a removed local still used) is skipped.
"""
from __future__ import annotations

import copy

import gen
import harness
import model

_STMT_LISTS = {"Block": ("body",), "If": ("then", "els"), "For": ("body",)}


def _lists(k: gen.Kernel):
    """Every statement list in the kernel, as (owner, attribute or index)."""
    out = [(k, "body")]

    def walk(stmts):
        for s in stmts:
            kind = type(s).__name__
            for attr in _STMT_LISTS.get(kind, ()):
                lst = getattr(s, attr)
                if lst is not None:
                    out.append((s, attr))
                    walk(lst)
            if isinstance(s, gen.Switch):
                for i, (body, _ft) in enumerate(s.cases):
                    out.append((s.cases[i], 0))
                    walk(body)
                out.append((s, "default"))
                walk(s.default)
    walk(k.body)
    return out


def _get(owner, key):
    return owner[key] if isinstance(key, int) else getattr(owner, key)


def _exprs(k: gen.Kernel):
    """Every (owner, attribute) holding an expression, outermost first."""
    out = []

    def ex(owner, attr):
        e = getattr(owner, attr)
        if e is None or not isinstance(e, gen.E):
            return
        out.append((owner, attr))
        for a in ("a", "b", "cond", "idx"):
            if hasattr(e, a):
                ex(e, a)

    def walk(stmts):
        for s in stmts:
            for a in ("e", "idx", "val", "cond", "init", "step_e"):
                if hasattr(s, a):
                    ex(s, a)
            for attr in _STMT_LISTS.get(type(s).__name__, ()):
                if getattr(s, attr) is not None:
                    walk(getattr(s, attr))
            if isinstance(s, gen.Switch):
                for body, _ in s.cases:
                    walk(body)
                walk(s.default)
    walk(k.body)
    return out


def _is_index(owner, attr) -> bool:
    """An index wrapper (`e % size`) keeps its modulo: only its operand may shrink."""
    e = getattr(owner, attr)
    return attr in ("idx",) or (isinstance(e, gen.Bin) and e.op == "%" and
                                isinstance(owner, (gen.Load, gen.Store, gen.Atomic)))


def candidates(k: gen.Kernel):
    """Kernels one step smaller than k, biggest steps first."""
    n_lists = len(_lists(k))
    for li in range(n_lists):
        owner, key = _lists(k)[li]
        lst = _get(owner, key)
        for i in range(len(lst)):
            c = copy.deepcopy(k)
            o, kk = _lists(c)[li]
            s = _get(o, kk)[i]
            del _get(o, kk)[i]
            yield c
            if isinstance(s, (gen.If, gen.For, gen.Block)):
                c = copy.deepcopy(k)
                o, kk = _lists(c)[li]
                s = _get(o, kk)[i]
                inner = s.body if isinstance(s, (gen.For, gen.Block)) else s.then
                if isinstance(s, gen.For):
                    inner = [gen.Local(s.var, s.init)] + inner
                _get(o, kk)[i:i + 1] = inner
                yield c
                if isinstance(s, gen.If) and s.els:
                    c = copy.deepcopy(k)
                    o, kk = _lists(c)[li]
                    _get(o, kk)[i:i + 1] = _get(o, kk)[i].els
                    yield c
                if isinstance(s, gen.If) and not s.brace:
                    c = copy.deepcopy(k)
                    o, kk = _lists(c)[li]
                    _get(o, kk)[i].brace = True
                    yield c
    if k.grid != (1, 1, 1):
        c = copy.deepcopy(k)
        c.grid = (1, 1, 1)
        yield c
    if k.block[1] * k.block[2] > 1:
        c = copy.deepcopy(k)
        c.block = (k.block[0], 1, 1)
        yield c
    if k.block[0] > 8:
        c = copy.deepcopy(k)
        c.block = (k.block[0] // 2, k.block[1], k.block[2])
        yield c
    n_ex = len(_exprs(k))
    for ei in range(n_ex):
        owner, attr = _exprs(k)[ei]
        e = getattr(owner, attr)
        if isinstance(e, gen.Num) and e.v in (0, 1):
            continue
        repl = []
        if _is_index(owner, attr) and isinstance(e, gen.Bin) and e.op == "%":
            if not isinstance(e.a, gen.Num):
                repl.append(gen.Bin("%", gen.Num(0), e.b))
        else:
            for a in ("a", "b"):
                sub = getattr(e, a, None)
                if isinstance(sub, gen.E) and not isinstance(e, gen.Load):
                    repl.append(sub)
            repl += [gen.Num(0), gen.Num(1)]
        for r in repl:
            c = copy.deepcopy(k)
            o, a = _exprs(c)[ei]
            setattr(o, a, copy.deepcopy(r))
            yield c


def size(k: gen.Kernel) -> tuple:
    return (len(k.cuda()), k.threads)


def _valid(k: gen.Kernel) -> bool:
    try:
        model.run_model(k)
    except Exception:  # noqa: BLE001 (a local used after it was removed, ...)
        return False
    return True


def _still_fails(mm: list, modes: set, arrays: set) -> bool:
    return any(m.mode in modes and m.what.split(":")[0] in arrays and
               "failed" not in m.what for m in mm)


def shrink(k: gen.Kernel, backend="cpu", batch=harness.BATCH, log=None, max_rounds=60):
    """The smallest kernel found that still miscounts like k; and the mismatches it has."""
    first = harness.run_batch([k], backend)
    if not first:
        return k, []
    # one mode where it fails is enough to keep it failing (each mode is a compile)
    failing = {m.mode for m in first}
    modes = {next(m for m in ("trace", "basic", "default", "SA") if m in failing)} \
        if failing & {"trace", "basic", "default", "SA"} else failing
    arrays = {m.what.split(":")[0] for m in first}
    best, best_mm = k, first
    for _ in range(max_rounds):
        cands = [c for c in candidates(best) if _valid(c) and size(c) < size(best)]
        improved = False
        for i in range(0, len(cands), batch):
            group = cands[i:i + batch]
            for j, c in enumerate(group):
                c.name = f"{k.name}_s{j}"
                c.alias = k.alias or k.name
            mm = harness.run_batch(group, backend, sorted(modes))
            for c in group:
                mine = [m for m in mm if m.kernel == c.name]
                if _still_fails(mine, modes, arrays):
                    best, best_mm, improved = c, mine, True
                    break
            if improved:
                break
        if log:
            log(f"shrink {k.name}: {size(best)} (chars, threads)")
        if not improved:
            break
    best.name, best.alias = k.name, k.alias
    return best, best_mm
