"""ClassifyAccesses: the paper's access classes for every site, each with its reason.

Read-only analysis. Takes an AccessSite in a context (the chain of calls from a kernel down to
the site's function) and returns a SiteClass:
  static          address and number of executions are known before the kernel runs: an
                  affine address over thread/block indices and loop iterations, inside loops
                  with affine bounds, under affine conditions only; the count is a formula
                  (StaticFormula) that the runtime evaluates at launch
  tid_invariant   the address does not depend on threadIdx
  warp_uniform    the address does not depend on threadIdx.x (all lanes of a warp share it when
                  blockDim.x is a multiple of 32, which the runtime checks at launch)
  loop_invariant  per enclosing loop, the paper's conservative rule: the address does not change
                  across iterations, the access runs in every iteration (no condition between
                  the loop and the access, no early exit), and inner loops' bounds do not change;
                  with the loop's trip count when it can be computed at loop entry
  block_convergent every thread of the block executes the access equally often (no condition or
                  exit that depends on the thread): one thread may count for the block
and, for everything else, why it must be counted at run time (dynamic reasons).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from pycparser import c_ast

from gmprof.frontend import cxx_ast as X

from . import symbolic as S
from .address import Address, AddressOf
from .control import ControlGuards, Guard
from .geometric import geometric_domain
from .loops import Loop
from .scopes import LOCAL
from .value_domain import BID, TID, Value
from .values import ValueAnalysis

_OPAQUE_DEPS = frozenset({"unknown", "call"})


@dataclass
class Frame:
    """One function on the path from a kernel to a site: its facts, values, guards, and the
    node within it (the site itself, or the call that leads to the next frame)."""

    facts: object
    values: ValueAnalysis
    guards: ControlGuards
    node: c_ast.Node

    @property
    def loops(self) -> list[Loop]:
        return self.values.loops.of(self.node)

    def header_loops(self) -> dict:
        """{Loop: 'condition' | 'step'} for the loops whose condition or step holds the node:
        a condition runs once more than the body (once when the body never runs), a step runs
        after the body's end; neither is an iteration of the body."""
        out = {}
        parents = self.facts.parents or {}
        child, parent = self.node, parents.get(self.node)
        while parent is not None:
            if isinstance(parent, (c_ast.For, c_ast.While)) and child is not parent.stmt and \
                    child is not getattr(parent, "init", None):
                loop = self.values.loops.by_node.get(parent)
                if loop is not None:
                    out[loop] = "condition" if child is parent.cond else "step"
            child, parent = parent, parents.get(parent)
        return out


@dataclass
class LoopFact:
    loop: Loop
    invariant: bool
    reason: str
    trip: object = None  # a Sym when the trip count can be computed at loop entry
    trip_text: str | None = None


@dataclass
class StaticFormula:
    """Everything the runtime needs to count a static site at launch.

    address: byte offset from the object's start (Affine over tid.*, bid.* and ('iter', k));
    loops: per enclosing loop k (outermost first): (compare, init Affine, bound Affine, step Sym,
    sign) so that iteration k runs init + sign*step*iter while `value compare bound`;
    constraints: a boolean tree of ('cmp', op, Affine, Affine) / ('and'|'or', a, b) / ('not', a)
    / ('true',) / ('false',).
    """

    address: S.Affine
    access_size: tuple  # Sym: bytes per access
    loops: list = field(default_factory=list)
    constraints: tuple = ("true",)


@dataclass(eq=False)
class SiteClass:
    site: object
    chain: tuple  # call nodes from the kernel down to the site's function (empty: in the kernel)
    address: Address
    static: bool = False
    static_reason: str = ""
    tid_invariant: bool = False
    tid_reason: str = ""
    warp_uniform: bool = False
    warp_reason: str = ""
    block_convergent: bool = False
    convergent_reason: str = ""
    loops: list = field(default_factory=list)  # LoopFact per enclosing loop of the site's function
    dynamic_reasons: list = field(default_factory=list)
    formula: StaticFormula | None = None

    def loop_invariant_in(self) -> list[LoopFact]:
        return [f for f in self.loops if f.invariant]

    @property
    def classes(self) -> list[str]:
        out = []
        if self.static:
            out.append("static")
        if self.tid_invariant:
            out.append("tid-invariant")
        elif self.warp_uniform:
            out.append("warp-uniform")
        if self.loop_invariant_in():
            out.append("loop-invariant")
        if not out:
            out.append("dynamic")
        return out


