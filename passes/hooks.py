"""The counter kinds: how one site is counted, each kind one small value.

A SitePlan (plan.py) holds one Hook. Each kind says, in one place:
  plan data   its fields (a range walked, a spread, a gather's pseudo-slot and index, ...)
  strategy    what the sidecar and the report call it: static, hook, lr_start or none
  template    the device template it calls (runtime_cu/gmprof.cuh `::gmprof::NAME`)
  call        the call it emits (InstrumentSource, rewrite.py, puts it at the site, before
              the statement, or at the loop's entry)
  loop        the loop it is counted once per entry of (None: at every execution)
  counters    the counters it needs (the site's execution count in the block's area, and its
              object's counters; `difference_array`: a device slot's difference array;
              `pseudo`: a gather's pseudo-slot)
  decoded     how the host reads them (gmprof/runtime/decode.py)

    kind            template          counted
    Static          (none)            at launch, from its formula (runtime/static_counts.py)
    NotCounted      (none)            not profiled (a local array, --profile, unreachable)
    Dm              dm                per access, device memory (or found from the address)
    Sm              sm                per access, shared memory (4-byte words)
    LrStart         lr_start          a shared live range's start (--enhanced)
    DmRange         dm_range          a device walk, once per loop entry (ranges.py)
    DmRangeUniform  dm_range_uniform  a tid-invariant walk through an unresolved pointer,
                                      shared out over the lanes at its address
    SmRangeBlock    sm_range_block    a BLOCK shared walk, shared out over the block
    SmSpreadBlock   sm_spread_block   a BLOCK shared address, shared out over the block
                                      (spread.py)
    DmGather        dm_gather/dm_walk x[idx[j]], from its index's walk (gathers.py)
    DmTwin          dm_twin           a range whose walk is a gather's index walk

Where a kind with a loop is counted (at the loop's entry, or in its first iteration) is the
rewriter's choice (entry.py, Plan.entry), the same for every kind; so is the live-range clock
of an enhanced-mode device write (SitePlan.lr_end_of), which wraps whatever call the kind makes.

A new kind is one class here (its plan data, its call, its facts), the template it calls in
gmprof.cuh, where the planner chooses it (plan.py or its own pass), and its tests;
tests/passes/test_hooks.py checks that every kind's template exists in gmprof.cuh.
"""
from __future__ import annotations

import re
from typing import NamedTuple

from gmprof.frontend import cxx_ast as X


# the strategies (SitePlan.strategy: the sidecar's and the report's word for a kind)
STATIC = "static"
HOOK = "hook"
LR_START = "lr_start"
NONE = "none"


class GatherOf(NamedTuple):
    """What a gather's pseudo-slot (Slot.gather) stands for: the gathered array's slot and
    the index array's (over whose memory the pseudo-slot's counters lie)."""

    gathered: object
    index: object


class Hook:
    """A counter kind (the base: the facts most kinds share)."""

    strategy = HOOK
    template: str | None = None
    counters = "the site's execution count; its object's counters"
    decoded = "the object's counters are its counts per element (runtime/decode.py)"
    difference_array = False  # a device slot it counts into carries a difference array
    range = None  # ranges.Range: the walk it counts
    pseudo = None  # plan.Slot: a gather's pseudo-slot it counts through

    @property
    def loop(self):
        """The loop it is counted once per entry of (None: at every execution)."""
        return self.range.loop if self.range is not None else None

    def counter_slots(self, sp) -> tuple | None:
        """The slots whose counters it updates (widen.py bounds them); None: another site's
        hook counts for it."""
        return (sp.slot,) if sp.slot is not None else ()

    def call(self, sp, rw) -> tuple[str, str] | None:
        """(head, tail) of the call: `head` + the site's address + `tail`; None: no code.
        rw: the InstrumentSource (its loops' trip counts, samplers, shared bases)."""
        return None


class Static(Hook):
    strategy = STATIC
    counters = "none: no code in the kernel"
    decoded = "its formula, evaluated at launch (runtime/static_counts.py), added to the counts"

    def counter_slots(self, sp):
        return ()


