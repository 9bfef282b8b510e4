"""ReachingDefinitions: for every use of a local scalar or parameter, the definitions that reach it.

Read-only analysis over one function, by a structured walk of its AST (kernels are structured:
if/for/while/do/switch, with break/continue/return and the odd goto). The state is a map from
variable to the set of definitions that may reach the current point; branches are walked from
the same state and merged; a loop is walked until the state at its head stops changing (the
back edge); `break`/`continue`/`return` end a path; a `goto` carries its state to its label.

Conservative where it cannot see: a variable whose address is taken (`&x`), that is an `asm`
output, or that is passed to a reference parameter gets an `unknown` definition at every use.

    int k = 0;                 Def(k, init 0)
    while (k < n) { a[k] = 1;  use k: {init 0, k++}     (the loop's back edge)
                    k++; }     Def(k, incdec)
"""
from __future__ import annotations

from dataclasses import dataclass, field

from pycparser import c_ast

from gmprof.frontend import cxx_ast as X

from .scopes import LOCAL, PARAM, Names, Symbol
from .visitor import Visitor

_MAX_LOOP_PASSES = 12


@dataclass(eq=False)
class Def:
    symbol: Symbol
    node: c_ast.Node | None
    kind: str  # 'param', 'init', 'uninit', 'assign', 'compound', 'incdec', 'partial', 'unknown'
    rhs: c_ast.Node | None = None
    op: str | None = None
    reason: str | None = None

    def __repr__(self) -> str:
        where = X.span(self.node) if self.node is not None else None
        return f"Def({self.symbol.name}, {self.kind}{', ' + str(where) if where else ''})"


@dataclass
class Reaching:
    names: Names
    reaching: dict = field(default_factory=dict)  # ID node (a read) -> frozenset[Def]
    defs: dict = field(default_factory=dict)  # Symbol -> list[Def], in source order
    def_of_node: dict = field(default_factory=dict)  # Assignment/UnaryOp/Decl node -> Def
    address_taken: set = field(default_factory=set)  # Symbols
    has_goto: bool = False
    # loop node -> {Symbol: frozenset[Def]} reaching its first test (after a for's init), from
    # outside the loop: a definition made in the loop that reaches it came from an earlier
    # run of the loop (an enclosing loop entered it again without setting the variable)
    entry: dict = field(default_factory=dict)

    def at(self, node) -> frozenset:
        return self.reaching.get(node, frozenset())


def _tracked(sym: Symbol | None) -> bool:
    if sym is None or sym.kind not in (LOCAL, PARAM):
        return False
    decl = sym.decl
    if not isinstance(decl, c_ast.Decl):
        return False
    t = decl.type
    if isinstance(t, c_ast.ArrayDecl):
        return False  # arrays are memory objects, not values
    if "__shared__" in (decl.storage or []) or "static" in (decl.storage or []):
        return False
    return True


def _merge(*states):
    live = [s for s in states if s is not None]
    if not live:
        return None
    if len(live) == 1:
        return dict(live[0])
    out = dict(live[0])
    for s in live[1:]:
        for sym, defs in s.items():
            have = out.get(sym)
            out[sym] = defs if have is None else (have | defs)
    return out


