"""Reports back from a saved run: `gmprof.load("run.json")` (gmprof/api.py).

Stage: report (reading). Takes a run document (gmprof.run/2, checked against its schema by
document.load); returns one Report per kernel with its counts, sites, warnings, launches and
source, so a saved run is what `gmprof.profile` returned: printed, converted (to_pandas) or
merged the same. Counts come back from either form of `counts` (countcodec.py). A run saved
before every count was kept (large arrays' `counts` null) keeps its saved figures (accesses,
min, max, mean, untouched) and heat map, and says in a note that its counts were not saved.
"""
from __future__ import annotations

import numpy as np

from gmprof.passes.tallies import TALLIES

from . import countcodec
from .model import ArrayStats, Report, RunInfo, SiteStats

_RUN_FIELDS = ("backend", "device", "mode", "shared_mem", "launches", "native_ms",
               "instrumented_ms", "timing_repeats", "counter_bytes", "counters_in",
               "counters_why", "block_counter_bytes", "outputs_identical", "timing_note")


def _location(text):
    from gmprof.errors import Location

    if not text:
        return None
    parts = str(text).rsplit(":", 2)
    if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
        return Location(parts[0], int(parts[1]), int(parts[2]))
    return Location(str(text), 0, 0)


def _array(a: dict, notes: list) -> ArrayStats:
    counts = countcodec.decode(a["counts"])
    live = a.get("live_ranges")
    if live:
        live = {k: v for k, v in live.items() if k != "mean_accesses_per_range"}
    out = ArrayStats(a["name"], a["space"], a["elem_type"], tuple(a["shape"]), a["elem_size"],
                     a["counter_unit_bytes"],
                     counts if counts is not None else np.zeros(0, np.int64),
                     reads=a["reads"], writes=a["writes"], out_of_range=a["out_of_range"],
                     label=a["label"], threshold=a["threshold"], sampling=a["sampling"],
                     static_share=a["static_share"], live_ranges=live,
                     where=a["counters_where"], declared_at=a["declared_at"])
    out._owned = True
    out.sample = _sample(a.get("intervals"))
    if counts is None:
        notes.append(f"{a['name']}: its {a['counters']:,} counts were not saved (a run saved "
                     "before gmprof kept them); its figures and heat map are the saved ones")
        out._summary = (out.counts, out.threshold, {k: a[k] for k in (
            "accesses", "min", "max", "mean", "untouched", "at_threshold")})
    out._heat = (out.counts, out.threshold, a["heatmap"])
    _tallies(out, a, "arrays")
    return out


def _tallies(stats, entry: dict, field: str) -> None:
    """The counter families' fields of a site or an array (passes/tallies.py)."""
    for t in TALLIES:
        if t.field == field and entry.get(t.name) is not None:
            t.put(stats, t.from_doc(entry[t.name], countcodec.decode))


def _sample(iv: dict | None) -> dict | None:
    """ArrayStats.sample back from a document's intervals: each count's kept K, exact part E
    and Q = K * design effect (report/interval.py), from which the same intervals follow."""
    from .interval import Sampled

    if not iv:
        return None

    def one(e):
        if e is None:
            return None
        return Sampled(e["kept"], e["kept"] * e["design_effect"], e["exact_part"],
                       not e["interval"].startswith("exact: no sampled site"))

    return {"rate": iv["rate"], "sampler": iv["sampler"],
            **{k: one(iv[k]) for k in ("accesses", "reads", "writes")}}


def report(k: dict) -> Report:
    """One kernel's entry of a run document as a Report."""
    from gmprof.errors import Diagnostic

    r = k["run"]
    run = RunInfo(k["kernel"], grid=tuple(r["grid"]), block=tuple(r["block"]),
                  **{f: r[f] for f in _RUN_FIELDS})
    notes = list(k.get("notes") or [])
    arrays = [_array(a, notes) for a in k["arrays"]]
    sites = [SiteStats(s["id"], s["location"], s["text"], s["function"], s["object"],
                       s["kind"], s["executions"] or 0,
                       s["how"], strategy=s.get("strategy", ""),
                       classes=list(s.get("classes") or []))
             for s in k["sites"]]
    for stats, s in zip(sites, k["sites"]):
        _tallies(stats, s, "sites")
    warnings = [Diagnostic(w["kind"], w["message"], _location(w.get("location")))
                for w in k.get("warnings") or []]
    out = Report(run, arrays, sites, warnings=warnings, notes=notes,
                 launch_runs=list(k["launches"]) if len(k["launches"]) > 1 else [],
                 source=k.get("source"))
    return out


def reports(doc: dict) -> list[Report]:
    return [report(k) for k in doc["kernels"]]


def schema_of(path):
    """The "schema" of a JSON file, read from its start (None when it has none)."""
    import re

    try:
        with open(path, "rb") as fh:
            head = fh.read(4096).decode("utf-8", "replace")
    except OSError:
        return None
    m = re.match(r'\s*\{\s*"schema"\s*:\s*"([^"]*)"', head)
    return m.group(1) if m else None


def pick(found: list, kernel: str | None, path):
    """The Report of `kernel`, the only one, or the list of them (see gmprof.load)."""
    from gmprof.errors import InputError

    if kernel is not None:
        for r in found:
            if r.run.kernel == kernel:
                return r
        raise InputError(f"{path}: no kernel named {kernel!r} (kernels: "
                         f"{', '.join(r.run.kernel for r in found) or 'none'})")
    return found[0] if len(found) == 1 else found


def load(path, kernel: str | None = None):
    """The Report(s) of a saved run (gmprof.run/2; gmprof.load also reads whole programs'
    report files)."""
    from .document import load as load_document

    return pick(reports(load_document(path)), kernel, path)


__all__ = ["load", "pick", "report", "reports", "schema_of"]
