"""Symbolic launch-time values and affine forms.

Many values in a kernel are unknown when gmprof reads the source but known when the kernel is
launched: scalar arguments, blockDim/gridDim, template arguments, macros, file-scope constants,
sizeof. A Sym is an immutable expression over those (tuples, so they hash and compare):

    ('int', 16)  ('param', 'n')  ('dim', 'blockDim.x')  ('macro', 'TILE')  ('tparam', 'B')
    ('const', 'N')  ('sizeof', 'float4')  ('add', a, b)  ('mul', a, b)  ('div', a, b) ...

An Affine is sum(coefficient * variable) + constant, where the variables are the thread and block
indices ('tid.x' ... 'bid.z') and loop iteration numbers (('iter', loop_id)), and coefficients
and the constant are Syms. The runtime evaluates Syms at launch (`evaluate`) to count static
accesses without running them.
"""
from __future__ import annotations

from dataclasses import dataclass

ZERO = ("int", 0)
ONE = ("int", 1)

THREAD_VARS = ("tid.x", "tid.y", "tid.z")
BLOCK_VARS = ("bid.x", "bid.y", "bid.z")


class Unknown(Exception):
    """A Sym that cannot be evaluated with what is known at launch."""


def const(v: int) -> tuple:
    return ("int", int(v))


def is_const(s) -> bool:
    return s[0] == "int"


def add(a, b):
    if is_const(a) and is_const(b):
        return const(a[1] + b[1])
    if a == ZERO:
        return b
    if b == ZERO:
        return a
    return ("add", a, b)


def neg(a):
    if is_const(a):
        return const(-a[1])
    if a[0] == "neg":
        return a[1]
    return ("neg", a)


def sub(a, b):
    if is_const(a) and is_const(b):
        return const(a[1] - b[1])
    if b == ZERO:
        return a
    if a == b:
        return ZERO
    return ("sub", a, b)


def mul(a, b):
    if is_const(a) and is_const(b):
        return const(a[1] * b[1])
    if a == ZERO or b == ZERO:
        return ZERO
    if a == ONE:
        return b
    if b == ONE:
        return a
    return ("mul", a, b)


def binop(op: str, a, b):
    """Any other binary operator, folded when both sides are integer constants."""
    if is_const(a) and is_const(b):
        try:
            return const(_INT_OPS[op](a[1], b[1]))
        except (ZeroDivisionError, KeyError):
            pass
    return (op, a, b)


def _cdiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _cmod(a: int, b: int) -> int:
    return a - b * _cdiv(a, b)


_INT_OPS = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": _cdiv, "mod": _cmod, "shl": lambda a, b: a << b, "shr": lambda a, b: a >> b,
    "and": lambda a, b: a & b, "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b,
    "min": min, "max": max, "lt": lambda a, b: int(a < b), "le": lambda a, b: int(a <= b),
    "gt": lambda a, b: int(a > b), "ge": lambda a, b: int(a >= b), "eq": lambda a, b: int(a == b),
    "ne": lambda a, b: int(a != b), "land": lambda a, b: int(bool(a) and bool(b)),
    "lor": lambda a, b: int(bool(a) or bool(b)),
}

C_BINOPS = {"+": "add", "-": "sub", "*": "mul", "/": "div", "%": "mod", "<<": "shl", ">>": "shr",
            "&": "and", "|": "or", "^": "xor", "<": "lt", "<=": "le", ">": "gt", ">=": "ge",
            "==": "eq", "!=": "ne", "&&": "land", "||": "lor"}
_OP_TEXT = {v: k for k, v in C_BINOPS.items()}


def trip_count(compare: str, init, bound, step, sign: int):
    """Iterations of `for (i = init; i CMP bound; i += sign*step)` as a Sym."""
    return ("trip", compare, init, bound, step, sign)


