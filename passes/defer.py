"""Deferred walks: --access-stats of a device walk recorded after its loop, costed at the end.

With --access-stats, a device walk counted once per entry of its loop (a range or twin, a
gather whose index walks the loop: hooks.walk_call) has its requests costed after the loop
where the loop's first iteration can be set again (entry.py LoopEntry.again): the lanes that
entered it walk the iterations' addresses with warp collectives (gmprof.cuh walk_requests,
device_counts). Made there, beside the user's live values, that code still took spmv's kernel
from 32 registers to 48; the occupancy cap then spilled in every block, measured or not (0.74x
against 0.60x without the statistics' walks, on an H100).

Costed at the kernel's end instead, 56 registers and the same spills: whatever part of a
kernel needs more registers than the cap, ptxas spills values that live across it, in every
block. So a loop that runs at most once a thread has its walks' arguments recorded after it
(a few stores, in the measured blocks only: gmprof.cuh defer_walk_dm, defer_walk_gather), and
a kernel of gmprof's own beside the user's, `__gmprof_replay_<kernel>` (replay_name), costs
them (replay_walk_dm, replay_walk_gather): the runtime launches it after the user's kernel, on
the same stream, one block per measured block, of the same shape (the same warps), and its
blocks flush their statistics as the measured blocks' own (with the squares of the sampled
estimate's interval). Such a loop:
  - is in a kernel's body, in no other loop (a device function may be called many times), in
    a kernel with no `return`, `asm` or `goto` (no jump runs the loop again) and whose name no
    other kernel of the file has (the replay kernel is named after it);
  - in a plan made for one launch with --access-stats measuring a sample of the blocks (the
    Python runtime gives a record to each of the fewer than 4,096 measured blocks, a ticket
    at the block's entry its rank: counters.py block_buffers; --access-stats-exact measures
    every block, whole programs' host runtime gives none) without the trace.
Each deferred walk is numbered within its kernel (deferred_walks' order): its record is that
number's, a thread's own (40 bytes).
"""
from __future__ import annotations

from pycparser import c_ast

from gmprof.frontend import cxx_ast as X

from . import dual
from .hooks import HOOK, DmGather, DmRange




def deferrable(plan, facts, loop) -> bool:
    """Whether the walks measured after `loop` (in the function of `facts`) can be deferred
    to its kernel's end."""
    m = plan.mode
    if not (plan.for_launch and m.warps and m.warps_blocks and not m.trace) or \
            loop.parent is not None:
        return False
    if dual.applies(plan, facts):
        return False  # measured in place, in the measured blocks' body
    fn = facts.function
    if not fn.is_kernel or fn.funcdef is None or \
            sum(f.function.name == fn.name for f in plan.program.functions) > 1:
        return False
    return not any(isinstance(node, (c_ast.Return, c_ast.Goto, X.Asm))
                   for node in X.walk(fn.funcdef.body))


def replay_name(kernel: str) -> str:
    """The replay kernel of `kernel`, defined after it, in its namespace."""
    return f"__gmprof_replay_{kernel}"


def replay_expression(name_expression: str, kernel: str) -> str:
    """The replay kernel's name expression, from its kernel's (`ns::k<int>` ->
    `ns::__gmprof_replay_k`)."""
    plain = name_expression.split("<", 1)[0].strip()
    scope = plain[:-len(kernel)] if plain.endswith(kernel) else ""
    return scope + replay_name(kernel)


def entry_loop(plan, sp):
    """The loop a site is counted once per entry of (its count made at the entry or in the
    first iteration), or None."""
    loop = sp.hook.loop
    if loop is None and len(sp.weight_loops) == 1 and sp.weight_loops[0] in plan.entry:
        loop = sp.weight_loops[0]  # weighted by its trips: counted at its entry
    return loop


def deferred_walks(plan, kernel: str) -> list:
    """The SitePlans of `kernel`'s deferred walks, in their records' order."""
    if not plan.mode.warps:
        return []
    out = []
    for sp in plan.site_list:
        if sp.strategy != HOOK or not isinstance(sp.hook, (DmRange, DmGather)):
            continue
        fn = sp.site.function
        entry = plan.entry.get(entry_loop(plan, sp))
        if entry is not None and entry.deferred and fn is not None and fn.name == kernel:
            out.append(sp)
    return out
