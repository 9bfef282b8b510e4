"""Values of local variables (part of ValueAnalysis, values.py): which definitions reach a use
(dataflow.py), a loop's iterator as init + step * iteration, and the control dependence of a
use that more than one definition reaches.

    for (int k = k0; k < n; k += 2) a[k]    k: deps {loop k}, affine k0 + 2*iter_k
    if (tid < 4) j = tid; else j = 0; a[j]  j: deps {tid.x} (also through the condition)

VariableValues is a mixin: the host class provides value(node), reaching, loops, facts,
_param_value and _arith.
"""
from __future__ import annotations

from gmprof.frontend import cxx_ast as X

from . import symbolic as S
from .dataflow import Def
from .geometric import geometric_value
from .loops import Loop
from .value_domain import Value, const_value, d_current_iteration, join


class VariableValues:
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
        """sym's value at iteration k of loop, init + step * k, when the loop changes it only
        by a step known at launch: the loop's iterator, or a secondary induction variable that
        a `for`'s increment steps beside it (`for (a = a0, i = 0; a <= aEnd; a += aStep, ++i)`:
        i = k)."""
        if loop.iterator is sym:
            sign, amount, step_node = loop.step_sign, loop.step, loop.step_node
        elif sym in loop.steps:
            sign, amount, step_node = loop.steps[sym]
        else:
            return None
        all_defs = self.reaching.defs.get(sym, [])
        inside = [d for d in all_defs if d.node is not None and self._in_loop(d.node, loop)]
        step_def = self.reaching.def_of_node.get(step_node)
        if inside != [step_def] or step_def is None:
            return None
        if step_def in self.reaching.entry.get(loop.node, {}).get(sym, ()):
            # an enclosing loop enters this one again with the value the last run left
            # (`for (; s < e; ++s)` inside another loop): iteration k is not init + step * k
            return None
        entry = [d for d in defs if d is not step_def]
        if not entry:
            return None
        entry_value = join([self._def_value(d) for d in entry])
        if len(entry) == 1:
            entry_value = self._def_value(entry[0])
        step = const_value(S.ONE) if amount is None else self.value(amount)
        if not step.launch_known or step.affine is None:
            what = loop.label if sym is loop.iterator else f"{sym.name} in {loop.label}"
            return Value(entry_value.deps | step.deps | {("loop", loop)}, None,
                         entry_value.reasons + (f"the step of {what} is not known at launch",))
        step_sym = step.affine.const if sign > 0 else S.neg(step.affine.const)
        k = S.Affine.var(("iter", loop))
        after = self._after_step(loop, step_node, use)
        affine = None
        if entry_value.affine is not None:
            affine = entry_value.affine + k.scale(step_sym)
            if after:
                affine = affine + S.Affine.constant(step_sym)
        return Value(entry_value.deps | {("loop", loop)}, affine, entry_value.reasons)

    def _after_step(self, loop: Loop, step_node, use) -> bool:
        """Whether a use inside the loop comes after the variable's step in its iteration."""
        if loop.kind == "for":
            return False
        step_span = X.span(step_node)
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

