"""Sampled counts' intervals checked against exact counts: `gmprof compare`, and
bench/sampling_coverage.py over the paper's samples (docs/results/sampling.md).

Stage: report. Takes a sampled Report and an exact one of the same launches; returns one row
per sampled array and count (accesses, reads, writes, the largest per-element count): the
exact count, the estimate, the 95% interval (report/interval.py via document.intervals) and
whether the exact count lies inside it.
"""
from __future__ import annotations

from .document import intervals
from .interval import covers

COUNTS = ("accesses", "reads", "writes", "max")


def exact_values(report) -> dict:
    """array name -> {count: exact value} of an exact report (None where not split)."""
    return {a.name: {"accesses": a.accesses, "reads": a.reads, "writes": a.writes,
                     "max": a.max} for a in report.arrays}


def interval_checks(sampled, exact: dict) -> list[dict]:
    """Rows {array, count, exact, estimate, low, high, design_effect, interval, covered} for
    each sampled array of `sampled` that `exact` (exact_values) holds."""
    rows = []
    for a in sampled.arrays:
        iv = intervals(a, a.summary())
        truth = exact.get(a.name)
        if iv is None or truth is None:
            continue
        for count in COUNTS:
            e = iv[count]
            if e is None or truth[count] is None:
                continue
            rows.append({"array": a.name, "count": count, "exact": truth[count],
                         "estimate": e["estimate"], "low": e["low"], "high": e["high"],
                         "design_effect": e["design_effect"], "interval": e["interval"],
                         "covered": covers(e, truth[count])})
    return rows


def coverage_text(rows: list[dict], count: str | None = "accesses") -> str:
    """'k of n arrays (p%)' of rows (one count, or all of them when count is None)."""
    sel = [r for r in rows if count is None or r["count"] == count]
    if not sel:
        return "no sampled arrays"
    k = sum(r["covered"] for r in sel)
    return f"{k} of {len(sel)} ({k / len(sel):.1%})"


__all__ = ["COUNTS", "exact_values", "interval_checks", "coverage_text"]
