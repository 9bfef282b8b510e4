"""FindSpread: a shared access every thread makes alike (BLOCK), in a counted loop, whose
address is not a range but can be computed again for any iteration: counted once per entry of
the loop, the iterations shared out over the block (gmprof.cuh sm_spread_block).

A planning helper (plan.py asks it per BLOCK shared site that ranges.py could not take). co's
gather `Acomp[rc * nRowCL + colCL[c]]` (sAcomp through a shared index array, every thread at
the same address) costs thread 0 two shared atomics per iteration while its warp waits; counted
here in the loop's first iteration: thread t evaluates the address for iterations t, t + T, ...
(T the block's threads) with the iterator set to those values, and adds T for each.

Exact when the address at iteration k, evaluated early, is the one the thread will use:
  - the loop is counted (ranges._Finder.loop_problem: iterator, bound and launch-known step, no
    early exit, the site under no condition inside it), so iteration k's iterator is
    first + k * step and the site runs in every iteration;
  - the address is pure (no assignment, increment or call other than pure ones), and every name
    in it besides the iterator is neither declared nor changed in the loop;
  - the loop writes no memory and calls nothing impure (no barrier, atomic or fence): what it
    reads early holds the same values later in a race-free program.
Every thread of the block runs the entry with the same first value and trips (BLOCK: the
address is tid-invariant and every thread reaches the site alike).
"""
from __future__ import annotations

from dataclasses import dataclass

from pycparser import c_ast

from gmprof.frontend import cxx_ast as X

from .ranges import _Finder, loop_finder


@dataclass(frozen=True)
class Spread:
    loop: object
    iterator: str  # the iterator's name (the lambda's local of that name shadows it)
    step: str  # C text: the iterator's change per iteration (launch-known)
    address: str  # C text of the access, evaluated again in the lambda
    reason: str


def find_spread(program, facts, site) -> tuple[Spread | None, str]:
    finder, problem = loop_finder(program, facts, site, ("subscript", "deref"))
    if problem:
        return None, problem
    loop = finder.loop
    if finder.body_writes:
        return None, f"{loop.label} writes memory or calls a function"
    it = loop.iterator
    body = X.span(loop.node)
    for n in X.walk(site.node):
        if isinstance(n, c_ast.Assignment) or (isinstance(n, c_ast.UnaryOp) and
                                               n.op in ("++", "--", "p++", "p--")):
            return None, "the address changes something"
        if isinstance(n, c_ast.FuncCall) and not _Finder._pure_call(n):
            return None, "the address calls a function"
        if isinstance(n, c_ast.ID):
            sym = facts.names[n]
            if sym is None or sym is it:
                continue
            decl = getattr(sym, "decl", None)
            ds = X.span(decl) if decl is not None else None
            if ds is not None and body.start <= ds.start < body.end:
                return None, f"{n.name} is declared in the loop"
            if any(d.node is not None and finder._in_loop(d.node)
                   for d in facts.dataflow.defs.get(sym, [])):
                return None, f"{n.name} changes in the loop"
            if sym in facts.dataflow.address_taken:
                return None, f"{n.name}'s address is taken"
    step = X.span(loop.step).text if loop.step is not None else "1"
    step = f"{'-' if loop.step_sign < 0 else ''}(long long)({step})"
    # a member of the element (`sh[k].w`) is evaluated as the member: its own words count
    address = site.member if site.member is not None else site.node
    return Spread(loop, it.name, step, X.span(address).text,
                  f"counted once per entry of {loop.label}, its iterations shared out over "
                  "the block"), ""
