"""Child copies: kernels launched from the device (dynamic parallelism) profiled in whole
programs.

Stage: whole programs, at translation (translate.py). A copy that launches `k<<<g, b>>>(x)`
from the device launches k's child copy instead, `::__gmprof_ID_dp::k<<<g, b>>>(x,
::gmprof::child_desc(c))`: k and the device functions it reaches, copied once more into the
namespace `__gmprof_ID_dp` (beside the first copies), instrumented under the same mode with no
static counts (the host never sees a child grid's shape or arguments, so every site is counted
by its hook), their hooks in gmprof.cuh's second pass, `::gmprof_dp::`, whose L() reads the
description each block binds at entry from its last parameter (gmprof.cuh bind: the pointer
parameters found among the allocations of the host launch's group). The host runtime lays out
one description and group per child kernel and group of the host's launch
(runtime_cu/host/gmprof_host_children.h); the report has the child as its own kernel, launched
from the device (records.py).

Profiled here: kernels defined (not only declared) before every copy that launches them,
neither templates nor overloads, with no dynamic shared array (its size is the launch's),
reaching no member function's copy, in modes without per-warp statistics, live ranges,
sampling or other counter families. Other children keep the first design: the original runs,
unprofiled, and its launches are counted (copies.py qualify_calls).
"""
from __future__ import annotations

import dataclasses
import json
import re

from gmprof.frontend import cxx_ast as X

from . import copies as C

SUFFIX_NS = "_dp"


@dataclasses.dataclass
class Children:
    """What the translation adds for the profiled children."""
    names: list            # child kernel names, in the file's child order (child_desc(c))
    plan: object           # the children's plan (no static counts)
    patches: dict          # source -> patches of the child copies (added to the file's)
    tables: list           # (name, ObjectDesc initialisers) per child, for the module tables
    defines: dict          # the child pass's macros (GMPROF_DP_OBJECTS, GMPROF_SHARED_BASES)
    launching: dict        # name -> (child index, qualified child-copy name) for the parents
    parents: dict          # child name -> the kernels whose copies may launch it (transitively)


def child_mode(mode):
    """The mode the child copies are instrumented and decoded with."""
    return dataclasses.replace(mode, static_counts=False)


def supported_mode(mode) -> bool:
    return not (mode.warps or mode.enhanced or mode.sampling is not None or mode.trace or
                mode.tallies)


def launched(tu, copies) -> dict:
    """Child kernel name -> the copied functions that launch it from the device."""
    out: dict = {}
    for fn in tu.functions:
        if fn.segment not in copies or fn.funcdef is None:
            continue
        for node in X.walk(fn.funcdef.body):
            if isinstance(node, X.KernelLaunch) and isinstance(getattr(node.name, "name", None),
                                                                 str):
                name = node.name.name
                out.setdefault(name[2:] if name.startswith("::") else name, []).append(fn)
    return out


