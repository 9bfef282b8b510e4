"""FindRanges: device-memory accesses that walk a contiguous (or strided) range in a loop.

A planning helper (plan.py asks it per site). An access `a[f(j)]` inside a counted loop
`for (j = lo; j CMP hi; j += s)`, run once in every iteration, whose index steps by the same
amount D each iteration (f affine in j with a coefficient known at launch), touches the
progression p0, p0 + D, ..., p0 + (n - 1) D, where p0 is its address in the first iteration and
n the loop's trip count. The device can count that progression once, in the first iteration:
for D = +-1 with two updates of a difference array (gmprof.cuh's dm_range; the host adds its
prefix sum to the element counters), instead of n counter updates. The loop's bounds may be data
(`for (jj = rowPtr[r] + lane; jj < end; jj += 32) val[jj]`): only the step must be known.

    for (int c = 0; c < nCol; c++) t += data[(r + n_idx) * nCol + c];
 -> data: range, stride 1 element per iteration of 'for c' (2 updates per entry of the loop)

Returns a Range (the loop, and D as C text valid at the site) or None with the reason. Exact by
construction: anything the rules below cannot prove is left to per-access counting:
  - the loop is a `for` with an iterator stepped only by its increment, by an amount known at
    launch, its bound unchanged by the body (no early exit, no `continue`), and the site in its
    body under no condition (so the site runs exactly trips(...) times per entry);
  - the index is a sum of terms, each invariant in the loop or (a launch-known factor) x (an
    affine function of the iterator), followed through locals set earlier in the iteration;
  - the iterator and bound have the same signedness (trips() counts in signed 64-bit).
"""
from __future__ import annotations

from dataclasses import dataclass

from pycparser import c_ast

from gmprof.frontend import cxx_ast as X

from .scopes import CONSTANT, MACRO, PARAM, TEMPLATE_PARAM
from .signedness import expr_unsigned, unsigned_decl
from .value_domain import Context, d_current_iteration

_INT_TYPES = ("int", "long", "short", "char", "size_t", "unsigned", "signed", "ptrdiff_t",
              "int32_t", "int64_t", "uint32_t", "uint64_t")
_PURE_CALLS = {"min", "max", "umin", "umax", "abs", "__mul24", "__umul24", "__ldg"}


@dataclass(frozen=True)
class Range:
    loop: object  # the Loop whose iterations the access walks
    stride: str  # C text: elements of the accessed type between consecutive iterations
    reason: str


def find_range(program, facts, site, classes) -> tuple[Range | None, str]:
    """(Range, '') when the site's count can be a range per entry of its innermost loop, else
    (None, why not)."""
    finder, problem = loop_finder(program, facts, site, ("subscript",))
    if problem:
        return None, problem
    loop = finder.loop
    stride, problem = finder.site_stride(site)
    if problem:
        return None, problem
    if stride == "0":
        return None, "the address does not change in the loop"
    return Range(loop, stride, f"a range of {loop.label}, stride {stride}"), ""


def loop_finder(program, facts, site, forms) -> tuple["_Finder | None", str]:
    """(the finder for the site's innermost loop, '') when that loop is one gmprof can count
    per entry (iterator, bound and step known at launch), else (None, why not)."""
    if site.form not in forms or site.object is None:
        return None, "not a subscript of a known object"
    loops = facts.loops.of(site.node) if facts.loops is not None else []
    if not loops:
        return None, "not in a loop"
    finder = _Finder(facts, program.values.of(facts, Context(facts)), loops[0])
    problem = finder.loop_problem(site)
    return (None, problem) if problem else (finder, "")


