"""ValueAnalysis: what each expression's value depends on, and its affine form when it has one.

Read-only analysis. For an expression node, `value(node)` returns a Value:
  deps    the things the value may vary with: 'tid.x' 'tid.y' 'tid.z' (thread index),
          'bid.x' 'bid.y' 'bid.z' (block index), ('loop', L) (changes across iterations of loop
          L), 'data' (memory contents), 'call' (a call we cannot see into), 'unknown'
  affine  sum(coeff * var) + const over tid/bid and loop iteration numbers, with coefficients
          known at launch (symbolic.Affine), or None
  reasons human-readable notes on why a value is data-dependent or not affine
Values known at launch (scalar arguments, blockDim, gridDim, template arguments, macros,
constants) have no deps and a constant affine form.

Local variables are followed through reaching definitions (dataflow.py). A loop's iterator is
recognised as init + step * iteration; any other variable defined inside a loop varies with
that loop. A device function's value is analysed in the context of its call site (its
parameters take the call's argument values), which is the interprocedural analysis the paper
lacked for dxtc.

    for (int r = 0; r < nRow; r += STRIDE)           r:  deps {loop r}, affine STRIDE*iter_r
      for (int rc = 0; rc < nRowCL; rc++) rowCS[rc]  rc: deps {loop rc}, affine iter_rc
"""
from __future__ import annotations

from pycparser import c_ast

from gmprof.frontend import cxx_ast as X

from . import symbolic as S
from .dataflow import Reaching
from .loops import Loops
from .scopes import (BUILTIN, CONSTANT, FUNCTION, GLOBAL, LOCAL, MACRO, PARAM, TEMPLATE_PARAM,
                     UNKNOWN, Names)
from .value_arithmetic import ValueArithmetic
from .value_calls import CallValues
from .value_domain import (_BUILTIN_FIELDS, BID, TID, UNKNOWN_VALUE, Context, Value, const_value,
                           join)
from .value_variables import VariableValues
from .visitor import Visitor


