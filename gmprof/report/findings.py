"""What a profiled launch found besides its counts: failed checks and warnings, on the report.

Stage: report, after the counters are decoded (runtime/decode.py). Input: the report, the plan and the launch's
static counts (which sites access which array), the arguments, the arrays whose outputs differ
between the native and instrumented runs, the writes past the ends of arrays that the CPU
backend's red zones caught in the native run, and the backend's launch diagnostics. Output: on
`report.warnings`, Diagnostic values:

    outputs-differ     the instrumented run's outputs (arrays, __device__ variables) differ
                       from the native run's (a failed check: exit status 1)
    out-of-range       accesses outside an array: counted by the instrumented run (reads and
                       writes) or caught by the red zones around the native run's arrays
                       (writes); located at the site that made them where it is known, else at
                       the first site that accesses the array (a failed check: exit status 1)
    divergent-barrier  threads of a block waited at different __syncthreads() (a warning)

and on `report.notes`, what was not compared.
"""
from __future__ import annotations

from gmprof.errors import Diagnostic

from .labels import site_in_kernel


def _sites_of(plan, kernel, ka, name):
    return [sp for sp in plan.site_list if sp.slot is not None and sp.slot.name == name
            and site_in_kernel(sp.site, kernel, ka)]


def _describe(sp) -> str:
    site = sp.site
    return f"{site.location} `{site.text}` ({site.kind})"


def add_findings(report, plan, kernel: str, ka, static: dict, largs, differ, native_writes,
                 diagnostics) -> None:
    """ka: the kernel's KernelAnalysis; static: SiteClass -> StaticCount at this launch."""
    seen = {(w.kind, w.message) for w in report.warnings}

    def add(d: Diagnostic) -> None:
        if (d.kind, d.message) not in seen:
            seen.add((d.kind, d.message))
            report.warnings.append(d)

    for d in diagnostics:
        add(d)
    if differ:
        add(Diagnostic("outputs-differ",
                       f"the instrumented kernel's outputs differ from the native kernel's in "
                       f"{', '.join(differ)} (a gmprof bug, or a kernel whose result depends on "
                       "timing, such as a data race); your arrays hold the native results"))

    # out of range: static sites know their own count; hooked sites count per array
    static_oor = {}
    for sc, count in static.items():
        if getattr(count, "out_of_range", 0):
            static_oor[sc.site] = static_oor.get(sc.site, 0) + int(count.out_of_range)
    caught = {}
    for name, text in native_writes:
        caught.setdefault(name, []).append(text)
    names = [a.name for a in report.arrays if a.out_of_range] + \
        [n for n in caught if n not in {a.name for a in report.arrays if a.out_of_range}]
    for name in names:
        arr = next((a for a in report.arrays if a.name == name), None)
        sites = _sites_of(plan, kernel, ka, name)
        exact = [sp for sp in sites if sp.site in static_oor]
        writes = [sp for sp in sites if sp.site.kind in ("write", "read-write")]
        parts = []
        if arr is not None and arr.out_of_range:
            parts.append(f"{arr.out_of_range} access(es) out of range counted by the "
                         "instrumented run")
        parts.extend(caught.get(name, []))
        if exact:
            where = exact[0]
            site_text = "at " + "; ".join(f"{_describe(sp)}: {static_oor[sp.site]} out of range"
                                          for sp in exact)
        else:
            pick = writes if caught.get(name) and writes else sites
            where = pick[0] if pick else None
            site_text = ("sites that access it: " + "; ".join(_describe(sp) for sp in pick)) \
                if pick else "no site of the kernel names it"
        shape = ""
        if arr is not None and arr.counts is not None:
            shape = f", {int(arr.counts.size)} elements of {arr.unit} bytes"
        loc = where.site.location if where is not None else None
        add(Diagnostic("out-of-range", f"kernel {kernel} accesses outside the array "
                                       f"{name!r}{shape}: "
                                       f"{'; '.join(parts)}; {site_text}", loc))

    not_compared = [la.name for la in largs if la.kind == "struct"]
    if not_compared:
        report.notes.append("not compared: memory behind any pointers inside the struct "
                            f"argument(s) {', '.join(not_compared)} (gmprof cannot see it)")
    shared = [la.name for la in largs if la.kind == "addresses"]
    if shared:
        report.notes.append("not compared: the const arrays behind the raw addresses in "
                            f"{', '.join(shared)} (the kernel cannot write them)")


__all__ = ["add_findings"]