def plan_children(tu, program, pipeline, mode, copies, scopes, ns, cpu, overloaded,
                  globals_, device_launches) -> Children | None:
    """The child copies of this file (None: no child can be profiled)."""
    from gmprof.passes.patches import apply_patches, merge
    from gmprof.passes.targets import CPU

    from .describe import describe_kernel, qualified

    if not supported_mode(mode) or not launched(tu, copies):
        return None
    dmode = child_mode(mode)
    plan = pipeline.plan(program, dmode)
    done = pipeline.instrument(plan, sm=False)
    dp_ns = ns + SUFFIX_NS
    ok = C.copyable(tu, program, plan, [])
    need = C.needed(tu, ok, done.patches, program)
    kernels = {f.name: f for f in tu.kernels if f.parsed is not None and f.funcdef is not None}
    # the kernel each written name launches (`k`, `ns::k`: qualified, its namespaces must be
    # the kernel's own), and the functions that launch it, in the first copies and the child
    # copies alike
    written: dict = {}
    parents: dict = {}
    for name, fns in sorted(launched(tu, copies | need).items()):
        qual, _, base = name.rpartition("::")
        k = kernels.get(base)
        if k is None or (qual and tuple(x for x in scopes.get(k.segment, ()) if x) !=
                         tuple(qual.split("::"))):
            continue
        written[name] = k
        parents.setdefault(k.name, []).extend(fns)
    wanted = []
    for k in sorted({k.name: k for k in written.values()}.values(), key=lambda f: f.name):
        if k.template_params or k.name in overloaded or \
                sum(f.name == k.name for f in tu.kernels) != 1:
            continue
        if any(p is not k and (p.source is not k.source or p.segment.start < k.segment.end)
               for p in parents[k.name]):
            continue  # its child copy would not be declared at the launch
        wanted.append(k)
    by_name = {f.name: f for f in tu.functions if f.segment in need}
    chosen, segs, tables = [], set(), []
    for k in wanted:
        if k.segment not in need:
            continue
        reach = {k.name} | {callee.name for _, callee in program.kernels[k.name].calls}
        fns = [by_name[n] for n in reach if n in by_name]
        if any(f.owner is not None for f in fns) or any(
                slot.kind == "shared" and any(o.function in reach for o in slot.objects) and
                any(o.space == "shared_dynamic" for o in slot.objects) for slot in plan.slots):
            continue
        # every counted site's object must be one of the child's own slots (its parameters,
        # file-scope variables, shared arrays): another kernel's parameter is never bound
        own = {sl.index for sl in plan.slots if sl.kernel in (None, k.name) or
               sl.kind == "shared"}
        if any(sp.slot is not None and sp.slot.index not in own
               for sp in plan.sites.values() if sp.site.function.name in reach):
            continue
        native = qualified(scopes.get(k.segment, ()), k.name)
        desc = describe_kernel(program, plan, k, [], globals_, native, [])
        if desc is None:
            continue
        chosen.append(k)
        tables.append((k, desc))
        segs |= {f.segment for f in fns}
    if not chosen:
        return None
    launching = {}
    index = {k.name: c for c, k in enumerate(chosen)}
    for name, k in written.items():
        if k.name in index:
            scope = scopes.get(k.segment, ())
            launching[name] = (index[k.name], "::" + "".join(s + "::" for s in scope if s) +
                               C.namespace_in(dp_ns, scope) + "::" + k.name)
    target = CPU.patches(program) if cpu else {}
    counted = len(device_launches)  # (the child copies' own counters follow)
    calls = C.qualify_calls(tu, segs, scopes, dp_ns, [], device_launches, launching,
                            "::gmprof_dp::")
    inst = merge(done.patches, target, calls)
    out: dict = {}
    most = 1
    for fn in tu.functions:
        if fn.segment not in segs:
            continue
        src, seg = fn.source, fn.segment
        expanded = tu.expansions.get(seg)
        if expanded is not None:
            body = apply_patches(expanded.text, inst.get(expanded, []), 0, len(expanded.text))
        else:
            body = C.copy_text(fn, inst.get(src, []))
        body = C.device_only(fn, body).replace("::gmprof::", "::gmprof_dp::")
        if fn.is_kernel:
            slots = [(s.index, s.object.name) for s in plan.slots
                     if s.kind == "device" and s.kernel == fn.name]
            body = _entry(body, fn.name, slots)
            if body is None:
                del device_launches[counted:]
                return None
        C.add_copy(out, src, seg, body, C.namespace_in(dp_ns, scopes.get(seg, ())))
    for k in chosen:
        most = max([most] + [s.index + 1 for s in plan.slots
                             if s.kernel in (None, k.name) or s.kind == "shared"])
    defines = {"GMPROF_DP_OBJECTS": most,
               "GMPROF_SHARED_BASES": done.defines.get("GMPROF_SHARED_BASES", 0)}
    return Children([k.name for k in chosen], plan, out, tables, defines, launching,
                    _parents(tu, chosen))


