"""FindLoops: the loops of a function, their nesting, iterators, exits and trip counts.

Read-only analysis. Takes a function body (and its Names); returns Loops keyed by loop node:
  iterator   the variable a `for` compares in its condition and steps in its increment
             (`for (int r = 0; r < nRow; r += STRIDE)` -> r, init 0, bound nRow, step STRIDE)
  steps      every variable a `for`'s increment steps (`a += aStep, b += bStep, ++i`): the
             iterator and the candidate secondary induction variables (value_variables.py)
  exits      break/continue statements of this loop, and every return/goto inside it, which
             make an iteration end early (so the loop's trip count or its body's execution may
             depend on data)
  trip_count the number of iterations as an expression of the init, bound and step, when the
             loop has that shape; otherwise None
Also: for any node, the loops enclosing it (innermost first).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from pycparser import c_ast

from gmprof.frontend import cxx_ast as X

from .scopes import Names
from .visitor import Visitor

LOOP_TYPES = (c_ast.For, c_ast.While, c_ast.DoWhile)


@dataclass(eq=False)
class Loop:
    node: c_ast.Node
    id: int
    parent: "Loop | None"
    kind: str  # 'for', 'while', 'do'
    iterator: object = None  # Symbol
    init: c_ast.Node | None = None  # the iterator's initial value expression
    bound: c_ast.Node | None = None  # the other side of the condition
    compare: str | None = None  # '<', '<=', '>', '>=', '!=' with the iterator on the left
    step: c_ast.Node | None = None  # the increment as an expression (None: +-1)
    step_sign: int = 0  # +1 or -1 for ++/--/+=/-=
    step_node: c_ast.Node | None = None  # the statement/expression that steps the iterator
    breaks: list = field(default_factory=list)
    continues: list = field(default_factory=list)
    returns: list = field(default_factory=list)
    gotos: list = field(default_factory=list)
    children: list = field(default_factory=list)
    # a `for` whose iterator is divided, not stepped (`s >>= 1`): Geometric
    geometric: object = None
    # every variable a `for`'s increment steps exactly once (the iterator and the secondary
    # ones: `a += aStep, b += bStep, ++i`): Symbol -> (sign, amount or None for 1, node)
    steps: dict = field(default_factory=dict)

    @property
    def label(self) -> str:
        name = self.iterator.name if self.iterator is not None else \
            self.geometric.iterator.name if self.geometric is not None else ""
        span = X.span(self.node)
        where = f"{span.line}:{span.column}" if span else "?"
        return f"'{self.kind} {name}'".replace(" '", "'") + f" at {where}" if name else \
            f"'{self.kind}' at {where}"

    @property
    def short(self) -> str:
        name = self.iterator.name if self.iterator is not None else \
            self.geometric.iterator.name if self.geometric is not None else ""
        return f"{self.kind} {name}".strip()

    @property
    def has_early_exit(self) -> bool:
        return bool(self.breaks or self.returns or self.gotos)

    @property
    def depth(self) -> int:
        d, p = 0, self.parent
        while p is not None:
            d, p = d + 1, p.parent
        return d

    def encloses(self, other: "Loop") -> bool:
        p = other
        while p is not None:
            if p is self:
                return True
            p = p.parent
        return False


@dataclass
class Loops:
    loops: list = field(default_factory=list)
    by_node: dict = field(default_factory=dict)
    enclosing: dict = field(default_factory=dict)  # node -> innermost Loop (or None)

    def of(self, node) -> list[Loop]:
        """Loops enclosing `node`, innermost first."""
        out = []
        loop = self.enclosing.get(node)
        while loop is not None:
            out.append(loop)
            loop = loop.parent
        return out


class FindLoops(Visitor):
    """Walks the body once (visit_<Class>(node, loop, breakable)), then finds iterators."""

    def __init__(self, body: c_ast.Node, names: Names):
        self.names = names
        self.result = Loops()
        self.body = body

    def run(self) -> Loops:
        self._walk(self.body, None, None)
        for loop in self.result.loops:
            self._iterator(loop)
            if loop.kind == "for" and loop.node.next is not None:
                loop.steps = _steps_of(loop.node.next, self.names)
        return self.result

    def _walk(self, node, loop: Loop | None, breakable):
        """breakable: the innermost loop or switch (a `break` leaves it)."""
        self.result.enclosing[node] = loop
        self.visit(node, loop, breakable)

    def generic_visit(self, node, loop, breakable):
        for _, child in node.children():
            self._walk(child, loop, breakable)

    def visit_For(self, node, loop, breakable):
        kind = {c_ast.For: "for", c_ast.While: "while", c_ast.DoWhile: "do"}[type(node)]
        new = Loop(node, len(self.result.loops), loop, kind)
        self.result.loops.append(new)
        self.result.by_node[node] = new
        if loop is not None:
            loop.children.append(new)
        # The loop node and a for's init run in the enclosing loop (once per entry); the
        # condition, increment and body run once per iteration, in the new loop.
        for name, child in node.children():
            self._walk(child, loop if name == "init" else new,
                       breakable if name == "init" else new)

    visit_While = visit_DoWhile = visit_For

    def visit_Switch(self, node, loop, breakable):
        self._walk(node.cond, loop, breakable)
        self._walk(node.stmt, loop, node)

    def visit_Break(self, node, loop, breakable):
        if isinstance(breakable, Loop):
            breakable.breaks.append(node)
        self.generic_visit(node, loop, breakable)

    def visit_Continue(self, node, loop, breakable):
        if loop is not None:
            loop.continues.append(node)
        self.generic_visit(node, loop, breakable)

    def visit_Return(self, node, loop, breakable):
        p = loop
        while p is not None:
            p.returns.append(node)
            p = p.parent
        self.generic_visit(node, loop, breakable)

    def visit_Goto(self, node, loop, breakable):
        p = loop
        while p is not None:
            p.gotos.append(node)
            p = p.parent
        self.generic_visit(node, loop, breakable)

    # -- iterators -----------------------------------------------------------------------
    def _sym(self, node):
        return self.names[node] if isinstance(node, c_ast.ID) else None

    def _iterator(self, loop: Loop) -> None:
        node = loop.node
        cond = node.cond
        if not isinstance(cond, c_ast.BinaryOp) or cond.op not in ("<", "<=", ">", ">=", "!="):
            return
        candidates = []
        left, right = self._sym(cond.left), self._sym(cond.right)
        flip = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "!=": "!="}
        if left is not None:
            candidates.append((left, cond.op, cond.right))
        if right is not None:
            candidates.append((right, flip[cond.op], cond.left))
        for sym, op, bound in candidates:
            step = None
            if loop.kind == "for" and node.next is not None:
                step = _step_of(node.next, sym, self.names)
            elif loop.kind in ("while", "do"):
                step = self._body_step(loop, sym)
            if step is None:
                if loop.kind == "for" and loop.geometric is None:
                    loop.geometric = geometric_loop(node, sym, op, bound, self.names)
                continue
            sign, amount, step_node = step
            loop.iterator = sym
            loop.compare = op
            loop.bound = bound
            loop.step = amount
            loop.step_sign = sign
            loop.step_node = step_node
            loop.init = self._init_of(loop, sym)
            return

    def _init_of(self, loop: Loop, sym):
        init = loop.node.init if loop.kind == "for" else None
        if isinstance(init, c_ast.DeclList):
            for decl in init.decls:
                if self.names.declared.get(decl) is sym:
                    return decl.init
        elif isinstance(init, c_ast.Assignment) and init.op == "=" and self._sym(init.lvalue) is sym:
            return init.rvalue
        elif isinstance(init, c_ast.ExprList):
            for e in init.exprs:
                if isinstance(e, c_ast.Assignment) and e.op == "=" and self._sym(e.lvalue) is sym:
                    return e.rvalue
        return None  # defined before the loop: the dataflow finds its value at entry

    def _body_step(self, loop: Loop, sym):
        """A while/do loop's iterator: stepped exactly once, unconditionally, in the body."""
        body = loop.node.stmt
        items = body.block_items or [] if isinstance(body, c_ast.Compound) else [body]
        steps = []
        for item in items:
            step = _step_of(item, sym, self.names)
            if step is not None:
                steps.append(step)
        if len(steps) != 1:
            return None
        # no other assignment to sym anywhere in the body
        count = sum(1 for n in X.walk(body) if _assigns(n, sym, self.names))
        return steps[0] if count == 1 else None


