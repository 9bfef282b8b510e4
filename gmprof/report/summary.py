"""`--print-summary per-kernel|per-gpu`: one row per kernel, or per device, instead of the
full tables (as Nsight Compute's --print-summary).

Stage: report (terminal rendering). Takes a run document (gmprof.run/2); prints a table
through tables.print_table. Counts are sums of the arrays' accesses, reads and writes; a sum
over arrays of which one is not exact carries the weakest label (`counts` column), so a
summary never shows as exact what is not.
"""
from __future__ import annotations

from .tables import NUM, WORD, Col, print_table

MODES = ("none", "per-kernel", "per-gpu")


def _sum(values):
    values = list(values)
    return None if any(v is None for v in values) else sum(values)


def _num(v) -> str:
    return "-" if v is None else f"{v:,}"


def _labels(kernels) -> str:
    found = [a.get("label_short") or a["label"] for k in kernels for a in k["arrays"]]
    return ", ".join(dict.fromkeys(found)) or "-"


def _row(kernels) -> list:
    arrays = [a for k in kernels for a in k["arrays"]]
    oor = sum(a["out_of_range"] for a in arrays)
    checks = sum(1 for k in kernels for w in k.get("warnings", []) if w.get("failed_check"))
    return [_num(sum(k["run"]["launches"] for k in kernels)),
            _num(sum(a["accesses"] for a in arrays)),
            _num(_sum(a["reads"] for a in arrays)), _num(_sum(a["writes"] for a in arrays)),
            _num(oor), _labels(kernels), "FAILED" if checks else "passed"]


_COUNT_COLS = [Col("launches", NUM), Col("accesses", NUM), Col("reads", NUM),
               Col("writes", NUM), Col("out of range", NUM, drop_if=("0",)),
               Col("counts", WORD, hoist=True, hoist_as="counts {}"),
               Col("checks", WORD, hoist=True, hoist_as="checks {}")]


def render(doc: dict, console, mode: str) -> None:
    """The summary table of `doc` for `mode` ('per-kernel' or 'per-gpu')."""
    kernels = doc["kernels"]
    if mode == "per-kernel":
        cols = [Col("kernel")] + _COUNT_COLS
        rows = [[k["kernel"]] + _row([k]) for k in kernels]
        print_table(console, "summary per kernel", cols, rows)
        return
    # per device: a whole program's breakdown names each process's device; a single run
    # has one device, the document's
    devices: dict = {}
    parts = (doc.get("program") or {}).get("breakdown") or []
    if parts:
        for p in parts:
            key = f"{p['host']} device {p['device']}"
            entry = devices.setdefault(key, {"kernels": set(), "launches": 0, "accesses": 0})
            entry["kernels"].add(p["kernel"])
            entry["launches"] += p["launches"]
            entry["accesses"] += sum(p["accesses"].values())
        rows = [[key, _num(len(e["kernels"])), _num(e["launches"]), _num(e["accesses"])]
                for key, e in devices.items()]
        print_table(console, "summary per device", [Col("device"), Col("kernels", NUM),
                                                   Col("launches", NUM),
                                                   Col("accesses", NUM)], rows)
        return
    name = f"{doc.get('backend')}: {doc.get('device')}"
    cols = [Col("device"), Col("kernels", NUM)] + _COUNT_COLS
    print_table(console, "summary per device", cols,
                [[name, _num(len(kernels))] + _row(kernels)])


__all__ = ["render", "MODES"]