class ValueAnalysis(Visitor, VariableValues, ValueArithmetic, CallValues):
    """Values of expressions of one function in one context. Memoised per node and per Def.
    value(node) memoises visit_<Class>(node) (a class with no method joins its children's).
    Expressions are here; variables (reaching definitions, loop iterators) in
    value_variables.py, arithmetic and quotients in value_arithmetic.py, calls in
    value_calls.py."""

    def __init__(self, program, facts, context: Context | None = None):
        self.program = program
        self.facts = facts
        self.names: Names = facts.names
        self.reaching: Reaching = facts.dataflow
        self.loops: Loops = facts.loops
        self.context = context or Context(facts)
        self.sites_by_node = {s.node: s for s in facts.sites}
        self.written_objects = _written_objects(facts)
        self._objects_by_symbol = {o.symbol: o for o in facts.objects}
        self._memo: dict = {}
        self._active: set = set()  # nodes being evaluated (cycle guard)
        self._def_memo: dict = {}
        self._macro_values: dict = {}

    def object_of(self, sym):
        """The MemoryObject a symbol declares in this function, or None."""
        return self._objects_by_symbol.get(sym)

    # -- entry ---------------------------------------------------------------------------
    def value(self, node) -> Value:
        if node is None:
            return UNKNOWN_VALUE
        hit = self._memo.get(node)
        if hit is not None:
            return hit
        if node in self._active:
            # a value that depends on itself through a condition (an argmin's index chosen by
            # comparing with itself): gmprof does not follow such cycles
            return Value(frozenset({"unknown"}), None,
                         ("a value chosen by a condition on itself",))
        self._active.add(node)
        try:
            v = self.visit(node)
        finally:
            self._active.discard(node)
        self._memo[node] = v
        return v

    def generic_visit(self, node) -> Value:
        return join([self.value(c) for _, c in node.children()],
                    reason=f"{type(node).__name__} is not analysed")

    # -- leaves ----------------------------------------------------------------------------
    def visit_Constant(self, node) -> Value:
        if node.type in ("int", "unsigned int", "long int", "long long int",
                         "unsigned long long int"):
            text = node.value.rstrip("uUlLzZ").replace("'", "")
            try:
                return const_value(S.const(int(text, 0)))
            except ValueError:
                try:
                    return const_value(S.const(int(text, 8) if text.startswith("0") else 0))
                except ValueError:
                    return Value(frozenset(), None)
        if node.type == "char":
            text = node.value
            if len(text) == 3:
                return const_value(S.const(ord(text[1])))
            return Value(frozenset(), None)
        if node.type in ("float", "double"):
            try:
                return const_value(("float", float(node.value.rstrip("fFlL"))))
            except ValueError:
                return Value(frozenset(), None)
        if node.type == "bool":
            return const_value(S.const(1 if node.value == "true" else 0))
        return Value(frozenset(), None)

    def visit_ID(self, node) -> Value:
        sym = self.names[node]
        if sym is None:  # a name inside a macro body: resolved at file scope
            sym = self.program.file_symbol(node.name)
        kind = sym.kind
        if kind == BUILTIN:
            if sym.name == "warpSize":
                return const_value(S.const(32))
            return Value(TID if sym.name == "threadIdx" else BID if sym.name == "blockIdx"
                         else frozenset(), None)
        if kind == TEMPLATE_PARAM:
            if self.context.params is not None and sym in self.context.params:
                return self.context.params[sym]
            return const_value(("tparam", sym.name))
        if kind == CONSTANT:
            return const_value(("const", sym.name))
        if kind == MACRO:
            return self._macro_value(sym.name)
        if kind == GLOBAL:
            site = self.sites_by_node.get(node)
            return self._memory_read(node, site, Value())
        if kind == FUNCTION:
            return Value(frozenset({"call"}), None, (f"{sym.name} is a function",))
        if kind == UNKNOWN:
            # an enumerator or a host constant we did not parse: known at compile time
            return const_value(("name", sym.name))
        if kind == PARAM and not self._reassigned(sym):
            return self._param_value(sym)
        return self._variable(node, sym)

    def _reassigned(self, sym) -> bool:
        return any(d.kind != "param" for d in self.reaching.defs.get(sym, ()))

    def _param_value(self, sym) -> Value:
        if self.context.params is not None and sym in self.context.params:
            return self.context.params[sym]
        t = sym.type
        if isinstance(t, (c_ast.PtrDecl, c_ast.ArrayDecl)):
            return Value(frozenset(), None)  # a pointer: its value is an address
        if self.context.params is not None:
            return Value(frozenset({"unknown"}), None, (f"parameter {sym.name} is unbound",))
        return const_value(("param", sym.name))

    def _macro_value(self, name: str) -> Value:
        if name in self._macro_values:
            return self._macro_values[name]
        self._macro_values[name] = const_value(("macro", name))  # guard against recursion
        expr = self.program.macro_expression(name)
        if expr is None:
            v = const_value(("macro", name))
        else:
            inner = self.value(expr)
            # keep the macro's name when its body is known at launch (`TILE`, not `16`)
            v = const_value(("macro", name)) if inner.launch_known else inner
        self._macro_values[name] = v
        return v

    # -- operators (arithmetic itself: value_arithmetic.py) ---------------------------
    def visit_BinaryOp(self, node) -> Value:
        left, right = self.value(node.left), self.value(node.right)
        if node.op in ("/", ">>"):
            warp = self._warp_quotient(node.op, left, right)
            if warp is not None:
                return warp
        return self._unsigned_quotient(node, left, self._arith(node.op, left, right))

    def visit_UnaryOp(self, node) -> Value:
        op = node.op
        if op in ("sizeof", "_Alignof"):
            inner = node.expr
            if isinstance(inner, c_ast.Typename):
                from .symbols import type_text
                return const_value(("sizeof", type_text(inner.type)))
            return const_value(("sizeof", X.span(inner).text if X.span(inner) else "?"))
        if op == "sizeof...":
            return const_value(("name", "sizeof..."))
        if op == "*":
            site = self.sites_by_node.get(node)
            return self._memory_read(node, site, self.value(node.expr))
        if op == "&":
            inner = self.value(node.expr) if not isinstance(node.expr, (c_ast.ArrayRef, c_ast.ID)) \
                else self._address_value(node.expr)
            return Value(inner.deps, None, inner.reasons)
        v = self.value(node.expr)
        if op == "-":
            return Value(v.deps, -v.affine if v.affine is not None else None, v.reasons)
        if op == "+":
            return v
        if op in ("++", "--", "p++", "p--"):
            return Value(v.deps, None, v.reasons)
        if op == "!" and v.affine is not None and v.affine.is_constant:
            return const_value(("not", v.affine.const))
        if op == "~" and v.affine is not None and v.affine.is_constant:
            return const_value(("bnot", v.affine.const))
        return Value(v.deps, None, v.reasons)

    def _address_value(self, node) -> Value:
        """Dependences of an address expression (&a[i]: those of i; the base is fixed)."""
        if isinstance(node, c_ast.ArrayRef):
            return join([self._address_value(node.name), self.value(node.subscript)])
        if isinstance(node, c_ast.ID):
            return Value()
        return self.value(node)

    def visit_TernaryOp(self, node) -> Value:
        c, a, b = self.value(node.cond), self.value(node.iftrue), self.value(node.iffalse)
        affine = None
        if c.affine is not None and c.affine.is_constant and a.affine is not None and \
                b.affine is not None and a.affine.is_constant and b.affine.is_constant:
            affine = S.Affine.constant(("select", c.affine.const, a.affine.const, b.affine.const))
        elif a.affine is not None and a.affine == b.affine:
            affine = a.affine
        return Value(c.deps | a.deps | b.deps, affine, c.reasons + a.reasons + b.reasons)

    def visit_Assignment(self, node) -> Value:
        return self.value(node.rvalue) if node.op == "=" else self.value(node.lvalue)

    def visit_ExprList(self, node) -> Value:
        for e in node.exprs[:-1]:
            self.value(e)
        return self.value(node.exprs[-1]) if node.exprs else UNKNOWN_VALUE

    def visit_Cast(self, node) -> Value:
        v = self.value(node.expr)
        from .symbols import type_text
        t = type_text(node.to_type.type) if isinstance(node.to_type, c_ast.Typename) else "?"
        if isinstance(node.to_type.type, c_ast.PtrDecl):
            return Value(v.deps, None, v.reasons)
        if v.affine is not None and v.affine.is_constant:
            return const_value(("cast", t, v.affine.const))
        if t.replace("const", "").strip() in ("float", "double"):
            return Value(v.deps, None, v.reasons)
        return v  # integer conversions keep affine index arithmetic

    def visit_CxxCast(self, node) -> Value:
        return self.visit_Cast(node)

    def visit_Typename(self, node) -> Value:
        return Value()

    def visit_InitList(self, node) -> Value:
        return join([self.value(e) for e in node.exprs])

    def visit_StructRef(self, node) -> Value:
        name = node.name
        field_name = node.field.name if isinstance(node.field, c_ast.ID) else None
        if isinstance(name, c_ast.ID) and node.type == ".":
            sym = self.names[name] or self.program.file_symbol(name.name)
            if sym is not None and sym.kind == BUILTIN:
                var = _BUILTIN_FIELDS.get((sym.name, field_name))
                if var is not None:
                    return Value(frozenset([var]), S.Affine.var(var))
                if sym.name in ("blockDim", "gridDim"):
                    return const_value(("dim", f"{sym.name}.{field_name}"))
        site = self.sites_by_node.get(node)
        if site is not None:
            return self._memory_read(node, site, self._site_index_value(site))
        # a member of a local struct/vector variable or of an array element
        base = self.value(name)
        return Value(base.deps, None, base.reasons)

    def visit_ArrayRef(self, node) -> Value:
        site = self.sites_by_node.get(node)
        if site is not None:
            return self._memory_read(node, site, self._site_index_value(site))
        # a partial subscript (an address) or a local array element
        inner = join([self.value(node.name), self.value(node.subscript)])
        if self._is_local_array(node):
            return Value(inner.deps | TID | frozenset(("loop", l) for l in self.loops.of(node))
                         | {"data"}, None, inner.reasons + ("reads a local array",))
        return Value(inner.deps, None, inner.reasons)

    def _is_local_array(self, node) -> bool:
        base = node
        while isinstance(base, c_ast.ArrayRef):
            base = base.name
        sym = self.names[base] if isinstance(base, c_ast.ID) else None
        return sym is not None and sym.kind == LOCAL and isinstance(sym.type, c_ast.ArrayDecl)

    def _site_index_value(self, site) -> Value:
        return join([self.value(s) for s in site.subscripts])

    def _memory_read(self, node, site, index: Value) -> Value:
        """The value read from memory: depends on the data; also on the thread and on every
        enclosing loop when the kernel may write that object (another thread or iteration may
        have changed it)."""
        deps = set(index.deps) | {"data"}
        obj = site.object if site is not None else None
        name = obj.name if obj is not None else "memory"
        reason = f"reads {name}"
        if obj is None or obj in self.written_objects or obj.space == "local":
            deps |= TID
            deps |= {("loop", l) for l in self.loops.of(node)}
            reason = f"reads {name}, which the kernel also writes"
        return Value(frozenset(deps), None, index.reasons + (reason,))


class ValueAnalyses:
    """The values pass's result: a ValueAnalysis per function per calling context, each
    function's own context made by the pass, call chains' on demand (memoised by the function's
    facts and the chain of call nodes)."""

    def __init__(self, program):
        self.program = program
        self._analyses: dict = {}
        for facts in program.functions:
            self.of(facts)

    def of(self, facts, context: Context | None = None) -> ValueAnalysis:
        context = context or Context(facts)
        key = (facts, context.chain)
        if key not in self._analyses:
            self._analyses[key] = ValueAnalysis(self.program, facts, context)
        return self._analyses[key]


def _written_objects(facts) -> set:
    out = set()
    for site in facts.sites:
        if site.kind != "read" and site.object is not None:
            out.add(site.object)
    return out

