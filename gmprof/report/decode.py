"""Decode a launch's counters into a Report: per array, per site, every count labelled.

Stage: report, after the runtime has read the counters back. Takes the plan, the launch's
counter layout (runtime/counters.SlotLayout per slot), the raw counters (runtime/counters.
read_back: the block area's words, device arrays' shadow counters, out-of-range counts, the
trace), the static sites' counts at this launch, the mode and the RunInfo; returns the Report
and, in trace mode, the decoded trace records (site, object, size, address, block, thread).

    area words   [exited, clock, executions of site 0..n-1, shared objects' counters..., LR]
    shadow array one counter per unit of a device object (unit = element size, >= 4 bytes)
    trace        4 x u64 per access: site << 32 | size << 16 | object, address, block, thread

Counts come in four kinds (report/model.py): exact, thresholded, sampled (scaled by 1/rate),
approximate (NA). Static sites' counts are added to the measured ones; a site counts in a
kernel when it is in the kernel or in a device function the kernel calls.
"""
from __future__ import annotations

import numpy as np

from gmprof.passes.plan import HOOK, LR_START, NONE, STATIC
from gmprof.runtime import layout as LY
from gmprof.runtime.counters import CLOCK_CAPACITY, TRACE_CAPACITY

from .model import APPROXIMATE, EXACT, SAMPLED, THRESHOLDED, ArrayStats, Report, SiteStats


def site_in_kernel(site, kernel: str, ka) -> bool:
    """Whether a site runs in a kernel: in its body or in a device function it calls."""
    return site.function.name == kernel or any(
        callee.function is site.function for _, callee in ka.calls)


def count_label(mode) -> str:
    if mode.sampling is not None:
        return SAMPLED
    if mode.na:
        return APPROXIMATE
    if mode.threshold is not None:
        return THRESHOLDED
    return EXACT


def _how(sp, mode) -> str:
    if sp.strategy == STATIC:
        return "static"
    if sp.strategy == NONE:
        return "not counted"
    if mode.sampling is not None:
        return "sampled"
    if mode.threshold is not None:
        return "thresholded"
    if mode.na:
        return "approximate"
    return "measured"


def decode(plan, kernel: str, ka, slots: dict, counters: dict, static: dict, demoted,
           info, mode, warnings=()):
    """(Report, trace records or None). static: SiteClass -> StaticCount; demoted: the ids of
    static sites counted on the device at this launch."""
    report = Report(info, warnings=list(warnings))
    size = LY.counter_dtype(mode.counter_bits).itemsize
    area_bytes = counters["area_bytes"]
    obj_base = (LY.AREA_HEADER + len(plan.sites)) * 4
    scale = 1.0 / mode.sampling if mode.sampling is not None else None
    label = count_label(mode)
    per_slot: dict = {}
    for key, ls in slots.items():
        if ls.kind == LY.KIND_DEVICE:
            counts = counters[key]
        else:
            raw = area_bytes[obj_base + ls.area_offset * size:
                             obj_base + (ls.area_offset + ls.n_counters) * size]
            counts = raw.view(LY.counter_dtype(mode.counter_bits)).astype(np.int64)
        # read_back's arrays and the astype above are fresh copies, ours to add into
        per_slot[ls.slot] = [ls, counts, counters[("oor",) + key], 0]
    site_exec = {}
    area = counters["area"]
    for sp in plan.sites.values():
        if sp.strategy in (HOOK, LR_START):
            site_exec[sp.site] = int(area[LY.AREA_HEADER + sp.site.id])
    trace = None
    if mode.trace:
        trace = decode_trace(plan, counters["trace"], per_slot, site_exec)
    # static sites: their formulas' counts
    static_exec: dict = {}
    for sc, count in static.items():
        target, _ = ka.targets.get(sc, (None, None))
        slot = plan.slot_of(target or sc.site.object)
        if slot is None or slot not in per_slot:
            continue
        entry = per_slot[slot]
        n = min(len(entry[1]), len(count.counts))
        entry[1][:n] += count.counts[:n]
        entry[2] += count.out_of_range
        entry[3] += count.executions
        static_exec[sc.site] = static_exec.get(sc.site, 0) + count.executions
    site_exec.update(static_exec)
    _arrays(report, plan, per_slot, site_exec, area, info, mode, label, scale)
    for sp in plan.site_list:
        site = sp.site
        if not site_in_kernel(site, kernel, ka):
            continue
        how = _how(sp, mode)
        n = site_exec.get(site, 0)
        if scale is not None and how == "sampled":
            n = int(round(n * scale))
        classes = sorted({c for sc in sp.classes for c in sc.classes})
        report.sites.append(SiteStats(site.id, str(site.location), site.text,
                                      site.function.name, site.object_name, site.kind, n,
                                      how, sp.reason, classes))
    _notes(report, counters, mode, demoted, info)
    return report, trace


