"""The run document (gmprof.run/2) as one self-contained HTML page, to explore.

Stage: report. Takes the document (and, from a run in this process, its Reports: their counts
are finer than a saved document's); returns the page's text, rendered from report.html (a
Jinja2 template beside this module, autoescaped) with its CSS and script (report.js) inline:
nothing is fetched, so the page works offline. At the top a summary of the run and its
kernels (and of a whole program's processes and devices), a navigation list of every kernel
and array; per kernel its launches, a sortable table of its arrays, each array's heat map
(every element its own cell up to heatgrid.MAX_DRAWN cells, binned above, click to zoom; a
static SVG overview without script), its access sites, and the source view coloured by each
line's traffic, whose array names (in code, not in comments) link to the arrays' sections.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from . import codelex
from .countcodec import decode
from .heatgrid import MAX_DRAWN, MAX_SIDE, counts_grid, drawn_grid, heatmap_as_drawn
from .heatsvg import svg_parts
from .source import display_path, line_rows
from .terminal import (fmt_count, kernel_heading, launch_shape_text, location_text,
                       lower_bound, per_text, shape_text, space_text, timing_measured)
from .warpview import histogram_pairs, how_text, summary, units, what, worst

_IDENT = re.compile(r"[A-Za-z_]\w*")


def _linked(text: str, anchors: dict):
    """Code, escaped, with every array name a link to the array's section."""
    from markupsafe import Markup, escape

    out, pos = [], 0
    for m in _IDENT.finditer(text):
        out.append(escape(text[pos:m.start()]))
        word = m.group(0)
        if word in anchors:
            out.append(Markup('<a href="#{}">{}</a>').format(anchors[word], word))
        else:
            out.append(escape(word))
        pos = m.end()
    out.append(escape(text[pos:]))
    return Markup("").join(out)


def _linked_lines(lines: list[str], anchors: dict) -> list:
    """A function's lines, escaped: names linked in code only, comments and literals as
    text (a comment may span lines, so the lines are lexed together)."""
    from markupsafe import Markup, escape

    out = []
    for pieces in codelex.parts([t.expandtabs(4) for t in lines]):
        html = [_linked(text, anchors) if kind == "code" else
                Markup('<span class="{}">{}</span>').format(kind, escape(text))
                for kind, text in pieces]
        out.append(Markup("").join(html))
    return out


def label_class(text: str) -> str:
    """The CSS class of a count's label: exact counts plain, the others in colour (approximate
    orange, sampled blue, thresholded purple, not counted grey)."""
    t = (text or "").lower()
    for word, cls in (("approximate", "approx"), ("sampled", "sampled"),
                      ("thresholded", "thr"), ("not counted", "none")):
        if word in t:
            return f"lab lab-{cls}"
    return "lab lab-exact"


def _traffic(executions, most) -> str:
    """A source line's background: white for no traffic, to orange for the function's
    busiest line."""
    if not executions or not most:
        return ""
    t = executions / most
    return f"background: rgba(245, 130, 32, {0.12 + 0.6 * t:.2f})"


def _grid_data(a: dict, stats) -> dict | None:
    """What the page's script draws for an array: its per-element counts (this run's
    ArrayStats, or the document's counts), else the document's reduced heat map."""
    hg = a.get("heatmap") or {}
    if hg.get("uniform") is not None or not hg.get("mean"):
        return None
    thr = a.get("threshold")
    if stats is not None:
        return drawn_grid(stats.grid(), thr)
    counts = decode(a.get("counts"))  # a list, packed, or (built in memory) a Counts
    if counts is not None and len(counts) == a["counters"]:
        return drawn_grid(counts_grid(counts, a["shape"], a["elem_size"],
                                      a["counter_unit_bytes"], thr), thr)
    return heatmap_as_drawn(hg)


def _script_json(data) -> str:
    """JSON safe inside a <script> element (no `</` can close it)."""
    from markupsafe import Markup

    text = json.dumps(data, separators=(",", ":"))
    return Markup(text.replace("<", "\\u003c").replace(">", "\\u003e")
                  .replace("&", "\\u0026"))


def _warp_panel(a: dict, sites: list) -> dict | None:
    """An array's warp requests (--access-stats): its sum, requests by wavefronts (sectors),
    and one row per site."""
    w = a.get("warps")
    if not w:
        return None

    def row(w, s=None):
        n = w["requests"]
        return {"where": s["where"] if s else "all sites", "text": s["text"] if s else "",
                "requests": fmt_count(n), "units": fmt_count(units(w)),
                "per": f"{units(w) / n:,.2f}" if n else "-",
                "ideal": f"{w['ideal'] / n:,.2f}" if n else "-",
                "worst": "-" if worst(w) is None else
                ((">=" if worst(w) == 32 else "") + str(worst(w))),
                "lines": "" if w.get("lines") is None or not n else f"{w['lines'] / n:,.2f}",
                "how": how_text(w), "summary": summary(w)}

    return {"what": what(w), "device": w["space"] != "shared", "total": row(w),
            "histogram": ", ".join(f"{k}: {c:,}" for k, c in histogram_pairs(w)),
            "sites": [row(s["warps"], s) for s in sites
                      if s["object"] == a["name"] and s.get("warps")]}