def _dep_text(d) -> str:
    if isinstance(d, tuple) and d[0] == "loop":
        return f"the iterations of {d[1].label}"
    return {"tid.x": "threadIdx.x", "tid.y": "threadIdx.y", "tid.z": "threadIdx.z",
            "warp.x": "threadIdx.x / 32",
            "bid.x": "blockIdx.x", "bid.y": "blockIdx.y", "bid.z": "blockIdx.z",
            "data": "memory contents", "call": "a call gmprof cannot see into",
            "unknown": "something gmprof cannot analyse"}.get(d, str(d))


def _deps_sentence(deps) -> str:
    ordered = sorted((_dep_text(d) for d in deps))
    return ", ".join(ordered)


class Classifier:
    def __init__(self, frames: list[Frame]):
        self.frames = frames  # innermost (the site's function) first
        self.inner = frames[0]

    def classify(self, site, chain=(), base=None) -> SiteClass:
        """base: where the site's object starts relative to the object its counts go to, when
        the object is a helper's pointer parameter (`put(a + 16, t)`: 16 * sizeof(float)); a
        Value in the callers' terms, so the address says what the pointer depends on too."""
        values = self.inner.values
        address = AddressOf(values).site(site)
        if base is not None and address.reason is None:
            address = Address(values._arith("+", base, address.offset), address.access_type)
        result = SiteClass(site, chain, address)
        offset = address.offset
        deps = offset.deps
        known_object = site.object is not None and address.reason is None
        opaque = deps & _OPAQUE_DEPS
        why_opaque = "; ".join(dict.fromkeys(offset.reasons)) or _deps_sentence(opaque)

        # tid-invariant / warp-uniform
        if not known_object:
            reason = address.reason or site.unresolved or "the object is not known"
            result.tid_reason = result.warp_reason = f"the address is not known ({reason})"
        elif opaque:
            result.tid_reason = result.warp_reason = f"the index depends on {why_opaque}"
        else:
            tids = deps & (TID | {"warp.x"})
            if not tids:
                result.tid_invariant = result.warp_uniform = True
                result.tid_reason = "index uses no thread id"
                result.warp_reason = result.tid_reason
            else:
                result.tid_reason = f"index depends on {_deps_sentence(tids)}"
                if "tid.x" not in tids:
                    result.warp_uniform = True
                    result.warp_reason = ("index does not use threadIdx.x (lanes of a warp share "
                                          "it when blockDim.x is a multiple of 32)"
                                          if "warp.x" not in tids else
                                          "index uses threadIdx.x only as threadIdx.x / 32: "
                                          "the lanes of a warp share it")
                else:
                    result.warp_reason = "index depends on threadIdx.x"

        guards_by_frame = [(f, f.guards.all(f.node)) for f in self.frames]
        self._convergence(result, guards_by_frame)
        self._loops(result, offset, known_object)
        self._static(result, offset, known_object, guards_by_frame)
        if not result.static:
            result.dynamic_reasons.append(result.static_reason)
        return result

    # -- block convergence -------------------------------------------------------------------
    def _convergence(self, result: SiteClass, guards_by_frame) -> None:
        for frame, guards in guards_by_frame:
            for g in guards:
                problem = self._guard_thread_problem(frame, g)
                if problem:
                    result.convergent_reason = problem
                    return
            for loop in frame.loops:
                problem = self._loop_thread_problem(frame, loop)
                if problem:
                    result.convergent_reason = problem
                    return
        result.block_convergent = True
        result.convergent_reason = "no condition or exit on the way depends on the thread"

    def _guard_thread_problem(self, frame, g: Guard) -> str | None:
        if g.kind == "opaque":
            return g.reason
        conds = [g] if g.kind == "cond" else list(g.conds)
        for c in conds:
            v = frame.values.value(c.expr)
            bad = v.deps & (TID | _OPAQUE_DEPS | {"warp.x"})
            if bad:
                return f"{g.describe()} depends on {_deps_sentence(bad)}"
        if g.kind == "exit" and not conds:
            return None
        return None

    def _loop_thread_problem(self, frame, loop: Loop) -> str | None:
        node = loop.node
        parts = [node.cond] if node.cond is not None else []
        for part in parts:
            v = frame.values.value(part)
            bad = v.deps & (TID | _OPAQUE_DEPS | {"warp.x"})
            if bad:
                return f"the condition of {loop.label} depends on {_deps_sentence(bad)}"
        return None

    # -- loops -----------------------------------------------------------------------------
    def _loops(self, result: SiteClass, offset: Value, known_object: bool) -> None:
        frame = self.inner
        loops = frame.loops  # innermost first
        guards = frame.guards.all(frame.node)
        header = frame.header_loops()
        for k, loop in enumerate(loops):
            fact = LoopFact(loop, False, "")
            fact.trip, fact.trip_text = self._trip(frame, loop)
            inner_loops = loops[:k]  # loops between this one and the site
            if loop in header:
                fact.reason = (f"in the {header[loop]} of {loop.label}, which does not run "
                               "once per iteration of its body")
            elif not known_object:
                fact.reason = "the address is not known"
            elif offset.deps & _OPAQUE_DEPS:
                fact.reason = "the index is not analysable"
            elif ("loop", loop) in offset.deps:
                fact.reason = f"the index changes with {loop.label}"
            elif loop.has_early_exit or loop.continues:
                ex = (loop.breaks or loop.returns or loop.gotos or loop.continues)[0]
                sp = X.span(ex)
                fact.reason = (f"{loop.label} may end an iteration early "
                               f"({type(ex).__name__.lower()} at {sp.line}:{sp.column})")
            else:
                inside = [g for g in guards if g.loop is not None and loop.encloses(g.loop)]
                if inside:
                    g = inside[0]
                    sp = X.span(g.construct)
                    what = type(g.construct).__name__
                    label = {"If": "if", "TernaryOp": "?:", "BinaryOp": "&&/||"}.get(what, what)
                    fact.reason = f"under a condition inside the loop ({label} at {sp.line}:{sp.column})"
                else:
                    bad = self._varying_inner(frame, loop, inner_loops)
                    if bad:
                        fact.reason = bad
                    else:
                        fact.invariant = True
                        names = self._index_names(result.site)
                        fact.reason = (f"{', '.join(names) + ' ' if names else ''}not written in it; "
                                       "runs every iteration")
            result.loops.append(fact)

    def _index_names(self, site) -> list[str]:
        names = []
        for sub in site.subscripts:
            for n in X.walk(sub):
                if isinstance(n, c_ast.ID) and n.name not in names:
                    names.append(n.name)
        if site.object is not None and site.object.name not in names:
            names.append(site.object.name)
        return names

    def _varying_inner(self, frame, loop: Loop, inner_loops) -> str | None:
        for inner in inner_loops:
            if inner.has_early_exit or inner.continues:
                return f"{inner.label} inside it may end early"
            for part in (inner.init, inner.bound, inner.step, inner.node.cond):
                if part is None:
                    continue
                v = frame.values.value(part)
                if ("loop", loop) in v.deps or v.deps & _OPAQUE_DEPS:
                    return f"the bounds of {inner.label} change with {loop.label}"
            if inner.iterator is None:
                return f"{inner.label} has no iterator gmprof can follow"
        return None

    def _trip(self, frame, loop: Loop):
        if loop.iterator is None or loop.bound is None or loop.compare is None:
            return None, None
        values = frame.values
        name = loop.iterator.name
        text_init = X.span(loop.init).text if loop.init is not None else f"{name} at entry"
        text_bound = X.span(loop.bound).text
        text_step = X.span(loop.step).text if loop.step is not None else "1"
        sign = "-" if loop.step_sign < 0 else ""
        trip_text = f"trips({name} = {text_init}; {name} {loop.compare} {text_bound}; " \
                    f"step {sign}{text_step})"
        it = self._iterator_value(frame, loop)
        bound = values.value(loop.bound)
        step = values.value(loop.step) if loop.step is not None else None
        step_sym = step.affine.const if step is not None and step.affine is not None and \
            step.affine.is_constant else (S.ONE if step is None else None)
        if it is None or it.affine is None or bound.affine is None or step_sym is None:
            return None, trip_text
        init = it.affine.without(("iter", loop))
        if not init.is_constant or not bound.affine.is_constant:
            return None, trip_text
        return S.trip_count(loop.compare, init.const, bound.affine.const, step_sym,
                            loop.step_sign), trip_text

    # -- static --------------------------------------------------------------------------
    def _static(self, result: SiteClass, offset: Value, known_object: bool, guards_by_frame):
        if not known_object:
            result.static_reason = "not static: the object or address is not known"
            return
        site = result.site
        if site.member is not None and site.object is not None and (
                site.object.space in ("shared", "shared_dynamic") or result.chain):
            # a shared array is counted per word; the formula knows the element, not where
            # the member lies in it (in a helper, the pointer may be bound to a shared array)
            result.static_reason = ("not static: a member of a structure in shared memory "
                                    "(its words are found at run time)")
            return
        if offset.affine is None:
            why = "; ".join(dict.fromkeys(offset.reasons)) or _deps_sentence(offset.deps)
            result.static_reason = f"not static: the index is not an affine function ({why})"
            return
        for frame in self.frames:
            header = frame.header_loops()
            if header:
                loop, part = next(iter(header.items()))
                result.static_reason = (f"not static: in the {part} of {loop.label} (it runs "
                                        "once more than the body, or after it)")
                return
        all_loops = [loop for f in self.frames for loop in f.loops]
        loop_ids = {loop: k for k, loop in enumerate(reversed(all_loops))}
        domains = []
        for frame in reversed(self.frames):
            for loop in reversed(frame.loops):
                dom, problem = self._loop_domain(frame, loop, loop_ids)
                if problem:
                    result.static_reason = f"not static: {problem}"
                    return
                domains.append(dom)
        constraints = ("true",)
        for frame, guards in guards_by_frame:
            for g in guards:
                c, problem = self._constraint(frame, g, loop_ids)
                if problem:
                    result.static_reason = f"not static: {problem}"
                    return
                constraints = c if constraints == ("true",) else ("and", constraints, c)
        address = _rename_iters(offset.affine, loop_ids)
        if address is None:
            result.static_reason = "not static: the index uses a loop that does not enclose it"
            return
        size = ("sizeof", result.address.access_type)
        result.formula = StaticFormula(address, size, domains, constraints)
        result.static = True
        result.static_reason = ("static: affine index"
                                + (" in affine loops" if domains else "")
                                + (" under affine conditions" if constraints != ("true",) else "")
                                + "; counted at launch")

    def _iterator_value(self, frame, loop: Loop):
        """The iterator's value in the loop's condition: init + sign*step*iter when it is an
        induction variable, for `for` and `while` loops alike."""
        cond = loop.node.cond
        if not isinstance(cond, c_ast.BinaryOp):
            return None
        for side in (cond.left, cond.right):
            if isinstance(side, c_ast.ID) and frame.values.names[side] is loop.iterator:
                return frame.values.value(side)
        return None

    def _loop_domain(self, frame, loop: Loop, loop_ids):
        if loop.geometric is not None and loop.iterator is None:
            return geometric_domain(frame.values, loop)
        if loop.iterator is None or loop.bound is None:
            return None, f"{loop.label} has no iterator with a bound"
        if loop.has_early_exit or loop.continues:
            return None, f"{loop.label} may end an iteration early"
        values = frame.values
        it = self._iterator_value(frame, loop)
        if it is None or it.affine is None or it.deps & (_OPAQUE_DEPS | {"data"}):
            return None, f"the start of {loop.label} is not affine"
        init_affine = it.affine.without(("iter", loop))
        bound = values.value(loop.bound)
        step = values.value(loop.step) if loop.step is not None else None
        if bound.affine is None or bound.deps & (_OPAQUE_DEPS | {"data"}):
            return None, f"the bound of {loop.label} is not affine"
        if step is not None and (step.affine is None or not step.affine.is_constant):
            return None, f"the step of {loop.label} is not known at launch"
        if loop.kind == "do":
            return None, f"{loop.label} is a do-while loop (its body runs before the test)"
        init_a = _rename_iters(init_affine, loop_ids)
        bound_a = _rename_iters(bound.affine, loop_ids)
        if init_a is None or bound_a is None:
            return None, f"the bounds of {loop.label} use a loop that does not enclose it"
        step_sym = step.affine.const if step is not None else S.ONE
        return (loop.compare, init_a, bound_a, step_sym, loop.step_sign), None

    def _constraint(self, frame, g: Guard, loop_ids):
        if g.kind == "opaque":
            return None, g.reason
        if g.kind == "cond":
            c, problem = self._condition(frame, g.expr, loop_ids)
            if problem:
                return None, problem
            return (c if g.polarity else ("not", c)), None
        # exit: the exit is taken when all its conds hold -> the site needs not(all); an exit
        # inside a loop is taken depending on the iteration, which a formula cannot say
        if g.loop is not None:
            return None, f"an exit inside {g.loop.label} ({g.describe()})"
        taken = ("true",)
        for c in g.conds:
            cc, problem = self._condition(frame, c.expr, loop_ids)
            if problem:
                return None, problem
            cc = cc if c.polarity else ("not", cc)
            taken = cc if taken == ("true",) else ("and", taken, cc)
        return ("not", taken), None

    @staticmethod
    def _condition_variable(frame, expr):
        if not isinstance(expr, c_ast.ID):
            return None
        rhs = _single_definition(frame.values, expr)
        if rhs is None:
            return None
        if isinstance(rhs, c_ast.BinaryOp) and rhs.op in ("&&", "||", "<", "<=", ">", ">=",
                                                          "==", "!=") or \
                isinstance(rhs, c_ast.UnaryOp) and rhs.op == "!":
            return rhs
        return None

    def _condition(self, frame, expr, loop_ids):
        if isinstance(expr, c_ast.BinaryOp) and expr.op in ("&&", "||"):
            a, pa = self._condition(frame, expr.left, loop_ids)
            if pa:
                return None, pa
            b, pb = self._condition(frame, expr.right, loop_ids)
            if pb:
                return None, pb
            return ("and" if expr.op == "&&" else "or", a, b), None
        if isinstance(expr, c_ast.UnaryOp) and expr.op == "!":
            a, pa = self._condition(frame, expr.expr, loop_ids)
            return (("not", a), None) if not pa else (None, pa)
        if isinstance(expr, c_ast.BinaryOp) and expr.op in ("<", "<=", ">", ">=", "==", "!="):
            left = frame.values.value(expr.left)
            right = frame.values.value(expr.right)
            for v in (left, right):
                if v.affine is None or v.deps & (_OPAQUE_DEPS | {"data"}):
                    text = X.span(expr).text
                    return None, f"the condition ({text}) is not affine in thread, block and " \
                                 f"loop indices"
            la, ra = _rename_iters(left.affine, loop_ids), _rename_iters(right.affine, loop_ids)
            if la is None or ra is None:
                return None, "a condition uses a loop that does not enclose it"
            return ("cmp", expr.op, la, ra), None
        definition = self._condition_variable(frame, expr)
        if definition is not None:
            # `bool inside = i < ny - 1 && j < nx - 1; ... if (inside)`: the condition is the
            # expression the variable was given
            return self._condition(frame, definition, loop_ids)
        v = frame.values.value(expr)
        if v.affine is not None and v.affine.is_constant and not v.deps:
            return ("cmp", "!=", v.affine, S.Affine.constant(S.ZERO)), None
        if v.affine is not None and not v.deps & (_OPAQUE_DEPS | {"data"}):
            # a quasi-affine integer used as a truth value: `if (lane % 4)`
            a = _rename_iters(v.affine, loop_ids)
            if a is not None:
                return ("cmp", "!=", a, S.Affine.constant(S.ZERO)), None
        text = X.span(expr).text if X.span(expr) else "?"
        return None, f"the condition ({text}) is not affine in thread, block and loop indices"


