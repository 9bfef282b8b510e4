"""FindLoopEntries: loops whose once-per-entry counts can be made before the loop starts.

A planning helper (PlanCounters asks it once every site has a plan). A range (ranges.py), a
spread (spread.py) and a site weighted by the loop's trip count (plan.py) are counted once per
entry of their loop, from the site's address in its first iteration. Made inside that
iteration, the count costs the loop a branch on "first iteration?" in every iteration and a
large block of hook code in its body, and nvcc then neither unrolls nor pipelines the loop:
co's `c` loop (one multiply-add a trip) ran rolled, 16x unrolled natively (issue 17). Made
before the loop, with the iterator set to its first value in a scope of its own, the loop's
body is the user's alone:

    for (int c = 0; c < nCol; c++) t += data[(r + n_idx) * nCol + c];
 -> { { int c = 0; unsigned __gmprof_trip_0 = ::gmprof::trips(c, nCol, 1, <);
        if (__gmprof_trip_0) ::gmprof::dm_range<...>(&(data[(r + n_idx) * nCol + c]), ...); }
      for (int c = 0; c < nCol; c++) t += data[(r + n_idx) * nCol + c]; }

The count at entry is the one the first iteration would have made when:
  - every site counted per entry of the loop runs in each of its iterations (ranges.py's
    loop_problem for that site: a counted loop, no early exit, the site under no condition in
    it), so it runs in the first iteration exactly when the trip count is not zero, and the
    entry counts only then;
  - the iterator's first value can be computed again: the loop's init is absent, a lone
    declaration of the iterator, or `iterator = e`, with no side effect (nothing but the
    loop's init and its pure condition runs between the entry and the first iteration, so
    evaluating it twice gives the same value);
  - each such site's address has no side effect, and every name in it besides the iterator is
    declared outside the loop, never changed in it and never has its address taken, so it holds
    at the entry the value it has at the site in the first iteration; an address that reads
    memory needs a loop that writes none and calls nothing impure (no barrier): the body
    before the site cannot change what it reads;
  - a site weighted by the loop's trip count (invariant in it, plan.py) is weighted by it
    alone and meets the two rules above (it then counts the trip count at the entry, as it
    did in the first iteration); one weighted by several loops' trips, and a gather whose
    index walks the loop, keep the loop's first-iteration placement (the former needs every
    loop's first-iteration flag; the latter counts in every iteration where the runtime
    finds its index's memory aliased, gmprof.cuh dm_gather), except in a plan made for one
    launch (Plan.for_launch), where aliasing was ruled out before compiling (dm_walk).
Any loop that fails one of these keeps the first-iteration placement for all of its sites.
The inserted text holds no newline (line numbers of the user's code stay).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from pycparser import c_ast

from gmprof.frontend import cxx_ast as X

from .defer import deferrable
from .hooks import DmGather
from .ranges import _Finder, pure
from .value_domain import Context


@dataclass(frozen=True)
class LoopEntry:
    loop: object
    scope: str  # C text opening the iterator's first value (declarations ending in ';'), or ''
    sites: tuple  # the SitePlans counted at the entry
    # whether `scope` gives the first value again after the loop (its init's names unchanged
    # by the loop, memory it reads unwritten): --access-stats then measures the device walks
    # there, where the loop's registers are free (rewrite.py; gmprof.cuh walk_lanes)
    again: bool = False
    # whether the walks measured after it are recorded there and costed at the kernel's end
    # (defer.py: a loop a thread runs at most once)
    deferred: bool = False


def entry_sites(plan, loop) -> list:
    """The hook SitePlans counted once per entry of `loop`: ranges, spreads, and sites
    weighted by its trip count alone."""
    out = []
    for sp in plan.site_list:
        if sp.strategy != "hook":
            continue
        if sp.hook.loop is loop or sp.weight_loops == [loop]:
            out.append(sp)
    return out


def find_loop_entries(program, plan) -> dict:
    """Loop -> LoopEntry for each loop of plan.loops whose counts can move to its entry."""
    hooks = [sp for sp in plan.sites.values() if sp.strategy == "hook"]
    # a site weighted by several loops' trips counts when all of them are in their first
    # iteration (their flags); sampling and trace count per access
    m = plan.mode
    weighted = {loop for sp in hooks for loop in sp.weight_loops
                if len(sp.weight_loops) > 1 or m.sampling is not None or m.trace}
    # a gather's hook counts per access where the runtime finds its index's memory aliased
    # (gmprof.cuh dm_gather): it must run in every iteration, at its own place; not in a plan
    # made for one launch, where that was decided before compiling (dm_walk: the walk alone)
    gathers = {sp.hook.loop for sp in hooks
               if isinstance(sp.hook, DmGather) and not plan.for_launch}
    out = {}
    for loop in plan.loops:
        if loop in weighted or loop in gathers:
            continue
        sites = entry_sites(plan, loop)
        if not sites:
            continue
        entry, _why = loop_entry(program, loop, sites)
        if entry is not None and entry.again and \
                deferrable(plan, program.facts(sites[0].site.function.name), loop):
            entry = dataclasses.replace(entry, deferred=True)
        if entry is not None:
            out[loop] = entry
    return out


def loop_entry(program, loop, sites) -> tuple[LoopEntry | None, str]:
    facts = program.facts(sites[0].site.function.name)
    if facts is None or any(sp.site.function is not sites[0].site.function for sp in sites):
        return None, "the sites are not in one function"
    finder = _Finder(facts, program.values.of(facts, Context(facts)), loop)
    scope, problem = _first_value(facts, finder, loop)
    if problem:
        return None, problem
    for sp in sites:
        problem = _site_problem(facts, finder, sp)
        if problem:
            return None, f"{sp.site.text}: {problem}"
    init = loop.node.init
    first = init.decls[0].init if isinstance(init, c_ast.DeclList) else \
        init.rvalue if isinstance(init, c_ast.Assignment) else None
    again = bool(scope) and first is not None and _unchanged(facts, finder, first) is None
    return LoopEntry(loop, scope, tuple(sites), again), ""


def _first_value(facts, finder, loop) -> tuple[str, str]:
    node = loop.node
    it = loop.iterator
    if loop.kind != "for" or it is None or loop.bound is None or loop.compare is None:
        return "", f"{loop.label} is not a counted for loop"
    if "\n" in X.span(loop.bound).text:
        return "", "the bound spans lines"
    init = node.init
    if init is None:
        return "", ""  # the iterator's current value is its first
    if isinstance(init, c_ast.DeclList):
        if len(init.decls) != 1 or facts.names.declared.get(init.decls[0]) is not it or \
                init.decls[0].init is None:
            return "", f"{loop.label}'s init declares more than its iterator"
        if not pure(init.decls[0].init):
            return "", f"{loop.label}'s init has a side effect"
        # the declaration as written, type included (the DeclList's span starts at its
        # declarator): from the for's parenthesis to the initializer's end
        whole, sp = X.span(node), X.span(init)
        text = whole.text[:sp.end - whole.start]
        text = text[text.index("(") + 1:].strip()
        if "\n" in text:
            return "", "the init spans lines"
        return text + ";", ""
    if isinstance(init, c_ast.Assignment) and init.op == "=" and \
            isinstance(init.lvalue, c_ast.ID) and facts.names[init.lvalue] is it:
        if not pure(init.rvalue):
            return "", f"{loop.label}'s init has a side effect"
        if not isinstance(getattr(it.decl, "type", None), c_ast.TypeDecl):
            return "", f"{it.name} is not a plain variable"
        text = X.span(init.rvalue).text
        if "\n" in text:
            return "", "the init spans lines"
        k = it.name
        # the first value is computed in the enclosing scope, then shadows the iterator
        return (f"decltype({k}) __gmprof_first_value = (decltype({k}))({text}); "
                f"decltype({k}) {k} = __gmprof_first_value;"), ""
    return "", f"{loop.label}'s init is not a declaration or an assignment of its iterator"


def _site_problem(facts, finder, sp) -> str | None:
    site = sp.site
    if sp.lr_end_of is not None:
        return "it ends a live range"
    loops = facts.loops.of(site.node)
    if not loops or loops[0] is not finder.loop:
        return "its innermost loop is another"
    problem = finder.loop_problem(site)
    if problem:
        return problem
    target = site.member if site.member is not None and \
        (sp.slot is None or sp.slot.kind == "shared") else site.node
    node = target
    if "\n" in X.span(node).text:
        return "the address spans lines"
    if not pure(node):
        return "the address has a side effect"
    return _unchanged(facts, finder, node, skip=node)


def _unchanged(facts, finder, node, skip=None) -> str | None:
    """Why `node` may not have the same value anywhere around the loop as at its first
    iteration (None: it has): a side effect, memory it reads that the loop may write, a
    variable it names that the loop declares, changes, or whose address is taken."""
    if not pure(node):
        return "it has a side effect"
    body = X.span(finder.loop.node)
    reads = [n for n in X.walk(node) if n is not skip and (
        isinstance(n, c_ast.ArrayRef) or isinstance(n, c_ast.UnaryOp) and n.op == "*" or
        isinstance(n, c_ast.StructRef) and n.type == "->")]
    if reads and finder.body_writes:
        return "the address reads memory the loop may write"
    for n in X.walk(node):
        if not isinstance(n, c_ast.ID):
            continue
        sym = facts.names[n]
        if sym is None or sym is finder.loop.iterator:
            continue
        decl = getattr(sym, "decl", None)
        ds = X.span(decl) if decl is not None else None
        if ds is not None and body.start <= ds.start < body.end:
            return f"{n.name} is declared in the loop"
        if any(d.node is not None and finder._in_loop(d.node)
               for d in facts.dataflow.defs.get(sym, [])):
            return f"{n.name} changes in the loop"
        if sym in facts.dataflow.address_taken:
            return f"{n.name}'s address is taken"
    return None


__all__ = ["LoopEntry", "entry_sites", "find_loop_entries"]
