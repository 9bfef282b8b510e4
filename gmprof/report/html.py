"""The run document (gmprof.run/1) as one self-contained HTML page.

Stage: report. Takes the document; returns the page's text, rendered from report.html (a Jinja2
template beside this module, autoescaped) with inline CSS and inline SVG heat maps: nothing is
fetched, no script runs. At the top a summary of the run and its kernels, then a navigation
list of every kernel and array; per kernel its launches, a table of its arrays, each array's
heat map in its declared shape (or one line when every element has the same count), its
access sites, and the source view, whose array names link to the arrays' sections.
"""
from __future__ import annotations

import re
from pathlib import Path

from .heatsvg import svg
from .source import display_path, line_rows
from .terminal import (fmt_count, kernel_heading, launch_shape_text, location_text,
                       lower_bound, per_text, shape_text, space_text, timing_measured)

_IDENT = re.compile(r"[A-Za-z_]\w*")


def _linked_code(text: str, anchors: dict):
    """A line of code, escaped, with every array name a link to the array's section."""
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


def _array_view(a: dict, kid: str, index: int) -> dict:
    from markupsafe import Markup

    hg = a.get("heatmap") or {}
    thr = a.get("threshold")
    uniform = hg.get("uniform")
    picture = None
    if hg and uniform is None and hg.get("mean"):
        picture = Markup(svg(hg, a["name"], f"{kid}-a{index}"))
    if uniform is not None:
        what = "element" if hg.get("shape") else "counter"
        uniform = f"every {what}: {fmt_count(uniform, thr)}" + \
            (" (never accessed)" if uniform == 0 else "")
    label = a.get("label_short") or a.get("label")
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
        "live_ranges": a.get("live_ranges") if (a.get("live_ranges") or {}).get("ranges")
        else None,
    }


def _kernel_view(k: dict, i: int) -> dict:
    kid = f"k{i}"
    arrays = [_array_view(a, kid, j) for j, a in enumerate(k["arrays"])]
    anchors = {a["name"]: a["id"] for a in arrays}
    single = None
    files = {s["location"].rsplit(":", 2)[0] for s in k["sites"]}
    if len(files) == 1:
        single = files.pop()
    sites = [{"where": location_text(s["location"], single), "text": s["text"],
              "object": s.get("object"), "anchor": anchors.get(s.get("object")),
              "kind": s["kind"],
              "executions": "-" if s["executions"] is None else fmt_count(s["executions"]),
              "how": s.get("how_text") or s["how"], "classes": ", ".join(s.get("classes", []))}
             for s in k["sites"]]
    source = []
    for fn in line_rows(k):
        rows = [{"line": r["line"], "reads": fmt_count(r["reads"]),
                 "writes": fmt_count(r["writes"]), "executions": fmt_count(r["executions"]),
                 "how": ", ".join(r["how"]), "hot": bool(r["sites"]),
                 "code": _linked_code(r["text"].expandtabs(4), anchors)}
                for r in fn["rows"]]
        source.append({"function": fn["function"], "file": display_path(fn["file"]),
                       "rows": rows})
    heading = kernel_heading(k)
    return {
        "id": kid, "name": k["kernel"], "heading": heading[0], "details": heading[1:],
        "launches": len(k["launches"]), "mode": k["run"]["mode"],
        "shape": launch_shape_text(k),
        "labels": ", ".join(dict.fromkeys(a["label"] for a in arrays)),
        "timed": timing_measured(k), "arrays": arrays, "sites": sites,
        "site_file": display_path(single) if single else None, "source": source,
        "notes": k.get("notes", []),
        "warnings": [w.get("text") or w.get("message") for w in k.get("warnings", [])],
        "failed": any(w.get("failed_check") for w in k.get("warnings", [])),
        # whole programs' launches were not compared (None): neither identical nor different
        "outputs": "differ" if any(x.get("outputs_identical") is False for x in k["launches"])
        else "identical" if all(x.get("outputs_identical") for x in k["launches"])
        else "not compared",
    }


def html_text(doc: dict) -> str:
    from jinja2 import Environment

    env = Environment(autoescape=True, trim_blocks=True, lstrip_blocks=True)
    template = env.from_string(Path(__file__).with_name("report.html").read_text())
    kernels = [_kernel_view(k, i) for i, k in enumerate(doc["kernels"])]
    sample = doc.get("sample")
    title = f"sample {sample['name']}" if sample else ", ".join(k["name"] for k in kernels)
    return template.render(doc=doc, kernels=kernels, sample=sample, title=title,
                           failed=doc.get("failed_checks", []))