def _assigns(node, sym, names) -> bool:
    if isinstance(node, c_ast.Assignment) and isinstance(node.lvalue, c_ast.ID):
        return names[node.lvalue] is sym
    if isinstance(node, c_ast.UnaryOp) and node.op in ("++", "--", "p++", "p--") and \
            isinstance(node.expr, c_ast.ID):
        return names[node.expr] is sym
    return False


def _steps_of(expr, names) -> dict:
    """Symbol -> (sign, amount, node) for each variable that expr steps exactly once."""
    parts = expr.exprs if isinstance(expr, c_ast.ExprList) else [expr]
    syms = []
    for e in parts:
        target = e.expr if isinstance(e, c_ast.UnaryOp) else \
            e.lvalue if isinstance(e, c_ast.Assignment) else None
        if isinstance(target, c_ast.ID) and names[target] is not None and \
                names[target] not in syms:
            syms.append(names[target])
    out = {}
    for sym in syms:
        step = _step_of(expr, sym, names)
        if step is not None:
            out[sym] = step
    return out


def _step_of(expr, sym, names):
    """(sign, amount expression or None for 1, node) if expr steps sym by an amount."""
    if isinstance(expr, c_ast.ExprList):
        found = [s for s in (_step_of(e, sym, names) for e in expr.exprs) if s is not None]
        return found[0] if len(found) == 1 else None
    if isinstance(expr, c_ast.UnaryOp) and expr.op in ("++", "p++", "--", "p--"):
        if isinstance(expr.expr, c_ast.ID) and names[expr.expr] is sym:
            return (1 if "+" in expr.op else -1, None, expr)
        return None
    if isinstance(expr, c_ast.Assignment) and isinstance(expr.lvalue, c_ast.ID) and \
            names[expr.lvalue] is sym:
        if expr.op in ("+=", "-="):
            return (1 if expr.op == "+=" else -1, expr.rvalue, expr)
        if expr.op == "=" and isinstance(expr.rvalue, c_ast.BinaryOp) and \
                expr.rvalue.op in ("+", "-"):
            r = expr.rvalue
            if isinstance(r.left, c_ast.ID) and names[r.left] is sym:
                return (1 if r.op == "+" else -1, r.right, expr)
            if r.op == "+" and isinstance(r.right, c_ast.ID) and names[r.right] is sym:
                return (1, r.left, expr)
    return None


