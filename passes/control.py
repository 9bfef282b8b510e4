"""ControlGuards: the conditions under which a statement executes.

Read-only analysis. For a node of a function, returns Guards, innermost first:
  cond    an enclosing `if` condition (true or false branch), a `?:` arm, or the left side of
          `&&`/`||` guarding the right side
  exit    an earlier `return` (or a `break`/`continue` of a loop around the node): the node runs
          only if that exit's own conditions did not all hold
  opaque  something gmprof cannot turn into a condition (a switch case, a label reached by
          goto), with the reason
Together with the enclosing loops these decide whether an access runs in every iteration (the
paper's loop-invariant rule), whether every thread of a block runs it (block-convergent), and
the constraints of a static count.

    if (i >= n) return;        a[i] runs under exit(i >= n) -- that is, i < n
    if (t < 16) s[t] = a[i];   s[t] runs under cond(t < 16) and exit(i >= n)
"""
from __future__ import annotations

from dataclasses import dataclass

from pycparser import c_ast

from gmprof.frontend import cxx_ast as X

from .loops import Loops


@dataclass(frozen=True)
class Guard:
    kind: str  # 'cond', 'exit', 'opaque'
    expr: c_ast.Node | None = None  # the condition (cond)
    polarity: bool = True  # cond must be true (True) or false (False)
    construct: c_ast.Node | None = None  # the If/TernaryOp/BinaryOp/Return/... it comes from
    conds: tuple = ()  # for exits: the exit's own cond guards (all hold -> the exit is taken)
    reason: str = ""
    loop: object = None  # innermost Loop around the construct, if any

    def describe(self) -> str:
        if self.kind == "cond":
            text = X.span(self.expr).text if X.span(self.expr) else "?"
            return f"{'' if self.polarity else 'not '}({text})"
        if self.kind == "exit":
            what = type(self.construct).__name__.lower()
            span = X.span(self.construct)
            inner = " and ".join(g.describe() for g in self.conds) or "always"
            return f"no {what} at {span.line}:{span.column} (taken when {inner})"
        return self.reason


class ControlGuards:
    def __init__(self, body, parents: dict, loops: Loops):
        self.body = body
        self.parents = parents
        self.loops = loops
        self._exits = [n for n in X.walk(body)
                       if isinstance(n, (c_ast.Return, c_ast.Break, c_ast.Continue, c_ast.Goto))]
        self._labels = {n.name for n in X.walk(body) if isinstance(n, c_ast.Label)}
        self._memo: dict = {}

    def enclosing(self, node) -> list[Guard]:
        """Conditions between the function's start and `node` (not the exits)."""
        guards = []
        child = node
        parent = self.parents.get(child)
        while parent is not None:
            if isinstance(parent, c_ast.If):
                if child is parent.iftrue:
                    guards.append(self._cond(parent.cond, True, parent))
                elif child is parent.iffalse:
                    guards.append(self._cond(parent.cond, False, parent))
            elif isinstance(parent, c_ast.TernaryOp):
                if child is parent.iftrue:
                    guards.append(self._cond(parent.cond, True, parent))
                elif child is parent.iffalse:
                    guards.append(self._cond(parent.cond, False, parent))
            elif isinstance(parent, c_ast.BinaryOp) and parent.op in ("&&", "||") and \
                    child is parent.right:
                guards.append(self._cond(parent.left, parent.op == "&&", parent))
            elif isinstance(parent, (c_ast.Case, c_ast.Default)):
                guards.append(Guard("opaque", construct=parent,
                                    reason="inside a switch case",
                                    loop=self.loops.enclosing.get(parent)))
            elif isinstance(parent, c_ast.Label):
                guards.append(Guard("opaque", construct=parent,
                                    reason=f"after label {parent.name}: (a goto may reach it)",
                                    loop=self.loops.enclosing.get(parent)))
            child, parent = parent, self.parents.get(parent)
        return guards

    def _cond(self, expr, polarity, construct) -> Guard:
        return Guard("cond", expr, polarity, construct, loop=self.loops.enclosing.get(construct))

    def exits_before(self, node) -> list[Guard]:
        """Earlier returns in the function, and break/continue of the loops around `node`,
        each as an exit guard with its own conditions."""
        span = X.span(node)
        out = []
        node_loops = self.loops.of(node)
        for ex in self._exits:
            es = X.span(ex)
            if isinstance(ex, c_ast.Goto):
                out.append(Guard("opaque", construct=ex, reason=f"a goto at {es.line}:{es.column}",
                                 loop=self.loops.enclosing.get(ex)))
                continue
            if isinstance(ex, c_ast.Return):
                if es.start <= span.start and span.end <= es.end and \
                        not self._in_enclosing_loop(ex, node_loops):
                    continue  # the return holds the node (`return p[k];`): it runs first
                if es.start >= span.start and not self._in_enclosing_loop(ex, node_loops):
                    continue  # a return after the node (and not in a loop around it)
            else:
                loop = self._loop_of_jump(ex)
                if loop is None or loop not in node_loops:
                    continue
            conds = tuple(g for g in self.enclosing(ex) if g.kind == "cond")
            opaque = [g for g in self.enclosing(ex) if g.kind == "opaque"]
            if opaque:
                out.append(Guard("opaque", construct=ex, reason=opaque[0].reason,
                                 loop=self.loops.enclosing.get(ex)))
                continue
            out.append(Guard("exit", construct=ex, conds=conds, loop=self.loops.enclosing.get(ex)))
        return out

    def _in_enclosing_loop(self, ex, node_loops) -> bool:
        inner = self.loops.enclosing.get(ex)
        return any(loop.encloses(inner) for loop in node_loops) if inner is not None else False

    def _loop_of_jump(self, ex):
        """The loop a break/continue belongs to (a break inside a switch belongs to it)."""
        child, parent = ex, self.parents.get(ex)
        while parent is not None:
            if isinstance(parent, (c_ast.For, c_ast.While, c_ast.DoWhile)):
                return self.loops.by_node.get(parent)
            if isinstance(parent, c_ast.Switch) and isinstance(ex, c_ast.Break):
                return None
            child, parent = parent, self.parents.get(parent)
        return None

    def all(self, node) -> list[Guard]:
        hit = self._memo.get(node)
        if hit is None:
            hit = self.enclosing(node) + self.exits_before(node)
            self._memo[node] = hit
        return hit
