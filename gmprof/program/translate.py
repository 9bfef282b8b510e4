"""Translate one .cu file of a whole program: launches routed through gmprof's host runtime, and
an instrumented copy of each device function beside the original.

Stage: whole programs, before compilation (gmprof nvcc). Takes a .cu path with its -D/-I options,
a Mode (None: a native build, which the CPU backend still needs for its launches) and the
backend; returns a Translation: the text to compile, the module's manifest (what the decoder
needs to read the counters back), and warnings.

    __global__ void k(float *a) { a[threadIdx.x] = 0; }
 -> __global__ void k(float *a) { a[threadIdx.x] = 0; }
    #line 1 "k.cu"
    extern "C++" { namespace __gmprof_1a2b3c4d { __global__ void k(float *a) { ::gmprof::enter(); ... } } }
    #line 2 "k.cu"

The copies live in a namespace of their own, one per translation unit, so a copied kernel's calls
(`foo(x)`, also through macros) find the copied `foo` first, nothing needs renaming, and two
files' copies never share a name (with -rdc=true, or a template kernel in a header instantiated
in both). The original kernels stay as they were: launches that are not selected run them. The
file ends with the module's tables (gmprof_host.h), which register themselves before main().
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from gmprof._paths import runtime_cu_dir
from gmprof.errors import Diagnostic
from gmprof.frontend import segment as S

from . import children as K
from . import copies as C
from . import launches as L
from . import overloads as O
from . import registers as R
from .describe import describe_kernel, global_symbols, qualified, size_names

SCHEMA = "gmprof.module/1"
_DEVICE_SPACES = ("global", "device", "host_device")


@dataclass
class Translation:
    text: str
    manifest: dict
    module_id: str
    warnings: list = field(default_factory=list)  # Diagnostic
    instrumented: list = field(default_factory=list)  # kernel name expressions
    #: qualified name -> name of the template kernels launched with template arguments only the
    #: C++ compiler knows (instances.py finds the specialisations; translate again with them)
    generic: dict = field(default_factory=dict)
    #: kernels whose copies take the original's register count (registers.py; nvcc.py measures)
    capped: list = field(default_factory=list)


def module_id(path: Path, defines: dict) -> str:
    key = json.dumps([str(Path(path).resolve()), sorted((k, v) for k, v in defines.items())])
    return hashlib.sha256(key.encode()).hexdigest()[:10]


def plan_digest(plan) -> str:
    # lines and columns, not file names: the decoder may name the file differently
    rows = [(sp.site.id, sp.site.location.line, sp.site.location.col, sp.site.text,
             sp.strategy, sp.mode, sp.slot.index if sp.slot is not None else -1)
            for sp in plan.site_list]
    rows.append([(s.index, s.name, s.kind, s.kernel, s.dynamic) for s in plan.slots])
    return hashlib.sha256(json.dumps(rows, default=str).encode()).hexdigest()[:16]


def mode_fields(mode) -> dict:
    return {"sa": mode.sa, "na": mode.na, "sm": mode.sm, "threshold": mode.threshold,
            "counter_bits": mode.counter_bits, "enhanced": mode.enhanced,
            "sampling": mode.sampling, "sampler": mode.sampler, "profile": mode.profile,
            "static_counts": mode.static_counts, "warps": mode.warps}


def _template_params(text: str) -> set:
    """The parameter names of the template a host function's text opens with (else empty)."""
    m = re.match(r"\s*template\s*<([^{;]*?)>\s*[\w:]", text)
    if not m:
        return set()
    return set(re.findall(r"(?:class|typename|\w+)\s+(\w+)\s*(?:=[^,]*)?(?:,|$)", m.group(1)))


