"""One run, one document: the gmprof.run/2 JSON that every renderer reads.

Stage: report. Takes the Reports of one command (one per kernel, each merged over its launches)
and what the command knows about the run (the sample and its self-check, the command line);
returns a plain dict, the document (an array's `counts` held as a countcodec.Counts until
dumps() writes them: a list, packed when large). The terminal, CSV, HTML and diff renderers read only this
dict, so `gmprof report saved.json` renders exactly what the run printed. docs/report.md
describes every field.

    doc = document([report], command=sys.argv)
    text = dumps(doc)                  # one JSON document
    doc = load("run.json")             # checked: a located error for anything else
"""
from __future__ import annotations

import json
import shlex
from typing import TYPE_CHECKING

import numpy as np

from gmprof.passes.tallies import TALLIES

from . import countcodec, where
from .interval import LEVEL, describe, max_interval
from .labels import APPROXIMATE, SAMPLED

if TYPE_CHECKING:
    from .model import ArrayStats, Report

SCHEMA = "gmprof.run/2"  # /2: arrays' "intervals" (sampled counts)
KERNEL_SCHEMA = "gmprof.report/2"  # one kernel's part (what to_json returned before)

# arrays up to this many counters carry their counts as a list; larger ones packed
# (countcodec.py: zlib'd little-endian int64 in base64), so every count is kept
COUNTS_LIMIT = 1 << 16


# -- labels: how a count was obtained, in words, wherever a count is printed -------------

def label_text(label: str, threshold=None, sampling=None) -> str:
    """What a count labelled so means, in a sentence (a sampled count may be thresholded too)."""
    parts = []
    if label == SAMPLED:
        parts.append(f"sampled at rate {sampling:g} (counts scaled by 1/rate)")
    if label == APPROXIMATE:
        parts.append("approximate (non-atomic counters may lose concurrent updates, or code "
                     "gmprof cannot see may access it: the notes say which)")
    if threshold is not None:
        parts.append(f"thresholded (counts at or above {threshold} shown as >={threshold})")
    return "; ".join(parts) or "exact"


def short_label(label: str, threshold=None, sampling=None) -> str:
    """The label as a table cell: exact, thresholded >=THR, sampled rate R, approximate."""
    parts = []
    if label == SAMPLED:
        parts.append(f"sampled rate {sampling:g}")
    if label == APPROXIMATE:
        parts.append("approximate")
    if threshold is not None:
        parts.append(f"thresholded >={threshold}")
    return ", ".join(parts) or "exact"


def site_how(how: str, sampling=None, threshold=None) -> str:
    """A site's `how` with its rate or threshold."""
    if how == "sampled" and sampling is not None:
        return f"sampled rate {sampling:g}"
    if how == "thresholded" and threshold is not None:
        return f"thresholded >={threshold}"
    return how


# -- building ------------------------------------------------------------------------------

def _array(a: ArrayStats, include_counts: bool | None) -> dict:
    stats = a.summary()
    if stats["at_threshold"] and a.sampling is None:
        # the saturated counters' sum is a lower bound; so are the reads and the writes (site
        # executions, exact or lost-update approximate): the bound is the largest of them
        stats["accesses"] = max([stats["accesses"]] +
                                [v for v in (a.reads, a.writes) if v is not None])
    entry = {
        "name": a.name, "space": a.space, "elem_type": a.elem_type,
        "shape": [int(s) for s in a.shape], "elem_size": a.elem_size,
        "counter_unit_bytes": a.unit, "counters": a.counters, "label": a.label,
        "label_text": label_text(a.label, a.threshold, a.sampling),
        "label_short": short_label(a.label, a.threshold, a.sampling),
        "threshold": a.threshold, "sampling": a.sampling,
        "accesses": stats["accesses"], "reads": a.reads, "writes": a.writes,
        "min": stats["min"], "max": stats["max"], "mean": stats["mean"],
        "untouched": stats["untouched"], "at_threshold": stats["at_threshold"],
        "out_of_range": a.out_of_range,
        "static_share": a.static_share, "counters_where": a.where,
        "declared_at": a.declared_at, "live_ranges": a.live_ranges,
        # enhanced mode resets a shared word's counter where a live range of it starts: the
        # counts (and their sum, min, max, mean) are those of each word's last live range
        "counts_are": "accesses in each word's last live range" if a.live_ranges is not None
        else "accesses",
    }
    if a.evidence is not None:
        entry["evidence"] = a.evidence  # trace mode (runtime/sharing.py): what advice reads
    if a.live_ranges and a.live_ranges["ranges"]:
        entry["live_ranges"] = dict(a.live_ranges, mean_accesses_per_range=a.live_ranges[
            "accesses"] / a.live_ranges["ranges"])
    # include_counts: None keeps them as they are until dumps() writes them (a list, packed
    # when large: countcodec.py), True gives lists now (to_dict), False leaves them out
    if include_counts is None:
        entry["counts"] = countcodec.Counts(a.counts)
    else:
        entry["counts"] = countcodec.encode(where.to_host(a.counts), pack=False) \
            if include_counts else None
    entry["heatmap"] = a.heat()
    for t in TALLIES:
        value = t.get(a) if t.field == "arrays" else None
        if value is not None:
            entry[t.name] = _with_counts(t.to_doc(value), include_counts)
    entry["intervals"] = intervals(a, stats)
    return entry