class NotCounted(Hook):
    strategy = NONE
    counters = "none"
    decoded = "not in the counts (the report says why: SitePlan.reason)"

    def counter_slots(self, sp):
        return ()


class Dm(Hook):
    template = "dm"

    def call(self, sp, rw):
        site, slot = sp.site, sp.slot
        if slot is None and any(s.kind == "shared" for s in rw.plan.slots):
            # an unresolved pointer may point into a shared array: the hook finds it by
            # address among the registered bases
            rw.needs_shared_bases = True
        return (f"::gmprof::dm<{site.id}, {_obj(sp)}, ::gmprof::{sp.mode}{_no_stats(sp, rw)}>(",
                f", {rw.inc(sp)}, {rw.sampler(site)})")


class Sm(Hook):
    template = "sm"
    counters = "the site's execution count; its shared object's word counters in the area"

    def call(self, sp, rw):
        site = sp.site
        return (f"::gmprof::sm<{site.id}, {_obj(sp)}, ::gmprof::{sp.mode}{_no_stats(sp, rw)}>(",
                f", (const void *)({rw.shared_base(site, sp.slot)}), {rw.inc(sp)}, "
                f"{rw.sampler(site)})")


class LrStart(Hook):
    strategy = LR_START
    template = "lr_start"
    counters = "its shared object's word counters (reset) and live-range statistics"
    decoded = "the live-range statistics after the object's counters (Object.lr_offset)"

    def call(self, sp, rw):
        return (f"::gmprof::lr_start<{sp.site.id}, {_obj(sp)}>(",
                f", (const void *)({rw.shared_base(sp.site, sp.slot)}))")


class DmRange(Hook):
    """A device access walking its loop by a stride known at launch (ranges.py): +W at the
    walk's first element, -W after its last, in the object's difference array."""

    template = "dm_range"
    difference_array = True
    counters = "the site's execution count; its object's counters and difference array"
    decoded = "counters + the prefix sum of the difference array (runtime/counters.py)"

    def __init__(self, walk):
        self.range = walk  # ranges.Range

    def call(self, sp, rw):
        return (f"::gmprof::{self.template}<{sp.site.id}, {_obj(sp)}, ::gmprof::{sp.mode}>(",
                f", {rw.first_trips(self.range.loop)}, (long long)({self.range.stride}))")


class DmRangeUniform(Hook):
    """A tid-invariant walk through a pointer gmprof could not follow to one array (a device
    function handed one of several shared arrays): in its loop's first iteration the lanes at
    the same address and trip count share the walk out, each element found by its address
    (gmprof.cuh dm_range_uniform), not one same-word atomic per warp at every iteration."""

    template = "dm_range_uniform"

    def __init__(self, walk):
        self.range = walk  # ranges.Range

    def call(self, sp, rw):
        if any(s.kind == "shared" for s in rw.plan.slots):
            rw.needs_shared_bases = True  # found by address among the registered bases
        return (f"::gmprof::{self.template}<{sp.site.id}>(",
                f", {rw.first_trips(self.range.loop)}, (long long)({self.range.stride}))")


class SmRangeBlock(Hook):
    """A BLOCK shared access walking a range: the block shares the walk out (element k by
    thread k mod blockDim) once per loop entry."""

    template = "sm_range_block"
    counters = "the site's execution count; its shared object's word counters in the area"

    def __init__(self, walk):
        self.range = walk  # ranges.Range

    def call(self, sp, rw):
        site = sp.site
        # the stride counts the array's elements; a member (`sh[k].w`, counted at its own
        # words) steps by its element's size, not its own
        elem = f", (long long)sizeof({X.span(site.node).text})" \
            if site.member is not None else ""
        return (f"::gmprof::sm_range_block<{site.id}, {_obj(sp)}>(",
                f", (const void *)({rw.shared_base(site, sp.slot)}), "
                f"{rw.first_trips(self.range.loop)}, (long long)({self.range.stride}){elem})")


