"""Decode a launch's counters into a Report: per array, per site, every count labelled.

Stage: host runtime, after the counters are read back: the decoder beside the layout it
undoes (layout.py, counters.py). Takes the plan, the launch's
counter layout (runtime/counters.SlotLayout per slot), the raw counters (runtime/counters.
read_back: the block area's words, device arrays' shadow counters, out-of-range counts, the
trace), the static sites' counts at this launch, the mode and the RunInfo; returns the Report
and, in trace mode, the decoded trace records (site, object, size, address, block, thread).

    area words   [exited, clock, executions of site 0..n-1 (u64 each), shared objects'
                  counters..., LR]  (counters['sites']: the executions, uint64)
    shadow array one counter per unit of a device object (unit = element size, >= 4 bytes)
    trace        4 x u64 per access: site << 32 | size << 16 | object, address, block, thread

Counts come in four kinds (report/model.py): exact, thresholded, sampled (scaled by 1/rate),
approximate (NA). Static sites' counts are added to the measured ones; a site counts in a
kernel when it is in the kernel or in a device function the kernel calls.
"""
from __future__ import annotations

import numpy as np

from gmprof.passes import tallies as T
from gmprof.passes.hooks import DmTwin
from gmprof.passes.plan import HOOK, LR_START
from gmprof.report import where
from gmprof.report.labels import (count_label, measured_slots, site_how, site_in_kernel,
                                  slot_label, uncounted_slots)
from gmprof.report.model import ArrayStats, Report, SiteStats

from . import layout as LY
from .layout import CLOCK_CAPACITY, TRACE_CAPACITY
from .sharing import sharing_evidence


def decode(plan, kernel: str, ka, slots: dict, counters: dict, static: dict, demoted,
           info, mode, warnings=(), static_sums: dict | None = None):
    """(Report, trace records or None). static: SiteClass -> StaticCount; demoted: the ids of
    static sites counted on the device at this launch. static_sums: a cache of the static
    counts summed per array, kept by the caller across launches (a solver's launches repeat
    the same few: each sum is made once, and put on the GPU once)."""
    report = Report(info, warnings=list(warnings))
    # only sampled counts are scaled by 1/rate: a static formula's counts are added after
    # (the rate the device drew at: Mode.sample_rate)
    scale = 1.0 / mode.sample_rate if mode.sampling is not None and not mode.trace else None
    per_slot: dict = {}
    for key, ls in slots.items():
        # read_back's arrays (device and shared counts alike) are fresh copies, ours to add
        # into: another copy of a 16M-element array per launch is seconds over 50 launches
        per_slot[ls.slot] = [ls, counters[key], counters[("oor",) + key], 0, None]
    twins = _twins(plan, slots)
    _fold_gathers(slots, counters, per_slot, twins)
    site_exec = {}
    area = counters["area"]
    sites = counters["sites"]
    for sp in plan.sites.values():
        if sp.strategy in (HOOK, LR_START):
            site_exec[sp.site] = int(sites[sp.site.id])
    for sp in (sp for group in twins.values() for sp in group):
        # a twin runs as often as its gather (the same loop entries and trips)
        site_exec[sp.site] = site_exec.get(sp.hook.gather.site, 0)
    trace = None
    evidence = {}
    if mode.trace:
        trace = decode_trace(plan, counters["trace"], per_slot, site_exec)
        if not counters["trace_total"] > TRACE_CAPACITY:  # a partial trace proves nothing
            evidence = sharing_evidence(plan, per_slot, trace,
                                        int(np.prod([int(x) for x in info.block])))
    # static sites: their formulas' counts
    static_exec: dict = {}
    parts: dict = {}  # slot -> its static sites' StaticCounts
    for sc, count in static.items():
        target, _ = ka.targets.get(sc, (None, None))
        slot = plan.slot_of(target or sc.site.object)
        if slot is None or slot not in per_slot:
            continue
        parts.setdefault(slot, []).append(count)
        static_exec[sc.site] = static_exec.get(sc.site, 0) + count.executions
    for slot, counts in parts.items():
        entry = per_slot[slot]
        entry[4] = static_sum(counts, len(entry[1]), static_sums)
        entry[2] += entry[4].out_of_range
        entry[3] += entry[4].executions
    site_exec.update(static_exec)
    _arrays(report, plan, kernel, ka, per_slot, site_exec, area, info, mode, scale,
            counters.get("tally"), counters.get("sample_sq"))
    for arr in report.arrays:
        arr.evidence = evidence.get(arr.name)
    # the per-site counter families' values (passes/tallies.py)
    values = {t: t.site_values(plan, counters, info) for t in T.active(mode) if t.per == "site"}
    for sp in plan.site_list:
        site = sp.site
        if not site_in_kernel(site, kernel, ka):
            continue
        how = site_how(sp, mode)
        n = site_exec.get(site, 0)
        if scale is not None and how == "sampled":
            n = int(round(n * scale))
        classes = sorted({c for sc in sp.classes for c in sc.classes})
        stats = SiteStats(site.id, str(site.location), site.text, site.function.name,
                          site.object_name, site.kind, n, how, sp.reason, classes)
        for t, by_site in values.items():
            t.put(stats, by_site.get(site))
        report.sites.append(stats)
    _notes(report, counters, mode, demoted, info)
    return report, trace