def translate(path, *, defines: dict | None = None, include_dirs=(), mode=None,
              cpu: bool = False, kernel_filter=None, defaults: str = "",
              instances: dict | None = None) -> Translation:
    from gmprof.passes.emit import emit_file
    from gmprof.passes.patches import REPLACE as _REPLACE
    from gmprof.passes.patches import Patch, apply_patches, merge
    from gmprof.passes.pipeline import Pipeline
    from gmprof.passes.targets import CPU

    defines = dict(defines or {})
    pipeline = Pipeline()
    tu = pipeline.load(path, defines=defines, include_dirs=list(include_dirs))
    program = pipeline.analyze(tu)
    mid = module_id(Path(path), defines)
    ns = f"__gmprof_{mid}"
    warnings = list(tu.warnings)
    scopes = S.namespaces(tu.segments)

    # the original text: launches rewritten (host code only), dynamic shared memory for the CPU
    patches: dict = {}
    # (the CPU backend's own edits, targets.CPU: `extern __shared__` has no meaning to g++)
    target_patches = CPU.patches(program) if cpu else {}
    for src, ps in target_patches.items():
        patches.setdefault(src, []).extend(ps)
    deduced: list = []
    templates = {f.name for f in tu.functions if f.parsed is not None and f.template_params}
    sites: list = []
    generic: dict = {}
    helpers = _deduce_helpers(tu, templates, scopes)
    declared = L.kernel_declarations(tu)
    defaults_of = L.kernel_defaults(declared)
    overloaded = L.overloaded(declared) | O.retyped(tu) | {
        f.name for f in tu.kernels if sum(g.name == f.name for g in tu.kernels) > 1}
    # an overloaded name's functions, each named through a pointer type written after it
    signatures = O.declarations(tu, scopes, overloaded)
    order = O.emit_order(tu) if signatures else {}
    for src, ps in O.patches(signatures).items():
        patches.setdefault(src, []).extend(ps)
    for src, segs in tu.segments.items():
        for seg in segs:
            if seg.kind == S.FUNCTION and seg.space in _DEVICE_SPACES:
                continue
            if seg.kind not in (S.FUNCTION, S.TYPE, S.DIRECTIVE, S.OTHER, S.VARIABLE):
                continue
            edits, found = L.find_edits(seg.text(src), seg.start, cpu)
            skip = []
            own = _template_params(seg.text(src))
            consts = L.local_constants(seg.text(src)) if found else {}
            for launch in found:
                name, targs = L.kernel_name_of(launch.kernel_text)
                base = name.rsplit("::", 1)[-1]
                words = set(re.findall(r"\w+", targs))
                if base in templates and words & set(consts):
                    # `const int N = 128; k<N><<<...>>>`: the table at file scope names k<128>
                    targs = re.sub(r"\w+", lambda m: consts.get(m.group(0)) or m.group(0), targs)
                    words = set(re.findall(r"\w+", targs))
                unnamed = base in templates and (not targs or own & words or any(
                    consts.get(w, 1) is None for w in words))
                routed = _route_generic(launch, base, targs, own & words, helpers, overloaded,
                                        src, patches, skip) if unnamed else None
                if routed is not None:
                    # the host template's parameters (`k<T>`), or deduced through the helper:
                    # routed by address; instances.py finds the specialisations
                    generic[routed] = base
                    L.add_defaults(patches, src, launch, defaults_of.get(base))
                    continue
                sig = None if unnamed or base not in overloaded else O.pick(
                    tu, signatures, base, L.argument_count(src.text, launch), seg, order)
                if sig is not None and O.cast_edits(edits, launch, sig.sig):
                    # (a kernel declared with different parameter lists: `&k` names none of
                    # them; the one the call's arguments fit, through its pointer type)
                    L.add_defaults(patches, src, launch, sig.defaults)
                    continue
                if unnamed or base in overloaded:
                    # (a kernel declared with different parameter lists, where gmprof cannot
                    # tell which one the call's arguments pick)
                    # (template arguments that are the enclosing host template's own
                    # parameters, `k<T><<<...>>>` in `template <class T> void run()`, name no
                    # specialisation at file scope either)
                    # template arguments deduced from the call: on the CPU backend the
                    # specialisation is picked by the arguments' types (it must be routed, g++
                    # has no <<<>>>); on a GPU the launch stays as it was
                    picked = L.deduced_edits(launch) if cpu else None
                    if picked is None:
                        skip.append((launch.kernel_start, launch.close_end))
                    else:
                        # its own opening replaces the plain one and the `<<<`
                        skip.append((launch.kernel_start, launch.open_start + 1))
                        for e in picked:
                            patches.setdefault(src, []).append(
                                Patch(e.start, _REPLACE, e.text, 0, end=e.end))
                    deduced.append((src, launch, unnamed))
                    continue
                sites.append((src, launch, base, targs))
                L.add_defaults(patches, src, launch, defaults_of.get(base))
            for e in edits:
                if any(a <= e.start < b for a, b in skip):
                    continue
                patches.setdefault(src, []).append(
                    Patch(e.start, _REPLACE, e.text, max(e.end - e.start, 0), end=e.end))
    for src, launch, unnamed in deduced:
        warnings.append(Diagnostic(
            "launch-not-profiled",
            f"launch of template kernel {launch.kernel_text!r}: gmprof cannot name the "
            "specialisation before compiling (its template arguments are deduced from the call, "
            "or are the enclosing template's parameters: write them out, e.g. "
            "k<float><<<...>>>); it runs unprofiled" if unnamed else
            f"launch of kernel {launch.kernel_text!r}, declared with different parameter lists: "
            "gmprof cannot tell which one it launches (several take its number of arguments, "
            "or several are defined in this file); it runs unprofiled",
            src.location(launch.kernel_start)))

    instrumented: list = []
    objects_c: list = []
    kernels_c: list = []
    mode_json = None
    plan = None
    copies = set()
    capped: list = []
    device_launches: list = []  # (parent, child) per counter of launches from device code
    kids = None  # the child copies (children.py)
    if mode is not None:
        plan = pipeline.plan(program, mode)
        done = pipeline.instrument(plan, sm=mode.sm)
        mode_json = mode_fields(mode)
        copies = C.needed(tu, C.copyable(tu, program, plan, warnings), done.patches, program)
        # copies of kernels a cooperative launch may run keep the original's registers (their
        # grid is sized by its occupancy): registers.py, capped by nvcc.py on a GPU
        capped = [] if cpu else R.cooperative(tu, copies, lambda f: C.mentions(f, tu.macros))
        if not cpu and R.cap_all():
            capped = sorted({f.name for f in tu.functions if f.segment in copies and
                             f.is_kernel and f.funcdef is not None} | set(capped))
        # kernels launched from the device get child copies of their own (children.py)
        kids = K.plan_children(tu, program, pipeline, mode, copies, scopes, ns, cpu, overloaded,
                               global_symbols(tu, scopes), device_launches)
        inst_patches = merge(done.patches, target_patches,
                             C.qualify_calls(tu, copies, scopes, ns, warnings,
                                             device_launches, kids and kids.launching),
                             C.rename_member_calls(tu, program, copies, ns))
        if kids is not None:
            # (before the copies: a kernel's copy that launches itself launches its child copy)
            for src, ps in kids.patches.items():
                patches.setdefault(src, []).extend(ps)
        # each copy right after its original, in the module's namespace
        for fn in tu.functions:
            if fn.segment not in copies:
                continue
            src, seg = fn.source, fn.segment
            expanded = tu.expansions.get(seg)
            if expanded is not None:
                # read with its macros expanded: its sites' patches are on that text (same
                # lines), as passes/emit.py emits it
                body = apply_patches(expanded.text, inst_patches.get(expanded, []), 0,
                                     len(expanded.text))
            else:
                body = C.copy_text(fn, inst_patches.get(src, []))
            body = C.device_only(fn, body)
            if fn.is_kernel and fn.name in capped:
                body = R.mark(C.strip_extern_c(body), fn.name)
            if fn.owner is not None:
                C.add_member_copy(patches, fn, body, ns)
            else:
                C.add_copy(patches, src, seg, body, C.namespace_in(ns, scopes.get(seg, ())))
        copied_names = {fn.name for fn in tu.functions if fn.segment in copies}
        for src, segs in tu.segments.items():
            for seg in segs:
                if seg.kind == S.PROTOTYPE and seg.space in _DEVICE_SPACES and \
                        seg.name in copied_names and tu.active.get(seg, True):
                    C.add_copy(patches, src, seg, seg.text(src),
                               C.namespace_in(ns, scopes.get(seg, ())))
        defines_mode = dict(done.defines)
        if defines_mode["GMPROF_SM"]:
            # shared or device memory is chosen per launch (gmprof.cuh reads the description)
            defines_mode["GMPROF_SM"] = 2
    else:
        defines_mode = {}

    # kernels: every plain kernel of the file, and the template instantiations launched here
    kernel_fns = {f.name: f for f in tu.kernels if f.parsed is not None}
    wanted: dict = {}
    for name, fn in kernel_fns.items():
        if not fn.template_params and (name not in overloaded or O.definition(signatures, name)):
            wanted[name] = (fn, [])
    for base, found in (instances or {}).items():
        fn = kernel_fns.get(base)
        if fn is not None and fn.template_params and base not in overloaded:
            for targs in found:
                sites.append((None, None, base, targs))
    for src, launch, base, targs in sites:
        fn = kernel_fns.get(base)
        if fn is None or not fn.template_params or base in overloaded:
            continue
        from gmprof.runtime.launchenv import split_name_expression

        expr = f"{base}<{targs}>"
        wanted.setdefault(expr, (fn, split_name_expression(expr)[1]))
    globals_ = global_symbols(tu, scopes) if mode is not None else []
    sizes = size_names(tu, program) if mode is not None else []
    for expr, (fn, targs) in sorted(wanted.items()):
        scope = scopes.get(fn.segment, ())
        native = qualified(scope, fn.name) + (expr[len(fn.name):] if targs else "")
        defined = O.definition(signatures, fn.name)
        # (an overloaded kernel: its definition, through the pointer type written after it)
        ref = native if defined is None else f"(*static_cast<{defined.sig}>(&{native}))"
        inst = "nullptr"
        objs = "nullptr"
        n_objs = 0
        if mode is not None and fn.segment in copies and (kernel_filter is None or kernel_filter(expr)):
            desc = describe_kernel(program, plan, fn, targs, globals_, native, warnings, ref)
            if desc is not None:
                inst_name = qualified(scope + (C.namespace_in(ns, scope),), fn.name) + \
                    (expr[len(fn.name):] if targs else "")
                if defined is not None:
                    inst_name = f"(*static_cast<{defined.sig}>(&{inst_name}))"
                inst = f"(const void *)&{inst_name}"
                k = len(objects_c)
                objects_c.append(f"static const ::gmprof_host::ObjectDesc __gmprof_objects_{k}[] = "
                                 "{" + ", ".join(desc) + (", " if desc else "") +
                                 "{-1, 0, 0, 0, 0, 0, 0, 0}};")
                objs, n_objs = f"__gmprof_objects_{k}", len(desc)
                instrumented.append(expr)
                invoke_inst = f"GMPROF_HOST_INVOKER({inst_name})"
        if inst == "nullptr":
            invoke_inst = "nullptr"
        kernels_c.append(
            f"{{\"{expr}\", (const void *)&{ref}, {inst}, GMPROF_HOST_INVOKER({ref}), "
            f"{invoke_inst}, ::gmprof_host::n_params_of(&{ref}), "
            f"::gmprof_host::params_of(&{ref}), {n_objs}, {objs}, &__gmprof_module}}")

    manifest = {
        "schema": SCHEMA, "id": mid, "source": str(Path(path).resolve()),
        "name": tu.main.name, "defines": defines,
        "include_dirs": [str(Path(d).resolve()) for d in include_dirs],
        "backend": "cpu" if cpu else "gpu", "mode": mode_json,
        "plan_digest": plan_digest(plan) if plan is not None else None,
        "kernels": instrumented, "sizes": sizes,
        "globals": [g.name for g in globals_],
    }
    if device_launches:
        defines_mode = {**defines_mode, "GMPROF_DEVICE_LAUNCHES": len(device_launches)}
    text = _prelude(mode is not None, defines_mode, cpu, kids and kids.defines) + \
        R.fallback(capped)
    text += f'#line 1 "{tu.main.name}"\n'
    # the file with its patches, local headers inlined (as the single-launch path emits them,
    # so their functions can have copies too); the originals as written (expand=False)
    body = emit_file(tu, tu.main, patches, expand=False)
    if cpu:
        from gmprof.runtime.cpu import rewrite_extern_shared

        # `extern __shared__` where the frontend did not parse (member functions of a class,
        # e.g. cuda-samples' SharedMemory<T>): `__shared__` is `static` on the CPU backend
        body = rewrite_extern_shared(body)
        from .cooperative import register_static_shared

        # a cooperative launch keeps each block's static shared variables across grid barriers
        body = register_static_shared(body)
    text += body
    text += _epilogue(mid, manifest, mode, plan, defines_mode, globals_, sizes, objects_c,
                      kernels_c, defaults, device_launches, kids)
    return Translation(text, manifest, mid, warnings, instrumented, generic, capped)


