"""Render a Report: aligned text tables (rich), JSON (schema gmprof.report/1), CSV, and HTML
with a heat map per array in its declared shape.

Takes Reports from the runtime; returns text (or writes files through the caller). The JSON
schema is documented in docs/report.md.
"""
from __future__ import annotations

import base64
import csv
import html
import io
import json

import numpy as np

from .model import Report

SCHEMA = "gmprof.report/1"


def _fmt_ms(v) -> str:
    return "-" if v is None else f"{v:.3f} ms"


def _fmt_overhead(v) -> str:
    return "-" if v is None else f"{v:.2f}x"


# -- JSON ---------------------------------------------------------------------------------

def to_json(report: Report, include_counts: bool = False) -> dict:
    run = report.run
    out = {
        "schema": SCHEMA,
        "run": {
            "kernel": run.kernel, "backend": run.backend, "device": run.device,
            "mode": run.mode, "grid": list(run.grid), "block": list(run.block),
            "shared_mem": run.shared_mem, "launches": run.launches,
            "native_ms": run.native_ms, "instrumented_ms": run.instrumented_ms,
            "overhead": run.overhead, "timing_repeats": run.timing_repeats,
            "timing_note": run.timing_note, "counter_bytes": run.counter_bytes,
            "counters_in": run.counters_in, "counters_why": run.counters_why,
            "outputs_identical": run.outputs_identical,
        },
        "arrays": [],
        "sites": [],
        "notes": list(report.notes),
        "warnings": [{"kind": w.kind, "message": w.message,
                      "location": str(w.location) if w.location else None}
                     for w in report.warnings],
    }
    for a in report.arrays:
        entry = {
            "name": a.name, "space": a.space, "elem_type": a.elem_type,
            "shape": [int(s) for s in a.shape], "elem_size": a.elem_size,
            "counter_unit_bytes": a.unit, "counters": a.counters, "label": a.label,
            "threshold": a.threshold, "sampling": a.sampling,
            "accesses": a.accesses, "reads": a.reads, "writes": a.writes,
            "min": a.min, "max": a.max, "mean": a.mean, "untouched": a.untouched,
            "at_threshold": a.saturated, "out_of_range": a.out_of_range,
            "static_share": a.static_share, "counters_where": a.where,
            "declared_at": a.declared_at, "live_ranges": a.live_ranges,
        }
        if a.live_ranges and a.live_ranges["ranges"]:
            entry["live_ranges"] = dict(a.live_ranges, mean_accesses_per_range=
                                        a.live_ranges["accesses"] / a.live_ranges["ranges"])
        if include_counts:
            entry["counts"] = a.counts.tolist()
        out["arrays"].append(entry)
    for s in report.sites:
        out["sites"].append({"id": s.id, "location": s.location, "text": s.text,
                             "function": s.function, "object": s.object, "kind": s.kind,
                             "executions": s.executions, "how": s.how, "classes": s.classes,
                             "strategy": s.strategy})
    return out


def json_text(report: Report, include_counts: bool = False) -> str:
    return json.dumps(to_json(report, include_counts), indent=2)


# -- CSV ----------------------------------------------------------------------------------

def csv_text(report: Report) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["array", "space", "elem_type", "shape", "counter_unit_bytes", "label",
                "accesses", "reads", "writes", "min", "max", "mean", "untouched",
                "at_threshold", "out_of_range", "static_share"])
    for a in report.arrays:
        w.writerow([a.name, a.space, a.elem_type, "x".join(str(s) for s in a.shape), a.unit,
                    a.label, a.accesses, a.reads, a.writes, a.min, a.max, f"{a.mean:.4f}",
                    a.untouched, a.saturated, a.out_of_range, f"{a.static_share:.3f}"])
    w.writerow([])
    w.writerow(["site", "location", "text", "function", "object", "kind", "executions", "how"])
    for s in report.sites:
        w.writerow([s.id, s.location, s.text, s.function, s.object, s.kind, s.executions, s.how])
    return buf.getvalue()


# -- text ---------------------------------------------------------------------------------

def render_text(report: Report, console) -> None:
    from rich.table import Table
    from rich.text import Text

    run = report.run
    head = (f"kernel {run.kernel}  grid {tuple(run.grid)} block {tuple(run.block)}"
            f"{f'  shared_mem {run.shared_mem}' if run.shared_mem else ''}  "
            f"mode {run.mode}  {run.backend}: {run.device}")
    console.print(Text(head, style="bold"))
    timing = (f"native {_fmt_ms(run.native_ms)}, instrumented {_fmt_ms(run.instrumented_ms)}"
              f" (median of {run.timing_repeats}), overhead {_fmt_overhead(run.overhead)}")
    if run.timing_note:
        timing += f"  [{run.timing_note}]"
    console.print(Text(timing))
    console.print(Text(f"counters: {run.counter_bytes:,} bytes; {run.counters_why}"))
    if run.outputs_identical is not None:
        console.print(Text("outputs: identical to the uninstrumented kernel" if
                           run.outputs_identical else "outputs: DIFFER from the uninstrumented "
                           "kernel", style=None if run.outputs_identical else "bold red"))
    table = Table(title="arrays", show_lines=False)
    for col in ("array", "space", "shape", "per", "accesses", "reads", "writes", "min", "max",
                "mean", "untouched", "counts"):
        table.add_column(col, justify="right" if col not in ("array", "space", "shape", "per",
                                                             "counts") else "left")
    for a in report.arrays:
        per = "word" if a.unit == 4 and a.space.startswith("shared") else \
            f"{a.unit}-byte elem"
        shape = "x".join(str(s) for s in a.shape) or "-"
        label = a.label
        if a.sampling:
            label += f" (rate {a.sampling:g})"
        if a.threshold is not None:
            label += f" (THR {a.threshold})"
        table.add_row(*(Text(x) for x in (
            a.name, a.space, shape, per, f"{a.accesses:,}", f"{a.reads:,}", f"{a.writes:,}",
            a.fmt(a.min), a.fmt(a.max), a.fmt(a.mean) if a.threshold is None or a.mean <
            a.threshold else f">={a.threshold}", f"{a.untouched:,}", label)))
    console.print(table)
    lr = [a for a in report.arrays if a.live_ranges and a.live_ranges["ranges"]]
    for a in lr:
        L = a.live_ranges
        console.print(Text(f"live ranges of {a.name}: {L['ranges']:,} (word, range) pairs, "
                           f"{L['accesses'] / L['ranges']:.2f} accesses per word per live range;"
                           f" histogram 1,2,3,4,5-8,9-16,...: {L['histogram']}"))
    sites = Table(title="access sites")
    for col in ("site", "expression", "access", "executions", "counted"):
        sites.add_column(col, justify="right" if col == "executions" else "left")
    for s in report.sites:
        sites.add_row(*(Text(x) for x in (s.location, s.text, s.kind, f"{s.executions:,}",
                                          s.how)))
    console.print(sites)
    for note in report.notes:
        console.print(Text(f"note: {note}", style="yellow"))


