"""Where an error of the CPU backend is in the user's source.

Stage: host runtime, CPU backend (errors). Input: g++'s output for a module that does not
compile, or the offset of a faulting instruction (a fault, a stack overflow, a kernel stopped by
its time limit) in a module's library; the CpuModule (its source, file name, name expressions,
globals). Output: a located error (`file:line:col` on the user's line, with the source line),
found through g++'s own positions and notes, or the library's line tables (addr2line). Lines in
gmprof's own headers, the system's, the generated glue or a deleted build file are never the
answer: an error there is located at the user's line that led there.
"""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from gmprof._paths import runtime_cu_dir
from gmprof.errors import CompileError, Location

from . import cpu_cache

_GLUE_FILE = "<gmprof-cpu glue>"
_GLOBALS_FILE = "<gmprof-cpu globals>"


def _header_dir() -> Path:
    return runtime_cu_dir() / "cpu"


def is_runtime_file(path: str) -> bool:
    """A file of gmprof's own device code (the CPU headers, gmprof.cuh, a precompiled copy):
    errors and faults there are located at the user's line that led there."""
    p = Path(path)
    if p.parent == _header_dir() or p.parent.name.startswith("pch") and \
            p.name.startswith("gmprof_cpu"):
        return True
    try:
        resolved = p.resolve()
    except OSError:
        return False
    # the backend's own CUDA headers (include/cooperative_groups.h, include/cuda_fp16.h, ...)
    # count too
    return resolved.parent == runtime_cu_dir().resolve() or \
        _header_dir().resolve() in resolved.parents


_DIAG = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): (?P<kind>fatal error|error|note|warning): ?(?P<msg>.*)$")
_AT = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+):")


def source_line(file: str, line: int, source: str, filename: str) -> str | None:
    try:
        if file == filename and not os.path.isfile(file):
            return source.splitlines()[line - 1]
        with open(file, encoding="utf-8", errors="replace") as f:
            for k, text in enumerate(f, 1):
                if k == line:
                    return text
    except (OSError, IndexError):
        pass
    return None


def compile_error(module, output: str) -> CompileError:
    lines = output.splitlines()
    first = None
    for k, line in enumerate(lines):
        m = _DIAG.match(line)
        if m and m.group("kind") in ("error", "fatal error"):
            first = (k, m)
            break
    if first is None:
        # a link error (-z defs: "k.cu:3: undefined reference to `f(int)'") or something
        # without a position
        loc = None
        msg = next((l.strip() for l in lines if "error" in l or "undefined" in l),
                   lines[-1].strip() if lines else "no output")
        for l in lines:
            u = re.match(r"^(?P<file>[^:]+):(?P<line>\d+):\s*(?P<msg>undefined reference.*)$",
                         l.strip())
            if u:
                msg = u.group("msg")
                file, line = os.path.normpath(u.group("file")), int(u.group("line"))
                if Path(file).name == "kernel.cpp" and \
                        Path(file).parent.name.startswith(cpu_cache.TEMP_PREFIX):
                    # ld names the compiled file; the line is the text's own (when the text
                    # has no #line of its own, that is the user's file)
                    file = module.filename if "#line" not in module.source else None
                if file:
                    loc = module._location(file, line)
                break
        e = CompileError(f"the kernel does not compile on the CPU path (g++): {msg}", loc)
        e.compiler_output = output
        return e
    k, m = first
    msg = m.group("msg").strip()
    file, line, col = m.group("file"), int(m.group("line")), int(m.group("col"))
    # g++'s first error on a line is sometimes a consequence (an unknown parameter type
    # first reads as "variable or field 'k' declared void"): quote the line's others too
    more = []
    for other in lines[k + 1:]:
        o = _DIAG.match(other)
        if o and o.group("kind") == "error" and o.group("file") == file and \
                int(o.group("line")) == line and o.group("msg").strip() not in more + [msg]:
            more.append(o.group("msg").strip())
    if more:
        msg = "; ".join([msg] + more[:3])
    if file == _GLUE_FILE:
        expr = module.name_expressions[line - 1] if 0 < line <= len(module.name_expressions) else "?"
        e = CompileError(f"kernel name expression `{expr}` does not name a __global__ "
                         f"function of the source (g++: {msg})", kind="no-kernel")
        e.compiler_output = output
        return e
    if file == _GLOBALS_FILE:
        name = module.global_names[line - 1] if 0 < line <= len(module.global_names) else "?"
        e = CompileError(f"global `{name}` is not a file-scope variable of the source "
                         f"(g++: {msg})")
        e.compiler_output = output
        return e
    if is_runtime_file(file) or file.startswith("/usr/"):
        # an error inside our header or a system header: locate it at the user's line that
        # led there (the "required from here" note, or the include chain)
        for other in lines[k + 1:] + lines[:k]:
            a = _AT.match(other.strip()) or _AT.match(other.replace("In file included from", "").strip())
            if a and not is_runtime_file(a.group("file")) and \
                    not a.group("file").startswith("/usr/") and \
                    a.group("file") not in (_GLUE_FILE, _GLOBALS_FILE):
                file, line, col = a.group("file"), int(a.group("line")), int(a.group("col"))
                break
    text = source_line(file, line, module.source, module.filename)
    if text is not None and col > len(text.rstrip("\n")):
        # a column of the instrumented text (its hooks make lines longer): the statement's
        col = len(text) - len(text.lstrip()) + 1
    loc = Location(file, line, col, text)
    e = CompileError(f"the kernel does not compile on the CPU path (g++): {msg}", loc)
    e.compiler_output = output
    return e


def fault_location(module, pc_offset: int) -> Location | None:
    """The user's line of a faulting instruction, from the library's line tables. A fault
    in a function's prologue (a stack overflow is one: the stack probe of a large frame)
    maps to no user line; the first user line after it in the same function does."""
    out = _addr2line(module, ["-i", hex(pc_offset)])
    for line in out[1::2]:  # innermost inlined frame first
        loc = _user_location(module, line)
        if loc is not None:
            return loc
    if not out:
        return None
    function = out[0]
    scan = _addr2line(module, [hex(pc_offset + k) for k in range(1, 512)])
    for k in range(0, len(scan) - 1, 2):
        if scan[k] != function:
            break
        loc = _user_location(module, scan[k + 1])
        if loc is not None:
            return loc
    return None

def _addr2line(module, args) -> list[str]:
    try:
        return subprocess.run(["addr2line", "-e", str(module._so_path), "-f", *args],
                              capture_output=True, text=True, timeout=30).stdout.splitlines()
    except (OSError, subprocess.SubprocessError):
        return []

def _user_location(module, where: str) -> Location | None:
    m = re.match(r"^(.*):(\d+)(?: \(discriminator \d+\))?$", where.strip())
    if not m or m.group(1) == "??" or m.group(2) == "0" or is_runtime_file(m.group(1)) \
            or m.group(1).startswith("/usr/") or _is_build_file(m.group(1)):
        return None
    return module._location(os.path.normpath(m.group(1)), int(m.group(2)))


def _is_build_file(path: str) -> bool:
    """A file of a build directory (the generated kernel.cpp, deleted after the build)."""
    return Path(path).parent.name.startswith((cpu_cache.TEMP_PREFIX, "gmprof-cpu-"))


__all__ = ["compile_error", "fault_location", "source_line", "is_runtime_file"]
