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


def namespace_in(ns: str, scope: tuple) -> str:
    """The copies' namespace in `scope`: in an unnamed namespace one of another name, which the
    module's tables can name, `::__gmprof_ID_u::k` (found through the unnamed namespace's
    using-directive, as `::k` finds k), even where file-scope kernels have copies in
    `::__gmprof_ID`, which qualified lookup finds first and which has no k."""
    return ns + "_u" if "" in scope else ns


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


def needed(tu, copyable: set, patches: dict, program=None) -> set:
    """The copyable functions that need a copy: kernels, functions the instrumentation edits,
    and (by name: any mention, through macros too; a member function by the calls the analysis
    resolved, `obj.f(x)`) their callers. A copy of a function with
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
    for caller, _, callee in _resolved_calls(program):
        if caller.function.segment in calls:
            calls[caller.function.segment].add(callee.name)
    grew = True
    while grew:
        grew = False
        for fn in fns:
            if fn.name not in need and calls[fn.segment] & need:
                need.add(fn.name)
                grew = True
    return {fn.segment for fn in fns if fn.name in need}


def qualify_calls(tu, copies, scopes, ns, warnings, device_launches=None,
                  profiled_children=None, hook_ns="::gmprof::") -> dict:
    """Names in the copies that must not find both a function and its copy.

    `f(x)` -> `__gmprof_ID::f(x)` where f has a copy in the caller's namespace: unqualified, the
    call finds the copy by ordinary lookup and the original by argument-dependent lookup
    whenever an argument's type is declared at file scope (uint4, float3, a user's struct), two
    equal candidates, an ambiguous call; a qualified name turns argument-dependent lookup off.
    Where f's copy is in another namespace (f in an enclosing or an unnamed namespace),
    `f(x)` -> `::ns::__gmprof_ID::f(x)`: unqualified, the call would find only the original.

    `k<<<g, b>>>(x)` in device code (dynamic parallelism) -> `(::gmprof::count_device_launch(
    i)), ::k<<<g, b>>>(x)`: a child launch runs the original kernel (an instrumented child would
    count into its parent's launch description and block counters, which the child's launch
    never laid out), and is counted, so that the report says how many ran uncounted.
    `device_launches` gets (parent, child) for each counter i, in order (gmprof.cuh's
    `__gmprof_device_launches`, read back by the host runtime). A launch written by a macro
    cannot be edited: the warning says it is not even counted.

    A child in `profiled_children` (name -> (its index in the file's child kernels, its child
    copy's qualified name)) is launched as that copy instead, its description last:
    `::__gmprof_ID_dp::k<<<g, b>>>(x, ::gmprof::child_desc(c))` (children.py); not counted
    here (its grids are counted by the copy). `hook_ns`: the runtime's namespace the copies'
    calls name (`::gmprof_dp::` in the child copies).

    Only names written at the call (not made by a macro) are qualified, and only where every
    function of that name has a copy (a qualified name finds nothing else)."""
    from pycparser import c_ast

    from gmprof.frontend import cxx_ast as X
    from gmprof.passes.patches import PREFIX, REPLACE, SUFFIX, Patch

    by_name: dict = {}
    for fn in tu.functions:
        if fn.space in _DEVICE_SPACES and "::" not in fn.name:
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
        profiled = set()
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
                plain = name[2:] if name.startswith("::") else name
                if editable and profiled_children and plain in profiled_children:
                    c, dp = profiled_children[plain]
                    whole = X.span(node)
                    close = whole.source.text.rfind(")", whole.start, whole.end) \
                        if whole is not None and whole.source is sp.source else -1
                    if close >= 0:
                        blank = not node.args or not getattr(node.args, "exprs", node.args)
                        out.setdefault(sp.source, []).append(Patch(
                            sp.start, REPLACE, dp, len(name), end=sp.start + len(name)))
                        out[sp.source].append(Patch(
                            close, SUFFIX, ("" if blank else ", ") +
                            f"{hook_ns}child_desc({c})", 1 << 30))
                        profiled.add(plain)
                        continue
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
                prefix = f"({hook_ns}count_device_launch({len(device_launches)})), " + prefix
                device_launches.append((fn.name, name[2:] if name.startswith("::") else name))
            elif name not in copied or not editable:
                continue
            elif not before(name, fn):
                continue
            elif copied[name] == scope:
                prefix = f"{namespace_in(ns, scope)}::"
            else:
                # (a function of an enclosing or an unnamed namespace: unqualified, the copy
                # would call its original, whose accesses no hook counts)
                prefix = "::" + "".join(s + "::" for s in copied[name] if s) + \
                    namespace_in(ns, copied[name]) + "::"
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
    or members defined in their class's body (an out-of-class member `A::f` cannot be copied
    into another namespace; an in-class one gets its copy beside it in its class, under another
    name, add_member_copy), not operators, constructors or destructors (called without their
    name, no call can be sent to a copy). A kernel that would reach a counted site only through
    such a function runs unprofiled, with a warning naming it: its copy would not count it."""
    from gmprof.passes.plan import HOOK, LR_START

    ok: dict = {}
    bad: dict = {}
    for fn in tu.functions:
        if fn.parsed is None or fn.space not in _DEVICE_SPACES or \
                not tu.active.get(fn.segment, True):
            continue
        why = _not_copyable(fn)
        if why is not None:
            bad.setdefault(fn.name, why)
            continue
        ok[fn.segment] = fn
    hooked = {sp.site.function.name for sp in plan.sites.values()
              if sp.strategy in (HOOK, LR_START)}
    kernels = program.kernels
    for fn in list(ok.values()):
        if not fn.is_kernel or kernels.get(fn.name) is None:
            continue
        missing: dict = {}
        path_of = {(): kernels[fn.name].kernel}
        for chain, callee in kernels[fn.name].calls:
            path_of[chain] = callee
        for chain, callee in kernels[fn.name].calls:
            if callee.name not in hooked:
                continue
            # every function on the way there is copied, and every member on it is called
            # by a name its copy can be sent to
            for k in range(1, len(chain) + 1):
                f, call = path_of[chain[:k]], chain[k - 1]
                if f.name in bad:
                    missing[f.name] = bad[f.name]
                elif f.function.owner is not None and \
                        _member_field(call, path_of[chain[:k - 1]].function) is None:
                    missing[f.name] = ("a member called other than as obj.f(...), p->f(...), "
                                       "S::f(...) or f(...) in its class")
        if missing:
            del ok[fn.segment]
            warnings.append(Diagnostic(
                "kernel-not-instrumented",
                f"kernel {fn.name} reaches counted accesses through "
                + ", ".join(f"{n} ({w})" for n, w in sorted(missing.items()))
                + ", which gmprof cannot copy; the kernel runs unprofiled", fn.location))
    return set(ok)


def _not_copyable(fn) -> str | None:
    """Why a device function gets no copy (None: it gets one)."""
    short = fn.name.rsplit("::", 1)[-1]
    if short.startswith("operator") or not re.fullmatch(r"~?\w+", short):
        return "an operator"
    if "::" not in fn.name:
        return None
    if fn.owner is None:
        return "a member defined outside its class"
    if short in (fn.owner, "~" + fn.owner):
        return "a constructor or destructor"
    seg = fn.segment
    head = fn.source.text[seg.start:seg.body_start if seg.body_start is not None else seg.end]
    if re.search(r"\bfriend\b", head):
        return "a friend defined in its class"  # not a member: no obj.f(x) reaches it
    if re.search(r"\b(virtual|override)\b", head):
        return "a virtual member"  # a copy would add a slot to its class's virtual table
    return None


def _resolved_calls(program):
    """(caller FunctionFacts, call node, callee FunctionFacts) for every call the kernels'
    analyses followed (passes/interproc.py)."""
    for ka in (program.kernels or {}).values() if program is not None else ():
        path_of = {(): ka.kernel}
        for chain, callee in ka.calls:
            path_of[chain] = callee
        for chain, callee in ka.calls:
            yield path_of[chain[:-1]], chain[-1], callee


def _member_field(call, caller):
    """(source, offset) of the member's name as written at `obj.f(x)` / `p->f(x)` / `S::f(x)`
    in the caller's text, or at `f(x)` in a member of its class (where a prefix is put), or
    None."""
    from pycparser import c_ast

    from gmprof.frontend import cxx_ast as X

    name = call.name
    if isinstance(name, c_ast.ID) and (caller.owner is not None or "::" in name.name):
        node = name  # f(x) in a member of f's class, or S::f(x) (a static member)
    elif isinstance(name, c_ast.StructRef) and isinstance(name.field, c_ast.ID):
        node = name.field
    else:
        return None
    sp = X.span(node)
    field = node.name
    if sp is None or sp.source not in (caller.source, caller.expanded) or \
            sp.source.text[sp.start:sp.start + len(field)] != field:
        return None
    return sp.source, sp.start + len(field) - len(field.rsplit("::", 1)[-1])


def device_only(fn, text) -> str:
    """A `__host__ __device__` function's copy without its `__host__` (as written in its head):
    its hooks are device functions, which a host function cannot call (nvcc: "calling a
    __device__ function from a __host__ __device__ function is not allowed"), and only the
    copies, on the device, call it."""
    if fn.space != "host_device":
        return text
    head = re.search(rf"\b{re.escape(fn.name.rsplit('::', 1)[-1])}\s*\(", text)
    end = head.start() if head else 0
    return re.sub(r"\b__host__\b\s*", "", text[:end], count=1) + text[end:]


def member_copy_name(fn, ns) -> str:
    """The name of an in-class member's copy, beside it in its class: the module's namespace
    name in it, so two files that include one class give its copies different names."""
    return f"{ns}_{fn.name.rsplit('::', 1)[-1]}"


def rename_member_calls(tu, program, copies, ns) -> dict:
    """`obj.f(x)` -> `obj.__gmprof_ID_f(x)` in the copies, where the analysis resolved the call
    to a member f of obj's class and every f of that class has a copy (its overloads too: the
    call's arguments pick among the copies as they pick among the originals)."""
    from gmprof.passes.patches import PREFIX, Patch

    names: dict = {}
    for fn in tu.functions:
        names.setdefault(fn.name, []).append(fn.segment in copies)
    out: dict = {}
    seen = set()
    for caller, call, callee in _resolved_calls(program):
        fn = callee.function
        if fn.owner is None or not all(names.get(fn.name, [False])):
            continue
        at = _member_field(call, caller.function)
        if at is None or at in seen:
            continue
        seen.add(at)
        out.setdefault(at[0], []).append(Patch(at[1], PREFIX, f"{ns}_", 0))
    return out


def add_member_copy(patches, fn, text, ns) -> None:
    """An in-class member's copy right after it, in its class, named member_copy_name (a class
    cannot be reopened in another namespace; its members reach its private ones)."""
    from gmprof.passes.patches import SUFFIX as _SUFFIX, Patch

    src, seg = fn.source, fn.segment
    short = fn.name.rsplit("::", 1)[-1]
    head = re.search(rf"\b{re.escape(short)}\s*\(", text)
    text = text[:head.start()] + member_copy_name(fn, ns) + text[head.start() + len(short):]
    line, col = src.line_col(seg.start)
    end_line, end_col = src.line_col(seg.end)
    copy = (f'\n#line {line} "{src.name}"\n' + " " * max(col - 1, 0) + text +
            f'\n#line {end_line} "{src.name}"\n' + " " * max(end_col - 1, 0))
    patches.setdefault(src, []).append(Patch(seg.end, _SUFFIX, copy, 1 << 40))
