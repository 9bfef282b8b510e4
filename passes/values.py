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
from .dataflow import Def, Reaching
from .geometric import geometric_value
from .loops import Loop, Loops
from .value_domain import (_BLOCK_UNIFORM_FUNCTIONS, _BUILTIN_FIELDS, _PURE_FUNCTIONS,
                           _PURE_INT_FUNCTIONS, _WARP_FUNCTIONS, BID, TID, UNKNOWN_VALUE,
                           WARP_QUOTIENT, Context, Value, const_value, d_current_iteration,
                           join)
from .scopes import (BUILTIN, CONSTANT, FUNCTION, GLOBAL, LOCAL, MACRO, PARAM, TEMPLATE_PARAM,
                     UNKNOWN, Names)



class ValueAnalysis:
    """Values of expressions of one function in one context. Memoised per node and per Def."""

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
            v = self._value(node)
        finally:
            self._active.discard(node)
        self._memo[node] = v
        return v

    def _value(self, node) -> Value:
        method = getattr(self, "_v_" + type(node).__name__, None)
        if method is None:
            return join([self.value(c) for _, c in node.children()],
                        reason=f"{type(node).__name__} is not analysed")
        return method(node)

    # -- leaves ----------------------------------------------------------------------------
    def _v_Constant(self, node) -> Value:
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

    def _v_ID(self, node) -> Value:
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

    # -- variables -----------------------------------------------------------------------
    def _variable(self, node, sym) -> Value:
        defs = self.reaching.at(node)
        if not defs:
            return Value(frozenset({"unknown"}), None, (f"{sym.name} may be used before it is set",))
        enclosing = self.loops.of(node)
        for loop in enclosing:
            inside = [d for d in defs if d.node is not None and self._in_loop(d.node, loop)]
            if not inside:
                continue
            if len(defs) == 1 and d_current_iteration(defs, loop, self.loops, node):
                # the one definition that reaches is made earlier in this same iteration
                # (`int i = (t / tilesX) * TILE + threadIdx.y;` in the loop body): the use sees
                # that definition's value, a function of this iteration's indices
                v = self._def_value(next(iter(defs)))
                return self._strip_foreign_iters(v, enclosing)
            induction = self._induction(loop, sym, defs, node) or \
                geometric_value(self, loop, sym, node)
            if induction is not None:
                return induction
            merged = join([self._def_value(d) for d in defs] +
                          ([self._control_deps(defs, node)] if len(defs) > 1 else []))
            return Value(merged.deps | {("loop", loop)}, None,
                         merged.reasons + (f"{sym.name} changes inside {loop.label}",))
        v = join([self._def_value(d) for d in defs])
        if len(defs) == 1:
            v = self._def_value(next(iter(defs)))
        else:
            values = [self._def_value(d) for d in defs]
            affines = {x.affine for x in values}
            affine = values[0].affine if len(affines) == 1 else None
            # which definition reaches depends on the branches and loops around them: the value
            # depends on their conditions too (control dependence)
            control = self._control_deps(defs, node)
            if control.deps - v.deps:
                affine = None
            v = Value(v.deps | control.deps, affine, v.reasons + control.reasons)
        return self._strip_foreign_iters(v, enclosing)

    def _control_deps(self, defs, use) -> Value:
        """Dependences of the conditions that decide whether each definition ran: enclosing
        if/?:/&&/|| conditions, and the conditions of loops around a definition but not
        around the use."""
        guards = self.facts.guards
        use_loops = set(self.loops.of(use))
        parts = []
        for d in defs:
            if d.node is None:
                continue
            for g in guards.enclosing(d.node):
                if g.kind == "cond":
                    parts.append(self.value(g.expr))
                elif g.kind == "opaque":
                    parts.append(Value(frozenset({"unknown"}), None, (g.reason,)))
            for loop in self.loops.of(d.node):
                if loop not in use_loops and loop.node.cond is not None:
                    parts.append(self.value(loop.node.cond))
        if not parts:
            return Value()
        v = join(parts)
        return Value(v.deps, None, v.reasons)

    def _strip_foreign_iters(self, v: Value, enclosing) -> Value:
        """An affine form may only use iteration numbers of loops around the point of use."""
        if v.affine is None:
            return v
        for var in S.base_variables(v.affine):
            if isinstance(var, tuple) and var[0] == "iter" and var[1] not in enclosing:
                return Value(v.deps, None, v.reasons + ("the value a loop left behind",))
        return v

    def _in_loop(self, node, loop: Loop) -> bool:
        inner = self.loops.enclosing.get(node)
        return inner is not None and loop.encloses(inner)

    def _induction(self, loop: Loop, sym, defs, use) -> Value | None:
        if loop.iterator is not sym:
            return None
        all_defs = self.reaching.defs.get(sym, [])
        inside = [d for d in all_defs if d.node is not None and self._in_loop(d.node, loop)]
        step_def = self.reaching.def_of_node.get(loop.step_node)
        if inside != [step_def] or step_def is None:
            return None
        entry = [d for d in defs if d is not step_def]
        if not entry:
            return None
        entry_value = join([self._def_value(d) for d in entry])
        if len(entry) == 1:
            entry_value = self._def_value(entry[0])
        step = const_value(S.ONE) if loop.step is None else self.value(loop.step)
        if not step.launch_known or step.affine is None:
            return Value(entry_value.deps | step.deps | {("loop", loop)}, None,
                         entry_value.reasons + (f"the step of {loop.label} is not known at launch",))
        step_sym = step.affine.const if loop.step_sign > 0 else S.neg(step.affine.const)
        k = S.Affine.var(("iter", loop))
        after = self._after_step(loop, use)
        affine = None
        if entry_value.affine is not None:
            affine = entry_value.affine + k.scale(step_sym)
            if after:
                affine = affine + S.Affine.constant(step_sym)
        return Value(entry_value.deps | {("loop", loop)}, affine, entry_value.reasons)

    def _after_step(self, loop: Loop, use) -> bool:
        """Whether a use inside the loop comes after the iterator's step in its iteration."""
        if loop.kind == "for":
            return False
        step_span = X.span(loop.step_node)
        use_span = X.span(use)
        if loop.kind == "do" and self._within(use, loop.node.cond):
            return True
        return step_span is not None and use_span is not None and use_span.start > step_span.end

    @staticmethod
    def _within(node, root) -> bool:
        if root is None:
            return False
        sp, rp = X.span(node), X.span(root)
        return sp is not None and rp is not None and rp.start <= sp.start and sp.end <= rp.end

    def _def_value(self, d: Def) -> Value:
        hit = self._def_memo.get(d)
        if hit is not None:
            return hit
        loop = self.loops.enclosing.get(d.node) if d.node is not None else None
        cycle = Value(frozenset({("loop", loop)} if loop else {"unknown"}), None,
                      (f"{d.symbol.name} depends on itself",))
        self._def_memo[d] = cycle
        v = self._compute_def(d)
        self._def_memo[d] = v
        return v

    def _compute_def(self, d: Def) -> Value:
        if d.kind == "param":
            return self._param_value(d.symbol)
        if d.kind in ("init", "assign"):
            return self.value(d.rhs)
        if d.kind == "compound":
            lhs = self.value(d.node.lvalue)
            rhs = self.value(d.rhs)
            return self._arith(d.op[:-1], lhs, rhs)
        if d.kind == "incdec":
            cur = self.value(d.node.expr)
            return self._arith("+" if "+" in d.op else "-", cur, const_value(S.ONE))
        if d.kind == "uninit":
            return Value(frozenset({"unknown"}), None, (f"{d.symbol.name} is not initialised",))
        if d.kind == "partial":
            return Value(frozenset({"unknown"}), None, (f"a member of {d.symbol.name} is set",))
        return Value(frozenset({"unknown"}), None, (d.reason or "not analysable",))

    # -- operators -----------------------------------------------------------------------
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

    def _v_BinaryOp(self, node) -> Value:
        left, right = self.value(node.left), self.value(node.right)
        if node.op in ("/", ">>"):
            warp = self._warp_quotient(node.op, left, right)
            if warp is not None:
                return warp
        return self._arith(node.op, left, right)

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

    def _v_UnaryOp(self, node) -> Value:
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

    def _v_TernaryOp(self, node) -> Value:
        c, a, b = self.value(node.cond), self.value(node.iftrue), self.value(node.iffalse)
        affine = None
        if c.affine is not None and c.affine.is_constant and a.affine is not None and \
                b.affine is not None and a.affine.is_constant and b.affine.is_constant:
            affine = S.Affine.constant(("select", c.affine.const, a.affine.const, b.affine.const))
        elif a.affine is not None and a.affine == b.affine:
            affine = a.affine
        return Value(c.deps | a.deps | b.deps, affine, c.reasons + a.reasons + b.reasons)

    def _v_Assignment(self, node) -> Value:
        return self.value(node.rvalue) if node.op == "=" else self.value(node.lvalue)

    def _v_ExprList(self, node) -> Value:
        for e in node.exprs[:-1]:
            self.value(e)
        return self.value(node.exprs[-1]) if node.exprs else UNKNOWN_VALUE

    def _v_Cast(self, node) -> Value:
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

    def _v_CxxCast(self, node) -> Value:
        return self._v_Cast(node)

    def _v_Typename(self, node) -> Value:
        return Value()

    def _v_InitList(self, node) -> Value:
        return join([self.value(e) for e in node.exprs])

    def _v_StructRef(self, node) -> Value:
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

    def _v_ArrayRef(self, node) -> Value:
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

    def _v_FuncCall(self, node) -> Value:
        name = node.name
        callee = name.name if isinstance(name, c_ast.ID) else (
            name.name if isinstance(name, X.TemplateId) else None)
        args = node.args.exprs if node.args is not None else []
        arg_values = [self.value(a) for a in args]
        site = self.sites_by_node.get(node)
        if callee is None:
            return join(arg_values, reason="call through an expression")
        if callee in _PURE_INT_FUNCTIONS:
            if all(v.affine is not None and v.affine.is_constant for v in arg_values) and \
                    len(arg_values) == 2 and callee.lstrip(":").replace("std::", "") in (
                        "min", "max", "umin", "umax"):
                op = "min" if "min" in callee else "max"
                return const_value((op, arg_values[0].affine.const, arg_values[1].affine.const))
            if len(arg_values) == 2 and callee.lstrip(":").replace("std::", "") in ("min", "max") \
                    and all(v.affine is not None for v in arg_values):
                # min(firstRow + tid, nRows): quasi-affine, counted at launch by enumeration
                op = "qmin" if "min" in callee else "qmax"
                return join(arg_values, affine=S.Affine.var(
                    (op, arg_values[0].affine, arg_values[1].affine)))
            if callee in ("__mul24", "__umul24") and len(arg_values) == 2:
                return self._arith("*", arg_values[0], arg_values[1])
            return join(arg_values)
        if callee in _WARP_FUNCTIONS:
            return Value(join(arg_values).deps | TID | {"data"}, None,
                         (f"{callee}() exchanges values between threads",))
        if callee in _BLOCK_UNIFORM_FUNCTIONS:
            return Value(join(arg_values).deps | {"data"}, None,
                         (f"{callee}() is data-dependent",))
        if callee.startswith("atomic") or callee.startswith("__ld") or site is not None:
            return Value(join(arg_values).deps | TID | {"data"}, None,
                         (f"{callee}() reads memory",))
        if callee in ("clock", "clock64", "__globaltimer", "curand", "curand_uniform"):
            return Value(TID | {"unknown"}, None, (f"{callee}() varies",))
        macro = self.program.tu.macros.get(callee)
        if macro is not None and macro.function_like:
            expanded = self.program.macro_call_expression(callee, args)
            if expanded is not None:
                return self.value(expanded)
        fn_facts = self.program.facts(callee)
        if fn_facts is not None:
            ret = self._callee_return_value(fn_facts, node, arg_values)
            if ret is not None:
                return ret
            return Value(join(arg_values).deps | {"call"}, None,
                         (f"calls {callee}(), whose result is not a single expression",))
        if callee in _PURE_FUNCTIONS or callee.startswith("make_"):
            return join(arg_values)  # a math function or intrinsic: a function of its arguments
        return Value(join(arg_values).deps | {"call"}, None,
                     (f"calls {callee}(), which gmprof cannot see into",))

    def _callee_return_value(self, fn_facts, call, arg_values) -> Value | None:
        """A device function whose body is `return expr;` is analysed in the caller's
        context (its parameters bound to the argument values)."""
        body = fn_facts.function.funcdef.body
        items = [i for i in body.block_items or () if not isinstance(i, c_ast.Pragma)]
        if len(items) != 1 or not isinstance(items[0], c_ast.Return) or items[0].expr is None:
            return None
        if self.context.depth > 8:
            return None
        params = {sym: (arg_values[k] if k < len(arg_values) else UNKNOWN_VALUE)
                  for k, sym in enumerate(fn_facts.names.params)}
        ctx = Context(fn_facts, params, self.context, call, self.context.depth + 1)
        return self.program.values.of(fn_facts, ctx).value(items[0].expr)


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

