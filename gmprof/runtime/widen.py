"""Counters that cannot wrap silently: when a launch's 32-bit counters may have passed 2^32.

Stage: host runtime, after an instrumented run's counters are read back. Per-site execution
counts and out-of-range counts are 64-bit on the device at every width (gmprof.cuh
site_count_t), so they are exact at any launch size; the per-element and per-word counters are
32-bit by default (half the memory and read-back of 64-bit ones, and what the measured
overheads were taken with). Every update of a counter is made by a hooked site that adds the
same amount to its own execution count (gmprof.cuh who_counts: EACH adds inc to both, a leader
adds inc x lanes to both; ranges, spreads and walks add their elements' count to both), once
per counter unit its access covers. So the counts that reached one object's counters are at
most

    bound(object) = sum over the hooked sites that count into it of executions x units,

where units is the most counter units one access of the site can cover. No counter of the
object can hold more than its bound: where every bound of a launch is below 2^32, no counter
wrapped. Where one is not, the launch is run again with 64-bit counters (Profiler, session.py;
the report's mode says `64-bit`), and later launches of the same kernel and shape start wide.

    units  device object (one counter per `unit` bytes, unit >= 4): an access of at most 16
           bytes (the widest native load, a float4), or of one whole element when elements are
           wider, starting anywhere in its first unit: ceil(max(16, unit) / unit) + 1
           shared object (one counter per 4-byte word): max(16, element bytes) / 4 + 1
    a site whose object gmprof could not resolve counts into any object (the largest units)
"""
from __future__ import annotations

from gmprof.passes.plan import HOOK, LR_START

from . import layout as LY

LIMIT_32 = 2 ** 32
# What a test build may lower to make a small launch cross the limit (tests/runtime/
# test_wide_counters.py pairs it with counters that start near 2^32): the bound is compared
# with LIMIT_32 - origin, the headroom the counters really had.
counter_origin = 0


def units_per_access(ls) -> int:
    """The most counter units of slot layout ls that one access can cover."""
    if ls.kind == LY.KIND_DEVICE:
        unit = max(int(ls.unit), 1)
        return -(-max(16, unit) // unit) + 1
    return max(16, int(ls.elem_size)) // 4 + 1


def bounds(plan, slots: dict, site_counts) -> dict:
    """slot -> the most that any one of its counters can hold after the launch."""
    by_slot = {ls.slot: ls for ls in slots.values()}
    widest = max((units_per_access(ls) for ls in by_slot.values()), default=1)
    out = {slot: 0 for slot in by_slot}
    anywhere = 0
    for sp in plan.sites.values():
        # the slots its hook counts into (a gather: its index walk's pseudo-slot, or, with
        # aliased index memory, the gathered array itself); None: a twin, counted by its
        # gather's walk
        targets = sp.hook.counter_slots(sp) if sp.strategy in (HOOK, LR_START) else None
        if targets is None:
            continue
        n = int(site_counts[sp.site.id]) if sp.site.id < len(site_counts) else 0
        if not n:
            continue
        if not targets or any(s not in by_slot for s in targets):
            anywhere += n * widest
            continue
        for slot in targets:
            out[slot] += n * units_per_access(by_slot[slot])
    if anywhere:
        for slot in out:
            out[slot] += anywhere
    return out


def may_wrap(plan, slots: dict, counters: dict, mode) -> list:
    """The names of the arrays whose 32-bit counters may have wrapped at this launch (empty:
    none could). Thresholded and narrow counters saturate below 2^32 by design; trace mode
    has no counters."""
    if mode.trace or mode.counter_bits != 32 or mode.threshold is not None:
        return []
    if counters is None or "sites" not in counters:
        return []
    headroom = LIMIT_32 - counter_origin
    return sorted(slot.name for slot, b in bounds(plan, slots, counters["sites"]).items()
                  if b >= headroom)


__all__ = ["LIMIT_32", "bounds", "may_wrap", "units_per_access"]