class SmSpreadBlock(Hook):
    """A BLOCK shared site whose address the block computes again for every iteration,
    sharing them out in the loop's entry (spread.py)."""

    template = "sm_spread_block"
    counters = "the site's execution count; its shared object's word counters in the area"

    def __init__(self, spread):
        self.spread = spread  # spread.Spread

    @property
    def loop(self):
        return self.spread.loop

    def call(self, sp, rw):
        site, sd = sp.site, self.spread
        it = sd.iterator
        # the lambda's local of the iterator's name stands for the iterator at iteration
        # first + k * step
        return (f"::gmprof::sm_spread_block<{site.id}, {_obj(sp)}>(",
                f", (const void *)({rw.shared_base(site, sp.slot)}), "
                f"{rw.first_trips(sd.loop)}, (long long)({it}), "
                f"{sd.step}, [&](long long __gmprof_i) {{ decltype({it}) {it} = "
                f"(decltype({it}))(__gmprof_i); return &({sd.address}); }})")


class DmGather(Hook):
    """x[idx[j]] whose index is a range over an array nothing writes (gathers.py): counted
    from its index's walk in a pseudo-slot; the host adds bincount(idx, weights=walk)."""

    template = "dm_gather"  # dm_walk in a plan for one launch (no per-access fallback)
    counters = "the site's execution count; the pseudo-slot's counters and difference array"
    decoded = ("bincount(idx, weights=walk) added to the gathered array's counts "
               "(runtime/decode.py); per access where the index memory is aliased")

    def __init__(self, pseudo, index):
        self.pseudo = pseudo  # plan.Slot whose .gather is GatherOf(x's slot, idx's slot)
        self.index = index  # the index's SitePlan (a range)

    @property
    def loop(self):
        return self.index.hook.range.loop

    def counter_slots(self, sp):
        return tuple(s for s in (sp.slot, self.pseudo) if s is not None)

    def call(self, sp, rw):
        hook = "dm_walk" if rw.plan.for_launch else "dm_gather"
        rng = self.index.hook.range
        return (f"::gmprof::{hook}<{sp.site.id}, {_obj(sp)}, {self.pseudo.index}, "
                f"::gmprof::{sp.mode}>(",
                f", &({X.span(self.index.site.node).text}), {rw.first_trips(rng.loop)}, "
                f"(long long)({rng.stride}))")


class DmTwin(DmRange):
    """A range whose elements are a gather's index walk's (gathers.py): where its array is
    alike to the index array the walk counts it (no code in a plan for one launch; dm_twin
    asks the launch description elsewhere), else it counts itself as a range."""

    template = "dm_twin"
    decoded = ("the gather's walk, added to its object's counts where alike; its executions "
               "are the gather's (runtime/decode.py)")

    def __init__(self, walk, pseudo, gather):
        super().__init__(walk)
        self.pseudo = pseudo  # the gather's pseudo-slot
        self.gather = gather  # the gather's SitePlan

    def counter_slots(self, sp):
        return None  # counted by the gather's walk (at a launch where its array is alike)

    def call(self, sp, rw):
        if rw.plan.for_launch:
            return None  # the gather's walk counts it: alike at this launch
        return super().call(sp, rw)


def _at_entry(sp, rw) -> bool:
    """Whether a per-access kind's call is made once before the loop it is weighted by (the
    rewriter's choice: Plan.entry), where it sees no warp's request."""
    return len(sp.weight_loops) == 1 and sp.weight_loops[0] in rw.plan.entry


def _no_stats(sp, rw) -> str:
    """The template argument that keeps dm/sm from measuring at a loop's entry (warp_call
    measures at the access instead)."""
    return ", false" if rw.plan.mode.warps and _at_entry(sp, rw) else ""


