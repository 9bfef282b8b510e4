"""InstrumentSource: turn a Plan into text patches, and emit the instrumented translation unit.

A rewrite pass. It collects its edits first (insertions at exact source offsets, and a few
replacements), then applies them; the user's text, comments and macros are untouched between
them, and no inserted text holds a newline, so every line keeps its number (only the inlined
gmprof header and local includes get `#line` markers).

    a[i] = s[tx];
 -> (*::gmprof::dm<3, 0, ::gmprof::EACH>(&(a[i]), ::gmprof::One(), nullptr)) =
        (*::gmprof::sm<4, 2, ::gmprof::WARP>(&(s[tx]), (const void *)(s), ::gmprof::One(),
         nullptr));

Each site's call is its counter kind's (SitePlan.hook, hooks.py: `dm`, `sm`, a range, ...);
this pass decides where the call goes: around the access, before its statement, or at the
entry of the loop the kind counts once per entry of.

Kernels get `::gmprof::enter();` after their opening brace (zeroes the block's counters in
shared memory) and `::gmprof::leave();` before every return and their closing brace (the last
thread out flushes the counters); a kernel without `return` ends with `::gmprof::leave_all();`
instead (one barrier, then the whole block flushes); a kernel that reaches no hook gets neither
(Plan.counts_on_device). A loop whose first iteration and trip count a site needs is
wrapped: `{ bool __gmprof_first_0 = true; unsigned __gmprof_trip_0 = 0u; for (...) { if
(__gmprof_first_0) __gmprof_trip_0 = ::gmprof::trips(...); ... __gmprof_first_0 = false; } }`,
unless its counts are made before it (Plan.entry, entry.py): `{ { int c = 0; unsigned
__gmprof_trip_0 = ::gmprof::trips(...); if (__gmprof_trip_0) { <counts> } } for (...) ... }`,
the loop itself untouched; either goes before the loop's `#pragma unroll` (pragmas.py).

emit.py writes the translation unit from the patches (for this pass and for whole programs).
"""
from __future__ import annotations

from pycparser import c_ast

from gmprof.frontend import cxx_ast as X

import copy
import dataclasses

from . import defer, dual
from .patches import PREFIX, SUFFIX, Patch
from .hooks import DmGather, DmRange, paired, walk_call, warp_call
from .plan import HOOK, LR_START, Plan
from .pragmas import before_pragma_text, before_pragmas

# calls with no side effects that may appear in an address gmprof re-evaluates before a statement
_PURE_CALLS = {"min", "max", "umin", "umax", "abs", "__mul24", "__umul24", "__popc", "__clz",
               "__ffs", "__brev", "__float2int_rn", "__float2int_rz", "floorf", "ceilf",
               "floor", "ceil", "__ldg"}


