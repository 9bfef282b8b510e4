"""The program as text after a named stage (`gmprof analyze/instrument --dump-after NAME`).

Read-only. Takes a stage's name and what the pipeline holds after it (the TranslationUnit after
`load`, the ProgramFacts after an analysis pass, the Plan, the Instrumented patches, the emitted
text); returns what that stage added, one line per thing, located in the user's source:

    === after loops ===
    transpose  loop i@12:5  for i < n step +1 (init 0)
"""
from __future__ import annotations

from gmprof.frontend import cxx_ast as X

from . import symbolic as S


def describe(stage: str, what) -> str:
    show = _STAGES.get(stage)
    lines = show(what) if show is not None else [repr(what)]
    return "\n".join(lines) if not isinstance(lines, str) else lines


def _where(node) -> str:
    sp = X.span(node) if node is not None else None
    return f"{sp.line}:{sp.column}" if sp else "?"


def _text(node) -> str:
    sp = X.span(node) if node is not None else None
    return sp.text if sp else "?"


def _load(tu):
    for fn in tu.functions:
        state = "parsed" if fn.parsed is not None else \
            f"not parsed: {fn.error.message if fn.error else '?'}"
        yield f"{fn.name}  {'kernel' if fn.is_kernel else 'device function'}  " \
              f"{fn.location}  {state}"
    for var in tu.variables:
        yield f"{var.name}  {var.space} variable"


def _names(program):
    for f in program.functions:
        params = ", ".join(s.name for s in f.names.params)
        local = ", ".join(s.name for s in f.names.locals)
        yield f"{f.name}  params: {params or '-'}  locals: {local or '-'}  " \
              f"{len(f.names.symbol_of)} names resolved"


def _objects(program):
    for obj in program.file_objects:
        yield f"(file)  {obj.name}{obj.shape_text}  {obj.space}  {obj.elem_type}  {obj.location}"
    for f in program.functions:
        for obj in f.objects:
            yield f"{f.name}  {obj.name}{obj.shape_text}  {obj.space}  {obj.elem_type}  " \
                  f"{obj.location}"


def _accesses(program):
    for site in program.sites:
        obj = site.object.name if site.object is not None else f"? ({site.unresolved})"
        yield f"{site.function.name}  site {site.id}  {site.location}  {site.kind}  " \
              f"{site.text}  -> {obj}"


def _loops(program):
    for f in program.functions:
        for loop in f.loops.loops:
            it = loop.iterator.name if loop.iterator is not None else "-"
            cond = f"{it} {loop.compare} {_text(loop.bound)}" if loop.compare else "no counted bound"
            yield f"{f.name}  loop {loop.label}  {loop.kind} {cond}  " \
                  f"(init {_text(loop.init) if loop.init is not None else '-'})"


def _dataflow(program):
    for f in program.functions:
        for sym, defs in f.dataflow.defs.items():
            yield f"{f.name}  {sym.name}: " + ", ".join(
                f"{d.kind}@{_where(d.node)}" if d.node is not None else d.kind for d in defs)


def _guards(program):
    for f in program.functions:
        for site in f.sites:
            guards = f.guards.all(site.node)
            if guards:
                yield f"{f.name}  site {site.id} {site.text}  when " + \
                      " and ".join(g.describe() for g in guards)


def _deps(v) -> str:
    return ", ".join(sorted(str(d) if not isinstance(d, tuple) else f"loop {d[1].label}"
                            for d in v.deps)) or "known at launch"


def _var(v) -> str:
    if isinstance(v, tuple) and v[0] == "iter" and hasattr(v[1], "label"):
        return f"iteration({v[1].label})"
    return S._var_text(v)


def _values(program):
    # each site's index expressions, in the function's own context (a device function's
    # parameters unknown; the classify pass also reads them in each caller's context)
    for f in program.functions:
        values = program.values.of(f)
        for site in f.sites:
            parts = []
            for sub in site.subscripts:
                v = values.value(sub)
                parts.append(f"[{_text(sub)}] depends on {_deps(v)}" +
                             (f" = {v.affine.describe(_var)}" if v.affine is not None else ""))
            yield f"{f.name}  site {site.id} {site.text}  " + ("; ".join(parts) or "no index")


def _classify(program):
    for name, ka in program.kernels.items():
        for sc in ka.classes:
            chain = f" (via {len(sc.chain)} call(s))" if sc.chain else ""
            yield f"{name}  site {sc.site.id} {sc.site.text}{chain}  " + ", ".join(sc.classes)


def _liveranges(program):
    for f in program.functions:
        lr = f.liveranges
        for what, table in (("starts", lr.starts if lr else {}), ("ends", lr.ends if lr else {})):
            for obj, sites in table.items():
                for x in sites:
                    yield f"{f.name}  {obj.name}  {what} at site {x.site.id} {x.site.text}"


def _plan(plan):
    yield f"mode {plan.mode.name}"
    for slot in plan.slots:
        yield f"slot {slot.index}  {slot.name}  {slot.kind}" + \
              (f"  (kernel {slot.kernel})" if slot.kernel else "")
    for sp in plan.site_list:
        mode = f" {sp.mode}" if sp.strategy in ("hook", "lr_start") else ""
        yield f"site {sp.site.id}  {sp.site.text}  {sp.strategy}{mode}  {sp.reason}"


def _instrument(done):
    yield "defines: " + " ".join(f"{k}={v}" for k, v in done.defines.items())
    for source, patches in done.patches.items():
        for p in sorted(patches, key=lambda p: p.offset):
            line, col = source.line_col(p.offset)
            yield f"{source.name}:{line}:{col}  {('insert', 'append', 'replace')[p.kind]}  " \
                  f"{p.text.strip()}"


_STAGES = {
    "load": _load, "names": _names, "objects": _objects, "accesses": _accesses,
    "loops": _loops, "dataflow": _dataflow, "guards": _guards, "values": _values,
    "classify": _classify, "liveranges": _liveranges, "plan": _plan,
    "instrument": _instrument, "emit": lambda text: text,
}


__all__ = ["describe"]
