"""The report of `gmprof analyze`: every access site's classes, each with its reason.

Takes ProgramFacts after the `liveranges` pass; returns a JSON-ready dict (schema
`gmprof.analyze/1`, documented in docs/analysis.md) and renders it as text, one line per site:

    k.cu:5:11 rowCS[rc]  read  tid-invariant (index uses no thread id), loop-invariant in
        'for r' at 3:3 (rc, rowCS not written in it; runs every iteration)
"""
from __future__ import annotations

from ..frontend import cxx_ast as X
from .inventory import warning_json

SCHEMA = "gmprof.analyze/1"


def _loc(location) -> dict:
    return {"file": location.file, "line": location.line, "col": location.col}


def _var_json(v):
    """A base variable as its name ('tid.x', ['iter', k]); a derived one (symbolic.DERIVED) as
    {"op": "div"|"mod"|"min"|"max", "a": affine, "b": affine or launch symbol}."""
    from gmprof.passes import symbolic as S

    if S.is_derived(v):
        tag, a, b = v
        return {"op": tag[1:], "a": _affine_json(a),
                "b": _affine_json(b) if tag in ("qmin", "qmax") else b}
    return v


def _affine_json(a) -> dict:
    return {"terms": [[_var_json(v), c] for v, c in a.terms], "const": a.const}


def _formula(f) -> dict | None:
    if f is None:
        return None
    return {
        "address_bytes": _affine_json(f.address),
        "access_size": f.access_size,
        "loops": [{"compare": cmp, "init": _affine_json(init), "bound": _affine_json(bound),
                   "step": step, "sign": sign} for cmp, init, bound, step, sign in f.loops],
        "constraints": _constraint_json(f.constraints),
    }


def _constraint_json(c):
    tag = c[0]
    if tag in ("true", "false"):
        return [tag]
    if tag == "cmp":
        _, op, a, b = c
        return ["cmp", op, _affine_json(a), _affine_json(b)]
    if tag == "not":
        return ["not", _constraint_json(c[1])]
    return [tag, _constraint_json(c[1]), _constraint_json(c[2])]


def site_json(sc, kernel_name: str) -> dict:
    site = sc.site
    chain = []
    for call in sc.chain:
        span = X.span(call)
        chain.append({"file": span.file, "line": span.line, "col": span.column,
                      "text": span.text})
    return {
        "id": site.id,
        **_loc(site.location),
        "text": site.text,
        "function": site.function.name,
        "call_chain": chain,
        "object": site.object.name if site.object is not None else None,
        "space": site.object.space if site.object is not None else None,
        "kind": site.kind,
        "index": site.index_text,
        "access_type": sc.address.access_type,
        "classes": sc.classes,
        "static": {"value": sc.static, "reason": sc.static_reason, "formula": _formula(sc.formula)},
        "tid_invariant": {"value": sc.tid_invariant, "reason": sc.tid_reason},
        "warp_uniform": {"value": sc.warp_uniform, "reason": sc.warp_reason},
        "block_convergent": {"value": sc.block_convergent, "reason": sc.convergent_reason},
        "loops": [{"loop": lf.loop.short, "line": X.span(lf.loop.node).line,
                   "col": X.span(lf.loop.node).column, "invariant": lf.invariant,
                   "reason": lf.reason, "trip": lf.trip_text} for lf in sc.loops],
        "dynamic_reasons": sc.dynamic_reasons,
    }


def live_ranges_json(program, kernel_facts) -> list:
    out = []
    functions = [kernel_facts] + [callee for _, callee in
                                  program.kernels[kernel_facts.name].calls]
    seen = set()
    for facts in functions:
        if id(facts) in seen:
            continue
        seen.add(id(facts))
        lr = facts.liveranges
        if lr is None:
            continue
        for array in lr.arrays():
            out.append({
                "array": array.name,
                "function": facts.name,
                "starts": [{**_loc(x.site.location), "text": x.site.text,
                            "from": [o.name for o in x.other], "copy": x.copy}
                           for x in lr.starts.get(array, [])],
                "ends": [{**_loc(x.site.location), "text": x.site.text,
                          "to": [o.name for o in x.other], "copy": x.copy}
                         for x in lr.ends.get(array, [])],
            })
    return out


def analysis(program, kernel: str | None = None) -> dict:
    kernels = []
    for name, ka in program.kernels.items():
        if kernel is not None and name != kernel:
            continue
        fn = ka.kernel.function
        kernels.append({
            "name": name, **_loc(fn.location),
            "sites": [site_json(sc, name) for sc in ka.classes],
            "live_ranges": live_ranges_json(program, ka.kernel),
        })
    return {"schema": SCHEMA, "file": program.tu.main.name, "kernels": kernels,
            "warnings": [warning_json(w) for w in program.tu.warnings]}


def site_line(s: dict) -> str:
    """One site as the issue's example line."""
    parts = []
    if s["static"]["value"]:
        parts.append(f"static ({s['static']['reason'].removeprefix('static: ')})")
    if s["tid_invariant"]["value"]:
        parts.append(f"tid-invariant ({s['tid_invariant']['reason']})")
    elif s["warp_uniform"]["value"]:
        parts.append(f"warp-uniform ({s['warp_uniform']['reason']})")
    for lp in s["loops"]:
        if lp["invariant"]:
            trip = f"; {lp['trip']}" if lp["trip"] else ""
            parts.append(f"loop-invariant in '{lp['loop']}' at {lp['line']}:{lp['col']} "
                         f"({lp['reason']}{trip})")
    if not s["static"]["value"]:
        parts.append(f"dynamic ({s['static']['reason'].removeprefix('not static: ')})")
    where = f"{s['file']}:{s['line']}:{s['col']}"
    return f"{where} {s['text']}  {s['kind']}  " + ", ".join(parts)


def render_text(data: dict, console, verbose: bool = False) -> None:
    from rich.text import Text

    for k in data["kernels"]:
        console.print(Text(f"kernel {k['name']} ({k['file']}:{k['line']})", style="bold"))
        current = None
        for s in k["sites"]:
            if s["call_chain"] and s["function"] != current:
                chain = " <- ".join(f"{c['file']}:{c['line']}" for c in reversed(s["call_chain"]))
                console.print(Text(f"  in {s['function']}() called at {chain}", style="italic"))
            current = s["function"] if s["call_chain"] else None
            console.print(Text("  " + site_line(s)))
            if verbose:
                for lp in s["loops"]:
                    if not lp["invariant"]:
                        console.print(Text(f"      not loop-invariant in '{lp['loop']}' at "
                                           f"{lp['line']}:{lp['col']}: {lp['reason']}"))
                if not s["tid_invariant"]["value"]:
                    console.print(Text(f"      not tid-invariant: {s['tid_invariant']['reason']}"))
                console.print(Text(f"      block-convergent: {s['block_convergent']['value']} "
                                   f"({s['block_convergent']['reason']})"))
        for lr in k["live_ranges"]:
            starts = ", ".join(f"{x['line']}:{x['col']} {x['text']} <- {'/'.join(x['from'])}"
                               for x in lr["starts"]) or "none"
            ends = ", ".join(f"{x['line']}:{x['col']} {x['text']} -> {'/'.join(x['to'])}"
                             for x in lr["ends"]) or "none"
            console.print(Text(f"  live ranges of {lr['array']}: start at {starts}; end at {ends}"))
        console.print()
