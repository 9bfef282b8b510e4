"""The labels a count carries (the project's first rule: a count is right or labelled), and
how each is decided, in one place.

Stage: report, used by the decoder (decode.py). The rule (issue 11): a count is labelled exact
only when it is proven or counted in full:
  - a site's counts are exact when its strategy is STATIC (the planner chose a formula only for
    sites whose every context was proven static, with a resolved object: passes/plan.py), or
    when it is a hook run in an exact mode (atomic, no sampling, no threshold; trace logs
    every access);
  - an array's counts are exact when every site of the kernel that reaches it is, and no code
    gmprof cannot see into may access it (a call into a function it could not parse, or one
    handed a pointer to the array: uncounted_slots); otherwise its label is the weakest of its
    sites' (sampled, approximate, thresholded), or approximate, with a note saying why;
  - a pointer gmprof cannot resolve is never left uncounted: its hook finds the object from the
    address at run time (gmprof.cuh dm<..., -1>), shared arrays included;
  - a merged report keeps the weaker label of its launches (model.Report.merge).
tests/runtime/test_labels.py asserts the rule on every site and array of the test kernels.
"""
from __future__ import annotations

from gmprof.passes.plan import HOOK, LR_START, NONE, STATIC

EXACT = "exact"
THRESHOLDED = "thresholded"  # saturated at the threshold: printed >=THR
SAMPLED = "sampled"  # counted on sampled threads, scaled by 1/rate
APPROXIMATE = "approximate"  # non-atomic updates, or code gmprof cannot see may access it


def site_in_kernel(site, kernel: str, ka) -> bool:
    """Whether a site runs in a kernel: in its body or in a device function it calls."""
    return site.function.name == kernel or any(
        callee.function is site.function for _, callee in ka.calls)


def count_label(mode, measured: bool = True) -> str:
    """The label of counts that came from `measured` sites (hooks run at run time) or only from
    static formulas. A formula is proven, so its counts are exact in every mode; a hook's are
    exact only when nothing was left out or lost: no sampling, no threshold, atomic updates
    (trace mode logs every access)."""
    if not measured or mode.trace:
        return EXACT
    if mode.sampling is not None:
        return SAMPLED
    if mode.na:
        return APPROXIMATE
    if mode.threshold is not None:
        return THRESHOLDED
    return EXACT


def site_how(sp, mode) -> str:
    """How a site was counted: static (a proven formula), not counted (local memory, or not
    profiled in this mode), measured (a hook in an exact mode), or its hook's label."""
    if sp.strategy == STATIC:
        return "static"
    if sp.strategy == NONE:
        return "not counted"
    label = count_label(mode, True)
    return "measured" if label == EXACT else label


def measured_slots(plan, kernel: str, ka) -> set:
    """The slots that some counted site of this kernel (a hook, not a formula) updates. A site
    whose object is found at run time (no slot) may update any slot, shared or device."""
    out = set()
    for sp in plan.sites.values():
        if sp.strategy not in (HOOK, LR_START) or not site_in_kernel(sp.site, kernel, ka):
            continue
        if sp.slot is not None:
            out.add(sp.slot)
        else:
            out.update(plan.slots)
    return out


def uncounted_slots(plan, ka) -> dict:
    """{slot: why} for the slots that code gmprof cannot see into may access (a call into a
    function it could not parse, or one handed a pointer to the array): their counts miss
    those accesses, so they are not exact."""
    out: dict = {}
    for call, name, objects, *said in getattr(ka, "opaque_calls", ()):
        why = said[0] if said else f"{name}() (not read by gmprof) may access it"
        slots = plan.slots if objects is None else [plan.slot_of(o) for o in objects]
        for slot in slots:
            if slot is None:  # an unbound pointer parameter: any device array
                for s in plan.slots:
                    if s.kind == "device":
                        out.setdefault(s, why)
            else:
                out.setdefault(slot, why)
    return out


def slot_label(slot, mode, measured: set, uncounted: dict) -> tuple[str, str]:
    """(label, note) of an array's counts: exact only with proof (the module docstring)."""
    # an array only static formulas reach is exact in every mode (and not capped)
    label = count_label(mode, slot in measured)
    if slot in uncounted and label in (EXACT, THRESHOLDED):
        # code gmprof cannot see may access it: its counts are lower bounds
        return APPROXIMATE, f"{slot.name}: counts are lower bounds, {uncounted[slot]}"
    return label, ""


__all__ = ["EXACT", "THRESHOLDED", "SAMPLED", "APPROXIMATE", "count_label", "site_how",
           "site_in_kernel", "measured_slots", "uncounted_slots", "slot_label"]
