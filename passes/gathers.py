"""PlanGathers: count a gather `x[idx[j]]` from the range its index walks.

A planning helper, run by PlanCounters after every site has a plan. A device read `x[S]` whose
subscript S is itself a read site `idx[j]` counted as a range (ranges.py) executes once per
execution of S, at element idx[e] of x for each element e that S reads. When nothing in the
program can write idx, its contents after the launch are the values S read, so x's counts are
the histogram of idx's contents weighted by how often S's element was read:

    for (jj = lo + lane; jj < hi; jj += 32) sum += val[jj] * x[colIdx[jj]];
 -> x: the site's walk over colIdx is counted as a range, in its own counters (a pseudo-slot
    over colIdx's elements); the host adds bincount(colIdx, weights=walk) to x's counts

Two atomics per loop entry instead of one per iteration on x's (often hot) elements, exact. A
pseudo-slot is an object-table entry that points at idx's memory with counters of its own; it
is not an array of the report (runtime/decode.py folds it into x). At a launch where idx's buffer
overlaps another array of the kernel (the same memory under two names), the runtime sets the
pseudo-slot's fallback flag and the hook counts x per access (gmprof.cuh dm_gather).

Twins. The walk is also, element for element, the count of the index site itself
(`colIdx[jj]`), and of every other range site of the same loop that subscripts a kernel
parameter with the same index and stride (`val[jj]`): their elements are the walk's, in their
own arrays. Such a site is the gather's twin (hooks.DmTwin). Where the twin's array is alike to
the index array at the launch (as many elements, of the counter unit's size) and the index memory
is not aliased (runtime/counters.unlike_twins), decode adds the walk to the twin's array and
the gather's executions to the twin's. The Python runtime decides it before compiling
(plan.for_launch: a twin has no hook; one not alike is planned again as a plain range);
elsewhere (whole programs, `gmprof instrument`) the twin's hook (gmprof.cuh dm_twin) asks the
launch description and counts itself unless the host said alike, which only the Python host
does. spmv: one range hook per row instead of three.
"""
from __future__ import annotations

from pycparser import c_ast

from gmprof.frontend import cxx_ast as X

from .hooks import DmGather, DmTwin, GatherOf
from .symbols import LOCAL_ARRAY

_INDEX_TYPES = ("int", "short", "long", "char", "size_t", "unsigned", "signed", "int32_t",
                "uint32_t", "int64_t", "uint64_t", "int16_t", "uint16_t", "int8_t", "uint8_t")


def plan_gathers(plan, slot_class, demoted=frozenset()) -> None:
    """Give each eligible gather site a pseudo-slot (plan.slots) and its hook (hooks.DmGather),
    and its twins theirs (hooks.DmTwin). `demoted`: ids of gathers whose index memory was
    aliased at a launch and of twins whose array was not alike, counted by their own hooks."""
    by_node = {sp.site.node: sp for sp in plan.sites.values()}
    for sp in list(plan.site_list):
        if sp.site.id in demoted:
            continue  # its index memory is aliased at this launch: counted per access
        index = _index_plan(sp, by_node)
        if index is None or not _never_written(plan, index.slot):
            continue
        if len(plan.slots) >= 64:
            return
        target = index.slot
        pseudo = slot_class(len(plan.slots), f"{sp.slot.name}<-{target.name}", "device",
                            target.object, [], target.kernel)
        pseudo.ranges = True
        pseudo.gather = GatherOf(sp.slot, target)
        plan.slots.append(pseudo)
        sp.hook = DmGather(pseudo, index)
        sp.reason += (f"; counted from the range its index {index.site.text} walks "
                      f"({target.name} is never written: its contents give the elements)")
        for twin in _twins(plan, index):
            if twin.site.id in demoted:
                continue
            twin.hook = DmTwin(twin.hook.range, pseudo, sp)
            twin.reason += (f"; where its array is alike to {target.name}, counted from the "
                            f"walk of {sp.site.text} (the same elements)")


def _index_plan(sp, by_node):
    site = sp.site
    if sp.strategy != "hook" or sp.hook.range is not None or sp.slot is None or \
            sp.slot.kind != "device" or site.form != "subscript" or site.kind != "read" or \
            len(site.subscripts) != 1 or sp.lr_end_of is not None:
        return None
    if not isinstance(site.node.name, c_ast.ID) or site.object is None or \
            site.object is not sp.slot.object:
        return None  # x itself (offset 0 from the object), not a pointer into it
    index = by_node.get(site.subscripts[0])
    if index is None or index.hook.range is None or index.slot is None or \
            index.slot.kind != "device" or index.slot.kernel is None or \
            index.site.kind != "read":
        return None
    words = index.slot.object.elem_type.replace("const", " ").replace("volatile", " ").split()
    if not words or not all(w in _INDEX_TYPES for w in words):
        return None
    return index


def _twins(plan, index) -> list:
    """The index site and the range sites of its loop whose elements are the index walk's:
    a kernel parameter subscripted (offset 0 from its object) by the same index text, with
    the same stride, in the kernel itself (a helper's parameter may point into its object)."""
    text = X.span(index.site.subscripts[0]).text
    out = []
    for sp in plan.site_list:
        site = sp.site
        if sp is not index and isinstance(sp.hook, (DmGather, DmTwin)):
            continue
        walk, index_walk = sp.hook.range, index.hook.range
        if sp.strategy != "hook" or walk is None or walk.loop is not index_walk.loop \
                or walk.stride != index_walk.stride or sp.slot is None or \
                sp.slot.kind != "device" or sp.slot.kernel is None or \
                not site.function.is_kernel or site.form != "subscript" or \
                len(site.subscripts) != 1 or sp.lr_end_of is not None or \
                not isinstance(site.node.name, c_ast.ID) or site.object is None or \
                site.object is not sp.slot.object or \
                X.span(site.subscripts[0]).text != text:
            continue
        out.append(sp)
    return out


def _never_written(plan, slot) -> bool:
    for sp in plan.sites.values():
        if sp.site.kind == "read" or (sp.slot is not None and sp.slot is not slot):
            continue
        obj = sp.site.object
        if sp.slot is None and obj is not None and (obj.space == LOCAL_ARRAY or obj.is_shared):
            continue  # a thread's own array, or shared memory: not idx's device memory
        return False
    for facts in plan.program.functions:
        if any(isinstance(n, X.Asm) for n in X.walk(facts.function.funcdef)):
            return False
    return True


__all__ = ["plan_gathers"]