class StaticSum:
    """One array's static sites' counts at a launch, summed: on the host, and on the GPU once
    a launch's counts there asked for them."""

    def __init__(self, parts, n: int):
        self.parts = parts  # kept: the cache's key is their ids
        self.counts = np.zeros(n, np.int64)
        for count in parts:
            m = min(n, len(count.counts))
            self.counts[:m] += count.counts[:m]
        self.out_of_range = sum(int(c.out_of_range) for c in parts)
        self.executions = sum(int(c.executions) for c in parts)
        self._device = None

    def on(self, ref):
        """The sum where ref lives."""
        if not where.on_device(ref):
            return self.counts
        if self._device is None:
            self._device = where.like(self.counts, ref)
        return self._device


STATIC_SUMS_KEPT = 8  # a solver alternates a few launches; each sum is an array's size


def static_sum(parts, n: int, cache: dict | None) -> StaticSum:
    """The StaticSum of parts (StaticCounts) over n counters, from cache when the same parts
    (the same objects: StaticLaunchCounts keeps one per launch values) were summed before."""
    key = (tuple(id(p) for p in parts), n)
    got = cache.get(key) if cache is not None else None
    if got is None:
        got = StaticSum(list(parts), n)
        if cache is not None:
            while len(cache) >= STATIC_SUMS_KEPT:
                cache.pop(next(iter(cache)))
            cache[key] = got
    return got


def _fold_gathers(slots, counters, per_slot, twins) -> None:
    """A gather's pseudo-slot (passes/gathers.py) holds how often each element of its index
    array was read by the gather's index: the gathered array's element idx[e] was accessed
    that often. Added to the gathered array's counts; the pseudo-slot is no array of its own.
    Done where the walk's counters are (on the GPU for a GPU launch that keeps its counts
    there: spmv's decode took 4.4 s on the host in an earlier H100 run, 0.08 s now)."""
    for key, ls in slots.items():
        if key[0] != "gather":
            continue
        _, walk, walk_oor, _, _ = per_slot.pop(ls.slot)
        for twin in twins.get(ls.slot, ()):
            # the twin's elements are the walk's (counters.unlike_twins checked the arrays)
            entry = per_slot[twin.slot]
            entry[1] += _where_like(walk, entry[1])
            entry[2] += walk_oor
        values = counters.get(("values",) + key)
        target = per_slot.get(ls.slot.gather.gathered)
        if values is None or target is None:
            continue  # counted per access (aliased index memory): nothing to fold
        tl = target[0]
        counts, oor = gathered_counts(walk, values, tl.elem_size, tl.unit, tl.n_counters)
        # counted at run time (scaled as the target's counters are)
        target[1] += _where_like(counts, target[1])
        target[2] += oor


def _where_like(counts, ref):
    """counts where ref is (the host or the GPU)."""
    if where.on_device(counts) != where.on_device(ref):
        return where.like(where.to_host(counts), ref)
    return counts


def _twins(plan, slots) -> dict:
    """pseudo-slot -> the twin SitePlans (passes/gathers.py) its walk counts at this launch
    (their slots' twin_ok, set by runtime/counters.unlike_twins; never set by a whole
    program's host runtime, where twins count themselves)."""
    ok = {ls.slot for ls in slots.values() if getattr(ls, "twin_ok", None)}
    out: dict = {}
    for sp in plan.sites.values():
        if isinstance(sp.hook, DmTwin) and sp.slot in ok:
            out.setdefault(sp.hook.pseudo, []).append(sp)
    return out


def gathered_counts(walk, values, elem_size: int, unit: int, n_counters: int):
    """Counts per element of the gathered array x from x[idx[e]] read walk[e] times: element
    idx[e] (unit (idx[e] * elem_size) // unit, one unit: a device array's unit is at least its
    element) gets walk[e]; an index outside the array counts out of range. numpy or CuPy, as
    the walk is."""
    xp = where.xp(walk)
    values = xp.asarray(where.to_host(values) if not where.on_device(walk) else values)
    values = values.reshape(-1)
    n = min(len(walk), len(values))
    hit = walk[:n] > 0
    w = walk[:n][hit].astype(xp.int64)
    u = values[:n][hit].astype(xp.int64) * elem_size // unit
    inside = (u >= 0) & (u < n_counters)
    oor = int(w[~inside].sum())
    # float64 weights: exact while a count stays below 2**53
    counts = xp.rint(xp.bincount(u[inside], weights=w[inside], minlength=n_counters)
                     [:n_counters]).astype(xp.int64)
    return counts, oor


