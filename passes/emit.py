"""Emit: the user's files with their patches applied, as one translation unit.

The one emitter of gmprof: the Python runtime's instrumented unit (`emit`, for a Target of
targets.py) and a whole program's translation (gmprof/program/translate.py, `emit_file`) both
come from `emit_file`. Local headers are inlined between `#line` markers (so their functions
can be instrumented, and copied); no other newline is added, so every line keeps its number.

    target.device_only  host code blanked line for line (NVRTC, the CPU backend); else kept
    expand              a function read with its macros expanded is emitted as its expansion
                        (same lines), patched where its sites are; off for whole programs,
                        whose originals stay as written (their copies are the expansions)
"""
from __future__ import annotations

from gmprof._paths import runtime_cu_dir
from gmprof.frontend import segment as S
from gmprof.frontend.scan import directive_body

from .patches import apply_patches, merge
from .targets import NVCC, Target


def emit(program, patches: dict, target: Target = NVCC, *, header: bool = True,
         defines: dict | None = None, extra: str = "", unmeasured_pass: bool = False) -> str:
    """The translation unit for a target as one text (local includes inlined): the counting
    patches and the target's own (targets.py) applied, the gmprof header in front (and its
    second pass, whose hooks measure nothing, where a kernel has two bodies: dual.py)."""
    tu = program.tu
    patches = merge(patches, target.patches(program))
    out = []
    if header:
        for name, value in (defines or {}).items():
            out.append(f"#define {name} {value}\n")
        header_path = runtime_cu_dir() / "gmprof.cuh"
        out.append(f'#line 1 "{header_path}"\n')
        out.append(header_path.read_text())
        if unmeasured_pass:
            out.append(f'\n#define GMPROF_UNMEASURED_PASS 1\n#line 1 "{header_path}"\n')
            out.append(header_path.read_text())
        out.append(f'\n#line 1 "{tu.main.name}"\n')
    out.append(emit_file(tu, tu.main, patches, target))
    if extra:
        out.append("\n" + extra)
    text = "".join(out)
    if target.device_only:
        # NVRTC and g++ take UTF-8 text: a byte that is not UTF-8 (only ever in a comment,
        # frontend/source.py) becomes U+FFFD; for nvcc it is written back as it was
        text = text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return text


def emit_file(tu, source, patches: dict, target: Target = NVCC, *, expand: bool = True,
              seen: frozenset = frozenset()) -> str:
    """One file of the unit with its patches, its local headers inlined (once each)."""
    device_only = target.device_only
    seen = seen | {source}
    mine = patches.get(source, [])
    includes = {inc.directive: inc for inc in tu.includes if inc.source is source}
    pieces = []
    for seg in tu.segments[source]:
        text = seg.text(source)
        if seg.kind == S.DIRECTIVE and seg in includes:
            inc = includes[seg]
            if inc.target is not None and inc.target not in seen and tu.active.get(seg, True):
                line = source.line_col(seg.end)[0] + 1
                pieces.append(f'#line 1 "{inc.target.name}"\n')
                pieces.append(emit_file(tu, inc.target, patches, target, expand=expand,
                                        seen=seen))
                pieces.append(f'\n#line {line - 1} "{source.name}"\n')
                continue
            if inc.once:
                # its `#pragma once` header is already inlined above: nvcc must not read it
                # again (the inlined copy has no `#pragma once` left to stop it)
                pieces.append(_blank_keep_lines(text))
                continue
            if inc.target is None and device_only and not inc.name.startswith('"'):
                body = directive_body(text)
                if body.startswith("<") and not target.keeps_system_include(body):
                    pieces.append(_blank_keep_lines(text))
                    continue
            if inc.target is None and device_only and not directive_body(text).startswith("<"):
                pieces.append(_blank_keep_lines(text))  # a local header we could not find
                continue
        if seg.kind == S.DIRECTIVE and directive_body(text).startswith("once") and \
                source is not tu.main:
            pieces.append(_blank_keep_lines(text))
            continue
        if device_only and not _is_device(seg):
            pieces.append(_blank_keep_lines(text))
            continue
        expanded = tu.expansions.get(seg) if expand else None
        if expanded is not None:
            # a function read with its macros expanded: its expansion (same lines) goes in
            # its place, patched where its sites are
            own = patches.get(expanded, [])
            pieces.append(apply_patches(expanded.text, own) if own else expanded.text)
            continue
        # a patch at a boundary belongs to the segment it starts (whole programs' copies sit
        # at the end of their function, which is the start of what follows)
        ps = [p for p in mine if seg.start <= p.offset < seg.end]
        pieces.append(apply_patches(source.text, ps, seg.start, seg.end) if ps else text)
    tail = [p for p in mine if p.offset == len(source.text)]
    if tail:
        pieces.append(apply_patches(source.text, tail, len(source.text)))
    return "".join(pieces)


def _blank_keep_lines(text: str) -> str:
    return "\n" * text.count("\n")


def _is_device(seg) -> bool:
    if seg.kind in (S.DIRECTIVE, S.TYPE, S.CONSTANT, S.SCOPE_OPEN, S.SCOPE_CLOSE, S.GAP):
        return True
    if seg.kind == S.FUNCTION or seg.kind == S.PROTOTYPE:
        return seg.space in ("global", "device", "host_device")
    if seg.kind == S.VARIABLE:
        return seg.space != "host"
    return False
