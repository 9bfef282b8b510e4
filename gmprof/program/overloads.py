"""Kernels declared with different parameter lists: which function a launch and the tables mean.

Stage: whole programs, translation (translate.py). A kernel name declared with different
parameter lists names several C++ functions (overloads): cuda-samples' cdpAdvancedQuicksort
declares qsort_warp with 7 parameters in a header and defines it with 8, and launches it with
8 arguments. `&k` then names none of them, so gmprof writes, after each declaration and the
definition (on their last line: no line added), the type of a pointer to that function

    __global__ void k(float *a, unsigned n);
 -> __global__ void k(float *a, unsigned n); typedef void (*__gmprof_sig_k_0)(float *a, unsigned n);

and names a function through it: the module's tables name the definition
(`(*static_cast<::__gmprof_sig_k_1>(&::k))`), and a launch with N arguments the one function
declared before it that N arguments fit (its parameters, less those with a default), as the
call's overload resolution picks it where only one fits:

    k<<<g, b>>>(p, 0u, n)  ->  ::gmprof_host::launch(static_cast<::__gmprof_sig_k_1>(k), g, b)(p, 0u, n)

A launch that several overloads fit (same number of parameters, other types), or a name with
two definitions in one file or a template among its declarations, stays as it was, unprofiled,
with a warning.
"""
from __future__ import annotations

from dataclasses import dataclass

from gmprof.frontend import segment as S
from gmprof.frontend.scan import scan

from . import launches as L
from .describe import qualified

PREFIX = "__gmprof_sig_"
#: words that end a parameter's type, never its name (`unsigned int` has no name)
_TYPE_WORDS = frozenset({"void", "char", "short", "int", "long", "float", "double", "signed",
                         "unsigned", "bool", "const", "volatile", "__restrict__", "__restrict",
                         "auto", "size_t"})
#: words after which an identifier is a type (`const Foo`, `struct S`)
_BEFORE_TYPE = frozenset({"const", "volatile", "struct", "class", "union", "enum", "typename"})


@dataclass
class Declared:
    """One declaration (or the definition) of an overloaded kernel name."""

    segment: object
    source: object
    sig: str          # the qualified name of the pointer type written after it
    required: int     # its parameters without a default
    params: int
    key: str          # its parameter types, names left out: redeclarations share it
    defaults: list    # each parameter's default (text) or None
    text: str         # the typedef written after it


def _type_key(decl: str) -> str:
    """A parameter's type, its name left out (`unsigned int n` and `unsigned int` alike)."""
    toks = [t for t in scan(decl) if t.kind != "comment"]
    end = len(toks)
    while end and toks[end - 1].text == "]":  # `float a[4]`: the name before the bounds
        depth = 0
        for k in range(end - 1, -1, -1):
            depth += {"]": 1, "[": -1}.get(toks[k].text, 0)
            if depth == 0:
                end = k
                break
    # a name follows a type: `Foo f`, `T *p`, `unsigned n`; not `Foo`, `const Foo`, `ns::Foo`
    if end > 1 and toks[end - 1].kind == "id" and toks[end - 1].text not in _TYPE_WORDS and \
            "::" not in toks[end - 1].text and toks[end - 2].text not in _BEFORE_TYPE and \
            (toks[end - 2].kind == "id" or toks[end - 2].text in ("*", "&", "&&", ">")):
        toks = toks[:end - 1] + toks[end:]
    return " ".join(t.text for t in toks if t.text != "__grid_constant__")


def emit_order(tu) -> dict:
    """Segment -> its place in the file as compiled (local headers inlined where included)."""
    includes = {inc.directive: inc.target for inc in tu.includes if inc.target is not None}
    out: dict = {}
    seen: set = set()

    def walk(src):
        seen.add(src)
        for seg in tu.segments.get(src, ()):
            out[seg] = len(out)
            target = includes.get(seg)
            if target is not None and target not in seen:
                walk(target)

    walk(tu.main)
    return out