def _deduce_helpers(tu, templates, scopes) -> dict:
    """Template kernel name -> (qualified helper name, its source, where the kernel's definition
    ends, the kernel's qualified name, the patch that writes instances.deduce_helper there, on
    its last line: no line added, or None where there can be none). The patch is added at the
    first deduced launch."""
    from gmprof.passes.patches import SUFFIX as _SUFFIX, Patch

    from .instances import HELPER, deduce_helper

    out = {}
    for fn in tu.kernels:
        if fn.name not in templates or fn.parsed is None or fn.name in out or \
                not tu.active.get(fn.segment, True):
            continue
        src, seg = fn.source, fn.segment
        body = seg.body_start if seg.body_start is not None else seg.end
        head = re.sub(r"//[^\n]*|/\*.*?\*/", " ", src.text[seg.start:body], flags=re.S)
        helper = deduce_helper(fn, " ".join(head.split()) + " {")
        out[fn.name] = (qualified(scopes.get(seg, ()), HELPER + fn.name), src, seg.end,
                        qualified(scopes.get(seg, ()), fn.name),
                        None if helper is None else Patch(seg.end, _SUFFIX, " " + helper, 0))
    return out


def _route_generic(launch, base, targs, own_words, helpers, overloaded, src, patches, skip):
    """For a launch of a template kernel whose template arguments only the compiler knows: the
    kernel's qualified name if it goes through the host runtime by address (its specialisations
    then need registering), else None. `k<T><<<...>>>` in a host template keeps the plain launch
    edits; `k<<<...>>>(args)` becomes a deduced launch through the kernel's helper, defined
    before the launch."""
    from gmprof.passes.patches import REPLACE as _REPLACE
    from gmprof.passes.patches import Patch

    h = helpers.get(base)
    if h is None or base in overloaded:
        return None
    name, hsrc, end, qname, helper = h
    if targs:
        return qname if own_words else None
    if helper is None or (hsrc is src and end > launch.kernel_start):
        return None  # the helper is not declared yet at the launch
    picked = L.deduced_edits(launch, f"return {name}")
    if picked is None:
        return None
    skip.append((launch.kernel_start, launch.open_start + 1))
    for e in picked:
        patches.setdefault(src, []).append(Patch(e.start, _REPLACE, e.text, 0, end=e.end))
    if helper not in patches.setdefault(hsrc, []):
        patches[hsrc].append(helper)
    return qname