class InstrumentSource:
    def __init__(self, plan: Plan):
        self.plan = plan
        self.program = plan.program
        self.tu = self.program.tu
        self.patches: dict = {}  # SourceFile -> [Patch]
        self.needs_shared_bases = False
        # statement node -> (span, needs braces, [count calls]): counts placed before the
        # statement, so the user's expression is compiled exactly as without gmprof
        self.hoisted: dict = {}
        self.entry_calls: dict = {}  # Loop -> [count calls made before it] (Plan.entry)
        self.exit_calls: dict = {}  # Loop -> [walks' statistics made after it] (LoopEntry.again)
        self.replays: dict = {}  # kernel -> [deferred walks' costs made at its end] (defer.py)
        self._deferred_walks: dict = {}  # kernel -> defer.deferred_walks
        self._parents: dict = {}
        self._ends: dict = {}  # kernel -> (its prologue's Patch, its epilogue's Patch)
        self.dual: list = []  # the kernels emitted with two bodies (dual.py)

    # -- patch helpers -------------------------------------------------------------------
    def _add(self, source, patch: Patch) -> None:
        self.patches.setdefault(source, []).append(patch)

    def _wrap(self, node, prefix: str, suffix: str) -> None:
        sp = X.span(node)
        length = sp.end - sp.start
        self._add(sp.source, Patch(sp.start, PREFIX, prefix, length))
        self._add(sp.source, Patch(sp.end, SUFFIX, suffix, length))

    def _insert_after_brace(self, compound, text: str) -> Patch:
        sp = X.span(compound)
        patch = Patch(sp.start + 1, PREFIX, text, sp.end - sp.start)
        self._add(sp.source, patch)
        return patch

    def _insert_before_brace(self, compound, text: str) -> Patch:
        sp = X.span(compound)
        patch = Patch(sp.end - 1, SUFFIX, text, sp.end - sp.start)
        self._add(sp.source, patch)
        return patch

    # -- the pass ------------------------------------------------------------------------
    def run(self) -> dict:
        mode = self.plan.mode
        for facts in self.program.functions:
            self._parents = facts.parents
            self._facts = facts
            for site in facts.sites:
                sp = self.plan.sites.get(site)
                if sp is not None and sp.strategy in (HOOK, LR_START):
                    self._site(sp)
        for statement, (span, braces, calls) in self.hoisted.items():
            length = span.end - span.start
            # the paper's basic mode (no SA) and the trace keep an atomic an access
            calls = paired(calls) if mode.sa and not mode.trace else calls
            text = ("{ " if braces else "") + " ".join(calls) + " "
            self._add(span.source, Patch(span.start, PREFIX, text, length + 1))
            if braces:
                self._add(span.source, Patch(span.end, SUFFIX, " }", length + 1))
        for loop, k in self.plan.loops.items():
            self._loop(loop, k)
        for facts in self.program.functions:
            if facts.function.is_kernel:
                self._kernel(facts)
            self._register_shared(facts)
        self._dual()
        return self.patches

    # -- what the hooks' calls ask (hooks.py) --------------------------------------------
    def inc(self, sp) -> str:
        """The count argument of a per-access hook: 1, or the trip count of the loops it is
        weighted by, in their first iteration (or at the entry: Plan.entry)."""
        if not sp.weight_loops:
            return "::gmprof::One()"  # 1, known from its type (gmprof.cuh One)
        if len(sp.weight_loops) == 1 and sp.weight_loops[0] in self.plan.entry:
            return f"__gmprof_trip_{self.plan.loops[sp.weight_loops[0]]}"  # at the entry
        ids = [self.plan.loops[loop] for loop in sp.weight_loops]
        first = " && ".join(f"__gmprof_first_{k}" for k in ids)
        trips = " * ".join(f"__gmprof_trip_{k}" for k in ids)
        return f"(({first}) ? ({trips}) : 0u)"

    def sampler(self, site) -> str:
        if self.plan.mode.sampling is not None and site.function.is_kernel:
            return "&__gmprof_sampler"
        return "nullptr"

    def first_trips(self, loop) -> str:
        """The count argument of a hook counted once per entry of `loop`: its trip count in
        the first iteration, 0 in the others (or the trip count, at the entry: Plan.entry)."""
        k = self.plan.loops[loop]
        if loop in self.plan.entry:
            return f"__gmprof_trip_{k}"
        return f"(__gmprof_first_{k} ? __gmprof_trip_{k} : 0u)"

    def shared_base(self, site, slot) -> str:
        """The first byte of the shared object a site's hook counts in (found among the
        registered bases when the site's pointer does not name it)."""
        obj = site.object
        if obj is not None and obj in slot.objects:
            return _address_of(obj)
        self.needs_shared_bases = True
        return f"::gmprof::shared_base({slot.index})"

    def _site(self, sp) -> None:
        stats = warp_call(sp, self)  # --access-stats of a site counted per loop entry
        if stats is not None:
            self._at_access(sp, *stats)
        entry_loop = defer.entry_loop(self.plan, sp)  # counted once per entry of, if any
        walk = walk_call(sp, self)  # --access-stats of a walk: where its count is made
        if walk is not None:
            head, tail = walk
            entry = self.plan.entry.get(entry_loop)
            if entry is not None and entry.again and isinstance(sp.hook, (DmRange, DmGather)):
                # a device walk's statistics after its loop, with the lanes that entered it
                k = self.plan.loops[entry_loop]
                if entry.deferred:
                    # recorded there, costed at the kernel's end (defer.py)
                    head = self._deferred(sp, head)
                self.exit_calls.setdefault(entry_loop, []).append(
                    f"{head}{self._pointer(sp)}{tail[:-1]}, __gmprof_lanes_{k});")
            else:
                self._beside_count(sp, entry_loop, head, tail)
        call = sp.hook.call(sp, self)  # the counter kind's call (hooks.py)
        if call is None:
            return  # counted by another site's hook (a gather's twin at this launch)
        head, tail = call
        end_prefix = end_suffix = ""
        if sp.lr_end_of is not None:
            end_prefix = f"(::gmprof::lr_clock({sp.lr_end_of.index}, 1), "
            end_suffix = ")"
        self._beside_count(sp, entry_loop, head, tail, end_prefix, end_suffix)

    def _deferred(self, sp, head: str) -> str:
        """The head of a deferred walk's record call (`::gmprof::warp_walk_dm<A>(` ->
        `::gmprof::defer_walk_dm<A, K>(`, K its number in the kernel); the cost of the record,
        `::gmprof::replay_walk_dm<A, K>();`, is made by the kernel's replay kernel (_kernel)."""
        kernel = sp.site.function.name
        walks = self._deferred_walks.get(kernel)
        if walks is None:
            walks = self._deferred_walks[kernel] = defer.deferred_walks(self.plan, kernel)
        k = walks.index(sp)
        name, _, args = head[:-2].partition("<")
        base = name.replace("::gmprof::warp_walk_", "")
        self.replays.setdefault(kernel, []).append(
            f"::gmprof::replay_walk_{base}<{args}, {k}>();")
        return f"::gmprof::defer_walk_{base}<{args}, {k}>("

    def _pointer(self, sp) -> str:
        """The address a call made away from the access (at a loop's entry or after it) is
        given: the access's, or a member of a shared array's element (`sp[i].b`: the hook
        gets the member's address and type, so it counts the member's words)."""
        site, slot = sp.site, sp.slot
        target = site.member if (site.member is not None and
                                 (slot is None or slot.kind == "shared")) else site.node
        return X.span(target).text if site.form == "pointer" else f"&({X.span(target).text})"

    def _beside_count(self, sp, entry_loop, head, tail, end_prefix="", end_suffix="") -> None:
        """A call made where the site's count is: before the loop it is counted once per
        entry of (Plan.entry), else at the access."""
        if entry_loop in self.plan.entry:
            # counted before the loop, the iterator set to its first value (entry.py)
            pointer = self._pointer(sp)
            self.entry_calls.setdefault(entry_loop, []).append(f"{head}{pointer}{tail};")
            return
        self._at_access(sp, head, tail, end_prefix, end_suffix)

    def _at_access(self, sp, head, tail, end_prefix="", end_suffix="") -> None:
        """The call at the access: before its statement where it runs exactly once with it,
        else around the address."""
        site, slot = sp.site, sp.slot
        target = site.member if (site.member is not None and
                                 (slot is None or slot.kind == "shared")) else site.node
        hoist = self._hoist_point(site)
        if hoist is not None:
            statement, span, braces = hoist
            address = X.span(target).text
            pointer = address if site.form == "pointer" else f"&({address})"
            call = f"{head}{pointer}{tail};"
            if end_prefix:
                call = f"::gmprof::lr_clock({sp.lr_end_of.index}, 1); " + call
            self.hoisted.setdefault(statement, (span, braces, []))[2].append(call)
            return
        if site.form == "pointer":  # atomicAdd(p + i, v): the pointer argument itself
            self._wrap(site.node, end_prefix + head, tail + end_suffix)
        else:
            self._wrap(target, f"{end_prefix}(*{head}&(", f"){tail}){end_suffix}")

    # -- counting before the statement ---------------------------------------------------
    _STATEMENT_PARENTS = (c_ast.Compound, c_ast.Case, c_ast.Default, c_ast.Label)

    def _hoist_point(self, site):
        """(statement, its span, needs braces) when the site's count can go before the
        statement that holds it: the access runs exactly once whenever the statement runs
        (not behind &&, ||, ?:, nor in a loop's condition or step), its address has no side
        effects, and the statement changes nothing the address reads before reaching it."""
        parents = self._parents
        n = site.node
        p = parents.get(n)
        statement = None
        while p is not None:
            if isinstance(p, c_ast.BinaryOp) and p.op in ("&&", "||") and n is p.right:
                return None
            if isinstance(p, c_ast.TernaryOp) and n is not p.cond:
                return None
            if isinstance(p, (c_ast.For, c_ast.While, c_ast.DoWhile)):
                if n is not p.stmt:
                    return None
                statement = n
                break
            if isinstance(p, (c_ast.If, c_ast.Switch)):
                statement = p if n is p.cond else n
                break
            if isinstance(p, c_ast.Return):
                statement = p
                break
            if isinstance(p, self._STATEMENT_PARENTS):
                statement = n
                break
            if isinstance(p, c_ast.DeclList):
                return None  # a for loop's init: runs once, but keep it simple
            n, p = p, parents.get(p)
        if statement is None:
            return None
        span = self._statement_span(statement)
        if span is None or not (span.start <= X.span(site.node).start and
                                X.span(site.node).end <= span.end):
            return None
        if not self._pure_address(site, statement):
            return None
        parent = parents.get(statement)
        braces = not isinstance(parent, self._STATEMENT_PARENTS)
        return statement, span, braces

    def _pure_address(self, site, statement) -> bool:
        names = self._facts.names
        used = set()
        reads = set()
        for node in X.walk(site.node):
            if isinstance(node, c_ast.Assignment) or (
                    isinstance(node, c_ast.UnaryOp) and node.op in ("++", "--", "p++", "p--")):
                return False
            if isinstance(node, c_ast.FuncCall):
                name = node.name.name if isinstance(node.name, c_ast.ID) else None
                if name not in _PURE_CALLS and not (name or "").startswith("make_"):
                    return False
            if isinstance(node, c_ast.ID):
                sym = names[node]
                if sym is not None:
                    used.add(sym)
        for other in self._facts.sites:
            if other is not site and X.span(site.node).start <= X.span(other.node).start and \
                    X.span(other.node).end <= X.span(site.node).end and other.object is not None:
                reads.add(other.object)
        # what the statement changes
        for node in X.walk(statement):
            target = None
            if isinstance(node, c_ast.Assignment):
                target = node.lvalue
            elif isinstance(node, c_ast.UnaryOp) and node.op in ("++", "--", "p++", "p--", "&"):
                target = node.expr
            elif isinstance(node, c_ast.Decl) and names.declared.get(node) in used:
                return False  # the address uses a variable this statement declares
            elif isinstance(node, X.Asm):
                return False
            if isinstance(target, c_ast.ID) and names[target] in used:
                return False
        for other in self._facts.sites:
            if other.kind != "read" and other.object in reads and \
                    X.span(statement).start <= X.span(other.node).start < X.span(statement).end:
                return False
        return True

    def _loop(self, loop, k: int) -> None:
        iterator = loop.iterator.name
        bound = X.span(loop.bound).text
        step = X.span(loop.step).text if loop.step is not None else "1"
        cmp = {"<": 0, "<=": 1, ">": 2, ">=": 3, "!=": 4}[loop.compare]
        trips = (f"::gmprof::trips((long long)({iterator}), (long long)({bound}), "
                 f"{'-' if loop.step_sign < 0 else ''}(long long)({step}), {cmp})")
        entry = self.plan.entry.get(loop)
        if entry is not None:
            calls = " ".join(self.entry_calls.get(loop, []))
            after = " ".join(self.exit_calls.get(loop, []))
            if after:
                # the device walks' statistics after the loop, its first iteration set again,
                # the trip count and the lanes with trips kept from the entry: at the entry
                # their collectives raised the kernel's registers (gmprof.cuh walk_lanes)
                self._wrap_loop(
                    loop.node,
                    f"{{ unsigned __gmprof_trip_{k}, __gmprof_lanes_{k}; {{ {entry.scope} "
                    f"__gmprof_trip_{k} = {trips}; __gmprof_lanes_{k} = "
                    f"::gmprof::walk_lanes(__gmprof_trip_{k}); if (__gmprof_trip_{k}) "
                    f"{{ {calls} }} }} ",
                    f" {{ {entry.scope} if (__gmprof_lanes_{k} && __gmprof_trip_{k}) "
                    f"{{ {after} }} }} }}")
                return
            self._wrap_loop(loop.node, f"{{ {{ {entry.scope} unsigned __gmprof_trip_{k} = "
                            f"{trips}; if (__gmprof_trip_{k}) {{ {calls} }} }} ", " }")
            return
        top = f" if (__gmprof_first_{k}) __gmprof_trip_{k} = {trips};"
        bottom = f" __gmprof_first_{k} = false; "
        self._wrap_loop(loop.node, f"{{ bool __gmprof_first_{k} = true; "
                        f"unsigned __gmprof_trip_{k} = 0u; ", " }")
        body = loop.node.stmt
        if isinstance(body, c_ast.Compound):
            self._insert_after_brace(body, top)
            self._insert_before_brace(body, bottom)
        else:
            # a single statement: wrap it with its ';' (expression statements' nodes stop
            # before it); outermost at its offsets (span + 2), so counts hoisted before the
            # statement (span + 1) run after the trip count is computed
            statement = self._statement_span(body)
            # (before the pragmas of a loop that is the body: `for (...) #pragma unroll for`)
            start = before_pragma_text(body)
            start = statement.start if start is None else start
            length = statement.end - start + 2
            self._add(statement.source, Patch(start, PREFIX, "{" + top + " ", length))
            self._add(statement.source, Patch(statement.end, SUFFIX, bottom + "}", length))

    def _wrap_loop(self, node, prefix: str, suffix: str) -> None:
        """Wrap a loop, its pragmas (`#pragma unroll 4`, `_Pragma("unroll")`) inside: code
        between a pragma and its loop would take the loop's unrolling away (nvcc: "the #pragma
        unroll must precede a loop")."""
        sp = X.span(node)
        start = before_pragmas(self.program, node, self._statement_span)
        if start is None:
            self._wrap(node, prefix, suffix)
            return
        length = sp.end - start
        self._add(sp.source, Patch(start, PREFIX, prefix, length))
        self._add(sp.source, Patch(sp.end, SUFFIX, suffix, length))

    def _statement_span(self, node):
        for facts in self.program.functions:
            spans = facts.function.parsed.statement_spans
            if node in spans:
                return spans[node]
        return X.span(node)

    def _kernel(self, facts) -> None:
        if not self.plan.counts_on_device(facts.name):
            return  # nothing counted at run time: the kernel stays as written
        body = facts.function.funcdef.body
        prologue = " ::gmprof::enter();"
        if self.needs_shared_bases:
            # file-scope shared arrays are in scope here (the hooks' sites are all planned:
            # needs_shared_bases is final)
            for slot in self.plan.slots:
                obj = slot.object
                if slot.kind == "shared" and obj.function is None:
                    prologue += (f" ::gmprof::register_shared({slot.index}, "
                                 f"(const void *)({_address_of(obj)}));")
        if self.plan.mode.sampling is not None:
            prologue += " ::gmprof::Sampler __gmprof_sampler;"
        first = self._insert_after_brace(body, prologue)
        returns = [node for node in X.walk(body) if isinstance(node, c_ast.Return)]
        for node in returns:
            self._wrap(node, "{ ::gmprof::leave(); ", " }")
        # Without a `return` (or an `asm` that might `exit`) every thread reaches the closing
        # brace: the block can flush its counters together after one barrier.
        asm = any(isinstance(node, X.Asm) for node in X.walk(body))
        last = self._insert_before_brace(
            body, " ::gmprof::leave(); " if returns or asm else " ::gmprof::leave_all(); ")
        self._ends[facts.name] = (first, last)
        replays = self.replays.get(facts.name)
        if replays:
            # the kernel that costs its deferred walks' records, beside it (defer.py)
            sp = X.span(facts.function.funcdef)
            # (__launch_bounds__(1024): at most 64 registers, so that any block shape the
            # user's kernel launches with launches it too; what spills, spills here)
            self._add(sp.source, Patch(
                sp.end, SUFFIX, f" __global__ void __launch_bounds__(1024) "
                f"{defer.replay_name(facts.name)}() "
                f"{{ ::gmprof::enter_replay(); {' '.join(replays)} ::gmprof::leave_all(); }}",
                sp.end - sp.start))

    # -- two bodies (dual.py) ---------------------------------------------------------
    def _dual(self) -> None:
        kernels = [facts for facts in self.program.functions
                   if facts.function.is_kernel and facts.name in self._ends and
                   dual.applies(self.plan, facts)]
        if not kernels:
            return
        # the unmeasured blocks' body: the same plan rewritten with the statistics off
        view = copy.copy(self.plan)
        view.mode = dataclasses.replace(self.plan.mode, warps=False)
        other = InstrumentSource(view)
        theirs = other.run()
        for facts in kernels:
            source = X.span(facts.function.funcdef.body).source
            ka = self.program.kernels.get(facts.name) if self.program.kernels else None
            self.patches[source] = dual.two_bodies(
                facts, self.patches[source], self._ends[facts.name],
                theirs.get(source, []), other._ends[facts.name],
                calls=ka is None or bool(ka.calls))
            self.dual.append(facts.name)

    def _register_shared(self, facts) -> None:
        """Register shared arrays' addresses where a device function reaches them through
        pointers (only then: it costs a store per array per block)."""
        if not self.needs_shared_bases:
            return
        spans = facts.function.parsed.statement_spans
        for obj in facts.objects:
            if not obj.is_shared or obj.function is None:
                continue
            statement = spans.get(obj.symbol.decl)
            slot = self.plan.slot_of(obj)
            if statement is None or slot is None:
                continue
            self._add(statement.source,
                      Patch(statement.end, SUFFIX,
                            f" ::gmprof::register_shared({slot.index}, "
                            f"(const void *)({_address_of(obj)}));", statement.end - statement.start))


def _address_of(obj) -> str:
    """The first byte of a shared object: an array decays to it, a scalar (`__shared__ int s;`,
    no dimensions) needs its address taken (its name is its value)."""
    if obj.dims or obj.is_pointer:
        return obj.name
    return f"&({obj.name})"


def instrument(plan: Plan) -> tuple[dict, "InstrumentSource"]:
    rewriter = InstrumentSource(plan)
    return rewriter.run(), rewriter

