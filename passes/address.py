"""AddressOf: the byte offset of each access site from the start of its object.

Read-only analysis on top of ValueAnalysis. For an AccessSite, returns an Address: the offset in
bytes as a Value (deps + affine form, sizes as `sizeof(T)` symbols evaluated at launch), and the
type accessed (its size says how many 4-byte words or elements one access touches). Pointer
types are followed through subscripts, casts, `&`, pointer arithmetic and local aliases:

    __shared__ float tile[16][17];  tile[ty][tx]     -> ty*(17*sizeof(float)) + tx*sizeof(float)
    float4 *v4 = (float4 *)smem;    v4[i / 4]        -> (i / 4)*sizeof(float4)  (not affine)
    float *row = a + i * n;         row[2]           -> (i*n + 2)*sizeof(float)
"""
from __future__ import annotations

from dataclasses import dataclass

from pycparser import c_ast

from gmprof.frontend import cxx_ast as X

from . import symbolic as S
from .accesses import subscript_chain
from .scopes import LOCAL, PARAM
from .symbols import type_text
from .value_domain import UNKNOWN_VALUE, Value, const_value, join
from .values import ValueAnalysis


@dataclass(frozen=True)
class PointerType:
    """What a pointer expression points at: `elem` values arranged as `dims` (Values; the first
    is the pointer's own, unsized dimension: subscripting walks them). No dims: one element."""

    elem: str
    dims: tuple = ()


@dataclass(frozen=True)
class Address:
    offset: Value  # bytes from the object's start
    access_type: str  # the type one access reads or writes
    reason: str | None = None  # why the offset is not known (object/type lost)