def _line_warps(k: dict) -> dict:
    """(file, line) -> the warp requests of the sites on it, in words (the source view's
    column): `shared_data: 6.67 wavefronts/req (up to 8-way)`."""
    out: dict = {}
    for s in k["sites"]:
        if not s.get("warps") or not s["warps"]["requests"]:
            continue
        file, line, _ = s["location"].rsplit(":", 2)
        text = f"{s['object']}: {summary(s['warps'])}" if s.get("object") else \
            summary(s["warps"])
        out.setdefault((file, int(line)), []).append(text)
    return out


def _array_view(a: dict, kid: str, index: int, stats=None) -> dict:
    from markupsafe import Markup

    hg = a.get("heatmap") or {}
    thr = a.get("threshold")
    uniform = hg.get("uniform")
    picture = legend = None
    if hg and uniform is None and hg.get("mean"):
        drawn_svg, legend, notes = svg_parts(hg, a["name"], f"{kid}-a{index}")
        picture, legend = Markup(drawn_svg + notes), Markup(legend)
    if uniform is not None:
        what = "element" if hg.get("shape") else "counter"
        uniform = f"every {what}: {fmt_count(uniform, thr)}" + \
            (" (never accessed)" if uniform == 0 else "")
    label = a.get("label_short") or a.get("label")
    drawn = _grid_data(a, stats) if picture is not None else None
    notes = []
    if drawn and drawn["block"] != [1, 1]:
        by, bx = drawn["block"]
        n = drawn["elements"][0] * drawn["elements"][1]
        limit = f"the {MAX_DRAWN:,} cells" if n > MAX_DRAWN else \
            f"the {MAX_SIDE:,} cells a side"
        notes.append(f"{n:,} elements: more than {limit} a map draws one by one, so each "
                     f"cell is a bin of {bx if drawn['one_d'] else f'{by} x {bx}'} elements, "
                     "coloured by its mean (hover: min and max)")
    if drawn and len(drawn["declared"]) > 2:
        notes.append(f"declared {' x '.join(map(str, drawn['declared']))}: the leading "
                     "dimensions run down the rows (hover shows the full index)")
    enhanced = a.get("counts_are", "accesses") != "accesses"
    return {
        "id": f"{kid}-a{index}", "name": a["name"], "space": space_text(a["space"]),
        "elem_type": a["elem_type"], "shape": shape_text(a["shape"]), "per": per_text(a),
        "label": label + (", last live range" if enhanced else ""),
        "label_text": a.get("label_text", label), "enhanced": enhanced,
        "accesses": lower_bound(a, fmt_count(a["accesses"])),
        "reads": fmt_count(a["reads"]) or "n/a", "writes": fmt_count(a["writes"]) or "n/a",
        "min": fmt_count(a["min"], thr),
        "max": fmt_count(a["max"], thr), "mean": lower_bound(a, fmt_count(float(a["mean"]), thr)),
        "untouched": fmt_count(a["untouched"]),
        "at_threshold": fmt_count(a["at_threshold"]) if thr is not None else None,
        "out_of_range": fmt_count(a["out_of_range"]),
        "declared_at": display_path(a.get("declared_at") or ""),
        "where": a.get("counters_where", ""), "picture": picture, "uniform": uniform,
        "data": _script_json(drawn) if drawn else None, "map_notes": notes,
        "legend": legend,
        "label_class": label_class(label),
        "live_ranges": a.get("live_ranges") if (a.get("live_ranges") or {}).get("ranges")
        else None,
    }


def _with_warps(view: dict, a: dict, sites: list) -> dict:
    view["warps"] = _warp_panel(a, sites)
    return view


