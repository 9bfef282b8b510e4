"""PlanCounters: decide, for every access site, how it is counted; lay out the counters.

A planning pass. Takes the analysed program and a Mode (gmprof/mode.py: the paper's
optimisations as flags); returns a Plan:
  objects   every profiled memory object with a slot in the launch's object table (device
            pointer parameters of each kernel, file-scope variables, shared arrays, and one slot
            for dynamic shared memory, which all `extern __shared__` declarations alias)
  sites     per site: `static` (no code: its counts come from a formula at launch), `hook`
            (a counter update, with a MODE: EACH thread, one lane per WARP or per UNIFORM
            group, or one thread per BLOCK; optionally weighted by the trip counts of loops it
            is invariant in and counted in their first iteration only), `lr_start` (enhanced
            mode), or `none` (local arrays); and its counter kind (SitePlan.hook, hooks.py)
  loops     the loops whose first iteration and trip count the hooks need
  entry     of those, the loops whose counts are made before the loop starts (entry.py), so
            that the loop's body stays as written

    basic  every site: hook EACH                      (the paper's GMProf-basic)
    SA     static sites: none; tid-invariant: BLOCK or UNIFORM; warp-uniform: WARP;
           loop-invariant: weighted by the trip count, first iteration only
    default = SA + SM, atomic, exact
"""
from __future__ import annotations

from dataclasses import dataclass, field

from gmprof.errors import GmprofError
from gmprof.mode import Mode

from . import tallies
from .entry import find_loop_entries
from .gathers import plan_gathers
from .hooks import HOOK, LR_START, NONE, STATIC  # noqa: F401 (the strategies, named here too)
from .hooks import (DmRange, DmRangeUniform, GatherOf, LrStart, NotCounted, SmRangeBlock,
                    SmSpreadBlock, Static, per_access)
from .ranges import find_range
from .spread import find_spread
from .symbols import CONSTANT, DEVICE, GLOBAL_VAR, LOCAL_ARRAY, SHARED, SHARED_DYNAMIC


@dataclass(eq=False)
class Slot:
    """An entry of the launch's object table."""

    index: int
    name: str  # display name
    kind: str  # 'device' or 'shared'
    object: object  # the representative MemoryObject
    objects: list = field(default_factory=list)  # every declaration it stands for
    kernel: str | None = None  # the kernel whose parameter it is (None: any kernel)
    dynamic: bool = False  # dynamic shared memory
    live_ranges: bool = False  # enhanced mode keeps live-range statistics for it
    ranges: bool = False  # a range site counts into it: its counters carry a difference array
    gather: GatherOf | None = None  # a gather's pseudo-slot (gathers.py): what it stands for


@dataclass(eq=False)
class SitePlan:
    site: object
    hook: object  # hooks.Hook: the counter kind, with its data
    mode: str = "EACH"  # EACH, WARP, UNIFORM, BLOCK
    slot: Slot | None = None
    weight_loops: list = field(default_factory=list)  # Loops counted once with their trips
    reason: str = ""
    classes: list = field(default_factory=list)  # SiteClass per context
    lr_end_of: Slot | None = None  # enhanced: this device write ends a live range of that slot

    @property
    def strategy(self) -> str:
        """static, hook, lr_start or none (the hook's)."""
        return self.hook.strategy