class AddressOf:
    def __init__(self, values: ValueAnalysis):
        self.values = values
        self.names = values.names
        self.reaching = values.reaching

    def site(self, site) -> Address:
        if site.object is None:
            return Address(UNKNOWN_VALUE, "?", site.unresolved)
        node = site.node
        try:
            if site.form == "subscript":
                base, subs = subscript_chain(node)
                offset, ptype = self.pointer(base)
                offset, ptype = self._subscripts(offset, ptype, subs)
                return Address(offset, _element_type(ptype))
            if site.form in ("deref", "pointer"):
                ptr = node.expr if site.form == "deref" else node
                offset, ptype = self.pointer(ptr)
                return Address(offset, _element_type(ptype))
            if site.form == "arrow":
                offset, ptype = self.pointer(node.name)
                return Address(offset, _element_type(ptype))
            if site.form == "scalar":
                return Address(const_value(S.ZERO), site.object.elem_type)
        except _Lost as lost:
            return Address(UNKNOWN_VALUE, "?", str(lost))
        return Address(UNKNOWN_VALUE, "?", "access form not understood")

    # -- pointer expressions ---------------------------------------------------------------
    def pointer(self, expr, depth: int = 0) -> tuple[Value, PointerType]:
        """(byte offset from the object start, pointed-to type) of a pointer expression."""
        if depth > 16:
            raise _Lost("pointer defined through too many steps")
        if isinstance(expr, c_ast.ID):
            sym = self.names[expr]
            obj = self.values.object_of(sym) if sym is not None else None
            if obj is not None:
                if sym.kind == PARAM:
                    moved = self._moved_parameter(expr, sym, obj, depth)
                    if moved is not None:
                        return moved
                return const_value(S.ZERO), self._declared(sym.decl, obj.elem_type)
            if sym is not None and sym.kind == LOCAL:
                defs = self.reaching.at(expr)
                if len(defs) != 1:
                    raise _Lost(f"{sym.name} has several definitions here")
                d = next(iter(defs))
                if d.kind in ("init", "assign"):
                    offset, ptype = self.pointer(d.rhs, depth + 1)
                    if isinstance(sym.decl.type, c_ast.PtrDecl):
                        ptype = self._declared(sym.decl, ptype.elem)
                    return offset, ptype
                if d.kind == "compound" and d.op in ("+=", "-="):
                    return self._moved(d, depth)
                raise _Lost(f"{sym.name} is changed in a way gmprof does not follow")
            raise _Lost(f"{expr.name} is not a known object")
        if isinstance(expr, (c_ast.Cast, X.CxxCast)):
            offset, _ = self.pointer(expr.expr, depth + 1)
            t = expr.to_type.type
            if isinstance(t, c_ast.PtrDecl):
                return offset, PointerType(type_text(t.type),
                                           (const_value(S.ONE),) + _dims_of(t.type, self.values))
            raise _Lost("a pointer cast to a non-pointer type")
        if isinstance(expr, c_ast.BinaryOp) and expr.op in ("+", "-"):
            try:
                offset, ptype = self.pointer(expr.left, depth + 1)
                k = self.values.value(expr.right)
            except _Lost:
                if expr.op == "-":
                    raise
                offset, ptype = self.pointer(expr.right, depth + 1)
                k = self.values.value(expr.left)
            if expr.op == "-":
                k = Value(k.deps, -k.affine if k.affine is not None else None, k.reasons)
            return self._add_scaled(offset, k, _row_size(ptype, self.values)), ptype
        if isinstance(expr, c_ast.UnaryOp) and expr.op == "&":
            inner = expr.expr
            if isinstance(inner, c_ast.ArrayRef):
                base, subs = subscript_chain(inner)
                offset, ptype = self.pointer(base, depth + 1)
                offset, ptype = self._subscripts(offset, ptype, subs)
                # &a[i] points at elements again: one unsized dimension
                return offset, PointerType(ptype.elem, (const_value(S.ONE),) + ptype.dims)
            if isinstance(inner, c_ast.ID):
                return self.pointer(inner, depth + 1)
            raise _Lost("address of a member")
        if isinstance(expr, c_ast.ArrayRef):
            # a row of a multi-dimensional array used as a pointer
            base, subs = subscript_chain(expr)
            offset, ptype = self.pointer(base, depth + 1)
            return self._subscripts(offset, ptype, subs)
        raise _Lost("pointer expression not understood")

    def _moved_parameter(self, expr, sym, obj, depth):
        """A pointer parameter moved by the function before this use (`b += 2; b[t]`): its
        offset from where the argument pointed, or _Lost when gmprof cannot say (several
        definitions, `b++`, `b = other`); None when it still holds the argument."""
        defs = self.reaching.at(expr)
        if all(d.kind == "param" for d in defs):
            return None
        if len(defs) != 1:
            raise _Lost(f"{sym.name} is moved on some paths here")
        d = next(iter(defs))
        if d.kind == "compound" and d.op in ("+=", "-="):
            return self._moved(d, depth)
        raise _Lost(f"{sym.name} is changed in a way gmprof does not follow")

    def _moved(self, d, depth):
        """(offset, type) of a pointer after `p += k` / `p -= k` (the definition d): where p
        pointed before, k rows further on."""
        offset, ptype = self.pointer(d.node.lvalue, depth + 1)
        step = self.values.value(d.rhs)
        if d.op == "-=":
            step = Value(step.deps, -step.affine if step.affine else None, step.reasons)
        return self._add_scaled(offset, step, _row_size(ptype, self.values)), ptype

    def _subscripts(self, offset: Value, ptype: PointerType, subs) -> tuple[Value, PointerType]:
        for sub in subs:
            if not ptype.dims:
                raise _Lost("more subscripts than dimensions")
            offset = self._add_scaled(offset, self.values.value(sub), _row_size(ptype, self.values))
            ptype = PointerType(ptype.elem, ptype.dims[1:])
        return offset, ptype

    def _declared(self, decl, fallback_elem: str) -> PointerType:
        """The PointerType of a declared array or pointer: `T a[D0][D1]` -> (T, (D0, D1));
        `T *p` -> (T, (1,)); `T (*p)[4]` -> (T, (1, 4))."""
        if not isinstance(decl, c_ast.Decl):
            return PointerType(fallback_elem, (const_value(S.ONE),))
        t = decl.type
        if isinstance(t, c_ast.PtrDecl):
            return PointerType(type_text(t), (const_value(S.ONE),) + _dims_of(t.type, self.values))
        if isinstance(t, c_ast.ArrayDecl):
            return PointerType(type_text(t), _dims_of(t, self.values))
        return PointerType(type_text(t), ())  # a scalar

    def _add_scaled(self, offset: Value, k: Value, size: Value) -> Value:
        return self.values._arith("+", offset, self.values._arith("*", k, size))


class _Lost(Exception):
    pass


def _strip_quals(t: str) -> str:
    words = [w for w in t.split() if w not in ("const", "volatile", "__restrict__", "restrict")]
    return " ".join(words)


def _row_size(ptype: PointerType, values: ValueAnalysis) -> Value:
    """Bytes between consecutive values of the next subscript: sizeof(elem) * later dims."""
    size = const_value(("sizeof", _strip_quals(ptype.elem)))
    for d in ptype.dims[1:]:
        size = values._arith("*", size, d)
    return size


def _element_type(ptype: PointerType) -> str:
    return _strip_quals(ptype.elem)


def _dims_of(node, values: ValueAnalysis) -> tuple:
    dims = []
    while isinstance(node, c_ast.ArrayDecl):
        # an unsized dimension (extern __shared__ float s[]) is the first and never scales
        dims.append(values.value(node.dim) if node.dim is not None else const_value(S.ONE))
        node = node.type
    return tuple(dims)


__all__ = ["Address", "AddressOf", "PointerType", "join"]