def evaluate(s, env) -> int | float:
    """Value of a Sym. env maps ('param', n) / ('dim', ..) / ('macro', ..) / ('tparam', ..) /
    ('const', ..) / ('sizeof', t) keys to numbers, or is a callable(key) raising Unknown."""
    tag = s[0]
    if tag == "int":
        return s[1]
    if tag == "float":
        return s[1]
    if tag in ("param", "dim", "macro", "tparam", "const", "sizeof", "name"):
        if callable(env):
            return env(s)
        if s in env:
            return env[s]
        raise Unknown(describe(s))
    if tag == "neg":
        return -evaluate(s[1], env)
    if tag == "not":
        return int(not evaluate(s[1], env))
    if tag == "bnot":
        return ~int(evaluate(s[1], env))
    if tag == "cast":
        v = evaluate(s[2], env)
        return _cast(s[1], v)
    if tag == "select":
        return evaluate(s[2], env) if evaluate(s[1], env) else evaluate(s[3], env)
    if tag == "trip":
        _, cmp, init, bound, step, sign = s
        a, b = evaluate(init, env), evaluate(bound, env)
        st = evaluate(step, env) if step is not None else 1
        return trip_value(cmp, a, b, st, sign)
    if tag in _INT_OPS:
        a, b = evaluate(s[1], env), evaluate(s[2], env)
        if tag in ("div", "mod") and isinstance(a, int) and isinstance(b, int):
            if b == 0:
                raise Unknown("division by zero")
            return _INT_OPS[tag](a, b)
        if tag == "div":
            return a / b
        if tag == "mod":
            return float("nan") if b == 0 else a % b
        return _INT_OPS[tag](a, b)
    raise Unknown(f"cannot evaluate {describe(s)}")