@dataclass
class Plan:
    mode: Mode
    program: object
    slots: list = field(default_factory=list)
    sites: dict = field(default_factory=dict)  # AccessSite -> SitePlan
    loops: dict = field(default_factory=dict)  # Loop -> id (loops needing first/trip state)
    entry: dict = field(default_factory=dict)  # Loop -> entry.LoopEntry (counted before it)
    kernels: list = field(default_factory=list)  # kernel names
    # a plan for one launch's arrays (the Python runtime plans again before compiling, with
    # the sites the launch's arrays rule out demoted): gathers.py's twins have no hook at all,
    # and a gather none for aliased index memory; else (whole programs, `gmprof instrument`)
    # their hooks ask the launch description
    for_launch: bool = False
    # a launch's plan whose grid measures a sample of its blocks with --access-stats (s > 0,
    # block_sample.py): its kernels may get two bodies (dual.py)
    samples_blocks: bool = False

    def slot_of(self, obj) -> Slot | None:
        for slot in self.slots:
            if obj in slot.objects:
                return slot
        return None

    def kernel_slots(self, kernel: str) -> list[Slot]:
        return [s for s in self.slots if s.kernel in (None, kernel)]

    def counts_on_device(self, kernel: str) -> bool:
        """Whether a launch of `kernel` updates any counter: a hook in the kernel or in a
        device function it calls. When none does (every site static or not profiled), the
        kernel gets no prologue or epilogue and no counter area: it runs as the native
        kernel does, and its counts all come from formulas at launch. Enhanced mode keeps
        them (its live ranges close in the epilogue)."""
        if self.mode.enhanced or self.mode.trace:
            return True
        ka = self.program.kernels.get(kernel) if self.program.kernels else None
        if ka is None:
            return True
        reachable = {ka.kernel.name} | {callee.name for _, callee in ka.calls}
        return any(sp.strategy in (HOOK, LR_START) and sp.site.function is not None
                   and sp.site.function.name in reachable for sp in self.sites.values())

    @property
    def site_list(self) -> list:
        return sorted(self.sites.values(), key=lambda p: p.site.id)