def _single_definition(values, node):
    """The expression a local variable read at `node` was given, when exactly one definition
    reaches it (`T v = e;` or `v = e;`), that definition is not in a loop that does not also
    enclose the use (so its loop indices are the use's), and nothing in between can change
    what e reads (its value has no data or opaque dependences)."""
    sym = values.names[node]
    if sym is None or sym.kind != LOCAL:
        return None
    defs = values.reaching.at(node)
    if len(defs) != 1:
        return None
    d = next(iter(defs))
    if d.kind not in ("init", "assign") or d.rhs is None or d.node is None:
        return None
    use_loops = set(values.loops.of(node))
    if not set(values.loops.of(d.node)) <= use_loops:
        return None
    if values.value(d.rhs).deps & (_OPAQUE_DEPS | {"data"}):
        return None
    return d.rhs


def _rename_iters(affine: S.Affine | None, loop_ids: dict):
    """Replace ('iter', Loop) variables by ('iter', k), k = the loop's depth from the kernel
    (inside derived terms too). None when a loop does not enclose the site."""
    if affine is None:
        return None

    def rename(var):
        if isinstance(var, tuple) and var[0] == "iter":
            return ("iter", loop_ids[var[1]]) if var[1] in loop_ids else None
        return var

    return S.map_variables(affine, rename)
