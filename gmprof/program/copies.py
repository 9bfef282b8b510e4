"""The instrumented copies of a whole program's device functions: which functions get one,
their text, and the names in them that must find the copies (or the originals).

Stage: whole programs, before compilation (translate.py). Each copy sits right after its
original, in the translation unit's namespace `__gmprof_ID` (see translate.py): the originals
stay as they were, for the launches that are not selected.
"""
from __future__ import annotations

import re

from gmprof.errors import Diagnostic
from gmprof.frontend import segment as S

_DEVICE_SPACES = ("global", "device", "host_device")


def _emit_span(src, patches, start, end) -> str:
    from gmprof.passes.patches import apply_patches

    return apply_patches(src.text, patches, start, end)


def strip_extern_c(text: str) -> str:
    # a copy must have C++ linkage: two extern "C" functions of one name are one function
    return re.sub(r'^(\s*(?:template\s*<[^{;]*?>\s*)?)extern\s+"C"\s*', r"\1", text, count=1)


def copy_text(fn, patches) -> str:
    """A function's text with its patches, for its copy. Directives in its head are blanked
    as the frontend's view has them (`#ifdef __CUDACC__ / __host__ __device__ / #endif / float
    f()` may start inside a conditional the copy does not open)."""
    from dataclasses import replace

    from gmprof.passes.patches import apply_patches

    src, seg = fn.source, fn.segment
    if seg.body_start is None or "#" not in src.text[seg.start:seg.body_start] or \
            len(fn.view) != seg.end - seg.start:
        return _emit_span(src, patches, seg.start, seg.end)
    local = fn.view[:seg.body_start - seg.start] + src.text[seg.body_start:seg.end]
    mine = [replace(p, offset=p.offset - seg.start, end=max(p.end - seg.start, 0))
            for p in patches if seg.start <= p.offset <= seg.end]
    return apply_patches(local, mine)


def add_copy(patches, src, seg, text, ns) -> None:
    from gmprof.passes.patches import SUFFIX as _SUFFIX, Patch

    line = src.line_col(seg.start)[0]
    end_line, end_col = src.line_col(seg.end)
    # the copy starts on its original's first line and column, so that compiler messages and
    # __LINE__ inside it name the user's lines
    col = src.line_col(seg.start)[1]
    pad = " " * max(col - 1, 0)
    copy = (f'\n#line {line} "{src.name}"\n{pad}extern "C++" {{ namespace {ns} {{ '
            f"{strip_extern_c(text)} }} }}\n#line {end_line} \"{src.name}\"\n"
            + " " * max(end_col - 1, 0))
    patches.setdefault(src, []).append(Patch(seg.end, _SUFFIX, copy, 1 << 40))


def mentions(fn, macros) -> set:
    """Every name a function's body mentions (calls, and names passed or stored: a function
    pointer), with the names in the bodies of the macros it uses, transitively (a call made by
    a macro, `#define LOAD(p) helper(p)`, is a call of helper)."""
    from pycparser import c_ast

    from gmprof.frontend import cxx_ast as X

    out = set()
    for node in X.walk(fn.funcdef.body):
        if isinstance(node, (c_ast.ID, X.TemplateId)) and isinstance(node.name, str):
            out.add(node.name)
    todo = [n for n in out if n in macros]
    seen = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for word in re.findall(r"[A-Za-z_]\w*", macros[name].body):
            out.add(word)
            if word in macros:
                todo.append(word)
    return out


def needed(tu, copyable: set, patches: dict) -> set:
    """The copyable functions that need a copy: kernels, functions the instrumentation edits,
    and (by name: any mention, through macros too) their callers. A copy of a function with
    nothing to count would only hide the original's other overloads from the copies
    (`make_float2(s, s)` in helper_math.h's `make_float2(float s)` finds only the copies in
    their namespace, not CUDA's own)."""
    fns = [fn for fn in tu.functions if fn.segment in copyable and fn.funcdef is not None]

    def edited(fn) -> bool:
        expanded = tu.expansions.get(fn.segment)
        if expanded is not None:
            return bool(patches.get(expanded))
        seg = fn.segment
        return any(seg.start <= p.offset < seg.end for p in patches.get(fn.source, []))

    need = {fn.name for fn in fns if fn.is_kernel or edited(fn)}
    calls = {fn.segment: mentions(fn, tu.macros) for fn in fns}
    grew = True
    while grew:
        grew = False
        for fn in fns:
            if fn.name not in need and calls[fn.segment] & need:
                need.add(fn.name)
                grew = True
    return {fn.segment for fn in fns if fn.name in need}