def _arrays(report, plan, kernel, ka, per_slot, site_exec, area, info, mode, scale,
            records=None, sample_sq=None) -> None:
    """records: the per-element families' records (counters.read_back's 'tally')."""
    measured = measured_slots(plan, kernel, ka)
    uncounted = uncounted_slots(plan, ka)
    reads: dict = {}
    writes: dict = {}
    resolved: dict = {}  # slot -> executions of the sites that name it
    loose = []  # executed sites whose object is found at run time (OBJ < 0)
    draws = SampleDraws(sample_sq) if scale is not None else None
    for sp in plan.sites.values():
        if sp.site not in site_exec:
            continue
        n = site_exec[sp.site]
        if draws is not None:
            draws.site(sp, n, sp.strategy in (HOOK, LR_START))
        if scale is not None and sp.strategy in (HOOK, LR_START):
            n = int(round(n * scale))
        if sp.slot is None:
            if n and site_in_kernel(sp.site, kernel, ka):
                loose.append((sp, n))
            continue
        resolved[sp.slot] = resolved.get(sp.slot, 0) + n
        if sp.site.kind in ("read", "read-write"):
            reads[sp.slot] = reads.get(sp.slot, 0) + n
        if sp.site.kind in ("write", "read-write"):
            writes[sp.slot] = writes.get(sp.slot, 0) + n
    for slot, (ls, counts, oor, static_execs, static_counts) in per_slot.items():
        obj = slot.object
        kept = int(counts.sum()) if scale is not None else 0
        if scale is not None:
            counts = where.xp(counts).rint(counts * scale).astype(np.int64)
        if static_counts is not None:
            counts += static_counts.on(counts)  # counts is ours (a fresh array: see above)
        label, note = slot_label(slot, mode, measured, uncounted)
        if note and note not in report.notes:
            report.notes.append(note)
        n_reads, n_writes = _split(slot, counts, oor, label, reads.get(slot, 0),
                                   writes.get(slot, 0), resolved.get(slot, 0), loose, ka, report)
        arr = ArrayStats(
            name=slot.name, space=obj.space, elem_type=obj.elem_type, shape=ls.shape,
            elem_size=ls.elem_size, unit=ls.unit, counts=counts,
            reads=n_reads, writes=n_writes, out_of_range=oor,
            label=label, threshold=mode.threshold if label != "exact" else None,
            sampling=mode.sampling if label == "sampled" else None,
            declared_at=str(obj.location),
            where=("shared memory (SM)" if info.counters_in == "shared memory"
                   else "device memory") if ls.kind == LY.KIND_SHARED else "device memory")
        if draws is not None and label == "sampled":
            arr.sample = draws.array(slot, kept, static_counts, n_reads, n_writes,
                                     mode.sample_rate, mode.sampler)
        total = max(int(counts.sum()), 1)
        arr.static_share = min(1.0, static_execs / total) if static_execs else 0.0
        if mode.enhanced and ls.lr_offset:
            stats = area[ls.lr_offset:ls.lr_offset + LY.LR_STRIDE]
            arr.live_ranges = {"ranges": int(stats[0]), "accesses": int(stats[1]),
                               "histogram": [int(x) for x in stats[2:]]}
        first = getattr(ls, "tally_first", None)
        if records is not None and first is not None:
            for t in T.active(mode):
                if t.per == "element":
                    t.put(arr, t.array_value(ls, records[first:first + ls.n_counters,
                                                         T.at(t):T.at(t) + t.words], info))
        report.arrays.append(arr)


