"""The sidecar of `gmprof instrument`: which counters belong to which object, site and live
range, and how to decode them (schema `gmprof.instrument/1`, documented in docs/instrument.md).
"""
from __future__ import annotations

from ..frontend import cxx_ast as X
from ..passes.hooks import DmGather
from .analysis import _formula

SCHEMA = "gmprof.instrument/1"


def plan_json(plan, defines: dict, output: str) -> dict:
    program = plan.program
    kernels = program.kernels
    objects = []
    for slot in plan.slots:
        obj = slot.object
        objects.append({
            "slot": slot.index, "name": slot.name, "kind": slot.kind, "space": obj.space,
            "kernel": slot.kernel, "elem_type": obj.elem_type, "dims": list(obj.dims),
            "dynamic": slot.dynamic, "live_ranges": slot.live_ranges,
            "declared_at": str(obj.location),
            "difference_array": slot.ranges,
            "gather_of": ({"gathered": slot.gather.gathered.index,
                           "index": slot.gather.index.index}
                          if slot.gather else None),
        })
    sites = []
    for sp in plan.site_list:
        site = sp.site
        formulas = []
        for kname, ka in kernels.items():
            for sc in ka.of_site(site):
                if sc.formula is not None:
                    formulas.append({"kernel": kname,
                                     "call_chain": [str(X.span(c)) for c in sc.chain],
                                     "formula": _formula(sc.formula)})
        sites.append({
            "id": site.id, "location": str(site.location), "text": site.text,
            "function": site.function.name, "object": site.object_name,
            "slot": sp.slot.index if sp.slot is not None else None,
            "kind": site.kind, "strategy": sp.strategy, "mode": sp.mode,
            "weight_loops": [plan.loops[loop] for loop in sp.weight_loops],
            "range": ({"loop": plan.loops[sp.hook.range.loop], "stride": sp.hook.range.stride}
                      if sp.hook.range is not None else None),
            "gather": ({"pseudo_slot": sp.hook.pseudo.index, "index_site": sp.hook.index.site.id}
                       if isinstance(sp.hook, DmGather) else None),
            "reason": sp.reason, "static_formulas": formulas if sp.strategy == "static" else [],
        })
    loops = [{"id": k, "location": str(X.span(loop.node)), "loop": loop.short}
             for loop, k in plan.loops.items()]
    return {
        "schema": SCHEMA,
        "source": program.tu.main.name,
        "output": output,
        "mode": plan.mode.name,
        "exact": plan.mode.exact,
        "defines": defines,
        "launch_symbol": "__gmprof_launch",
        "launch_layout": "struct gmprof::Launch in gmprof.cuh (mirrored by "
                         "gmprof/runtime/layout.py LAUNCH)",
        "objects": objects,
        "sites": sites,
        "loops": loops,
        "block_area": {
            "header_words": 2,
            "site_words": len(plan.sites),
            "site_word": "AREA_HEADER + 2 * site id: executions of that site (a u64)",
            "objects": "then, for each shared object the launched kernel reaches, in slot "
                       "order, one counter_t per 4-byte word (Object.area_offset)",
            "live_ranges": "enhanced mode: 14 words per shared array at Object.lr_offset: "
                           "ranges closed, accesses in them, 12-bin histogram",
        },
        "device_counters": "per device object: a counter_t array, one per element "
                           "(Object.unit bytes), at Object.counters; out-of-range accesses "
                           "in the u32 at Object.oor; an object with difference_array has "
                           "n_counters + 1 more u32 after its counters (range sites: add their "
                           "prefix sum); a gather_of pseudo-slot's counts are how often each "
                           "element of the index array was read by the gather's index, to be "
                           "turned into the gathered array's counts with the index array's "
                           "contents (Object.reserved[0] & 1: counted per access instead)",
        "static_counts": "sites with strategy 'static' have no code: evaluate their formulas "
                         "with the launch's values (gmprof/runtime/static_counts.py)",
    }
