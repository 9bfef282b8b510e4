"""Member functions defined inside struct and class bodies.

Stage 2 of the frontend, beside segment.py. The segmenter keeps a struct or class definition
whole, as one TYPE segment (its bytes are emitted as they are). Device code puts functions in
such bodies (`template <class T> struct SharedMem { __device__ T *get() {...} };`, functors
with `__device__ operator()`), and their accesses count like any other function's. Takes the
tokens of a TYPE segment; returns a Member for every `__device__` (or `__host__ __device__`)
function defined in its body, nested classes included: a FUNCTION segment inside the type's span
(not part of the file's tiling, which keeps the TYPE segment), the qualified name
(`SharedMem::get`), the class's name (for its constructors) and the type parameters of the
enclosing class templates, which the function's parse must know as types.

    template <class T> struct S { __device__ T at(T *p) { return p[0]; } };
        -> Member(name 'S::at', owner 'S', type_params ('T',))
"""
from __future__ import annotations

from dataclasses import dataclass

from . import segment as S
from .scan import Tok

_ACCESS = ("public", "private", "protected")
_CLASS_KEYS = ("struct", "class", "union")


@dataclass
class Member:
    segment: S.Segment  # kind FUNCTION, name qualified
    owner: str  # the innermost class's name (its constructors are named after it)
    type_params: tuple  # type parameters of the enclosing class templates


def class_members(toks: list[Tok]) -> list[Member]:
    """Device member functions defined in the class body (or bodies) among `toks`, the tokens
    of one TYPE segment."""
    out: list[Member] = []
    _scan_class(toks, 0, len(toks), "", (), out)
    return out


def _scan_class(toks, i, n, prefix, type_params, out) -> None:
    code_idx = [k for k in range(i, n) if toks[k].kind not in ("comment", "dir")]
    brace = next((k for k in code_idx if toks[k].kind == "op" and toks[k].text == "{"), None)
    if brace is None:
        return
    head = [toks[k] for k in code_idx if k < brace]
    body_head = S._strip_template_prefix(head)
    words = [t.text for t in body_head]
    if words[:1] == ["typedef"]:
        words = words[1:]
    if not words or words[0] not in _CLASS_KEYS:
        return
    name = next((t for t in words[1:] if t not in ("__align__", "alignas", "final") and
                 (t[:1].isalpha() or t[:1] == "_")), None)
    if name is None or name in ("__device_builtin__", "__builtin_align__"):
        name = "<anonymous>"
    owner = name.rsplit("::", 1)[-1]
    qualified = f"{prefix}{owner}::"
    params = type_params + _template_type_params(head)
    close = min(S._matching(toks, brace, "{", "}"), n)
    body = toks[:close]
    j = brace + 1
    while j < close:
        t = toks[j]
        if t.kind in ("comment", "dir") or (t.kind == "op" and t.text == ";"):
            j += 1
            continue
        if t.kind == "id" and t.text in _ACCESS and j + 1 < close and toks[j + 1].text == ":":
            j += 2
            continue
        seg, nxt = S._declaration(body, j)
        if seg.kind == S.FUNCTION and seg.is_device_function and seg.name:
            seg.name = qualified + seg.name
            out.append(Member(seg, owner, params))
        elif seg.kind == S.TYPE:
            _scan_class(toks, j, nxt, qualified, params, out)
        j = max(nxt, j + 1)


def _template_type_params(head: list[Tok]) -> tuple:
    """`template <class T, typename U = int, int N>` -> ('T', 'U')."""
    names = []
    k = 0
    while k + 1 < len(head) and head[k].text == "template" and head[k + 1].text == "<":
        depth = 0
        k += 1
        while k < len(head):
            t = head[k].text
            if t == "<":
                depth += 1
            elif t in (">", ">>"):
                depth -= len(t)
                if depth <= 0:
                    k += 1
                    break
            elif depth == 1 and t in ("class", "typename") and k + 1 < len(head) and \
                    head[k + 1].kind == "id":
                names.append(head[k + 1].text)
            k += 1
    return tuple(names)