def _with_counts(value, include_counts: bool | None):
    """A counter family's field (passes/tallies.py) with its numpy arrays written as an
    array's counts are (include_counts as in _array)."""
    if isinstance(value, dict):
        return {k: _with_counts(v, include_counts) for k, v in value.items()}
    if isinstance(value, np.ndarray) or where.on_device(value):
        if include_counts is None:
            return countcodec.Counts(value)
        return countcodec.encode(where.to_host(value), pack=False) if include_counts else None
    return value


def intervals(a: ArrayStats, stats: dict) -> dict | None:
    """A sampled array's intervals (report/interval.py): its accesses, reads, writes, and the
    per-element figures: the mean (the accesses' interval over the counters) and the max (the
    element with the largest estimate, all of its count taken as sampled: conservative where
    part of it is exact)."""
    s = a.sample
    if s is None or a.label != SAMPLED or not s.get("rate"):
        return None
    rate, sampler = s["rate"], s["sampler"]
    acc = describe(s["accesses"], rate, sampler)
    n = max(a.counters, 1)
    mean = dict(acc, estimate=acc["estimate"] / n, low=acc["low"] / n, high=acc["high"] / n,
                interval=acc["interval"] + "; over the counters")
    d = s["accesses"].design_effect
    kept_max = round(stats["max"] * rate)  # the most an element kept (all of it sampled)
    lo, hi = max_interval(kept_max, a.counters, rate, d)
    mx = dict(acc, estimate=float(stats["max"]), low=float(lo), high=float(hi),
              kept=float(kept_max), exact_part=0.0,
              interval=acc["interval"] + "; the largest count of any element: every "
              "element's bound at once (Bonferroni), its count taken as sampled")
    return {"rate": rate, "sampler": sampler, "level": LEVEL, "accesses": acc,
            "reads": None if s["reads"] is None else describe(s["reads"], rate, sampler),
            "writes": None if s["writes"] is None else describe(s["writes"], rate, sampler),
            "max": mx, "mean": mean}


def kernel_entry(report: Report, include_counts: bool | None = None) -> dict:
    """One kernel's part of the document (schema gmprof.report/2 plus launches and source)."""
    run = report.run
    sampling = next((a.sampling for a in report.arrays if a.sampling), None)
    threshold = next((a.threshold for a in report.arrays if a.threshold is not None), None)
    out = {
        "schema": KERNEL_SCHEMA,
        "kernel": run.kernel,
        "run": {
            "kernel": run.kernel, "backend": run.backend, "device": run.device,
            "mode": run.mode, "grid": list(run.grid), "block": list(run.block),
            "shared_mem": run.shared_mem, "launches": run.launches,
            "native_ms": run.native_ms, "instrumented_ms": run.instrumented_ms,
            "overhead": run.overhead, "timing_repeats": run.timing_repeats,
            "timing_note": run.timing_note, "counter_bytes": run.counter_bytes,
            "counters_in": run.counters_in, "counters_why": run.counters_why,
            "block_counter_bytes": run.block_counter_bytes,
            "outputs_identical": run.outputs_identical,
        },
        "launches": report.launches_list(),
        "arrays": [_array(a, include_counts) for a in report.arrays],
        "sites": [],
        "notes": list(report.notes),
        "warnings": [{"kind": w.kind, "message": w.message,
                      "location": str(w.location) if w.location else None,
                      "failed_check": bool(getattr(w, "failed_check", False)),
                      "text": w.render() if hasattr(w, "render") else str(w)}
                     for w in report.warnings],
        "source": report.source,
    }
    for s in report.sites:
        out["sites"].append({"id": s.id, "location": s.location, "text": s.text,
                             "function": s.function, "object": s.object, "kind": s.kind,
                             # a site that is not counted has no count (null), not 0
                             "executions": None if s.how == "not counted" else s.executions,
                             "how": s.how,
                             "how_text": site_how(s.how, sampling, threshold),
                             "classes": s.classes, "strategy": s.strategy})
        for t in TALLIES:
            value = t.get(s) if t.field == "sites" else None
            if value is not None:
                out["sites"][-1][t.name] = _with_counts(t.to_doc(value), include_counts)
    for t in TALLIES:
        t.finish(out)
    if report.source is not None:
        from .source import line_rows

        out["lines"] = [{"function": f["function"], "file": f["file"], "line": r["line"],
                         "reads": r["reads"], "writes": r["writes"],
                         "executions": r["executions"], "how": r["how"],
                         "arrays": r["arrays"]}
                        for f in line_rows(out) for r in f["rows"] if r["sites"]]
    return out