class SampleDraws:
    """Sampling: what each array's interval needs (report/interval.py), from the sites'
    kept executions and their clusters' squares (gmprof.cuh sample_clusters)."""

    def __init__(self, sample_sq):
        self.sq = sample_sq
        self.kept: dict = {}  # (slot, 'accesses'/'reads'/'writes') -> kept accesses
        self.excess: dict = {}  # the same -> sum of C*C - C over kept clusters
        self.exact: dict = {}  # (slot, 'reads'/'writes') -> static sites' executions
        self.hooked: set = set()  # the (slot, kind)s some sampled site counts
        self.loose_excess = 0.0  # sites whose array is found at run time: charged to every array

    def site(self, sp, n: int, sampled: bool) -> None:
        extra = float(self.sq[sp.site.id]) if sampled and self.sq is not None and \
            sp.site.id < len(self.sq) else 0.0
        if sp.slot is None:
            self.loose_excess += extra
            return
        kinds = ["accesses"] + (["reads"] if sp.site.kind in ("read", "read-write") else []) \
            + (["writes"] if sp.site.kind in ("write", "read-write") else [])
        for kind in kinds:
            key = (sp.slot, kind)
            if sampled:
                self.hooked.add(key)
                self.kept[key] = self.kept.get(key, 0) + n
                self.excess[key] = self.excess.get(key, 0.0) + extra
            elif kind != "accesses":
                self.exact[key] = self.exact.get(key, 0) + n

    def array(self, slot, kept_units: int, static_counts, n_reads, n_writes, rate,
              sampler) -> dict:
        """The array's {'rate', 'sampler', 'accesses', 'reads', 'writes'}: Sampled each (reads
        and writes None where not split). Counts are in counter units: an access that covers w
        of them (a double's two shared words) is a cluster of w, so Q = w K + w^2 excess."""
        from gmprof.report.interval import Sampled

        sites = self.kept.get((slot, "accesses"), 0)
        w = max(kept_units / sites, 1.0) if sites else 1.0
        excess = self.excess.get((slot, "accesses"), 0.0) + self.loose_excess
        exact = int(static_counts.counts.sum()) if static_counts is not None else 0
        out = {"rate": rate, "sampler": sampler,
               "accesses": Sampled(kept_units, w * kept_units + w * w * excess, exact)}
        for kind, total in (("reads", n_reads), ("writes", n_writes)):
            k = self.kept.get((slot, kind), 0)
            out[kind] = None if total is None else \
                Sampled(k, k + self.excess.get((slot, kind), 0.0) + self.loose_excess,
                        self.exact.get((slot, kind), 0),
                        (slot, kind) in self.hooked or bool(self.loose_excess))
        return out


def _split(slot, counts, oor, label, n_reads, n_writes, resolved, loose, ka, report):
    """An array's reads and writes. A site's executions count against the array it names; a
    site whose array is found at run time (a helper's `p[i]` called with several arrays) names
    none, so its accesses are the array's counts not explained by the sites that name it
    (counts + out of range - their executions). They are reads, writes or both when every
    such site that may reach the array (its call chains' targets, interproc.py) is of one
    kind; otherwise the split is unknown (None: printed blank, `null` in JSON) and a note
    says why."""
    reaching = [(sp, n) for sp, n in loose if _may_reach(sp.site, slot.object, ka)]
    if not reaching:
        return n_reads, n_writes
    residual = int(counts.sum()) + int(oor) - resolved
    if residual <= 0:
        return n_reads, n_writes
    kinds = {sp.site.kind for sp, _ in reaching}
    # each such access touches one counter when its type is no wider than the element: more
    # unexplained counts than their executions means something wider, and no split is proven
    if label == "exact" and len(kinds) == 1 and residual <= sum(n for _, n in reaching):
        kind = kinds.pop()
        return (n_reads + residual if kind in ("read", "read-write") else n_reads,
                n_writes + residual if kind in ("write", "read-write") else n_writes)
    sites = ", ".join(sorted({f"{sp.site.text} at {sp.site.location}" for sp, _ in reaching}))
    note = (f"{slot.name}: reads and writes not split (sites whose array is found at run time "
            f"reach it: {sites})")
    if note not in report.notes:
        report.notes.append(note)
    return None, None


def _may_reach(site, obj, ka) -> bool:
    """Whether a site may access obj in this kernel: one of its call chains targets obj, or
    one targets an object gmprof does not know."""
    targets = [t for sc in ka.of_site(site) for t in [ka.targets.get(sc, (None, None))[0]]]
    return not targets or any(t is None or t is obj for t in targets)


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
            # the records of its sites, and any (an unresolved pointer's) inside it
            inside = (addrs >= ls.base) & (addrs < ls.base + ls.bytes) if ls.base else \
                np.zeros(len(addrs), bool)
            mask = inside | (objs == slot.index)
            offsets = addrs[mask].astype(np.int64) - np.int64(ls.base)
            entry[1], entry[2] = LY.count_units(offsets, sizes[mask], ls.n_counters, ls.unit,
                                                nbytes=ls.bytes)
        else:
            # the hooks record shared accesses as byte offsets within the array
            mask = objs == slot.index
            offsets = addrs[mask].astype(np.int64)
            entry[1], entry[2] = LY.count_units(offsets, sizes[mask], ls.n_counters, 4,
                                                nbytes=ls.bytes)
    return (sites, objs, sizes, addrs, rec[:, 2], rec[:, 3])


__all__ = ["decode", "decode_trace", "site_in_kernel", "count_label", "measured_slots",
           "uncounted_slots"]
