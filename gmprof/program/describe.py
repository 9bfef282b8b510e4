"""The object table of one instrumented kernel, as C++ initialisers for gmprof_host.h's ObjectDesc.

Stage: whole programs, at translation. Takes the plan, a kernel and its template arguments;
returns one `{slot, kind, param, global, unit, elem, bytes, live_ranges, static_only, ranges}` per
object its launches
profile, in the plan's slot order, chosen as the single-launch path chooses them
(gmprof/runtime/counters.py, `layout_slots`): the kernel's pointer parameters, the file-scope
variables a site of the kernel (or of a function it calls) touches, and the shared arrays of
those functions. What depends on the launch is left to the host runtime: a pointer parameter's
allocation (found from its address) and the dynamic shared memory's size. Element sizes of the
user's own types are left to the C++ compiler (`sizeof(T)`), as the single-launch path leaves
them to a compiled sizeof kernel.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from gmprof.errors import Diagnostic
from gmprof.passes import symbolic as SY
from gmprof.runtime.layout import OBJ_GLOBAL, OBJ_PARAM, OBJ_SHARED, OBJ_SHARED_DYNAMIC

def qualified(scope: tuple, name: str) -> str:
    parts = [p for p in scope if p]  # unnamed namespaces and extern "C" add nothing
    return "::" + "::".join(parts + [name])


@dataclass
class GlobalSymbol:
    name: str
    cxx: str  # qualified, for cudaGetSymbolAddress in the module's tables


def global_symbols(tu, scopes) -> list[GlobalSymbol]:
    """File-scope __device__/__constant__/__managed__ variables, in declaration order."""

    out, seen = [], set()
    for var in tu.variables:
        if not var.name or var.space == "__shared__" or var.name in seen:
            continue
        seen.add(var.name)
        out.append(GlobalSymbol(var.name, qualified(scopes.get(var.segment, ()), var.name)))
    return out


def size_names(tu, program) -> list[str]:
    """The user's types whose sizes the decoder needs (as the single-launch path's sizeof
    kernel collects them)."""
    from gmprof.runtime.launchenv import _SCALAR_SIZES, clean_type, vector_size

    # a name that is some template's parameter somewhere is not a type at file scope
    # (type parameters `class T`, and non-type ones `size_t BlockSize`, `int N = 4`)
    params = set()
    for f in tu.files:
        params |= set(re.findall(r"\b(?:class|typename)\s+(\w+)\s*(?:[,>=])", f.text))
        for head in re.findall(r"\btemplate\s*<([^<>]*(?:<[^<>]*>[^<>]*)*)>", f.text):
            for part in head.split(","):
                m = re.search(r"(\w+)\s*(?:=.*)?$", part.strip())
                if m and not re.fullmatch(r"class|typename|int|unsigned|size_t|bool", m.group(1)):
                    params.add(m.group(1))
    names = []
    for facts in program.functions:
        for obj in facts.objects:
            t = clean_type(obj.elem_type)
            if t in _SCALAR_SIZES or vector_size(t) or t in names or t == "?":
                continue
            # a type written with a template's parameter (`cg::block_tile_memory<BlockSize>`)
            # has no size at file scope: its kernel's instances describe it (_size_expr)
            words = set(re.findall(r"[A-Za-z_]\w*", t))
            if facts.function.template_params and words & {
                    tp.name for tp in facts.function.template_params}:
                continue
            if (t in tu.oracle.types or t in tu.macros) and not words & params:
                names.append(t)
    return names


def _size_expr(env, elem_type: str, obj=None) -> str:
    """The element size as a C++ constant expression (a number where gmprof knows it)."""
    from gmprof.runtime.launchenv import _local_constant, clean_type

    try:
        return str(int(env.sizeof(elem_type)))
    except SY.Unknown:
        t = clean_type(elem_type)
        # each of the kernel's template parameters written in the type, as its argument
        # (`cg::block_tile_memory<BlockSize>` -> `cg::block_tile_memory<1024>`)
        args = {**env.value_args, **env.type_args}

        def word(m):
            w = m.group(0)
            if w in args:
                return str(args[w])
            # a local constant of the declaring function (`constexpr size_t stages = 4;`
            # in `cuda::pipeline_shared_state<scope, stages>`) is not in scope in the tables
            init = _local_constant(env.program, obj, w) if obj is not None else None
            if init is not None:
                try:
                    return str(int(env._dim(init, obj)))
                except SY.Unknown:
                    pass
            return w
        t = re.sub(r"[A-Za-z_]\w*", word, t)
        if re.fullmatch(r"[A-Za-z_][\w:<>, ]*", t):
            return f"sizeof({t})"
        return "4"


def describe_kernel(program, plan, fn, template_args, globals_, native: str,
                    warnings, ref: str | None = None) -> list[str] | None:
    """ObjectDesc initialisers for one kernel, or None (with a warning) when a shared array's
    size is not known before the launch. `ref` names the kernel's function where `native`
    (its name, in messages) names several (overloads.py)."""
    from gmprof.runtime.launchenv import LaunchEnv

    facts = program.facts(fn.name)
    try:
        env = LaunchEnv(program, facts, list(template_args), (1, 1, 1), (1, 1, 1), {}, {})
    except Exception as exc:  # a template argument gmprof cannot read
        warnings.append(Diagnostic("kernel-not-instrumented",
                                   f"{native}: {exc}; its launches run unprofiled", fn.location))
        return None
    ka = program.kernels[fn.name]
    reachable = {facts.name} | {callee.name for _, callee in ka.calls}
    gindex = {g.name: k for k, g in enumerate(globals_)}
    profile = plan.mode.profile
    out = []
    from gmprof.passes.hooks import DmGather
    from gmprof.passes.plan import HOOK, LR_START

    # the device objects no site counts at run time (all their sites static): the runtime needs
    # no device counters for them (no allocation, zeroing or read-back per launch); any counted
    # site whose object is found at run time, or that counts through a range or gather, keeps
    # every object's counters
    hooked = [sp for sp in plan.sites.values() if sp.strategy in (HOOK, LR_START) and
              sp.site.function.name in reachable]
    unsure = any(sp.slot is None or isinstance(sp.hook, DmGather) or
                 sp.hook.range is not None for sp in hooked)

    def static_only(slot) -> int:
        return int(not unsure and not any(sp.slot is slot for sp in hooked))
    for slot in plan.slots:
        obj = slot.object
        if (profile == "shm" and slot.kind == "device") or \
                (profile == "dm" and slot.kind == "shared"):
            continue
        lr = int(bool(slot.live_ranges and plan.mode.enhanced))
        if slot.kind == "device" and slot.kernel == facts.name:
            idx = next(i for i, p in enumerate(facts.function.params)
                       if getattr(p, "name", None) == obj.name)
            elem = f"::gmprof_host::pointee_size<{idx}>(&{ref or native})"
            out.append(f"{{{slot.index}, {OBJ_PARAM}, {idx}, -1, ::gmprof_host::unit_of({elem}), "
                       f"{elem}, 0, 0, {static_only(slot)}, {int(slot.ranges)}}}")
        elif slot.kind == "device" and slot.kernel is None:
            if not any(sp.slot is slot and sp.site.function.name in reachable
                       for sp in plan.sites.values()):
                continue
            if obj.name not in gindex:
                warnings.append(Diagnostic(
                    "kernel-not-instrumented", f"{native}: the file-scope variable {obj.name} "
                    "is not declared in this file; the kernel runs unprofiled", fn.location))
                return None
            elem = _size_expr(env, obj.elem_type, obj)
            shape = env.shape(obj)
            nbytes = "0" if shape is None else f"({elem}) * {int(np.prod(shape)) if shape else 1}"
            out.append(f"{{{slot.index}, {OBJ_GLOBAL}, -1, {gindex[obj.name]}, "
                       f"::gmprof_host::unit_of({elem}), {elem}, {nbytes}, 0, "
                       f"{static_only(slot)}, {int(slot.ranges)}}}")
        elif slot.kind == "shared":
            if not any(o.function in reachable for o in slot.objects):
                continue
            elem = _size_expr(env, obj.elem_type, obj)
            if not elem.isdigit() and not any(
                    sp.slot is slot or (sp.slot is None and sp.site.function.name in reachable)
                    for sp in plan.sites.values()):
                # a shared object of a library's class (`cuda::pipeline_shared_state<...>`,
                # `cg::block_tile_memory<N>`) that no site of the kernel reads or writes: it
                # has no counts to give, and its size expression need not compile where the
                # tables are (nvcc's host pass refused one such sizeof)
                continue
            if slot.dynamic:
                out.append(f"{{{slot.index}, {OBJ_SHARED_DYNAMIC}, -1, -1, 4, {elem}, 0, {lr}}}")
                continue
            shape = env.shape(obj)
            if shape is None:
                warnings.append(Diagnostic(
                    "kernel-not-instrumented",
                    f"{native}: the size of shared array {obj.name} ({obj.shape_text}) is not "
                    "known before the launch; the kernel runs unprofiled", fn.location))
                return None
            n = int(np.prod(shape)) if shape else 1
            out.append(f"{{{slot.index}, {OBJ_SHARED}, -1, -1, 4, {elem}, ({elem}) * {n}, {lr}}}")
    return out