class PlanCounters:
    def __init__(self, program, mode: Mode, demoted=frozenset(), for_launch=False,
                 samples_blocks=False):
        self.program = program
        self.mode = mode
        # site ids counted by their own hook at this launch: static sites whose formula
        # failed, twins whose array is not alike to the index array
        self.demoted = demoted
        self.plan = Plan(mode, program, for_launch=for_launch,
                         samples_blocks=for_launch and samples_blocks)

    def run(self) -> Plan:
        self._slots()
        kernels = self.program.kernels
        self.plan.kernels = list(kernels)
        by_site: dict = {}
        for ka in kernels.values():
            for sc in ka.classes:
                by_site.setdefault(sc.site, []).append((ka, sc))
        for facts in self.program.functions:
            for site in facts.sites:
                self.plan.sites[site] = self._site(site, by_site.get(site, []))
        for sp in self.plan.sites.values():
            if sp.hook.difference_array and sp.slot is not None:
                sp.slot.ranges = True  # its counters carry a difference array after them
        if any(sp.hook.range is not None for sp in self.plan.sites.values()):
            plan_gathers(self.plan, Slot, self.demoted)
        if self.mode.loop_entry:
            self.plan.entry = find_loop_entries(self.program, self.plan)
        return self.plan

    # -- objects -------------------------------------------------------------------------
    def _slots(self) -> None:
        slots = self.plan.slots
        dynamic = None

        def add(name, kind, obj, kernel=None, dyn=False):
            slot = Slot(len(slots), name, kind, obj, [obj], kernel, dyn)
            slots.append(slot)
            return slot

        globals_seen: dict = {}
        for facts in self.program.functions:
            fn = facts.function
            for obj in facts.objects:
                if obj.space == DEVICE and fn.is_kernel:
                    add(obj.name, "device", obj, kernel=fn.name)
                elif obj.space in (GLOBAL_VAR, CONSTANT):
                    if obj.name in globals_seen:
                        globals_seen[obj.name].objects.append(obj)
                    else:
                        globals_seen[obj.name] = add(obj.name, "device", obj)
                elif obj.space == SHARED:
                    add(obj.name if obj.function is None else obj.name, "shared", obj)
                elif obj.space == SHARED_DYNAMIC:
                    if dynamic is None:
                        dynamic = add(obj.name, "shared", obj, dyn=True)
                    else:
                        dynamic.objects.append(obj)
                        if obj.name not in dynamic.name.split("/"):
                            dynamic.name += f"/{obj.name}"
        if len(slots) > 64:
            raise GmprofError(f"{len(slots)} memory objects in one translation unit: gmprof "
                              "supports 64 (GMPROF_MAX_OBJECTS)", kind="too-many-objects")
        if self.mode.enhanced:
            for facts in self.program.functions:
                lr = facts.liveranges
                for obj in (lr.arrays() if lr else []):
                    slot = self.plan.slot_of(obj)
                    if slot is not None:
                        slot.live_ranges = True

    # -- sites ---------------------------------------------------------------------------
    def _site(self, site, contexts) -> SitePlan:
        mode = self.mode
        obj = site.object
        if obj is not None and obj.space == LOCAL_ARRAY:
            return SitePlan(site, NotCounted(),
                            reason="a local array (registers or local memory)")
        classes = [sc for _, sc in contexts]
        targets = {ka.targets.get(sc, (None, None))[0] for ka, sc in contexts}
        if targets and all(t is not None and t.space == LOCAL_ARRAY for t in targets):
            return SitePlan(site, NotCounted(), classes=classes,
                            reason="a local array of the caller (registers or local memory)")
        slot, resolved = self._target_slot(site, contexts)
        # a pointer to one of several shared arrays (a device function called with each) is
        # shared memory's: --profile shm counts it (it went uncounted, as if device memory)
        is_shared = slot.kind == "shared" if slot is not None else (
            obj is not None and obj.is_shared) or (
            bool(targets) and all(t is not None and t.is_shared for t in targets))
        if (mode.profile == "shm" and not is_shared) or (mode.profile == "dm" and is_shared):
            return SitePlan(site, NotCounted(), slot=slot, classes=classes,
                            reason=f"not profiled (--profile {mode.profile})")
        if not contexts:
            return SitePlan(site, NotCounted(), slot=slot,
                            reason="not reachable from any kernel")
        # a pointer gmprof cannot follow (to one of several shared arrays, or unknown) is not
        # left uncounted: its hook finds the object from the address at run time
        plan = SitePlan(site, per_access(slot), "EACH", slot, classes=classes)
        if mode.enhanced and slot is not None and slot.live_ranges:
            lr = site.function and self.program.facts(site.function.name).liveranges
            starts = {x.site for xs in lr.starts.values() for x in xs} if lr else set()
            if site in starts:
                plan.hook = LrStart()
                plan.reason = "starts a live range (enhanced mode)"
                return plan
        if mode.enhanced:
            lr = self.program.facts(site.function.name).liveranges
            for shared, ends in (lr.ends.items() if lr else ()):
                if any(x.site is site for x in ends):
                    plan.lr_end_of = self.plan.slot_of(shared)
        if mode.trace or not mode.sa:
            plan.reason = "every access is counted (" + ("trace" if mode.trace else "basic") + ")"
            return plan
        keeps_live_ranges = mode.enhanced and slot is not None and slot.live_ranges
        if mode.static_counts and all(sc.static for sc in classes) and resolved and \
                not keeps_live_ranges and site.id not in self.demoted and \
                not tallies.hooks_statics(mode, slot):
            plan.hook = Static()
            plan.reason = "static: counted at launch from its formula"
            return plan
        # sampling: each thread draws for its own accesses (no thread counts for the block,
        # no first iteration for its loop's): every kept draw is one access, and a count's
        # interval the binomial's (report/interval.py); the paper (6.2) applies no invariant
        # to sampling either
        sampling = mode.sampling is not None
        if all(sc.tid_invariant and sc.block_convergent for sc in classes) and resolved \
                and not sampling:
            plan.mode = "BLOCK"
            plan.reason = "tid-invariant and executed by the whole block: one thread counts"
        elif all(sc.tid_invariant for sc in classes):
            # the hook groups lanes by address and increment at run time (gmprof.cuh leader),
            # so a pointer gmprof could not follow (a device function handed one of several
            # shared arrays) is counted once per group too, not by each of 32 lanes on one
            # word: eigenvalues' inner loop ran 20x slower on an H100 counting that way
            plan.mode = "UNIFORM"
            plan.reason = "tid-invariant: one lane per warp counts its active lanes" + (
                "" if resolved else " (its array found from the address)")
            if site.form == "scalar" and resolved:
                # one word for every lane: the converged lanes are the group (gmprof.cuh)
                plan.mode = "SCALAR"
                plan.reason = "a scalar variable: one lane per warp counts its active lanes"
        elif all(sc.warp_uniform for sc in classes) and resolved:
            plan.mode = "WARP"
            plan.reason = "warp-uniform: one lane per warp counts (when blockDim.x % 32 == 0)"
        else:
            reasons = [r for sc in classes for r in sc.dynamic_reasons]
            plan.reason = "measured: " + (reasons[0] if reasons else "dynamic")
        # in enhanced mode a live-ranged array's counts must be per occurrence: a weighted
        # count in the first iteration would be charged to that iteration's live range
        # (--sharing needs the hook at every access: no weighted first iteration; nor sampling,
        # whose every access is its own draw. With --access-stats a count made once per loop
        # entry keeps its kind, its requests costed beside it or at the access: hooks.walk_call,
        # hooks.warp_call)
        weights = [] if keeps_live_ranges or tallies.every_access(mode) or sampling else \
            self._weight_loops(site, classes)
        if not weights and self._ranges_apply(plan):
            self._range(plan, classes)
        if weights:
            plan.weight_loops = weights
            for loop in weights:
                self.plan.loops.setdefault(loop, len(self.plan.loops))
            plan.reason += "; counted once with the trip count of " + \
                ", ".join(loop.label for loop in weights)
        return plan

    def _ranges_apply(self, plan) -> bool:
        """Range counting (ranges.py) needs exact 32-bit atomic counters without a threshold
        (a difference array's entries go negative) and every access counted (no sampling)."""
        m = self.mode
        # a shared array's range is spread over the block (sm_range_block): only where one
        # thread would count for all of them (BLOCK), since then every thread runs the entry;
        # a tid-invariant walk whose array is found by address (slot None), over the lanes at
        # its address (dm_range_uniform)
        if plan.slot is None:
            kind_ok = plan.mode == "UNIFORM"
        else:
            kind_ok = plan.slot.kind == "device" or (plan.slot.kind == "shared" and
                                                     plan.mode == "BLOCK")
        return (kind_ok
                and plan.lr_end_of is None
                and m.ranges and not tallies.every_access(m) and not m.trace and not m.na
                and m.sampling is None and m.threshold is None and m.counter_bits >= 32
                and all(not sc.static or plan.site.id in self.demoted for sc in plan.classes))

    def _range(self, plan, classes) -> None:
        site = plan.site
        facts = self.program.facts(site.function.name)
        if facts is None:
            return
        found, _why = find_range(self.program, facts, site, classes)
        if found is not None and plan.slot is None:
            plan.hook = DmRangeUniform(found)
            self.plan.loops.setdefault(found.loop, len(self.plan.loops))
            plan.reason += "; counted once per entry of " + found.loop.label + \
                ", its walk shared out over the lanes at its address"
            return
        if found is None and plan.slot is not None and plan.slot.kind == "shared":
            spread, _why = find_spread(self.program, facts, site)
            if spread is not None:
                plan.hook = SmSpreadBlock(spread)
                self.plan.loops.setdefault(spread.loop, len(self.plan.loops))
                plan.reason += "; " + spread.reason
            return
        if found is None:
            return
        plan.hook = DmRange(found) if plan.slot.kind == "device" else SmRangeBlock(found)
        self.plan.loops.setdefault(found.loop, len(self.plan.loops))
        plan.reason += "; counted once per entry of " + found.loop.label + " as " + \
            "the range it walks (stride " + found.stride + ")"

    def _weight_loops(self, site, classes) -> list:
        """Loops the site is invariant in, in every context, whose trip count the device can
        compute at the first iteration (a counted loop: iterator, bound and step)."""
        if not classes:
            return []
        first = classes[0]
        out = []
        for fact in first.loops:
            loop = fact.loop
            if not all(any(f.loop is loop and f.invariant for f in sc.loops) for sc in classes):
                continue
            if loop.iterator is None or loop.bound is None or loop.compare is None:
                continue
            if loop.kind == "do":
                continue
            out.append(loop)
        return out

    def _target_slot(self, site, contexts):
        """(slot, resolved): the slot its counts go to, and whether that is certain at
        compile time (otherwise the hook finds the object from the address at run time)."""
        targets = set()
        for ka, sc in contexts:
            obj, _ = ka.targets.get(sc, (None, None))
            targets.add(obj)
        if site.object is not None and site.object.space in (SHARED, SHARED_DYNAMIC,
                                                              GLOBAL_VAR, CONSTANT):
            return self.plan.slot_of(site.object), True
        if len(targets) == 1:
            (obj,) = targets
            if obj is not None:
                return self.plan.slot_of(obj), True
        shared_targets = {o for o in targets if o is not None and o.is_shared}
        if shared_targets:
            return None, False
        return None, False


def plan_counters(program, mode: Mode, demoted=frozenset(), for_launch=False,
                  samples_blocks=False) -> Plan:
    return PlanCounters(program, mode, demoted, for_launch, samples_blocks).run()