class _Finder:
    def __init__(self, facts, values, loop):
        self.facts = facts
        self.values = values
        self.names = facts.names
        self.reaching = facts.dataflow
        self.loop = loop
        self.body_writes = self._body_writes()
        self._active: set = set()

    # -- the loop --------------------------------------------------------------------------
    def loop_problem(self, site) -> str | None:
        loop = self.loop
        node = loop.node
        if loop.kind != "for" or loop.iterator is None or loop.bound is None or \
                loop.compare is None or not isinstance(node.cond, c_ast.BinaryOp):
            return f"{loop.label} is not a counted for loop"
        if loop.has_early_exit or loop.continues:
            return f"{loop.label} may end an iteration early"
        body, sp = X.span(node.stmt), X.span(site.node)
        if body is None or sp is None or not (body.start <= sp.start and sp.end <= body.end):
            return "the access is not in the loop's body"
        guards = self.facts.guards.all(site.node) if self.facts.guards is not None else []
        if any(g.loop is not None and loop.encloses(g.loop) for g in guards):
            return "under a condition inside the loop"
        it = loop.iterator
        if it in self.reaching.address_taken:
            return f"{it.name}'s address is taken"
        step_def = self.reaching.def_of_node.get(loop.step_node)
        inside = [d for d in self.reaching.defs.get(it, []) if d.node is not None and
                  self._in_loop(d.node)]
        if step_def is None or inside != [step_def]:
            return f"{it.name} is changed in the loop besides its step"
        if loop.step is not None and not self._launch_text(loop.step):
            return f"the step of {loop.label} is not a constant, macro or parameter"
        if not self._invariant(loop.bound):
            return f"the bound of {loop.label} may change in the loop"
        if self._unsigned(it.decl) != self._expr_unsigned(loop.bound):
            return f"{loop.label} compares signed with unsigned values"
        if self._unsigned(it.decl) and (loop.compare not in ("<", "<=") or loop.step_sign < 0):
            return f"{loop.label} counts an unsigned iterator down"
        return None

    def _in_loop(self, node) -> bool:
        inner = self.facts.loops.enclosing.get(node)
        return inner is not None and self.loop.encloses(inner)

    def _body_writes(self) -> bool:
        """Whether the loop may write memory (then memory reads in an invariant term may not
        be invariant)."""
        sp = X.span(self.loop.node)
        for s in self.facts.sites:
            ss = X.span(s.node)
            if s.kind != "read" and ss is not None and sp.start <= ss.start < sp.end:
                return True
        for n in X.walk(self.loop.node):
            if isinstance(n, c_ast.FuncCall) and not self._pure_call(n):
                return True
            if isinstance(n, X.Asm):
                return True
        return False

    @staticmethod
    def _pure_call(n) -> bool:
        name = n.name.name if isinstance(n.name, c_ast.ID) else None
        return name in _PURE_CALLS

    # -- invariance and purity -------------------------------------------------------------
    def _invariant(self, node) -> bool:
        """Same value in every iteration, evaluable again at the site without side effects."""
        if not pure(node):
            return False
        for n in X.walk(node):
            if isinstance(n, (c_ast.ArrayRef, c_ast.StructRef)) or (
                    isinstance(n, c_ast.UnaryOp) and n.op == "*"):
                if self.body_writes:
                    return False
        v = self.values.value(node)
        return ("loop", self.loop) not in v.deps and not v.deps & {"unknown", "call"}

    def _launch_text(self, node) -> bool:
        """Text that means the same anywhere in the function: constants, macros, parameters
        that are never assigned and not shadowed, and arithmetic on them."""
        for n in X.walk(node):
            if isinstance(n, c_ast.ID):
                sym = self.names[n]
                if sym is None or sym.kind not in (MACRO, PARAM, CONSTANT, TEMPLATE_PARAM):
                    return False
                if sym.kind == PARAM and any(d.kind != "param"
                                             for d in self.reaching.defs.get(sym, ())):
                    return False
                if any(getattr(decl, "name", None) == n.name and decl is not sym.decl
                       for decl in self.names.declared):
                    return False  # shadowed somewhere in the function
            elif not isinstance(n, (c_ast.Constant, c_ast.BinaryOp, c_ast.UnaryOp)):
                return False
            elif isinstance(n, c_ast.UnaryOp) and n.op not in ("-", "+", "sizeof"):
                return False
        return not self.values.value(node).deps

    def _unsigned(self, decl) -> bool:
        return unsigned_decl(decl)

    def _expr_unsigned(self, node) -> bool:
        return expr_unsigned(node, self.names, self.values.program.macro_expression)

    # -- the stride ------------------------------------------------------------------------
    def site_stride(self, site) -> tuple[str | None, str]:
        base = site.node
        subs = []
        while isinstance(base, c_ast.ArrayRef):
            subs.append(base.subscript)
            base = base.name
        subs.reverse()
        if not isinstance(base, c_ast.ID):
            return None, "the base pointer is not a name"
        sym = self.names[base]
        declared_array = sym is not None and isinstance(getattr(getattr(sym, "decl", None),
                                                                "type", None), c_ast.ArrayDecl)
        if not declared_array and not self._invariant(base):  # an array's address is fixed
            return None, "the base pointer changes in the loop"
        dims = [None]
        if len(subs) > 1:
            sym = self.names[base]
            t = getattr(sym.decl, "type", None) if sym is not None else None
            dims = []
            if isinstance(t, c_ast.PtrDecl):  # T (*m)[8]: an unsized first dimension
                dims, t = [None], t.type
            while isinstance(t, c_ast.ArrayDecl):
                dims.append(t.dim)
                t = t.type
            if len(dims) < len(subs) or not all(d is not None and self._launch_text(d)
                                                for d in dims[1:len(subs)]):
                return None, "a multi-dimensional array whose dimensions are not constants"
        terms = []
        for k, sub in enumerate(subs):
            d = self.stride(sub)
            if d is None:
                return None, f"the index {X.span(sub).text} is not affine in {self.loop.label}"
            if d == "0":
                continue
            scale = [X.span(dim).text for dim in dims[k + 1:len(subs)]]
            terms.append(" * ".join([f"({d})"] + [f"({s})" for s in scale]))
        return (" + ".join(terms) if terms else "0"), ""

    def stride(self, node) -> str | None:
        """Change of an integer expression per iteration of the loop, as C text ('0' for
        invariant), or None when it is not affine with a launch-known coefficient."""
        if node in self._active:
            return None
        self._active.add(node)
        try:
            return self._stride(node)
        finally:
            self._active.discard(node)

    def _stride(self, node) -> str | None:
        if isinstance(node, c_ast.Constant):
            return "0"
        if isinstance(node, c_ast.ID):
            sym = self.names[node]
            if sym is self.loop.iterator:
                step = "1" if self.loop.step is None else X.span(self.loop.step).text
                return f"{'-' if self.loop.step_sign < 0 else ''}({step})"
            if self._invariant(node):
                return "0"
            defs = self.reaching.at(node)
            if len(defs) == 1 and d_current_iteration(defs, self.loop, self.facts.loops, node):
                d = next(iter(defs))
                if d.kind in ("init", "assign") and d.rhs is not None:
                    # the definition's text is not at the site, but a stride is made only of
                    # launch-known text and the loop's step, which mean the same there
                    return self.stride(d.rhs)
            return None
        if isinstance(node, c_ast.BinaryOp) and node.op in ("+", "-"):
            a, b = self.stride(node.left), self.stride(node.right)
            if a is None or b is None:
                return None
            if b == "0":
                return a
            if a == "0":
                return b if node.op == "+" else f"-({b})"
            return f"({a}) {node.op} ({b})"
        if isinstance(node, c_ast.BinaryOp) and node.op == "*":
            a, b = self.stride(node.left), self.stride(node.right)
            if a is None or b is None:
                return None
            if a == "0" and b == "0":
                return "0" if self._invariant(node) else None
            if a == "0" and self._launch_text(node.left):
                return f"({X.span(node.left).text}) * ({b})"
            if b == "0" and self._launch_text(node.right):
                return f"({a}) * ({X.span(node.right).text})"
            return None
        if isinstance(node, c_ast.BinaryOp) and node.op == "<<":
            a = self.stride(node.left)
            if a is None:
                return None
            if a == "0":
                return "0" if self._invariant(node) else None
            if self.stride(node.right) == "0" and self._launch_text(node.right):
                return f"({a}) * (1ll << ({X.span(node.right).text}))"
            return None
        if isinstance(node, c_ast.UnaryOp) and node.op in ("-", "+"):
            a = self.stride(node.expr)
            if a is None or a == "0" or node.op == "+":
                return a
            return f"-({a})"
        return "0" if self._invariant(node) else None


def pure(node) -> bool:
    """No assignment, increment, impure call or inline assembly in the expression: evaluating
    it again changes nothing (what it reads may still change in between)."""
    for n in X.walk(node):
        if isinstance(n, c_ast.Assignment) or (isinstance(n, c_ast.UnaryOp) and
                                               n.op in ("++", "--", "p++", "p--")):
            return False
        if isinstance(n, c_ast.FuncCall) and not _Finder._pure_call(n):
            return False
        if isinstance(n, X.Asm):
            return False
    return True

__all__ = ["Range", "find_range", "pure"]