def _global_heads(tu):
    """(source, segment, its head's text) of each active kernel declaration and definition."""
    for src, segs in tu.segments.items():
        for seg in segs:
            if seg.kind in (S.FUNCTION, S.PROTOTYPE) and seg.space == "global" and seg.name \
                    and tu.active.get(seg, True):
                text = seg.text(src)
                yield src, seg, text[:text.find("{")] if seg.kind == S.FUNCTION else text


def retyped(tu) -> set:
    """Kernel names declared with as many parameters of other types (`k(float *)` and
    `k(int *)`): overloads too."""
    keys: dict = {}
    for _, seg, head in _global_heads(tu):
        params = L.parameter_list(head, seg.name)
        if params is not None and "template" not in seg.keywords:
            keys.setdefault(seg.name, set()).add(
                (len(params), ", ".join(_type_key(d) for d, _ in params)))
    return {name for name, ks in keys.items() if len(ks) > len({n for n, _ in ks})}


def declarations(tu, scopes, names) -> dict:
    """Kernel name -> [Declared], for the names in `names` (declared with different parameter
    lists) that gmprof can tell apart: no template, at most one definition, every parameter
    list read."""
    found: dict = {}
    for src, seg, head in _global_heads(tu):
        if seg.name in names:
            found.setdefault(seg.name, []).append((src, seg, head))
    out: dict = {}
    for name, segs in found.items():
        if any("template" in seg.keywords for _, seg, _ in segs) or \
                sum(seg.kind == S.FUNCTION for _, seg, _ in segs) > 1:
            continue
        entries = []
        for k, (src, seg, head) in enumerate(segs):
            params = L.parameter_list(head, name)
            if params is None:
                break
            if [d for d, _ in params] == ["void"]:
                params = []
            local = f"{PREFIX}{name}_{k}"
            decls = ", ".join(d.replace("__grid_constant__", "") for d, _ in params)
            defaults = [x for _, x in params]
            entries.append(Declared(
                seg, src, qualified(scopes.get(seg, ()), local),
                sum(x is None for x in defaults), len(params),
                ", ".join(_type_key(d) for d, _ in params), defaults,
                f" typedef void (*{local})({decls});"))
        else:
            out[name] = entries
    return out


def patches(found: dict) -> dict:
    """The typedefs, each after its declaration (SourceFile -> [Patch])."""
    from gmprof.passes.patches import SUFFIX, Patch

    out: dict = {}
    for entries in found.values():
        for d in entries:
            out.setdefault(d.source, []).append(Patch(d.segment.end, SUFFIX, d.text, 0))
    return out


def definition(found: dict, name: str) -> Declared | None:
    return next((d for d in found.get(name, ()) if d.segment.kind == S.FUNCTION), None)


def pick(tu, found: dict, name: str, n_args: int | None, launch_seg, order=None):
    """The function a launch of `name` with n_args arguments calls, among those declared before
    it (a Declared; its defaults merged over its redeclarations), or None where none or several
    fit."""
    if n_args is None or name not in found:
        return None
    order = order if order is not None else emit_order(tu)
    at = order.get(launch_seg, -1)
    fits = [d for d in found[name] if d.required <= n_args <= d.params and
            order.get(d.segment, at + 1) < at]
    if len({d.key for d in fits}) != 1:
        return None
    first = fits[0]
    merged = [next((d.defaults[k] for d in fits if d.defaults[k] is not None), None)
              for k in range(first.params)]
    return Declared(first.segment, first.source, first.sig, first.required, first.params,
                    first.key, merged, first.text)


def cast_edits(edits, launch, sig: str) -> bool:
    """The launch's edits naming the kernel through `sig`: `launch(static_cast<sig>(k), ...`."""
    opening = next((e for e in edits if e.start == e.end == launch.kernel_start), None)
    config = next((e for e in edits if e.start == launch.open_start), None)
    if opening is None or config is None:
        return False
    opening.text += f"static_cast<{sig}>("
    config.text = ")" + config.text
    return True
