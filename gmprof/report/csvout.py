"""The run document (gmprof.run/1) as CSV: one file for every kernel of the run.

Stage: report. Takes the document; returns CSV text with three tables separated by blank
lines, each row naming its kernel: arrays, access sites, and (when the document carries the
source) lines. Counts are plain integers (no separators, no `>=`): the `label`, `threshold`
and `sampling` columns say how each was obtained, and `how` does for sites and lines.
"""
from __future__ import annotations

import csv
import io

ARRAY_COLUMNS = ["kernel", "array", "space", "elem_type", "shape", "counter_unit_bytes",
                 "label", "threshold", "sampling", "counts_are", "accesses", "reads", "writes",
                 "min", "max", "mean", "untouched", "at_threshold", "out_of_range",
                 "static_share"]
SITE_COLUMNS = ["kernel", "site", "location", "text", "function", "object", "kind",
                "executions", "how"]
LINE_COLUMNS = ["kernel", "file", "line", "function", "reads", "writes", "executions", "how",
                "arrays"]


def csv_text(doc: dict) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(ARRAY_COLUMNS)
    for k in doc["kernels"]:
        for a in k["arrays"]:
            w.writerow([k["kernel"], a["name"], a["space"], a["elem_type"],
                        "x".join(str(s) for s in a["shape"]), a["counter_unit_bytes"],
                        a["label"], "" if a.get("threshold") is None else a["threshold"],
                        "" if a.get("sampling") is None else a["sampling"],
                        a.get("counts_are", "accesses"), a["accesses"], a["reads"],
                        a["writes"], a["min"], a["max"], f"{a['mean']:.4f}", a["untouched"],
                        a["at_threshold"], a["out_of_range"], f"{a['static_share']:.3f}"])
    w.writerow([])
    w.writerow(SITE_COLUMNS)
    for k in doc["kernels"]:
        for s in k["sites"]:
            w.writerow([k["kernel"], s["id"], s["location"], s["text"], s["function"],
                        s["object"] or "", s["kind"],
                        "" if s["executions"] is None else s["executions"],
                        s.get("how_text") or s["how"]])
    if any(k.get("lines") for k in doc["kernels"]):
        w.writerow([])
        w.writerow(LINE_COLUMNS)
        for k in doc["kernels"]:
            for r in k.get("lines") or []:
                w.writerow([k["kernel"], r["file"], r["line"], r["function"],
                            *("" if r[f] is None else r[f] for f in
                              ("reads", "writes", "executions")), "; ".join(r["how"]),
                            " ".join(r["arrays"])])
    return buf.getvalue()