def qualify_calls(tu, copies, scopes, ns, warnings, device_launches=None) -> dict:
    """Names in the copies that must not find both a function and its copy.

    `f(x)` -> `__gmprof_ID::f(x)` where f has a copy in the caller's namespace: unqualified, the
    call finds the copy by ordinary lookup and the original by argument-dependent lookup
    whenever an argument's type is declared at file scope (uint4, float3, a user's struct), two
    equal candidates, an ambiguous call; a qualified name turns argument-dependent lookup off.

    `k<<<g, b>>>(x)` in device code (dynamic parallelism) -> `(::gmprof::count_device_launch(
    i)), ::k<<<g, b>>>(x)`: a child launch runs the original kernel (an instrumented child would
    count into its parent's launch description and block counters, which the child's launch
    never laid out), and is counted, so that the report says how many ran uncounted.
    `device_launches` gets (parent, child) for each counter i, in order (gmprof.cuh's
    `__gmprof_device_launches`, read back by the host runtime). A launch written by a macro
    cannot be edited: the warning says it is not even counted.

    Only names written at the call (not made by a macro) are qualified, and only where every
    function of that name has a copy (a qualified name finds nothing else)."""
    from pycparser import c_ast

    from gmprof.frontend import cxx_ast as X
    from gmprof.passes.patches import PREFIX, Patch

    by_name: dict = {}
    for fn in tu.functions:
        if fn.space in _DEVICE_SPACES:
            by_name.setdefault(fn.name, []).append(fn)
    copied = {name: scopes.get(fns[0].segment, ()) for name, fns in by_name.items()
              if all(f.segment in copies for f in fns) and
              len({scopes.get(f.segment, ()) for f in fns}) == 1}

    # where each name is declared (definitions and prototypes): a qualified name must be
    # declared before its use, where an unqualified one in a template may be found later
    declared: dict = {}
    for src, segs in tu.segments.items():
        for seg in segs:
            if seg.kind in (S.FUNCTION, S.PROTOTYPE) and seg.space in _DEVICE_SPACES and seg.name:
                declared.setdefault(seg.name, []).append((src, seg.start))

    def before(name, fn) -> bool:
        return any(src is not fn.source or start <= fn.segment.start
                   for src, start in declared.get(name, ()))

    def written(text, sp, name) -> bool:
        after = text[sp.start + len(name):sp.start + len(name) + 1] or " "
        return text[sp.start:sp.start + len(name)] == name and not re.match(r"\w", after) \
            and not (sp.start > 0 and re.match(r"[\w:.>]", text[sp.start - 1]))

    out: dict = {}
    if device_launches is None:
        device_launches = []
    for fn in tu.functions:
        if fn.segment not in copies or fn.funcdef is None:
            continue
        scope = scopes.get(fn.segment, ())
        children = set()
        uncounted = set()
        for node in X.walk(fn.funcdef.body):
            launch = isinstance(node, X.KernelLaunch)
            if not (launch or isinstance(node, c_ast.FuncCall)):
                continue
            target = node.name
            if not isinstance(target, (c_ast.ID, X.TemplateId)) or not isinstance(target.name, str):
                if launch:
                    uncounted.add(_launch_name(target))
                continue
            name = target.name
            if not launch and _launches_in_macro(name, tu.macros):
                # `LAUNCH(k, p)` whose macro writes `k<<<...>>>`: the copy keeps the macro call
                children.add(f"{name}(...)")
                uncounted.add(f"{name}(...)")
                continue
            sp = X.span(target)
            editable = sp is not None and \
                sp.source in (fn.source, tu.expansions.get(fn.segment)) and \
                written(sp.source.text, sp, name)
            if launch:
                children.add(name)
                if not editable:
                    uncounted.add(name)
                    continue
                prefix = ""
                if name in copied:
                    # an unnamed namespace has no name, and needs none: `::k` finds its k
                    # (through the namespace's implicit using-directive) but not the copy in
                    # its __gmprof_ID namespace, which unqualified `k` would find first
                    prefix = "::" + "".join(s + "::" for s in copied[name] if s)
                prefix = f"(::gmprof::count_device_launch({len(device_launches)})), " + prefix
                device_launches.append((fn.name, name[2:] if name.startswith("::") else name))
            elif name not in copied or not editable:
                continue
            elif copied[name] == scope and before(name, fn):
                prefix = f"{ns}::"
            else:
                continue
            out.setdefault(sp.source, []).append(Patch(sp.start, PREFIX, prefix, 0))
        if children:
            missed = f" ({', '.join(sorted(uncounted))}: written by a macro, or not by name; " \
                "not even counted)" if uncounted else ""
            warnings.append(Diagnostic(
                "launch-not-profiled",
                f"{fn.name} launches {', '.join(sorted(children))} from the device (dynamic "
                "parallelism): those child launches run the original kernel, unprofiled; the "
                f"report counts them{missed}",
                fn.location))
    return out


def _launches_in_macro(name, macros) -> bool:
    """Whether macro `name` writes a kernel launch, itself or through the macros it uses."""
    todo, seen = [name], set()
    while todo:
        m = todo.pop()
        if m in seen or m not in macros:
            continue
        seen.add(m)
        body = macros[m].body
        if re.search(r"<\s*<\s*<", body):
            return True
        todo.extend(re.findall(r"[A-Za-z_]\w*", body))
    return False


def _launch_name(target) -> str:
    from gmprof.frontend import cxx_ast as X

    sp = X.span(target)
    return sp.source.text[sp.start:sp.end] if sp is not None else "a kernel"


def copyable(tu, program, plan, warnings) -> set:
    """The segments of the device functions that get an instrumented copy: parsed, named plainly
    (an out-of-class member `A::f` cannot be copied into another namespace), not operators."""
    from gmprof.passes.plan import HOOK, LR_START

    ok: dict = {}
    bad = set()
    for fn in tu.functions:
        if fn.parsed is None or fn.space not in _DEVICE_SPACES or \
                not tu.active.get(fn.segment, True):
            continue
        if "::" in fn.name or fn.name.startswith("operator") or not re.fullmatch(r"\w+", fn.name):
            bad.add(fn.name)
            continue
        ok[fn.segment] = fn
    # a kernel whose counted sites include some in a function without a copy would miss them
    kernels = program.kernels
    for fn in list(ok.values()):
        if not fn.is_kernel:
            continue
        ka = kernels.get(fn.name)
        callees = {c.name for _, c in ka.calls} if ka is not None else set()
        missing = sorted(n for n in callees & bad if any(
            sp.strategy in (HOOK, LR_START) and sp.site.function.name == n
            for sp in plan.sites.values()))
        if missing:
            del ok[fn.segment]
            warnings.append(Diagnostic(
                "kernel-not-instrumented",
                f"kernel {fn.name} calls {', '.join(missing)}, which gmprof cannot copy "
                "(a member defined outside its class); the kernel runs unprofiled",
                fn.location))
    return set(ok)
