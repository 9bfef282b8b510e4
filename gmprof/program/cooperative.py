"""Static `__shared__` variables registered with the CPU backend, for cooperative launches.

Stage: whole programs, CPU backend, after translation. A cooperative launch with a grid barrier
(`cg::this_grid().sync()`) runs its blocks in phases on the CPU backend (runtime_cu/cpu/
gmprof_cpu_launch.h): between two grid barriers each block's shared memory is put aside while
the others run. The dynamic shared memory is one known buffer, but a static `__shared__`
variable is a function-local `static` (one object, wherever the compiler put it; a template's
is in no section a linker script can name), so each declaration registers its object where it
is declared:

    __shared__ float s[B];
 -> __shared__ float s[B]; [[maybe_unused]] static const int __gmprof_sh_0 = ::gmprof_cpu::shared_seen((void *)&s, sizeof(s));

on the same line (no line moves). Only files that name a grid group get this: the others'
kernels cannot reach a grid barrier.
"""
from __future__ import annotations

from gmprof.frontend.scan import scan


def uses_grid_sync(text: str) -> bool:
    return any(t.kind == "id" and t.text.split("::")[-1] in ("this_grid", "grid_group")
               for t in scan(text))


def _declarator_names(toks) -> list[str]:
    """The names a declaration's tokens (after `__shared__`, before `;`) declare."""
    names, depth, angle, last, seen_dim = [], 0, 0, None, False
    prev = None
    for t in toks:
        tx = t.text if t.kind == "op" else ""
        if tx == "<" and depth == 0 and not seen_dim and prev is not None and prev.kind == "id":
            angle += 1  # template arguments of the type: `Foo<int, 3>::T`
        elif tx in (">", ">>") and angle:
            angle = max(angle - len(tx), 0)
        elif angle:
            pass
        elif tx in ("(", "{") or (tx == "[" and depth == 0 and last is not None):
            if depth == 0 and tx == "[":
                seen_dim = True
            depth += 1
        elif tx == "[":
            depth += 1
        elif tx in (")", "]", "}"):
            depth -= 1
        elif tx == "=" and depth == 0:
            seen_dim = True
        elif tx == "," and depth == 0:
            if last is not None:
                names.append(last)
            last, seen_dim = None, False
        elif t.kind == "id" and depth == 0 and not seen_dim:
            last = t.text
        prev = t
    if last is not None:
        names.append(last)
    return names


def register_static_shared(text: str) -> str:
    """`text` with each static `__shared__` declaration followed by its registration (above),
    when the file names a grid group; else `text` as it was."""
    if "__shared__" not in text or not uses_grid_sync(text):
        return text
    toks = [t for t in scan(text) if t.kind != "comment"]
    inserts = []
    k = 0
    for i, t in enumerate(toks):
        if t.kind != "id" or t.text != "__shared__":
            continue
        if i and toks[i - 1].kind == "id" and toks[i - 1].text == "extern":
            continue
        j, depth = i + 1, 0
        while j < len(toks) and not (toks[j].kind == "op" and toks[j].text == ";" and depth == 0):
            if toks[j].kind == "op" and toks[j].text in ("(", "[", "{"):
                depth += 1
            elif toks[j].kind == "op" and toks[j].text in (")", "]", "}"):
                depth -= 1
            if toks[j].kind == "dir" or depth < 0:
                break
            j += 1
        if j >= len(toks) or toks[j].text != ";":
            continue
        regs = []
        for name in _declarator_names(toks[i + 1:j]):
            regs.append(f" [[maybe_unused]] static const int __gmprof_sh_{k} = "
                        f"::gmprof_cpu::shared_seen((void *)&{name}, sizeof({name}));")
            k += 1
        if regs:
            inserts.append((toks[j].end, "".join(regs)))
    out, pos = [], 0
    for at, s in inserts:
        out.append(text[pos:at])
        out.append(s)
        pos = at
    out.append(text[pos:])
    return "".join(out)