def trip_value(cmp: str, a: int, b: int, step: int, sign: int) -> int:
    step = step * sign
    if step == 0:
        raise Unknown("a loop with step 0")
    if cmp == "<":
        return max(0, -(-(b - a) // step)) if step > 0 else _infinite()
    if cmp == "<=":
        return max(0, (b - a) // step + 1) if step > 0 else _infinite()
    if cmp == ">":
        return max(0, -(-(a - b) // -step)) if step < 0 else _infinite()
    if cmp == ">=":
        return max(0, (a - b) // -step + 1) if step < 0 else _infinite()
    if cmp == "!=":
        if (b - a) % step != 0 or (b - a) // step < 0:
            return _infinite()
        return (b - a) // step
    raise Unknown(f"comparison {cmp}")


def _infinite():
    raise Unknown("the loop does not terminate as written (or wraps around)")


def _cast(type_text: str, v):
    t = type_text.replace("const", "").strip()
    if t in ("float", "double"):
        return float(v)
    if t.startswith("unsigned") or t in ("uint", "size_t", "uint32_t", "uint64_t"):
        return int(v) & ((1 << 64) - 1 if "long long" in t or t in ("size_t", "uint64_t")
                         else (1 << 32) - 1)
    return int(v)


def describe(s) -> str:
    """Readable text for a Sym (C-like)."""
    tag = s[0]
    if tag in ("int", "float"):
        return str(s[1])
    if tag in ("param", "macro", "tparam", "const", "name"):
        return s[1]
    if tag == "dim":
        return s[1]
    if tag == "sizeof":
        return f"sizeof({s[1]})"
    if tag == "neg":
        return f"-{_paren(s[1])}"
    if tag == "not":
        return f"!{_paren(s[1])}"
    if tag == "bnot":
        return f"~{_paren(s[1])}"
    if tag == "cast":
        return f"({s[1]}){_paren(s[2])}"
    if tag == "select":
        return f"{_paren(s[1])} ? {_paren(s[2])} : {_paren(s[3])}"
    if tag == "trip":
        _, cmp, init, bound, step, sign = s
        st = describe(step) if step is not None else "1"
        return f"trips({describe(init)} {cmp} {describe(bound)} step {'-' if sign < 0 else ''}{st})"
    if tag in ("min", "max"):
        return f"{tag}({describe(s[1])}, {describe(s[2])})"
    if tag in _OP_TEXT:
        return f"{_paren(s[1])} {_OP_TEXT[tag]} {_paren(s[2])}"
    return str(s)


def _paren(s) -> str:
    text = describe(s)
    return text if s[0] in ("int", "param", "macro", "tparam", "const", "dim", "name",
                            "sizeof") else f"({text})"


@dataclass(frozen=True)
class Affine:
    """sum(coeff * var) + const, with Sym coefficients. terms is a sorted tuple of (var, coeff)."""

    terms: tuple = ()
    const: tuple = ZERO

    @staticmethod
    def constant(s) -> "Affine":
        return Affine((), s)

    @staticmethod
    def var(v) -> "Affine":
        return Affine(((v, ONE),), ZERO)

    @property
    def is_constant(self) -> bool:
        return not self.terms

    def coeff(self, v):
        for var, c in self.terms:
            if var == v:
                return c
        return ZERO

    @property
    def variables(self) -> tuple:
        return tuple(v for v, _ in self.terms)

    def _combine(self, other: "Affine", f) -> "Affine":
        coeffs = dict(self.terms)
        for v, c in other.terms:
            coeffs[v] = f(coeffs.get(v, ZERO), c)
        terms = tuple(sorted(((v, c) for v, c in coeffs.items() if c != ZERO), key=_var_key))
        return Affine(terms, f(self.const, other.const))

    def __add__(self, other: "Affine") -> "Affine":
        return self._combine(other, add)

    def __sub__(self, other: "Affine") -> "Affine":
        return self._combine(other, sub)

    def __neg__(self) -> "Affine":
        return Affine(tuple((v, neg(c)) for v, c in self.terms), neg(self.const))

    def scale(self, s) -> "Affine":
        if s == ZERO:
            return Affine((), ZERO)
        return Affine(tuple((v, mul(c, s)) for v, c in self.terms), mul(self.const, s))

    def without(self, v) -> "Affine":
        return Affine(tuple((x, c) for x, c in self.terms if x != v), self.const)

    def describe(self, var_names=None) -> str:
        parts = []
        for v, c in self.terms:
            name = var_names(v) if var_names else _var_text(v)
            parts.append(name if c == ONE else f"{_paren(c)}*{name}")
        if self.const != ZERO or not parts:
            parts.append(describe(self.const))
        return " + ".join(parts)


def _var_key(item):
    v = item[0]
    return (0, v) if isinstance(v, str) else (1, str(v))


def _var_text(v) -> str:
    if isinstance(v, str):
        return {"tid.x": "threadIdx.x", "tid.y": "threadIdx.y", "tid.z": "threadIdx.z",
                "bid.x": "blockIdx.x", "bid.y": "blockIdx.y", "bid.z": "blockIdx.z"}.get(v, v)
    if is_derived(v):
        tag, a, b = v
        if tag in ("qmin", "qmax"):
            return f"{tag[1:]}({a.describe()}, {b.describe()})"
        if tag == "qtab":
            return f"({', '.join(map(str, b[1:]))})[{a.describe()}]"
        return f"({a.describe()} {'/' if tag == 'qdiv' else '%'} {_paren(b)})"
    return f"iter{v[1]}"


# -- quasi-affine forms ---------------------------------------------------------------------
#
# An index such as `(t / tilesX) * TILE + threadIdx.y` or `lane % 4` is not affine, but it is
# still a function of thread, block and loop indices and launch values, so its count can be
# computed at launch by enumeration. Such a term is a *derived variable* of the Affine:
#   ('qdiv', A, s)  C division (toward zero) of the Affine A by the launch-known Sym s
#   ('qmod', A, s)  the matching remainder
#   ('qmin', A, B) / ('qmax', A, B)  min and max of two Affines
#   ('qtab', A, ('table', v0, v1, ...))  the A-th value of a list (a geometric loop's iterator)
# A base variable is a thread or block index or a loop iteration number.
DERIVED = ("qdiv", "qmod", "qmin", "qmax", "qtab")


def is_derived(v) -> bool:
    return isinstance(v, tuple) and len(v) == 3 and v[0] in DERIVED


def base_variables(affine: "Affine") -> set:
    """The thread/block/iteration variables an Affine depends on, through derived terms too."""
    out = set()
    for v, _ in affine.terms:
        if is_derived(v):
            out |= base_variables(v[1])
            if v[0] in ("qmin", "qmax"):
                out |= base_variables(v[2])
        else:
            out.add(v)
    return out


def has_derived(affine: "Affine") -> bool:
    return any(is_derived(v) for v, _ in affine.terms)


def map_variables(affine: "Affine", f) -> "Affine | None":
    """The Affine with every base variable v replaced by f(v) (None: give up)."""
    terms = []
    for v, c in affine.terms:
        if is_derived(v):
            a = map_variables(v[1], f)
            b = map_variables(v[2], f) if v[0] in ("qmin", "qmax") else v[2]
            if a is None or b is None:
                return None
            v = (v[0], a, b)
        else:
            v = f(v)
            if v is None:
                return None
        terms.append((v, c))
    return Affine(tuple(sorted(terms, key=_var_key)), affine.const)