class ReachingDefinitions(Visitor):
    """Statements: visit_<Class>(node, state) -> the state after it (None: unreachable).
    Expressions are walked by ExpressionFlow."""

    def __init__(self, funcdef: c_ast.FuncDef, names: Names):
        self.funcdef = funcdef
        self.names = names
        self.expressions = ExpressionFlow(self)
        self.result = Reaching(names)
        self.loop_stack: list[dict] = []  # per enclosing loop/switch: {'breaks', 'continues'}
        self.goto_states: dict[str, list] = {}
        self.labels_seen: set = set()
        self.backward_labels: set = set()
        self._def_cache: dict = {}

    # -- entry ---------------------------------------------------------------------------
    def run(self) -> Reaching:
        body = self.funcdef.body
        self._prescan(body)
        state = {}
        for sym in self.names.params:
            if _tracked(sym):
                d = self._new_def(sym, sym.decl, "param")
                state[sym] = frozenset([d])
        self._stmt(body, state)
        return self.result

    def _prescan(self, body):
        labels_before: set = set()
        for node in X.walk(body):
            if isinstance(node, c_ast.Label):
                labels_before.add(node.name)
            elif isinstance(node, c_ast.Goto):
                self.result.has_goto = True
                if node.name in labels_before:
                    self.backward_labels.add(node.name)
            elif isinstance(node, c_ast.UnaryOp) and node.op == "&" and \
                    isinstance(node.expr, c_ast.ID):
                sym = self.names[node.expr]
                if _tracked(sym):
                    self.result.address_taken.add(sym)

    def _new_def(self, sym, node, kind, rhs=None, op=None, reason=None) -> Def:
        # One Def per (variable, statement): walking a loop body again must find the same
        # definitions, or the loop's state would never reach its fixed point.
        key = (sym, node if node is not None else reason, kind)
        d = self._def_cache.get(key)
        if d is not None:
            return d
        d = Def(sym, node, kind, rhs, op, reason)
        self._def_cache[key] = d
        self.result.defs.setdefault(sym, []).append(d)
        if node is not None and kind not in ("param",):
            self.result.def_of_node[node] = d
        return d

    # -- statements ----------------------------------------------------------------------
    def _stmt(self, node, state):
        if state is None or node is None:
            return state
        return self.visit(node, state)

    def generic_visit(self, node, state):
        return self._expr(node, state)  # an expression statement

    def visit_Compound(self, node, state):
        for item in node.block_items or ():
            state = self._stmt(item, state)
            if state is None:
                # unreachable code may still hold a label a goto jumps to
                rest = node.block_items[node.block_items.index(item) + 1:]
                for later in rest:
                    if isinstance(later, c_ast.Label):
                        state = self._stmt(later, None)
                    elif state is not None:
                        state = self._stmt(later, state)
                    else:
                        self._unreachable(later)
                return state
        return state

    def _unreachable(self, node):
        """Walk unreachable code only to find labels inside it (their state comes from gotos)."""
        for sub in X.walk(node):
            if isinstance(sub, c_ast.Label):
                self.visit_Label(sub, None)
                return

    def visit_Decl(self, node, state):
        sym = self.names.declared.get(node)
        if node.init is not None:
            state = self._expr(node.init, state)
        if _tracked(sym):
            if node.init is not None:
                d = self._new_def(sym, node, "init", rhs=node.init)
            else:
                d = self._new_def(sym, node, "uninit")
            state = dict(state)
            state[sym] = frozenset([d])
        return state

    def visit_DeclList(self, node, state):
        for decl in node.decls:
            state = self._stmt(decl, state)
        return state

    def visit_Typedef(self, node, state):
        return state

    def visit_If(self, node, state):
        state = self._expr(node.cond, state)
        then = self._stmt(node.iftrue, dict(state))
        other = self._stmt(node.iffalse, dict(state)) if node.iffalse is not None else state
        return _merge(then, other)

    def _loop(self, node, state, init=None, cond=None, nxt=None, body=None, do=False):
        if init is not None:
            state = self._stmt(init, state)
        entry = state
        if entry is not None:
            # the union over every walk of the loop (an enclosing loop walks it again)
            seen = self.result.entry.setdefault(node, {})
            for sym, defs in entry.items():
                seen[sym] = seen.get(sym, frozenset()) | defs
        head = entry
        exit_state = None
        for _ in range(_MAX_LOOP_PASSES):
            frame = {"breaks": [], "continues": []}
            self.loop_stack.append(frame)
            if do:
                s = self._stmt(body, dict(head))
                s = _merge(s, *frame["continues"])
                s = self._expr(cond, s) if (cond is not None and s is not None) else s
                after_cond = s
                back = s
            else:
                s = self._expr(cond, dict(head)) if cond is not None else dict(head)
                after_cond = s
                b = self._stmt(body, dict(s))
                b = _merge(b, *frame["continues"])
                if nxt is not None and b is not None:
                    b = self._expr(nxt, b)
                back = b
            self.loop_stack.pop()
            new_head = _merge(entry, back)
            exit_state = _merge(after_cond if cond is not None else None, *frame["breaks"])
            if new_head == head:
                break
            head = new_head
        return exit_state

    def visit_For(self, node, state):
        return self._loop(node, state, init=node.init, cond=node.cond, nxt=node.next,
                          body=node.stmt)

    def visit_While(self, node, state):
        return self._loop(node, state, cond=node.cond, body=node.stmt)

    def visit_DoWhile(self, node, state):
        return self._loop(node, state, cond=node.cond, body=node.stmt, do=True)

    def visit_Switch(self, node, state):
        state = self._expr(node.cond, state)
        frame = {"breaks": [], "continues": None}
        self.loop_stack.append(frame)
        items = node.stmt.block_items if isinstance(node.stmt, c_ast.Compound) else [node.stmt]
        fall = None
        has_default = False
        for item in items or ():
            if isinstance(item, (c_ast.Case, c_ast.Default)):
                has_default |= isinstance(item, c_ast.Default)
                if isinstance(item, c_ast.Case):
                    state = self._expr(item.expr, state)
                s = _merge(dict(state), fall)
                for stmt in item.stmts or ():
                    s = self._stmt(stmt, s)
                fall = s
            else:
                fall = self._stmt(item, fall) if fall is not None else None
        self.loop_stack.pop()
        return _merge(fall, *frame["breaks"], None if has_default else state)

    def visit_Break(self, node, state):
        if self.loop_stack:
            self.loop_stack[-1]["breaks"].append(state)
        return None

    def visit_Continue(self, node, state):
        for frame in reversed(self.loop_stack):
            if frame["continues"] is not None:
                frame["continues"].append(state)
                break
        return None

    def visit_Return(self, node, state):
        if node.expr is not None:
            self._expr(node.expr, state)
        return None

    def visit_Goto(self, node, state):
        self.goto_states.setdefault(node.name, []).append(state)
        return None

    def visit_Label(self, node, state):
        incoming = self.goto_states.get(node.name, [])
        state = _merge(state, *incoming)
        if node.name in self.backward_labels and state is not None:
            state = self._havoc(state, f"a backward goto to {node.name}")
        return self._stmt(node.stmt, state) if state is not None else self._stmt_unreached(node)

    def _stmt_unreached(self, node):
        self._unreachable(node.stmt)
        return None

    def _havoc(self, state, reason):
        out = dict(state)
        for sym in list(self.result.defs):
            d = self._new_def(sym, None, "unknown", reason=reason)
            out[sym] = out.get(sym, frozenset()) | {d}
        return out

    def visit_EmptyStatement(self, node, state):
        return state

    def visit_Pragma(self, node, state):
        return state

    def visit_Asm(self, node, state):
        for op in node.inputs or ():
            state = self._expr(op.expr, state)
        for op in node.outputs or ():
            if isinstance(op.expr, c_ast.ID):
                sym = self.names[op.expr]
                if _tracked(sym):
                    d = self._new_def(sym, op, "unknown", reason="an asm statement writes it")
                    state = dict(state)
                    state[sym] = frozenset([d])
            else:
                state = self._expr(op.expr, state)
        return state

    def visit_UsingAlias(self, node, state):
        return state

    def visit_StaticAssert(self, node, state):
        return state

    # -- expressions ---------------------------------------------------------------------
    def _use(self, node, state):
        sym = self.names[node]
        if not _tracked(sym):
            return
        defs = state.get(sym, frozenset()) if state is not None else frozenset()
        if sym in self.result.address_taken:
            defs = defs | {self._new_def(sym, None, "unknown",
                                         reason=f"the address of {sym.name} is taken")}
        self.result.reaching[node] = defs

    def _expr(self, node, state):
        if state is None or node is None:
            return state
        return self.expressions.visit(node, state)

    def _lvalue(self, lv, state):
        """Evaluate the parts of an lvalue that are read (a[i] = ...: i is read), and record a
        partial definition of a local struct whose member is assigned (v.x = ...)."""
        if isinstance(lv, c_ast.StructRef) and lv.type == "." and isinstance(lv.name, c_ast.ID):
            sym = self.names[lv.name]
            if _tracked(sym):
                self._use(lv.name, state)
                d = self._new_def(sym, lv, "partial")
                state = dict(state)
                state[sym] = state.get(sym, frozenset()) | {d}
                return state
        return self._expr(lv, state)

    def _call_effects(self, call, state):
        """A call can define the variables it gets by reference."""
        callee = call.name.name if isinstance(call.name, c_ast.ID) else None
        sym = self.names[call.name] if isinstance(call.name, c_ast.ID) else None
        fn = sym.decl if sym is not None and sym.kind == "function" else None
        if fn is None or call.args is None or getattr(fn, "parsed", None) is None:
            return state
        params = fn.params
        for k, arg in enumerate(call.args.exprs):
            if k < len(params) and isinstance(params[k], c_ast.Decl) and \
                    isinstance(params[k].type, X.RefDecl) and isinstance(arg, c_ast.ID):
                asym = self.names[arg]
                quals = params[k].type.type.quals if isinstance(params[k].type.type,
                                                                  c_ast.TypeDecl) else []
                if _tracked(asym) and "const" not in quals:
                    d = self._new_def(asym, call, "unknown",
                                      reason=f"passed by reference to {callee}()")
                    state = dict(state)
                    state[asym] = frozenset([d])
        return state


