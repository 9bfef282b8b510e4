"""The run document (gmprof.run/2) as CSV: one file for every kernel of the run.

Stage: report. Takes the document; returns CSV text with three tables separated by blank
lines, each row naming its kernel: arrays, access sites, and (when the document carries the
source) lines (csv_text, `--csv FILE`); or one of them, or every counter's count, as one table
that pandas.read_csv loads as it is (page_text, `--csv --page PAGE`). Counts are plain integers (no separators, no `>=`): the `label`, `threshold`
and `sampling` columns say how each was obtained, and `how` does for sites and lines. A run
with --access-stats adds its warp requests to the arrays and sites (warpview.CSV_COLUMNS).
"""
from __future__ import annotations

import csv
import io

from .warpview import CSV_COLUMNS as WARP_COLUMNS
from .warpview import csv_cells

ARRAY_COLUMNS = ["kernel", "array", "space", "elem_type", "shape", "counter_unit_bytes",
                 "label", "threshold", "sampling", "counts_are", "accesses", "reads", "writes",
                 "min", "max", "mean", "untouched", "at_threshold", "out_of_range",
                 "static_share"]
# sampled counts' 95% intervals (report/interval.py); blank where a count is not sampled
INTERVAL_COUNTS = ("accesses", "reads", "writes", "max")
ARRAY_COLUMNS += [f"{c}_{end}" for c in INTERVAL_COUNTS for end in ("low", "high")]
SITE_COLUMNS = ["kernel", "site", "location", "text", "function", "object", "kind",
                "executions", "how"]
LINE_COLUMNS = ["kernel", "file", "line", "function", "reads", "writes", "executions", "how",
                "arrays"]


PAGES = ("details", "sites", "source", "raw")
RAW_COLUMNS = ["kernel", "array", "counter", "count"]


def _has_warps(doc) -> bool:
    """A run with --access-stats: its tables get the warp-request columns (WARP_COLUMNS)."""
    return any(s.get("warps") for k in doc["kernels"] for s in k["sites"])


def _arrays(w, doc) -> None:
    warps = _has_warps(doc)
    w.writerow(ARRAY_COLUMNS + (WARP_COLUMNS if warps else []))
    for k in doc["kernels"]:
        for a in k["arrays"]:
            w.writerow([k["kernel"], a["name"], a["space"], a["elem_type"],
                        "x".join(str(s) for s in a["shape"]), a["counter_unit_bytes"],
                        a["label"], "" if a.get("threshold") is None else a["threshold"],
                        "" if a.get("sampling") is None else a["sampling"],
                        a.get("counts_are", "accesses"), a["accesses"], a["reads"],
                        a["writes"], a["min"], a["max"], f"{a['mean']:.4f}", a["untouched"],
                        a["at_threshold"], a["out_of_range"], f"{a['static_share']:.3f}",
                        *_interval_cells(a),
                        *(csv_cells(a.get("warps")) if warps else [])])



def _interval_cells(a) -> list:
    iv = a.get("intervals") or {}
    out = []
    for count in INTERVAL_COUNTS:
        e = iv.get(count)
        out += ["", ""] if e is None else [f"{e['low']:.0f}", f"{e['high']:.0f}"]
    return out


def _sites(w, doc) -> None:
    warps = _has_warps(doc)
    w.writerow(SITE_COLUMNS + (WARP_COLUMNS if warps else []))
    for k in doc["kernels"]:
        for s in k["sites"]:
            w.writerow([k["kernel"], s["id"], s["location"], s["text"], s["function"],
                        s["object"] or "", s["kind"],
                        "" if s["executions"] is None else s["executions"],
                        s.get("how_text") or s["how"],
                        *(csv_cells(s.get("warps")) if warps else [])])


def _lines(w, doc) -> None:
    w.writerow(LINE_COLUMNS)
    for k in doc["kernels"]:
        for r in k.get("lines") or []:
            w.writerow([k["kernel"], r["file"], r["line"], r["function"],
                        *("" if r[f] is None else r[f] for f in
                          ("reads", "writes", "executions")), "; ".join(r["how"]),
                        " ".join(r["arrays"])])


def _raw(w, doc) -> None:
    """One row per counter: the per-element counts (row-major in the array's shape; the
    counter unit is the arrays page's counter_unit_bytes). An array saved without its counts
    (include_counts=False) has no rows."""
    from .countcodec import decode

    w.writerow(RAW_COLUMNS)
    for k in doc["kernels"]:
        for a in k["arrays"]:
            counts = decode(a.get("counts"))
            if counts is None:
                continue
            name = k["kernel"], a["name"]
            w.writerows((*name, i, c) for i, c in enumerate(counts.tolist()))


def page_text(doc: dict, page: str = "details") -> str:
    """One table, loadable as it is (pandas.read_csv): `details` the arrays, `sites` the
    access sites, `source` the lines, `raw` every counter's count (as Nsight Compute's
    --csv --page details|source|raw)."""
    buf = io.StringIO()
    {"details": _arrays, "sites": _sites, "source": _lines, "raw": _raw}[page](
        csv.writer(buf, lineterminator="\n"), doc)
    return buf.getvalue()


def csv_text(doc: dict) -> str:
    """Every table in one file (arrays, sites, lines), separated by blank lines."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    _arrays(w, doc)
    w.writerow([])
    _sites(w, doc)
    if any(k.get("lines") for k in doc["kernels"]):
        w.writerow([])
        _lines(w, doc)
    return buf.getvalue()
