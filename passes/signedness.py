"""Signedness of C expressions, as C's usual arithmetic conversions decide it: whether an
operator works on unsigned values. Analysis helpers for ranges.py (a loop's iterator and bound
must agree) and value_arithmetic.py (`i % n` with an unsigned operand converts a negative `i`
to a large unsigned value, which C's signed remainder of the affine form does not give).

    constexpr size_t stages = 4;  i % stages    unsigned: exact only where i >= 0
    int tiles;                    t % tiles     signed

Conservative: what is not known (a member, a call, threadIdx.x) counts as unsigned.
"""
from __future__ import annotations

from pycparser import c_ast

from .scopes import MACRO


def type_words(t) -> list[str]:
    while t is not None and not isinstance(t, c_ast.TypeDecl):
        t = getattr(t, "type", None)
    if t is None:
        return []
    inner = t.type
    names = getattr(inner, "names", None)
    return list(names) if names else []


def unsigned_decl(decl) -> bool:
    t = type_words(getattr(decl, "type", None))
    return "unsigned" in t or "size_t" in t or any(w.startswith("uint") for w in t)


def expr_unsigned(node, names, macro_expression) -> bool:
    """Whether C's usual conversions make the expression unsigned (unknown: True, so that the
    caller refuses). macro_expression(name) gives a macro's body (or None)."""
    def unsigned(n) -> bool:
        if isinstance(n, c_ast.Constant):
            return n.type != "char" and "u" in n.value.lower()
        if isinstance(n, c_ast.ID):
            sym = names[n]
            if sym is not None and sym.kind == MACRO:
                body = macro_expression(n.name)
                return body is None or unsigned(body)
            if sym is None or not isinstance(sym.decl, c_ast.Decl):
                return True
            return unsigned_decl(sym.decl)
        if isinstance(n, c_ast.StructRef):
            return True  # threadIdx.x and friends are unsigned; members are not followed
        if isinstance(n, c_ast.ArrayRef):
            base = n
            while isinstance(base, c_ast.ArrayRef):
                base = base.name
            if not isinstance(base, c_ast.ID):
                return True
            sym = names[base]
            return sym is None or not isinstance(sym.decl, c_ast.Decl) or \
                unsigned_decl(sym.decl)
        if isinstance(n, c_ast.BinaryOp):
            if n.op in ("<<", ">>"):
                return unsigned(n.left)
            return unsigned(n.left) or unsigned(n.right)
        if isinstance(n, c_ast.UnaryOp) and n.op in ("-", "+", "~"):
            return unsigned(n.expr)
        if isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID) and \
                n.name.name in ("min", "max") and n.args is not None:
            return any(unsigned(a) for a in n.args.exprs)
        return True

    return unsigned(node)


__all__ = ["type_words", "unsigned_decl", "expr_unsigned"]