def _prelude(instrumented: bool, defines: dict, cpu: bool, child_defines=None) -> str:
    rt = runtime_cu_dir()
    out = ["// generated by gmprof nvcc: the user's file, with launches routed through gmprof's\n"
           "// host runtime and an instrumented copy of each device function\n"]
    if instrumented:
        out.append("#define GMPROF_WHOLE_PROGRAM 1\n")
        for k, v in defines.items():
            out.append(f"#define {k} {v}\n")
        out.append(f'#include "{rt / "gmprof.cuh"}"\n')
        if child_defines:
            # the child copies' runtime (children.py): their counters in device memory, their
            # own shared bases; then the file's macros as they were
            for k, v in {**child_defines, "GMPROF_SM": 0}.items():
                out.append(f"#undef {k}\n#define {k} {v}\n")
            out.append(f'#define GMPROF_CHILD_PASS 1\n#include "{rt / "gmprof.cuh"}"\n')
            for k in ("GMPROF_SM", "GMPROF_SHARED_BASES"):
                out.append(f"#undef {k}\n")
                if k in defines:
                    out.append(f"#define {k} {defines[k]}\n")
    out.append(f'#include "{rt / "host" / "gmprof_host.h"}"\n')
    return "".join(out)


def _c_string(text: str) -> str:
    return json.dumps(text)  # a JSON string is a valid C string literal for ASCII text