def warp_call(sp, rw) -> tuple[str, str] | None:
    """--access-stats: (head, tail) of the per-access call that measures the warp's request
    of a site whose own kind does not see each access (counted once per loop entry, or
    weighted and counted before the loop): the counts keep their kind, the statistics are
    measured (gmprof.cuh warp_dm / warp_sm); None where the kind's own call measures them
    (dm, sm at the access, a weighted one in every iteration)."""
    if not rw.plan.mode.warps or (sp.hook.loop is None and not _at_entry(sp, rw)):
        return None
    if isinstance(sp.hook, (DmRange, SmRangeBlock, SmSpreadBlock, DmGather)):
        return None  # costed once per loop entry (walk_call)
    site = sp.site
    if sp.slot is not None and sp.slot.kind == "shared":
        return (f"::gmprof::warp_sm<{site.id}>(",
                f", (const void *)({rw.shared_base(site, sp.slot)}))")
    return f"::gmprof::warp_dm<{site.id}, {_obj(sp)}>(", ")"


def walk_call(sp, rw) -> tuple[str, str] | None:
    """--access-stats of a walk counted once per loop entry (a device range or twin: each
    lane's address steps by the range's stride; a gather: each lane's address from the index
    it walks; a BLOCK shared range or spread: the whole warp at one address): (head, tail) of the call that costs the whole loop's requests there,
    beside the count, with its arguments (gmprof.cuh warp_walk_dm, warp_range_sm,
    warp_spread_sm) instead of a measure at each access; None for other sites."""
    if not rw.plan.mode.warps:
        return None
    hook, site = sp.hook, sp.site
    if isinstance(hook, DmRange):  # (a twin too: its count may have no code at this launch)
        return (f"::gmprof::warp_walk_dm<{site.id}, {_obj(sp)}, ::gmprof::{sp.mode}>(",
                f", {rw.first_trips(hook.range.loop)}, (long long)({hook.range.stride}))")
    if isinstance(hook, DmGather):  # its addresses from the index, read at the entry
        rng = hook.index.hook.range
        return (f"::gmprof::warp_walk_gather<{site.id}, {_obj(sp)}, {hook.pseudo.index}>(",
                f", &({X.span(hook.index.site.node).text}), {rw.first_trips(rng.loop)}, "
                f"(long long)({rng.stride}))")
    if isinstance(hook, (SmRangeBlock, SmSpreadBlock)):
        head, tail = hook.call(sp, rw)
        return head.replace(f"::gmprof::{hook.template}<", "::gmprof::warp_range_sm<"
                            if isinstance(hook, SmRangeBlock) else
                            "::gmprof::warp_spread_sm<"), tail
    return None


def per_access(slot) -> Hook:
    """The per-access hook for a site counting into slot (None: found at run time)."""
    return Sm() if slot is not None and slot.kind == "shared" else Dm()


KINDS = (Static, NotCounted, Dm, Sm, LrStart, DmRange, DmRangeUniform, SmRangeBlock,
         SmSpreadBlock, DmGather, DmTwin)


def _obj(sp) -> int:
    return sp.slot.index if sp.slot is not None else -1


_EACH_DM = re.compile(r"::gmprof::dm<(\d+), (\d+), ::gmprof::EACH>\((.*), ::gmprof::One\(\), nullptr\);")


def paired(calls: list) -> list:
    """A statement's hooks with each two plain per-thread counts of one known device element
    (`a[i] = a[i] + x`: the read's and the write's, same object, same address text, both
    before the statement so the same address) made one dm_pair call (gmprof.cuh): one atomic
    on the element's counter instead of two."""
    out, first = list(calls), {}
    for k, call in enumerate(calls):
        m = _EACH_DM.fullmatch(call)
        if m is None:
            continue
        key = (m.group(2), m.group(3))
        j = first.pop(key, None)
        if j is None:
            first[key] = k
            continue
        s1 = _EACH_DM.fullmatch(calls[j]).group(1)
        out[j] = f"::gmprof::dm_pair<{s1}, {m.group(1)}, {m.group(2)}>({m.group(3)});"
        out[k] = None
    return [c for c in out if c is not None]