def _parents(tu, chosen) -> dict:
    """Child name -> the kernels from which a chain of calls and device-side launches may reach
    its launch (every name a function mentions, through macros too: as C.needed errs, towards
    more), so that the host lays a child out only with the groups of kernels that need it."""
    fns: dict = {}
    for f in tu.functions:
        if f.funcdef is not None:
            fns.setdefault(f.name, []).append(f)
    # (a file-scope variable is a node too: a table of function pointers names its functions
    # in its initialiser, `__device__ fn_t table[] = {f, g};`)
    tables = {}
    for var in tu.variables:
        src = getattr(var, "source", None)
        if var.name and src is not None:
            words = set(re.findall(r"[A-Za-z_]\w*", var.segment.text(src)))
            tables.setdefault(var.name, set()).update(words & set(fns))
    nodes = set(fns) | set(tables)
    # (a qualified name, `ns::k`, as its last part: more edges, never fewer)
    edges = {name: {m.rpartition("::")[2] for m in set().union(
        *(C.mentions(f, tu.macros) for f in group))} & nodes for name, group in fns.items()}
    for name, named in tables.items():
        edges.setdefault(name, set()).update(named)
    out = {k.name: [] for k in chosen}
    for kernel in sorted({f.name for f in tu.kernels if f.funcdef is not None}):
        seen, todo = set(), [kernel]
        while todo:
            name = todo.pop()
            for m in edges.get(name, ()):
                if m not in seen:
                    seen.add(m)
                    todo.append(m)
        for child in out:
            if child in seen:
                out[child].append(kernel)
    return out


def _entry(body: str, name: str, slots: list) -> str | None:
    """The child copy's head with its description last, and its binding at entry."""
    m = re.search(rf"\b{re.escape(name)}\s*\(", body)
    if m is None:
        return None
    depth, i = 0, m.end() - 1
    while i < len(body):
        if body[i] == "(":
            depth += 1
        elif body[i] == ")":
            depth -= 1
            if depth == 0:
                break
        i += 1
    open_at = body.find("{", i)
    if i >= len(body) or open_at < 0:
        return None
    params = body[m.end():i]
    param = "const ::gmprof::ChildDesc *__gmprof_cd"
    if not params.strip() or params.strip() == "void":
        head = body[:m.end()] + param + body[i:open_at + 1]
    else:
        head = body[:i] + ", " + param + body[i:open_at + 1]
    if slots:
        bind = ("const int __gmprof_slots[] = {" + ", ".join(str(k) for k, _ in slots) + "}; "
                "const unsigned long long __gmprof_args[] = {" +
                ", ".join(f"(unsigned long long)(const volatile void *)({p})" for _, p in slots) +
                f"}}; ::gmprof_dp::bind(__gmprof_cd, __gmprof_slots, __gmprof_args, {len(slots)});")
    else:
        bind = "::gmprof_dp::bind(__gmprof_cd, nullptr, nullptr, 0);"
    return head + " " + bind + body[open_at + 1:]


def module_tables(children) -> tuple[list, str]:
    """(C definitions, the ModuleDesc's children fields) for the module tables."""
    out = []
    entries = []
    for c, (k, desc) in enumerate(children.tables):
        out.append(f"static const ::gmprof_host::ObjectDesc __gmprof_dp_objects_{c}[] = {{"
                   + ", ".join(desc) + (", " if desc else "") + "{-1, 0, 0, 0, 0, 0, 0, 0}};")
        # (the kernels whose groups lay it out, one a line: their name expressions' names)
        parents = "".join(p + "\n" for p in children.parents[k.name])
        entries.append(f'{{"{k.name}", {len(desc)}, __gmprof_dp_objects_{c}, '
                       f'{json.dumps(parents)}}}')
    out.append("const ::gmprof_host::ChildKernelDesc __gmprof_children[] = {" +
               ", ".join(entries) + "};")
    return out, f", {len(entries)}, __gmprof_children"


__all__ = ["Children", "plan_children", "module_tables", "child_mode", "supported_mode"]
