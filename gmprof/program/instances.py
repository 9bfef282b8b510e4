"""The specialisations of template kernels that host templates launch, found by compiling.

Stage: whole programs, between translation and compilation. A launch whose template arguments
are the enclosing host template's parameters (`k<T><<<g, b>>>(d, n)` in `template <class T> void
run(T *d, int n)`, `reduce<B><<<...>>>` in `template <int B> void launch()`), or are deduced
from the call (`k<<<g, b>>>(d, n)`), names no specialisation that gmprof can read before the
C++ compiler instantiates the host code. So such a file is compiled once without them in its
tables, the specialisations are read from the object's symbols (`nm -C`: the kernel itself on
the CPU backend, nvcc's host stub on a GPU; both carry the kernel's name and template
arguments), and the file is translated again with them registered (translate.py's
`instances`). The launches themselves go through the host runtime by the kernel's address,
`launch(k<T>, g, b)(d, n)`, so each specialisation launched finds its own entry.

A deduced launch gets its specialisation from a host function template gmprof writes beside the
kernel, with the kernel's own template head and parameters (`deduce_helper`): a call to it
deduces the template arguments exactly as a call to the kernel does, and it returns that
specialisation's address (gmprof_host.h's `launch_deduced`).
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

HELPER = "__gmprof_deduce_"


def _balanced(text: str, start: int, open_: str, close: str) -> int | None:
    """The index just after the bracket closing the one at text[start]."""
    depth = 0
    for k in range(start, len(text)):
        if text[k] == open_:
            depth += 1
        elif text[k] == close:
            depth -= 1
            if depth == 0:
                return k + 1
    return None


def deduce_helper(fn, text: str) -> str | None:
    """`template <class T> __host__ auto __gmprof_deduce_k(T *d, int n) -> decltype(&k<T>)
    { return &k<T>; }` for the template kernel `fn` whose definition is `text`, or None when its
    head or parameter list cannot be read (a parameter pack: its launches stay as they were)."""
    head_end = text.find("{")
    head = text[:head_end] if head_end >= 0 else text
    m = re.match(r"\s*template\s*<", head)
    if not m or "..." in head:
        return None
    t_end = _balanced(head, m.end() - 1, "<", ">")
    n = re.search(rf"\b{re.escape(fn.name)}\s*\(", head[t_end or 0:])
    if t_end is None or n is None:
        return None
    p_start = t_end + n.end() - 1
    p_end = _balanced(head, p_start, "(", ")")
    names = [tp.name for tp in fn.template_params]
    if p_end is None or not names or any(not x for x in names):
        return None
    spec = f"{fn.name}<{', '.join(names)}>"
    return (f"{head[:t_end]} __host__ inline auto {HELPER}{fn.name}{head[p_start:p_end]} -> "
            f"decltype(&{spec}) {{ return &{spec}; }}")


def _demangled_instances(symbols: str, names: dict) -> dict:
    """Qualified kernel name (`::ns::k`) -> the template arguments of each specialisation found
    in `nm -C` output (`void ns::k<float>(float*, int)`), as name expressions' arguments."""
    out: dict = {q: [] for q in names}
    for q in names:
        plain = q.lstrip(":")
        # (an unnamed namespace adds nothing to the qualified name, and `(anonymous
        # namespace)::` to the demangled one)
        for m in re.finditer(rf"(?:(?<![\w:])|(?<=\(anonymous namespace\)::)){re.escape(plain)}<",
                             symbols):
            end = _balanced(symbols, m.end() - 1, "<", ">")
            if end is None or not symbols.startswith("(", end):
                continue
            targs = symbols[m.end():end - 1].strip()
            if "anonymous" in targs or "{" in targs:
                continue  # a type with no name at file scope
            # `256u`, `3l`: the demangler's spelling of an integer argument
            targs = re.sub(r"\b(\d+)(?:u|l|ul|ll|ull)\b", r"\1", targs)
            if targs not in out[q]:
                out[q].append(targs)
    return out


def discover(text: str, names: dict, compile_cmd, tmp: Path) -> dict:
    """Kernel name -> [template arguments] of each specialisation the host code of `text`
    instantiates. `names`: qualified name -> kernel name; compile_cmd(source, object) the
    command that compiles `text` (g++ on the CPU backend, nvcc on a GPU). Nothing is found when
    the compile fails (its launches then run unprofiled, as before)."""
    src = tmp / "discover.cpp"
    obj = tmp / "discover.o"
    src.write_text(text, errors="surrogateescape")
    proc = subprocess.run(compile_cmd(str(src), str(obj)), capture_output=True, text=True)
    if proc.returncode != 0:
        return {}
    nm = subprocess.run(["nm", "-C", "--defined-only", str(obj)], capture_output=True,
                        text=True)
    found = _demangled_instances(nm.stdout, names)
    return {names[q]: v for q, v in found.items() if v}