# -- HTML ---------------------------------------------------------------------------------

def _heatmap_png(a) -> str | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception:
        return None
    grid = a.grid()
    if grid.ndim == 1:
        n = grid.size
        width = int(np.ceil(np.sqrt(n))) if n > 64 else n
        pad = (-n) % max(width, 1)
        grid = np.concatenate([grid.astype(float), np.full(pad, np.nan)]).reshape(-1, width) \
            if width else grid.reshape(1, -1)
    elif grid.ndim > 2:
        grid = grid.reshape(-1, grid.shape[-1])
    if grid.size > 1_000_000:  # keep the picture readable: average blocks of cells
        fy = max(1, grid.shape[0] // 1000)
        fx = max(1, grid.shape[1] // 1000)
        h, w = grid.shape[0] // fy * fy, grid.shape[1] // fx * fx
        grid = grid[:h, :w].reshape(h // fy, fy, w // fx, fx).mean(axis=(1, 3))
    fig, ax = plt.subplots(figsize=(5, 4), dpi=100)
    im = ax.imshow(grid.astype(float), cmap="viridis", aspect="auto", interpolation="nearest")
    fig.colorbar(im, ax=ax, label="accesses" + (f" (capped at {a.threshold})"
                                               if a.threshold else ""))
    ax.set_title(f"{a.name} {list(a.shape)}")
    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode()


def html_text(report: Report) -> str:
    data = to_json(report)
    run = data["run"]
    e = html.escape
    rows = []
    for a in report.arrays:
        img = _heatmap_png(a)
        pic = f'<img alt="heat map of {e(a.name)}" src="data:image/png;base64,{img}">' if img \
            else "(matplotlib not available)"
        lr = ""
        if a.live_ranges and a.live_ranges["ranges"]:
            L = a.live_ranges
            lr = (f"<p>live ranges: {L['ranges']:,} (word, range) pairs, "
                  f"{L['accesses'] / L['ranges']:.2f} accesses per word per live range</p>")
        rows.append(f"""
<section>
<h3>{e(a.name)} <small>{e(a.space)} {e(a.elem_type)} {e(str(list(a.shape)))}</small></h3>
<table><tr><th>accesses</th><th>reads</th><th>writes</th><th>min</th><th>max</th><th>mean</th>
<th>untouched</th><th>at threshold</th><th>out of range</th><th>counts are</th></tr>
<tr><td>{a.accesses:,}</td><td>{a.reads:,}</td><td>{a.writes:,}</td><td>{e(a.fmt(a.min))}</td>
<td>{e(a.fmt(a.max))}</td><td>{a.mean:,.2f}</td><td>{a.untouched:,}</td><td>{a.saturated:,}</td>
<td>{a.out_of_range:,}</td><td>{e(a.label)}</td></tr></table>
{lr}{pic}
</section>""")
    sites = "".join(
        f"<tr><td>{e(s.location)}</td><td><code>{e(s.text)}</code></td><td>{e(s.kind)}</td>"
        f"<td>{s.executions:,}</td><td>{e(s.how)}</td><td>{e(', '.join(s.classes))}</td></tr>"
        for s in report.sites)
    notes = "".join(f"<li>{e(n)}</li>" for n in report.notes)
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>gmprof: {e(run['kernel'])}</title>
<style>body{{font-family:sans-serif;margin:2em}} table{{border-collapse:collapse;margin:.5em 0}}
td,th{{border:1px solid #ccc;padding:2px 6px;text-align:right}} code{{font-size:90%}}
section{{margin-bottom:2em}}</style></head><body>
<h1>gmprof report: {e(run['kernel'])}</h1>
<p>{e(run['backend'])}: {e(run['device'])}; mode {e(run['mode'])}; grid {run['grid']} block
{run['block']}; native {_fmt_ms(run['native_ms'])}, instrumented
{_fmt_ms(run['instrumented_ms'])}, overhead {_fmt_overhead(run['overhead'])}
{e(run['timing_note'])}; counters {run['counter_bytes']:,} bytes ({e(run['counters_why'])});
outputs identical to the uninstrumented kernel: {run['outputs_identical']}</p>
<h2>Arrays</h2>{''.join(rows)}
<h2>Access sites</h2>
<table><tr><th>site</th><th>expression</th><th>access</th><th>executions</th><th>counted</th>
<th>classes</th></tr>{sites}</table>
<ul>{notes}</ul>
</body></html>
"""