def _kernel_view(k: dict, i: int, report=None) -> dict:
    kid = f"k{i}"
    stats = {}
    if report is not None and report.run.kernel == k["kernel"]:
        stats = {j: s for j, s in enumerate(report.arrays)
                 if j < len(k["arrays"]) and k["arrays"][j]["name"] == s.name}
    arrays = [_array_view(a, kid, j, stats.get(j)) for j, a in enumerate(k["arrays"])]
    anchors = {a["name"]: a["id"] for a in arrays}
    single = None
    files = {s["location"].rsplit(":", 2)[0] for s in k["sites"]}
    if len(files) == 1:
        single = files.pop()
    located = [dict(s, where=location_text(s["location"], single)) for s in k["sites"]]
    arrays = [_with_warps(v, a, located) for v, a in zip(arrays, k["arrays"])]
    line_warps = _line_warps(k)
    sites = [{"where": location_text(s["location"], single), "text": s["text"],
              "object": s.get("object"), "anchor": anchors.get(s.get("object")),
              "kind": s["kind"],
              "executions": "-" if s["executions"] is None else fmt_count(s["executions"]),
              "sort": -1 if s["executions"] is None else s["executions"],
              "how": s.get("how_text") or s["how"], "classes": ", ".join(s.get("classes", [])),
              "how_class": label_class(s.get("how_text") or s["how"])}
             for s in k["sites"]]
    source = []
    for fn in line_rows(k):
        most = max((r["executions"] or 0 for r in fn["rows"]), default=0)
        code = _linked_lines([r["text"] for r in fn["rows"]], anchors)
        rows = [{"line": r["line"], "reads": fmt_count(r["reads"]),
                 "writes": fmt_count(r["writes"]), "executions": fmt_count(r["executions"]),
                 "how": ", ".join(r["how"]), "hot": bool(r["sites"]),
                 "how_class": label_class(", ".join(r["how"])),
                 "style": _traffic(r["executions"], most), "code": c,
                 "warps": line_warps.get((fn["file"], r["line"]), [])}
                for r, c in zip(fn["rows"], code)]
        source.append({"function": fn["function"], "file": display_path(fn["file"]),
                       "rows": rows})
    heading = kernel_heading(k)
    return {
        "id": kid, "name": k["kernel"], "heading": heading[0], "details": heading[1:],
        "launches": k["run"]["launches"], "mode": k["run"]["mode"],
        "shape": launch_shape_text(k),
        "labels": ", ".join(dict.fromkeys(a["label"] for a in arrays)),
        "labels_class": label_class(" ".join(a["label"] for a in arrays)),
        "timed": timing_measured(k), "arrays": arrays, "sites": sites,
        "warps": bool(line_warps),
        "site_file": display_path(single) if single else None, "source": source,
        "notes": k.get("notes", []),
        # gmprof advise / --advice: the ranked changes, each array linked to its map
        "advice": [{"rank": x["rank"], "kind": x["kind"], "array": x["array"],
                    "anchor": anchors.get(x["array"]), "text": x["text"],
                    "saves": fmt_count(x["saves_bytes"]), "sort": x["saves_bytes"],
                    "frees": fmt_count(x.get("frees_bytes", 0)),
                    "label": x["prediction"].get("label", "")}
                   for x in k.get("advice") or []],
        "warnings": [w.get("text") or w.get("message") for w in k.get("warnings", [])],
        "failed": any(w.get("failed_check") for w in k.get("warnings", [])),
        # whole programs' launches were not compared (None): neither identical nor different
        "outputs": "differ" if any(x.get("outputs_identical") is False for x in k["launches"])
        else "identical" if all(x.get("outputs_identical") for x in k["launches"])
        else "not compared",
    }


def _program_view(prog: dict | None) -> dict | None:
    """A whole program's processes and its breakdown per process, device and kernel."""
    if not prog:
        return None

    def per_kernel(d):
        return ", ".join(f"{k} {v:,}" for k, v in (d or {}).items()) if isinstance(d, dict) \
            else ("" if d is None else str(d))

    processes = [{"file": display_path(p.get("file") or ""), "pid": p.get("pid"),
                  "host": p.get("host"), "backend": p.get("backend"),
                  "launches": p.get("launches"), "profiled": p.get("profiled"),
                  "not_instrumented": per_kernel(p.get("not_instrumented")),
                  "captured": per_kernel(p.get("captured"))}
                 for p in prog.get("processes") or []]
    parts = [{"process": f"{p.get('pid')}@{p.get('host')}", "device": p.get("device"),
              "kernel": p.get("kernel"), "launches": p.get("launches"),
              "accesses": per_kernel(p.get("accesses")),
              "total": sum((p.get("accesses") or {}).values()),
              "ms": p.get("instrumented_ms")}
             for p in prog.get("breakdown") or []]
    return {"processes": processes, "parts": parts, "notes": prog.get("notes") or []}


def page_script() -> str:
    """report.js, inline (the page fetches nothing)."""
    from markupsafe import Markup

    return Markup(Path(__file__).with_name("report.js").read_text())


def html_text(doc: dict, reports=None) -> str:
    """The page; reports: this run's Reports, in the document's kernel order (their counts
    draw every element of arrays whose document leaves the counts out)."""
    from jinja2 import Environment

    env = Environment(autoescape=True, trim_blocks=True, lstrip_blocks=True)
    template = env.from_string(Path(__file__).with_name("report.html").read_text())
    reports = list(reports or [])
    kernels = [_kernel_view(k, i, reports[i] if i < len(reports) else None)
               for i, k in enumerate(doc["kernels"])]
    sample = doc.get("sample")
    title = f"sample {sample['name']}" if sample else ", ".join(k["name"] for k in kernels)
    return template.render(doc=doc, kernels=kernels, sample=sample, title=title,
                           failed=doc.get("failed_checks", []),
                           program=_program_view(doc.get("program")), script=page_script())
