"""Arithmetic on Values (part of ValueAnalysis, values.py): + - * << on affine forms, and the
quasi-affine quotients `a / s`, `a % s`, `a >> k` with s, k known at launch, which the runtime
counts by enumeration; `threadIdx.x / 32` is recognised as warp-uniform.

    (blockIdx.x * 64 + threadIdx.x) / W     affine: a derived variable qdiv(bid.x*64 + tid.x, W)
    threadIdx.x >> 5                         deps {warp.x}: one value per warp

ValueArithmetic is a mixin: the host class provides value(node), program and facts.
"""
from __future__ import annotations

from . import symbolic as S
from .signedness import expr_unsigned, unsigned_decl
from .value_domain import BID, TID, Value


class ValueArithmetic:
    def _arith(self, op: str, a: Value, b: Value) -> Value:
        deps = a.deps | b.deps
        reasons = a.reasons + b.reasons
        affine = None
        if a.affine is not None and b.affine is not None:
            if op == "+":
                affine = a.affine + b.affine
            elif op == "-":
                affine = a.affine - b.affine
            elif op == "*":
                if a.affine.is_constant:
                    affine = b.affine.scale(a.affine.const)
                elif b.affine.is_constant:
                    affine = a.affine.scale(b.affine.const)
            elif op == "<<" and b.affine.is_constant and S.is_const(b.affine.const):
                affine = a.affine.scale(S.const(1 << b.affine.const[1]))
            elif a.affine.is_constant and b.affine.is_constant and op in S.C_BINOPS:
                affine = S.Affine.constant(S.binop(S.C_BINOPS[op], a.affine.const,
                                                  b.affine.const))
            elif b.affine.is_constant and op in ("/", "%", ">>"):
                affine = self._quotient(op, a.affine, b.affine.const)
            if affine is None and (deps & (TID | BID) or any(
                    isinstance(x, tuple) and x[0] == "loop" for x in deps)):
                reasons += (f"'{op}' makes the index non-affine",)
        return Value(deps, affine, tuple(dict.fromkeys(reasons)))

    def _quotient(self, op: str, num: S.Affine, den) -> S.Affine | None:
        """`a / s`, `a % s`, `a >> k` with s, k known at launch: a derived variable of a
        quasi-affine form (symbolic.DERIVED), which the runtime evaluates by enumeration."""
        if op == ">>":
            shift = self._compile_time_int(den)
            if shift is None or not 0 <= shift < 31:
                return None
            op, den = "/", S.const(1 << shift)
        # integer division only: a float quotient is not an index
        if not self._integral(den) or not self._integral(num.const) or \
                not all(self._integral(c) for _, c in num.terms):
            return None
        return S.Affine.var(("qdiv" if op == "/" else "qmod", num, den))

    def _unsigned_quotient(self, node, left: Value, v: Value) -> Value:
        """`a / n`, `a % n` where an operand is unsigned: C converts `a` to unsigned, so the
        quotient of its affine form (C's signed division) is right only where a >= 0. Kept
        where that holds at every point (`i % stages` with i = iteration), else not affine
        (-2 % (size_t)4 is 2, not -2): the site is measured."""
        if node.op not in ("/", "%") or v.affine is None or v.affine.is_constant or \
                left.affine is None or self._nonnegative(left.affine):
            return v
        macros = self.program.macro_expression
        names = self.facts.names
        if not (expr_unsigned(node.left, names, macros) or
                expr_unsigned(node.right, names, macros)):
            return v
        return Value(v.deps, None, v.reasons + (
            f"'{node.op}' converts a value that may be negative to unsigned",))

    def _nonnegative(self, affine: S.Affine) -> bool:
        """Whether the form is >= 0 wherever it is evaluated: indices and iteration numbers
        are, so are coefficients known to be."""
        def var(v) -> bool:
            if isinstance(v, str):
                return v in TID or v in BID
            if S.is_derived(v):
                tag, a, b = v
                if tag in ("qmin", "qmax"):
                    return self._nonnegative(a) and self._nonnegative(b)
                if tag == "qtab":
                    return all(x >= 0 for x in b[1:])
                return self._nonnegative_sym(b) and self._nonnegative(a)  # b != 0: C's rule
            return isinstance(v, tuple) and v[0] == "iter"

        return self._nonnegative_sym(affine.const) and all(
            var(v) and self._nonnegative_sym(c) for v, c in affine.terms)

    def _nonnegative_sym(self, sym) -> bool:
        n = self._compile_time_int(sym)
        if n is not None:
            return n >= 0
        tag = sym[0]
        if tag in ("dim", "sizeof"):
            return True
        if tag == "param":
            return any(p.name == sym[1] and unsigned_decl(p.decl)
                       for p in self.facts.names.params)
        if tag in ("add", "mul"):
            return all(self._nonnegative_sym(x) for x in sym[1:])
        return False

    def _integral(self, sym) -> bool:
        """Whether a launch-time Sym is certainly an integer."""
        tag = sym[0]
        if tag == "int":
            return True
        if tag == "float":
            return False
        if tag == "param":
            for p in self.facts.names.params:
                if p.name == sym[1]:
                    from .symbols import type_text
                    t = type_text(p.type) if p.type is not None else ""
                    return not any(w in t for w in ("float", "double", "half"))
            return False
        if tag in ("macro", "const", "name"):
            return self._compile_time_int(sym) is not None or tag != "macro"
        if tag in ("dim", "sizeof", "tparam"):
            return True
        if tag == "cast":
            return not any(w in sym[1] for w in ("float", "double", "half"))
        return all(self._integral(x) for x in sym[1:] if isinstance(x, tuple))

    def _warp_quotient(self, op, left: Value, right: Value) -> Value | None:
        """`threadIdx.x / 32` (or `>> 5`, or any multiple of 32 known when compiling): the same
        for all lanes of a warp, different between warps. Its value depends on 'warp.x' (which
        breaks tid-invariance but not warp-uniformity) instead of 'tid.x'."""
        if left.affine is None or "tid.x" not in left.deps or right.affine is None or \
                not right.affine.is_constant:
            return None
        divisor = self._compile_time_int(right.affine.const)
        coeff = self._compile_time_int(left.affine.coeff("tid.x"))
        if divisor is None or coeff is None or coeff <= 0:
            return None
        if op == ">>":
            divisor = 1 << divisor if 0 <= divisor < 31 else None
            if divisor is None:
                return None
        others = left.affine.without("tid.x")
        if not others.is_constant or self._compile_time_int(others.const) != 0:
            return None  # only c * threadIdx.x itself: other terms could shift lanes across
        if divisor % (32 * coeff) != 0:
            return None
        deps = (left.deps - {"tid.x"}) | right.deps | {"warp.x"}
        return Value(frozenset(deps), S.Affine.var(("qdiv", left.affine, S.const(divisor))),
                     left.reasons + right.reasons +
                     ("threadIdx.x / 32: the same for a warp's lanes",))

    def _compile_time_int(self, sym) -> int | None:
        """An integer Sym made of constants and macros only (known when compiling)."""
        try:
            v = S.evaluate(sym, self._macro_env)
        except (S.Unknown, RecursionError, TypeError):
            return None
        return int(v) if isinstance(v, int) or (isinstance(v, float) and v.is_integer()) else None

    def _macro_env(self, key):
        if key[0] == "macro":
            expr = self.program.macro_expression(key[1])
            if expr is not None:
                v = self.value(expr)
                if v.affine is not None and v.affine.is_constant and not v.deps:
                    return S.evaluate(v.affine.const, self._macro_env)
        raise S.Unknown(str(key))