@dataclass(frozen=True, eq=False)
class Geometric:
    """`for (int s = C; s CMP B; s >>= k)`: the iterator divided, not stepped (geometric.py)."""

    iterator: object  # Symbol
    op: str  # '>>' or '/'
    amount: c_ast.Node
    compare: str  # with the iterator on the left
    bound: c_ast.Node
    init: c_ast.Node
    step_node: c_ast.Node


def geometric_loop(node, sym, compare, bound, names) -> Geometric | None:
    """The loop's geometric step, when its increment divides the iterator."""
    init = None
    if isinstance(node.init, c_ast.DeclList):
        for decl in node.init.decls:
            if names.declared.get(decl) is sym:
                init = decl.init
    step = node.next
    if init is None or step is None or not isinstance(step, c_ast.Assignment) or \
            not isinstance(step.lvalue, c_ast.ID) or names[step.lvalue] is not sym:
        return None
    if step.op in (">>=", "/="):
        return Geometric(sym, step.op[:-1], step.rvalue, compare, bound, init, step)
    r = step.rvalue
    if step.op == "=" and isinstance(r, c_ast.BinaryOp) and r.op in (">>", "/") and \
            isinstance(r.left, c_ast.ID) and names[r.left] is sym:
        return Geometric(sym, r.op, r.right, compare, bound, init, step)
    return None


def find_loops(body, names: Names) -> Loops:
    return FindLoops(body, names).run()
