"""Values of calls (part of ValueAnalysis, values.py): CUDA's math functions and integer
min/max are functions of their arguments, warp exchanges and atomics depend on the thread and
the data, a function-like macro is read expanded, and a device function whose body is
`return expr;` is analysed in the caller's context (its parameters bound to the arguments).

    min(row0 + threadIdx.x, n)       affine: qmin(row0 + tid.x, n), counted at launch
    __shfl_sync(m, v, 0)             deps {tid, data}: not followed

CallValues is a mixin: the host class provides value(node), program, context, sites_by_node
and _arith.
"""
from __future__ import annotations

from pycparser import c_ast

from gmprof.frontend import cxx_ast as X

from . import symbolic as S
from .value_domain import (_BLOCK_UNIFORM_FUNCTIONS, _PURE_FUNCTIONS, _PURE_INT_FUNCTIONS,
                           _WARP_FUNCTIONS, TID, UNKNOWN_VALUE, Context, Value, const_value,
                           join)


class CallValues:
    def visit_FuncCall(self, node) -> Value:
        name = node.name
        callee = name.name if isinstance(name, c_ast.ID) else (
            name.name if isinstance(name, X.TemplateId) else None)
        args = node.args.exprs if node.args is not None else []
        arg_values = [self.value(a) for a in args]
        site = self.sites_by_node.get(node)
        if callee is None:
            # a member function (`tile.thread_rank()`, cooperative groups) or a function pointer:
            # code gmprof cannot see into, which may read threadIdx or memory
            return Value(join(arg_values).deps | {"call"}, None, ("call through an expression",))
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