class ExpressionFlow(Visitor):
    """Expressions in evaluation order: visit_<Class>(node, state) -> the state after it
    (uses recorded, definitions made by assignments, increments and calls by reference)."""

    def __init__(self, flow: ReachingDefinitions):
        self.flow = flow

    def _expr(self, node, state):
        return self.flow._expr(node, state)

    def generic_visit(self, node, state):
        for _, child in node.children():
            state = self._expr(child, state)
        return state

    def visit_ID(self, node, state):
        self.flow._use(node, state)
        return state

    def visit_Assignment(self, node, state):
        flow = self.flow
        state = self._expr(node.rvalue, state)
        lv = node.lvalue
        if isinstance(lv, c_ast.ID) and _tracked(flow.names[lv]):
            sym = flow.names[lv]
            if node.op != "=":
                flow._use(lv, state)
            kind = "assign" if node.op == "=" else "compound"
            d = flow._new_def(sym, node, kind, rhs=node.rvalue, op=node.op)
            state = dict(state)
            state[sym] = frozenset([d])
            return state
        return flow._lvalue(lv, state)

    def visit_UnaryOp(self, node, state):
        flow = self.flow
        if node.op in ("++", "--", "p++", "p--"):
            target = node.expr
            if isinstance(target, c_ast.ID) and _tracked(flow.names[target]):
                flow._use(target, state)
                d = flow._new_def(flow.names[target], node, "incdec", op=node.op)
                state = dict(state)
                state[flow.names[target]] = frozenset([d])
                return state
            return flow._lvalue(target, state)
        if node.op == "&" and isinstance(node.expr, c_ast.ID):
            return state  # taking the address reads nothing
        if node.op in ("sizeof", "_Alignof", "sizeof..."):
            return state
        return self._expr(node.expr, state)

    def visit_BinaryOp(self, node, state):
        if node.op in ("&&", "||"):
            state = self._expr(node.left, state)
            right = self._expr(node.right, dict(state))
            return _merge(state, right)
        return self.generic_visit(node, state)

    def visit_TernaryOp(self, node, state):
        state = self._expr(node.cond, state)
        a = self._expr(node.iftrue, dict(state))
        b = self._expr(node.iffalse, dict(state))
        return _merge(a, b)

    def visit_StructRef(self, node, state):
        return self._expr(node.name, state)

    def visit_FuncCall(self, node, state):
        if node.args is not None:
            state = self._expr(node.args, state)
        return self.flow._call_effects(node, state)

    def visit_Typename(self, node, state):
        return state

    visit_IdentifierType = visit_Constant = visit_Typename

    def visit_Cast(self, node, state):
        return self._expr(node.expr, state)

    visit_CxxCast = visit_Cast


def reaching_definitions(funcdef: c_ast.FuncDef, names: Names) -> Reaching:
    return ReachingDefinitions(funcdef, names).run()