def _epilogue(mid, manifest, mode, plan, defines, globals_, sizes, objects_c, kernels_c,
              defaults: str, device_launches=(), kids=None) -> str:
    manifest_text = json.dumps(manifest, sort_keys=True)
    out = ['\n#line 1 "<gmprof module tables>"\nnamespace {\n']
    out.append(f"const char __gmprof_manifest[] = {_c_string(manifest_text)};\n")
    if mode is not None:
        # the source is the runtime's device copy of the description (a graph can capture a
        # device-to-device copy; cudaMemcpyDefault tells the direction from the pointers)
        out.append("cudaError_t __gmprof_fill(const void *src, size_t n, cudaStream_t s) {\n"
                   "  return cudaMemcpyToSymbolAsync(__gmprof_launch, src, n, 0, "
                   "cudaMemcpyDefault, s);\n}\n")
        out.append("void __gmprof_global(int i, void **address, size_t *bytes) {\n"
                   "  switch (i) {\n")
        for k, g in enumerate(globals_):
            out.append(f"    case {k}: cudaGetSymbolAddress(address, {g.cxx}); "
                       f"cudaGetSymbolSize(bytes, {g.cxx}); break;\n")
        out.append("    default: *address = nullptr; *bytes = 0;\n  }\n}\n")
        names = ", ".join(_c_string(n) for n in sizes)
        values = ", ".join(f"(unsigned long long)sizeof({n})" for n in sizes)
        out.append(f"const char *const __gmprof_size_names[] = {{{names}{', ' if sizes else ''}nullptr}};\n")
        out.append(f"const unsigned long long __gmprof_sizes[] = {{{values}{', ' if sizes else ''}0}};\n")
    dl = ", 0, nullptr, nullptr"  # (written out: -Wmissing-field-initializers)
    if device_launches:
        n = len(device_launches)
        names = ", ".join(_c_string(f"{a}\t{b}") for a, b in device_launches)
        out.append(f"const char *const __gmprof_device_launch_names[] = {{{names}}};\n"
                   "cudaError_t __gmprof_device_launches_read(unsigned long long *counts) {\n"
                   f"  unsigned long long here[{n}] = {{}};\n"
                   "  cudaError_t e = cudaMemcpyFromSymbol(here, __gmprof_device_launches, "
                   "sizeof here);\n"
                   "  if (e != cudaSuccess) return e;\n"
                   f"  for (int i = 0; i < {n}; ++i) counts[i] += here[i];\n"
                   f"  unsigned long long zero[{n}] = {{}};\n"
                   "  return cudaMemcpyToSymbol(__gmprof_device_launches, zero, sizeof zero);\n"
                   "}\n")
        dl = f", {n}, __gmprof_device_launch_names, &__gmprof_device_launches_read"
    ch = ", 0, nullptr"
    if kids is not None:
        lines, ch = K.module_tables(kids)
        out.extend(line + "\n" for line in lines)
    out.extend(line + "\n" for line in objects_c)
    if mode is not None:
        module = (f"const ::gmprof_host::ModuleDesc __gmprof_module = {{\"{mid}\", __gmprof_manifest, "
                  f"GMPROF_HOST_DEFAULTS, 1, {len(plan.sites)}, {mode.counter_bits}, "
                  f"{mode.threshold or 0}u, {defines.get('GMPROF_SM', 0)}, {int(mode.enhanced)}, "
                  f"&__gmprof_fill, sizeof(::gmprof::Launch), {len(globals_)}, &__gmprof_global, "
                  f"{len(sizes)}, __gmprof_size_names, __gmprof_sizes, {int(mode.warps)}{dl}{ch}}};\n")
    else:
        module = (f"const ::gmprof_host::ModuleDesc __gmprof_module = {{\"{mid}\", __gmprof_manifest, "
                  "GMPROF_HOST_DEFAULTS, 0, 0, 32, 0u, 0, 0, nullptr, 0, 0, nullptr, 0, nullptr, "
                  "nullptr, 0, 0, nullptr, nullptr, 0, nullptr};\n")
    out.append(f"#define GMPROF_HOST_DEFAULTS {_c_string(defaults)}\n")
    out.append(module)
    out.append("::gmprof_host::KernelDesc __gmprof_kernels[] = {\n  " +
               ",\n  ".join(kernels_c or ["{nullptr, nullptr, nullptr, nullptr, nullptr, 0, "
                                          "nullptr, 0, nullptr, nullptr}"]) + "\n};\n")
    out.append("struct __gmprof_registrar {\n  __gmprof_registrar() {\n"
               f"    ::gmprof_host::register_module(&__gmprof_module, __gmprof_kernels, "
               f"{len(kernels_c)});\n  }}\n}} __gmprof_registrar_instance;\n")
    out.append("}  // namespace\n")
    return "".join(out)
