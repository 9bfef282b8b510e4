"""A Report for notebooks and pandas: to_dict(), to_pandas() and a compact HTML table.

Stage: report. Takes a Report; returns plain data: the kernel's part of a run document with
every count as a list (to_dict), pandas DataFrames of its arrays, sites, source lines and
per-counter counts (to_pandas; pandas is optional and imported here only), or HTML for
Jupyter's rich display (_repr_html_). Every table carries the label columns that say how its
counts were obtained (docs/report.md).

    report.to_pandas("arrays")        # one row per array
    report.to_pandas()                # {"arrays": df, "sites": df, "lines": df, "counts": df}
"""
from __future__ import annotations

import html

KINDS = ("arrays", "sites", "lines", "counts")
_ARRAY_SKIP = ("counts", "heatmap", "live_ranges")  # lists and objects: not one cell each


def to_dict(report) -> dict:
    """The kernel's part of a run document (gmprof.report/1), counts as lists."""
    from .document import kernel_entry

    return kernel_entry(report, include_counts=True)


def _pandas():
    try:
        import pandas
    except ImportError:
        from gmprof.errors import OptionError

        raise OptionError("to_pandas() needs pandas: python3 -m pip install pandas") from None
    return pandas


def to_pandas(report, kind: str | None = None):
    """A DataFrame of `kind` (arrays, sites, lines or counts), or a dict of all four."""
    if kind is not None and kind not in KINDS:
        from gmprof.errors import OptionError

        raise OptionError(f"kind={kind!r}: use one of {', '.join(map(repr, KINDS))} (or None "
                          "for all of them)")
    pd = _pandas()
    entry = to_dict(report)
    name = entry["kernel"]
    tables = {}
    if kind in (None, "arrays"):
        rows = [{"kernel": name, **{k: v for k, v in a.items() if k not in _ARRAY_SKIP}}
                for a in entry["arrays"]]
        for row, a in zip(rows, entry["arrays"]):
            row["shape"] = tuple(row["shape"])
            if a.get("live_ranges"):
                row.update({f"live_ranges_{k}": v for k, v in a["live_ranges"].items()
                            if k != "histogram"})
        tables["arrays"] = pd.DataFrame(rows, columns=None if rows else
                                        ["kernel", "name", "space", "accesses", "reads",
                                         "writes", "label"])
    if kind in (None, "sites"):
        rows = [{"kernel": name, **s} for s in entry["sites"]]
        tables["sites"] = pd.DataFrame(rows, columns=None if rows else
                                       ["kernel", "id", "location", "text", "kind",
                                        "executions", "how"])
    if kind in (None, "lines"):
        rows = [{"kernel": name, **r} for r in entry.get("lines") or []]
        tables["lines"] = pd.DataFrame(rows, columns=None if rows else
                                       ["kernel", "file", "line", "function", "reads",
                                        "writes", "executions", "how", "arrays"])
    if kind in (None, "counts"):
        tables["counts"] = _counts(pd, report)
    return tables[kind] if kind is not None else tables


def _counts(pd, report):
    """One row per counter: kernel, array, counter (flat, row-major), its index in the
    array's shape where the counters are the elements (i0, i1, ...), count and label."""
    import numpy as np

    from .where import to_host

    frames = []
    for a in report.arrays:
        counts = np.asarray(to_host(a.counts)).reshape(-1)
        frame = {"kernel": report.run.kernel, "array": a.name,
                 "counter": np.arange(counts.size), "count": counts, "label": a.label}
        shape = tuple(int(s) for s in a.shape)
        if len(shape) > 1 and int(np.prod(shape)) == counts.size:
            for d, idx in enumerate(np.unravel_index(np.arange(counts.size), shape)):
                frame[f"i{d}"] = idx
        frames.append(pd.DataFrame(frame))
    if not frames:
        return pd.DataFrame(columns=["kernel", "array", "counter", "count", "label"])
    return pd.concat(frames, ignore_index=True)


def repr_html(report) -> str:
    """A compact table for Jupyter: the launches, then one row per array with its counts."""
    from .document import kernel_entry

    entry = kernel_entry(report, include_counts=False)
    run = entry["run"]
    e = html.escape
    head = (f"<b>{e(entry['kernel'])}</b>: {run['launches']} launch"
            f"{'es' if run['launches'] != 1 else ''}, grid {tuple(run['grid'])}, block "
            f"{tuple(run['block'])}, {e(run['mode'])} mode on {e(run['backend'])}")
    cols = ("array", "space", "shape", "accesses", "reads", "writes", "min", "max", "mean",
            "counts")
    rows = []
    for a in entry["arrays"]:
        cells = [a["name"], a["space"], "x".join(map(str, a["shape"])),
                 *(("-" if a[k] is None else f"{a[k]:,}") for k in ("accesses", "reads",
                                                                     "writes", "min", "max")),
                 f"{a['mean']:,.2f}", a["label_short"]]
        rows.append("<tr>" + "".join(f"<td>{e(str(c))}</td>" for c in cells) + "</tr>")
    failed = [w["text"] for w in entry["warnings"] if w["failed_check"]]
    foot = "".join(f"<div style='color:#b00'>{e(t)}</div>" for t in failed)
    return (f"<div class='gmprof-report'><div>{head}</div><table>"
            "<thead><tr>" + "".join(f"<th>{c}</th>" for c in cols) + "</tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>"
            f"<div>{len(entry['sites'])} access sites: report.to_pandas('sites')</div>"
            f"{foot}</div>")


__all__ = ["to_dict", "to_pandas", "repr_html", "KINDS"]