def document(reports, *, command=None, sample: dict | None = None,
             include_counts: bool | None = None) -> dict:
    """The run's document: every kernel (each merged over its launches), the sample and its
    self-check, and the failed checks that set the exit status."""
    reports = list(reports)
    kernels = [kernel_entry(r, include_counts) for r in reports]
    failed = []
    for k in kernels:
        for w in k["warnings"]:
            if w["failed_check"] and w["text"] not in failed:
                failed.append(w["text"])
    if sample is not None and sample.get("self_check") == "failed":
        failed.append(f"sample {sample.get('name')}: self-check failed: {sample.get('error')}")
    first = reports[0].run if reports else None
    if isinstance(command, (list, tuple)):
        command = shlex.join(["gmprof", *command])
    from gmprof.version import __version__

    return {
        "schema": SCHEMA,
        "gmprof": __version__,
        "command": command,
        "backend": first.backend if first else None,
        "device": first.device if first else None,
        "sample": sample,
        "failed_checks": failed,
        "kernels": kernels,
    }


# -- text ----------------------------------------------------------------------------------

def dumps(doc: dict) -> str:
    """The document as JSON, indented, with lists of numbers (counts, heat-map rows) on one
    line each so a large array does not take a line per element."""
    return _dump(doc, 0) + "\n"


def _dump(value, depth: int) -> str:
    pad = "  " * (depth + 1)
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [f"{pad}{json.dumps(str(k))}: {_dump(v, depth + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + "  " * depth + "}"
    if isinstance(value, (list, tuple)):
        if all(v is None or isinstance(v, (int, float, str, bool)) for v in value):
            return json.dumps(list(value), separators=(", ", ": "), default=_plain)
        if all(isinstance(v, (list, tuple)) and all(not isinstance(x, (dict, list, tuple))
                                                    for x in v) for v in value):
            # rows of a grid: one line each
            rows = [pad + json.dumps(list(v), separators=(",", ":"), default=_plain)
                    for v in value]
            return "[\n" + ",\n".join(rows) + "\n" + "  " * depth + "]"
        items = [pad + _dump(v, depth + 1) for v in value]
        return "[\n" + ",\n".join(items) + "\n" + "  " * depth + "]"
    return json.dumps(value, default=_plain)


def _plain(value):
    if isinstance(value, countcodec.Counts):  # written now: a list, or packed when large
        return countcodec.encode(value.host())
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    return str(value)


def loads(text: str, name: str = "<json>") -> dict:
    """Parse a saved document; an InputError (a usage error) says where it is not one."""
    from gmprof.errors import InputError, Location

    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        line = text.splitlines()[e.lineno - 1] if 0 < e.lineno <= len(text.splitlines()) \
            else None
        raise InputError(f"not JSON: {e.msg}", Location(name, e.lineno, e.colno, line)) \
            from None
    if isinstance(doc, dict) and doc.get("schema") == "gmprof.run/1":
        doc = _from_v1(doc)
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        found = doc.get("schema") if isinstance(doc, dict) else type(doc).__name__
        raise InputError(f"not a gmprof run document (schema {SCHEMA!r} expected, found "
                         f"{found!r}); save one with `gmprof profile ... --json > FILE.json`",
                         Location(name, 0, 0))
    from .check import check

    check(doc, name)  # a located error for any value the schema refuses
    return doc


def _from_v1(doc: dict) -> dict:
    """A gmprof.run/1 document read as /2: /1 had no intervals (none sampled had any)."""
    doc["schema"] = SCHEMA
    for k in doc.get("kernels") or []:
        if isinstance(k, dict):
            if k.get("schema") == "gmprof.report/1":
                k["schema"] = KERNEL_SCHEMA
            for a in k.get("arrays") or []:
                if isinstance(a, dict):
                    a.setdefault("intervals", None)
    return doc


def load(path) -> dict:
    """Read and parse a saved document (`-`: standard input)."""
    import sys

    from gmprof.errors import InputError

    name = str(path)
    try:
        if name == "-":
            text = sys.stdin.read()
        else:
            with open(name, encoding="utf-8") as fh:
                text = fh.read()
    except FileNotFoundError:
        raise InputError(f"{name}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{name} is a directory, not a saved report") from None
    except UnicodeDecodeError:
        raise InputError(f"{name}: not UTF-8 text (a saved report is JSON)") from None
    except OSError as e:
        raise InputError(f"{name}: cannot be read: {e.strerror}") from None
    return loads(text, name)
