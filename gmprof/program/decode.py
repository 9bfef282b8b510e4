"""Decode one group of a whole program's launches into a Report, with the single-launch decoder.

Stage: report (whole programs). Takes the analysed source of a module (a Profiler: the same
frontend, analysis and plan that built the instrumented copy) and one group of the raw report
file (gmprof/program/records.py): launches of one kernel with one counter layout, their shapes
and parameter values, and their counters summed. Returns a Report, made by the decoder that
`gmprof profile` uses (gmprof/runtime/decode.py), so a kernel gives the same counts both ways:

  * static sites: their formulas evaluated per launch with the recorded grid, block, dynamic
    shared memory and scalar arguments (as `gmprof profile` evaluates them), summed; a pointer
    argument that points into its allocation at an offset shifts its counts by that offset,
    since the object is the allocation;
  * counted sites and elements: the summed counters, as if read back from one launch.

`decode_group` builds what that decoder takes (runtime/counters.SlotLayout per slot, the
counters as runtime/counters.read_back returns them, the static counts per SiteClass).
"""
from __future__ import annotations

import dataclasses

import numpy as np

from gmprof.errors import GmprofError
from gmprof.passes import symbolic as SY
from gmprof.passes.plan import STATIC
from gmprof.report.model import APPROXIMATE, RunInfo
from gmprof.runtime.layout import OBJ_GLOBAL, OBJ_PARAM, OBJ_SHARED, OBJ_SHARED_DYNAMIC