def _arrays(report, plan, per_slot, site_exec, area, info, mode, label, scale) -> None:
    reads: dict = {}
    writes: dict = {}
    for sp in plan.sites.values():
        if sp.slot is None or sp.site not in site_exec:
            continue
        n = site_exec[sp.site]
        if sp.site.kind in ("read", "read-write"):
            reads[sp.slot] = reads.get(sp.slot, 0) + n
        if sp.site.kind in ("write", "read-write"):
            writes[sp.slot] = writes.get(sp.slot, 0) + n
    for slot, (ls, counts, oor, static_execs) in per_slot.items():
        obj = slot.object
        if scale is not None:
            counts = np.rint(counts * scale).astype(np.int64)
        arr = ArrayStats(
            name=slot.name, space=obj.space, elem_type=obj.elem_type, shape=ls.shape,
            elem_size=ls.elem_size, unit=ls.unit, counts=counts,
            reads=int(reads.get(slot, 0) * (scale or 1)),
            writes=int(writes.get(slot, 0) * (scale or 1)), out_of_range=oor,
            label=label, threshold=mode.threshold,
            sampling=mode.sampling, declared_at=str(obj.location),
            where=("shared memory (SM)" if info.counters_in == "shared memory"
                   else "device memory") if ls.kind == LY.KIND_SHARED else "device memory")
        total = max(int(counts.sum()), 1)
        arr.static_share = min(1.0, static_execs / total) if static_execs else 0.0
        if mode.enhanced and ls.lr_offset:
            stats = area[ls.lr_offset:ls.lr_offset + LY.LR_STRIDE]
            arr.live_ranges = {"ranges": int(stats[0]), "accesses": int(stats[1]),
                               "histogram": [int(x) for x in stats[2:]]}
        report.arrays.append(arr)


def _notes(report, counters, mode, demoted, info) -> None:
    if counters.get("unknown_oor"):
        report.notes.append(f"{counters['unknown_oor']} accesses went to addresses outside "
                            "every known object")
    if mode.trace and counters["trace_total"] > TRACE_CAPACITY:
        report.notes.append(f"trace overflow: {counters['trace_total'] - TRACE_CAPACITY} of "
                            f"{counters['trace_total']} accesses were not recorded")
    if mode.enhanced:
        report.clock_records = min(counters["clock_total"], CLOCK_CAPACITY)
        report.clock_overflow = max(0, counters["clock_total"] - CLOCK_CAPACITY)
        if report.clock_overflow:
            report.notes.append(f"live-range clock log overflow: {report.clock_overflow} "
                                "records dropped")
    if demoted:
        report.notes.append(f"{len(demoted)} static site(s) could not be counted "
                            "from their formula at this launch and were counted on the device")
    if info.outputs_identical is False:
        report.notes.append("the instrumented kernel's outputs differ from the native "
                            "kernel's (a gmprof bug, or a kernel with a data race)")


def decode_trace(plan, rec, per_slot, site_exec):
    """Trace records -> counts per unit of each slot (replacing per_slot's), executions per
    hooked site (into site_exec); returns the records as columns (site, object, size,
    address, block, thread), or None when there are none."""
    if rec.size == 0:
        return None
    sites = (rec[:, 0] >> 32).astype(np.int64)
    objs = (rec[:, 0] & 0xFFFF).astype(np.int64)
    objs[objs == 0xFFFF] = -1
    sizes = ((rec[:, 0] >> 16) & 0xFFFF).astype(np.int64)
    addrs = rec[:, 1].astype(np.uint64)
    for sp in plan.sites.values():
        if sp.strategy in (HOOK, LR_START):
            site_exec[sp.site] = int((sites == sp.site.id).sum())
    for slot, entry in per_slot.items():
        ls = entry[0]
        if ls.kind == LY.KIND_DEVICE:
            mask = (addrs >= ls.base) & (addrs < ls.base + ls.bytes) if ls.base else \
                np.zeros(len(addrs), bool)
            offsets = (addrs[mask] - np.uint64(ls.base)).astype(np.int64)
            entry[1], _ = LY.count_units(offsets, sizes[mask], ls.n_counters, ls.unit)
        else:
            # the hooks record shared accesses as byte offsets within the array
            mask = objs == slot.index
            offsets = addrs[mask].astype(np.int64)
            entry[1], _ = LY.count_units(offsets, sizes[mask], ls.n_counters, 4)
    return (sites, objs, sizes, addrs, rec[:, 2], rec[:, 3])


__all__ = ["decode", "decode_trace", "site_in_kernel", "count_label"]
