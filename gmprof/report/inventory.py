"""The inventory report of `gmprof parse`: functions, memory objects and access sites.

Takes a TranslationUnit and its ProgramFacts (after the `accesses` pass); returns a JSON-ready
dict (schema `gmprof.parse/1`, documented in docs/frontend.md) and renders it as text.
"""
from __future__ import annotations

from pycparser import c_ast

from ..frontend import cxx_ast as X
from ..frontend.program import TranslationUnit

SCHEMA = "gmprof.parse/1"


def _loc(location) -> dict:
    return {"file": location.file, "line": location.line, "col": location.col}


def _template_param(tp) -> dict:
    out = {"kind": tp.kind, "name": tp.name}
    if tp.kind == "value" and tp.type is not None:
        from gmprof.passes.symbols import type_text

        out["type"] = type_text(tp.type.type)
    if tp.default is not None and X.span(tp.default):
        out["default"] = X.span(tp.default).text
    return out


def _object(obj) -> dict:
    return {"name": obj.name, "space": obj.space, "elem_type": obj.elem_type,
            "dims": list(obj.dims), "pointer": obj.is_pointer, **_loc(obj.location)}


def _site(site) -> dict:
    return {
        **_loc(site.location),
        "object": site.object.name if site.object is not None else None,
        "space": site.object.space if site.object is not None else None,
        "kind": site.kind,
        "index": site.index_text,
        "text": site.text,
        "form": site.form,
        "via": site.via,
        "atomic": site.atomic,
        "unresolved": site.unresolved if site.object is None else None,
        "id": site.id,
    }


def inventory(tu: TranslationUnit, program) -> dict:
    functions = []
    for fn in tu.functions:
        entry = {"name": fn.name, "kind": fn.space, **_loc(fn.location),
                 "parsed": fn.parsed is not None}
        if fn.parsed is None:
            entry["error"] = fn.error.message if fn.error else "not parsed"
            functions.append(entry)
            continue
        entry["template_params"] = [_template_param(tp) for tp in fn.template_params]
        lb = fn.parsed.launch_bounds
        entry["launch_bounds"] = [X.span(e).text for e in lb] if lb else None
        params = []
        for p in fn.params:
            span = X.span(p)
            params.append({"name": getattr(p, "name", None), "text": span.text if span else ""})
        entry["params"] = params
        facts = program.facts(fn.name) if program else None
        entry["objects"] = [_object(o) for o in facts.objects] if facts else []
        entry["accesses"] = [_site(s) for s in facts.sites] if facts else []
        functions.append(entry)
    variables = [{"name": v.name, "space": v.space, **_loc(v.source.location(v.segment.start))}
                 for v in tu.variables]
    return {
        "schema": SCHEMA,
        "file": tu.main.name,
        "files": [f.name for f in tu.files],
        "functions": functions,
        "file_variables": variables,
        "warnings": [warning_json(w) for w in tu.warnings],
    }


def warning_json(w) -> dict:
    out = {"kind": w.kind, "message": w.message}
    if w.location is not None:
        out.update(_loc(w.location))
    return out


def _where(item: dict, file: str) -> str:
    from .source import display_path

    if item["file"] == file:
        return f"{item['line']}:{item['col']}"
    return f"{display_path(item['file'])}:{item['line']}:{item['col']}"


def render_text(data: dict, console) -> None:
    from rich.markup import escape
    from rich.text import Text

    from .tables import FOLD, WORD, Col, print_table

    for fn in data["functions"]:
        where = f"{fn['file']}:{fn['line']}:{fn['col']}"
        head = f"[bold]{fn['kind']}[/bold] [cyan]{escape(fn['name'])}[/cyan]  ({escape(where)})"
        if not fn["parsed"]:
            console.print(f"{head}  [red]not parsed[/red]: {escape(str(fn.get('error')))}")
            continue
        tps = fn.get("template_params") or []
        if tps:
            head += "  template<" + ", ".join(
                (f"typename {t['name']}" if t["kind"] == "type" else f"{t.get('type', '')} {t['name']}")
                for t in tps) + ">"
        console.print(head)
        # tables that fit the console and cut nothing (tables.py); locations as line:col in
        # the function's file, which the heading names
        if fn["objects"]:
            rows = []
            for o in fn["objects"]:
                shape = "[]" if o["pointer"] and o["dims"] == [""] else \
                    "".join(f"[{d}]" for d in o["dims"]) or "scalar"
                rows.append([o["name"], o["space"], o["elem_type"], shape,
                             _where(o, fn["file"])])
            print_table(console, "", [Col("object", FOLD), Col("space", WORD),
                                      Col("element", WORD), Col("shape", FOLD),
                                      Col("declared at", FOLD)], rows)
        if fn["accesses"]:
            rows = []
            for s in fn["accesses"]:
                obj = s["object"] or f"? ({s['unresolved']})"
                if s["via"]:
                    obj += f" via {s['via']}"
                kind = s["kind"] + (f" ({s['atomic']})" if s["atomic"] else "")
                rows.append([_where(s, fn["file"]), obj, kind, s["index"], s["text"]])
            print_table(console, "", [Col("line:col", FOLD), Col("object", FOLD),
                                      Col("access", WORD), Col("index", FOLD),
                                      Col("expression", FOLD)], rows)
        console.print()
    for v in data["file_variables"]:
        console.print(Text(f"file-scope {v['space']} {v['name']} ({v['file']}:{v['line']})"))