class _Array:
    """What the static formulas and the layout read of a pointer argument: its bytes (from the
    pointer to the end of its allocation), shape and element type."""

    def __init__(self, nbytes: int, elem: int):
        self.nbytes = int(nbytes)
        self.dtype = np.dtype(f"V{max(int(elem), 1)}")
        self.shape = (self.nbytes // max(int(elem), 1),)
        self.ndim = 1


def _scalars(facts, env, params: list[str]) -> list:
    """The launch's arguments as the static formulas see them: numpy scalars for numbers."""
    from pycparser import c_ast

    from gmprof.passes.symbols import type_text

    out = []
    for p, raw in zip(facts.function.params, params):
        name = getattr(p, "name", None)
        data = bytes.fromhex(raw)
        if isinstance(p.type, (c_ast.PtrDecl, c_ast.ArrayDecl)):
            out.append(int.from_bytes(data[:8], "little"))
            continue
        t = env.numpy_type(type_text(p.type))
        if t is not None and np.dtype(t).itemsize == len(data):
            value = np.frombuffer(data, np.dtype(t).newbyteorder("<"))[0]
            env.scalars[name] = t(value)
            out.append(env.scalars[name])
        else:
            out.append(data)
    return out


def _static_for_launch(prof, plan, facts, ka, launch, group, objects, sizes):
    """{SiteClass: StaticCount} for one launch, in the allocation's coordinates; and the sites
    whose formula could not be evaluated."""
    from gmprof.runtime.launchenv import LaunchEnv, split_name_expression
    from gmprof.runtime.static_counts import count_static

    kernel_expr = group["kernel"]
    grid, block = tuple(launch["grid"]), tuple(launch["block"])
    env = LaunchEnv(prof.program, facts, split_name_expression(kernel_expr)[1], grid, block,
                    {}, sizes)
    _scalars(facts, env, launch["params"])
    shared_mem = int(launch["shared_mem"])
    out, failed = {}, set()
    by_slot = {o["slot"]: o for o in objects}
    for sc in ka.classes:
        sp = plan.sites.get(sc.site)
        if sp is None or sp.strategy != STATIC:
            continue
        target, _ = ka.targets.get(sc, (None, None))
        obj = target or sc.site.object
        slot = plan.slot_of(obj) if obj is not None else None
        rec = by_slot.get(slot.index) if slot is not None else None
        try:
            if obj is None:
                raise SY.Unknown("no target object")
            if obj.is_shared:
                if obj.space == "shared_dynamic":
                    nbytes = shared_mem
                else:
                    shape = env.shape(obj)
                    if shape is None:
                        raise SY.Unknown("shared array size unknown")
                    nbytes = int(env.sizeof(obj.elem_type)) * int(np.prod(shape) if shape else 1)
                unit, per_word, shift = 4, True, 0
                n_units = -(-nbytes // 4)
            else:
                if rec is None:
                    raise SY.Unknown("object not in this launch's table")
                unit, per_word = int(rec["unit"]), False
                offset = int(rec["offset"]) if rec["kind"] == OBJ_PARAM else 0
                if offset % unit:
                    raise SY.Unknown("the pointer is not at a whole element of its allocation")
                shift = offset // unit
                n_units = -(-(int(rec["bytes"]) - offset) // unit)
            size = int(SY.evaluate(sc.formula.access_size, env))
            count = count_static(sc.formula, env, grid, block, n_units, unit, size, per_word)
        except SY.Unknown:
            failed.add(sc.site)
            continue
        out[sc] = (count, shift)
    return out, failed, env


def _add(static: dict, sc, count, shift: int, times: int) -> None:
    """static[sc] += `times` launches' count, its counts shifted by `shift` units (summed in
    place: a whole program's allocation may have millions of units, and launches hundreds)."""
    from gmprof.runtime.static_counts import StaticCount

    n = shift + len(count.counts)
    have = static.get(sc)
    if have is None:
        have = static[sc] = StaticCount(np.zeros(n, np.int64), 0, 0, count.method)
    elif len(have.counts) < n:
        grown = np.zeros(n, np.int64)
        grown[:len(have.counts)] = have.counts
        have.counts = grown
    part = have.counts[shift:n]
    if times == 1:
        np.add(part, count.counts, out=part)
    else:
        part += count.counts * times
    have.out_of_range += count.out_of_range * times
    have.executions += count.executions * times


def _launch_key(launch: dict) -> tuple:
    return (tuple(launch["grid"]), tuple(launch["block"]), int(launch["shared_mem"]),
            tuple(launch["params"]))


def _distinct(launches: list) -> list:
    """(launch, how many launches are like it): launches with one shape, dynamic shared
    memory and argument bytes have the same static counts (a benchmark's loop), so each
    distinct one is evaluated once and its counts multiplied."""
    seen: dict = {}
    for launch in launches:
        key = _launch_key(launch)
        times = int(launch.get("repeat", 1))  # a graph's launch ran once per replay
        if key in seen:
            seen[key][1] += times
        else:
            seen[key] = [launch, times]
    return [tuple(v) for v in seen.values()]


def _label_wrapped(report, plan, slots, counters, mode) -> None:
    """A whole program's launches cannot run again with wider counters (the Python runtime's
    remedy, runtime/widen.py): where the sites' sums say a 32-bit counter could have passed
    2^32 in a launch, its array's counts are labelled approximate, with the remedy."""
    from gmprof.runtime.widen import may_wrap

    names = may_wrap(plan, slots, counters, mode)
    if not names:
        return
    for a in report.arrays:
        if a.name in names:
            a.label = APPROXIMATE
    report.notes.append(
        f"{', '.join(names)}: a 32-bit counter may have passed 2^32 (the sites that count into "
        "it ran that often): its counts are approximate; build with --gmprof-counter-bits 64 "
        "for exact counts")


_UNKNOWN = ("the pointer passed was not in any allocation the runtime knows (host memory, or "
            "a symbol's address); its accesses are counted as out of range")


def decode_group(prof, mode, group: dict, sizes: dict, device: str, backend: str,
                 vectors, site_oor: dict | None = None, unknown: str = _UNKNOWN):
    """One group of launches -> Report (see the module's docstring). `vectors` gives the
    group's counter vectors (countsfile.Counts of its report file). site_oor, when given,
    gets each static site's accesses out of range added (site -> count), for the findings.
    unknown: the note on a pointer found in no allocation."""
    counts_array = vectors.array
    from gmprof.runtime.decode import decode
    from gmprof.runtime import layout as LY
    from gmprof.runtime.counters import SlotLayout

    plan = prof.plan(mode)
    kernel_expr = group["kernel"]
    facts = prof.kernel_facts(kernel_expr)
    ka = prof.program.kernels[facts.name]
    objects = group["objects"]
    static: dict = {}
    failed: set = set()
    env = None
    static_oor = {}  # a launch's key -> its static sites' accesses out of range
    for launch, times in _distinct(group["launches"]):
        counts, bad, env = _static_for_launch(prof, plan, facts, ka, launch, group, objects,
                                              sizes)
        failed |= bad
        static_oor[_launch_key(launch)] = sum(int(c.out_of_range) for c, _ in counts.values())
        for sc, (c, shift) in counts.items():
            _add(static, sc, c, shift, times)
            if site_oor is not None and c.out_of_range:
                site_oor[sc.site] = site_oor.get(sc.site, 0) + int(c.out_of_range) * times
    if env is None:  # grids launched from the device: no shape the host saw
        from gmprof.runtime.launchenv import LaunchEnv, split_name_expression

        env = LaunchEnv(prof.program, facts, split_name_expression(kernel_expr)[1], (1, 1, 1),
                        (1, 1, 1), {}, sizes)
    first = group["launches"][0] if group["launches"] else \
        {"grid": [0, 0, 0], "block": [0, 0, 0], "shared_mem": 0}
    slots, counters = {}, {}
    # the shared objects' counters, summed over the launches at 64 bits by the host runtime
    shared = counts_array(group["shared"])
    for rec in objects:
        slot = plan.slots[rec["slot"]]
        elem = int(rec["elem"])
        if rec["kind"] in (OBJ_PARAM, OBJ_GLOBAL):
            key = ("param", rec["param"]) if rec["kind"] == OBJ_PARAM else ("slot", slot.index)
            shape = None
            if rec["kind"] == OBJ_GLOBAL:
                shape = env.shape(slot.object)
            if shape is None:
                shape = (int(rec["bytes"]) // max(elem, 1),)
            ls = SlotLayout(slot, LY.KIND_DEVICE, int(rec["n"]), int(rec["unit"]), elem, tuple(shape),
                       int(rec["base"]), int(rec["bytes"]))
            counts = counts_array(rec["counts"]) if "counts" in rec else np.zeros(0, np.int64)
            counters[key] = counts
            counters[("oor",) + key] = int(rec["oor"])
        else:
            key = ("slot", slot.index)
            shape = None if rec["kind"] == OBJ_SHARED_DYNAMIC else env.shape(slot.object)
            if shape is None:
                shape = (int(rec["bytes"]) // max(elem, 1),)
            ls = SlotLayout(slot, LY.KIND_SHARED, int(rec["n"]), 4, elem, tuple(shape), 0,
                       int(rec["bytes"]))
            ls.area_offset = int(rec["area_offset"])
            ls.lr_offset = int(rec["lr_offset"])
            counters[key] = shared[ls.area_offset:ls.area_offset + ls.n_counters].copy()
            counters[("oor",) + key] = int(rec["oor"])
        slots[key] = ls
    area = np.zeros(int(group["area_words"]), np.int64)
    summed = counts_array(group["area"])
    area[:len(summed)] = summed
    counters["area"] = area
    # a site's u64 count: the host runtime sums it at its first word (and its high word, 0)
    sites = area[LY.AREA_HEADER:LY.sites_end(len(plan.sites))]
    counters["sites"] = sites[0::2] + (sites[1::2] << 32)
    counters["unknown_oor"] = int(group["unknown_oor"])
    counters["clock_total"] = int(group.get("clock_records", 0))
    if "warp_stats" in group:  # --gmprof-access-stats: the sites' statistics, summed
        from gmprof.passes.tallies import WarpRequests

        # (read back where the Python runtime reads it: counters[family name], passes/tallies.py)
        counters[WarpRequests.name] = counts_array(group["warp_stats"]).reshape(
            -1, WarpRequests.words)
        if group.get("warp_shifts"):
            # launches that measured 1 block in 2^s, weighted by 2^s on the device (gmprof.cuh
            # STATS_WEIGHT): the sums are already estimates (passes/block_sample.py)
            bits = int(group["warp_shifts"])
            counters[WarpRequests.name + "_sample"] = {
                "weighted": True, "rates": tuple(1 << s for s in range(32) if bits >> s & 1)}
    info = RunInfo(kernel_expr, backend, device, mode.name, tuple(first["grid"]),
                   tuple(first["block"]), int(first["shared_mem"]),
                   launches=int(group["device_grids"]) if "device_grids" in group else
                   sum(int(x.get("repeat", 1)) for x in group["launches"]))
    info.instrumented_ms = float(sum(launch.get("ms", 0.0) for launch in group["launches"]))
    info.counters_in = "shared memory" if group["sm"] else "device memory"
    info.counters_why = group["why"]
    if backend == "cpu":
        info.timing_note = "CPU-emulated times (not comparable with GPU times)"
    report, _ = decode(plan, facts.name, ka, slots, counters, static, frozenset(), info,
                       mode, prof.tu.warnings)
    wrap = counters
    if "site_max" in group:
        # each launch's counters were folded into 64-bit totals after it: only what one launch
        # counted could wrap a 32-bit counter, so the bound takes each site's largest launch
        wrap = dict(counters, sites=counts_array(group["site_max"]))
    _label_wrapped(report, plan, slots, wrap, mode)
    # each recorded launch's own shape, time and accesses out of range (its counters' and its
    # static sites'): the launches that failed the check (the summed counters are one Report)
    report.launch_runs = []
    for x in group["launches"]:
        oor = int(x.get("oor", 0)) + static_oor[_launch_key(x)] * int(x.get("repeat", 1))
        report.launch_runs.append(
            {"grid": list(x["grid"]), "block": list(x["block"]),
             "shared_mem": int(x["shared_mem"]), "native_ms": None,
             "instrumented_ms": x.get("ms"), "timing_repeats": 1, "outputs_identical": None,
             "index": x.get("index"), "out_of_range": oor, "failed_check": oor > 0})
        if int(x.get("repeat", 1)) != 1:
            # a launch captured into a graph: its counts and out-of-range accesses are those of
            # every replay together
            report.launch_runs[-1]["repeat"] = int(x["repeat"])
    for a in report.arrays:
        rec = next((o for o in objects if plan.slots[o["slot"]].name == a.name), None)
        if rec is not None and rec["kind"] == OBJ_PARAM and not rec["known"]:
            report.notes.append(f"{a.name}: {unknown}")
    if failed:
        names = sorted({s.object_name or "?" for s in failed})
        for a in report.arrays:
            if a.name in names:
                a.label = APPROXIMATE
        for s in report.sites:
            if any(f.id == s.id for f in failed):
                s.how = "not counted"
        report.notes.append(
            f"{len(failed)} static site(s) could not be counted from their formula at some "
            f"launch ({', '.join(str(s.location) for s in sorted(failed, key=lambda s: s.id))}); "
            "a whole program cannot count them on the device instead, so the counts of "
            f"{', '.join(names)} miss them (labelled approximate); build with "
            "--gmprof-mode basic to count every site at run time")
    return report


def decode_child_group(prof, mode, group: dict, sizes: dict, device: str, backend: str,
                       vectors, site_oor: dict | None = None):
    """The group of a kernel launched from the device (the grids of one child kernel under one
    group of host launches, runtime_cu/host/gmprof_host_children.h) -> Report: decoded with
    the children's plan (gmprof/program/children.py: every site counted by its hook). A pointer
    parameter has one record per allocation of the host launches' group; the allocations its
    grids touched are decoded one at a time (the first with the sites' counts) and summed as
    the launches of a kernel given other arrays are (Report.merge)."""
    from .children import child_mode

    mode = child_mode(mode)
    by_slot: dict = {}
    for rec in group["objects"]:
        by_slot.setdefault(rec["slot"], []).append(rec)

    def touched(rec) -> bool:
        return int(rec.get("oor", 0)) > 0 or rec.get("counts", {}).get("dtype", "zero") != "zero"

    rounds = []
    for slot, recs in by_slot.items():
        # a slot no grid touched in any allocation: an array of none (its sites' accesses,
        # if any, went outside every allocation: the unknown out-of-range count)
        none = dict(recs[0], base=0, bytes=0, offset=0, n=0, counts={"dtype": "zero", "n": 0},
                    known=not int(group.get("unknown_oor", 0)))
        hit = [r for r in recs if touched(r)] or \
            ([none] if recs[0]["kind"] == OBJ_PARAM else recs[:1])
        for r, rec in enumerate(hit):
            while len(rounds) <= r:
                rounds.append([])
            rounds[r].append(rec)
    report = None
    for r, objects in enumerate(rounds or [[]]):
        part = dict(group, objects=objects, launches=[])
        if r:
            # (the sites' counts and the area's are the first part's)
            part.update(area={"dtype": "zero", "n": int(group["area_words"])},
                        shared={"dtype": "zero", "n": int(group["obj_counters"])},
                        unknown_oor=0, device_grids=0)
            part.pop("site_max", None)
        one = decode_group(prof, mode, part, sizes, device, backend, vectors, site_oor,
                           unknown="no grid's pointer was in an allocation of the host "
                           "launches' group (device malloc, memory named by a __device__ "
                           "variable, ...): its accesses, if any, are counted as out of range "
                           "of every known object")
        report = one if report is None else report.merge(one)
    # one entry for every grid (the host never saw their shapes: grid and block 0)
    report.launch_runs = [{"grid": [0, 0, 0], "block": [0, 0, 0], "shared_mem": 0,
                           "native_ms": None, "instrumented_ms": None, "timing_repeats": 1,
                           "outputs_identical": None, "index": None, "out_of_range": 0,
                           "failed_check": False, "repeat": int(group["device_grids"])}]
    report.notes.append(
        f"{int(group['device_grids'])} grid(s) launched from the device (dynamic parallelism) "
        "by profiled copies, counted together: every site by its hook (no static counts: the "
        "host never sees a child grid's shape), the pointer arguments found among the "
        "allocations of the host launches' group (an argument in none is counted as out of "
        "range of every known object); no per-launch shapes or times")
    return report


def check_plan(prof, mode, manifest) -> None:
    from .translate import plan_digest

    plan = prof.plan(mode)
    if manifest.get("plan_digest") and plan_digest(plan) != manifest["plan_digest"]:
        raise GmprofError(f"{manifest['source']} changed since the program was built (its access "
                          "sites differ from the instrumented copy's): rebuild the program, then "
                          "run it again", kind="stale-report")


def mode_of(fields: dict):
    from gmprof.mode import Mode

    return Mode(**{k: v for k, v in fields.items() if k in {f.name for f in
                                                          dataclasses.fields(Mode)}})


__all__ = ["decode_group", "decode_child_group", "check_plan", "mode_of"]
