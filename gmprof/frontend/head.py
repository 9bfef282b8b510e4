"""Macros in a function's head: qualifiers and attributes spelt through the preprocessor.

Stage 3 of the frontend, beside preprocess.py. Public code hides a function's qualifiers behind
macros: `#define CALLABLE __host__ __device__`, `#define KERNEL __global__`, and
`__global__ void LAUNCH_BOUNDS(256, 2) kernel(...)` with `LAUNCH_BOUNDS` expanding to
`__launch_bounds__(...)` or to nothing. The segmenter, which runs before any macro is known,
cannot see that such a function is a device function, nor always which identifier is its name.

Once the macros in effect at a function are known, `read_head` expands the macros of its head
that stand only for qualifiers and attributes (their bodies are words of `_HEAD_WORDS` and the
argument groups of those words, through other such macros): it returns the words they bring
(`__global__`, `__device__`, ...) for the function's space, the function's name with them left
out, and the spans to blank in the parse view (the grammar reads the head without them; the
rewriter never touches a head, so the user's text, macro and all, is what nvcc compiles).

    #define LB(t, b) __launch_bounds__(t, b)
    __global__ void LB(256, 2) kernel(float *a) {...}   -> name 'kernel', blank 'LB(256, 2)'
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .preprocess import Macro
from .scan import Tok, scan

# Words a head may hold that do not change what the function computes or reads.
_HEAD_WORDS = frozenset({
    "__global__", "__device__", "__host__", "__forceinline__", "__noinline__", "inline",
    "__inline__", "__inline", "static", "extern", "constexpr", "__launch_bounds__", "__align__",
    "alignas", "__attribute__", "__declspec", "__maxnreg__", "__cluster_dims__", "noexcept",
})
# Of those, the ones an argument group follows.
_GROUP_WORDS = frozenset({"__launch_bounds__", "__align__", "alignas", "__attribute__",
                          "__declspec", "__maxnreg__", "__cluster_dims__"})
_MAX_DEPTH = 16


@dataclass
class Head:
    words: set = field(default_factory=set)  # head words the expanded macros brought
    blanks: list = field(default_factory=list)  # (start, end) offsets of macro uses to blank
    name: str | None = None  # the function's name, macro uses left out


def qualifier_words(macro: Macro, macros: dict[str, Macro], depth: int = 0) -> set | None:
    """The head words `macro` expands to, or None if its body holds anything else."""
    if depth > _MAX_DEPTH:
        return None
    words: set = set()
    toks = [t for t in scan(macro.body) if t.kind != "comment"]
    i = 0
    while i < len(toks):
        t = toks[i]
        if t.kind != "id":
            return None
        if t.text in _HEAD_WORDS:
            words.add(t.text)
            i += 1
            if t.text in _GROUP_WORDS:
                i = _skip_group(toks, i)
            continue
        inner = macros.get(t.text)
        if inner is None or inner.name == macro.name:
            return None
        got = qualifier_words(inner, macros, depth + 1)
        if got is None:
            return None
        words |= got
        i += 1
        if inner.function_like:
            i = _skip_group(toks, i)
    return words


def read_head(head: list[Tok], macros: dict[str, Macro], function_name) -> Head | None:
    """Expand the qualifier macros of a function's head (its tokens before the body); None if
    it uses none. `function_name(tokens)` names a function from its head tokens."""
    result = Head()
    kept: list[Tok] = []
    i = 0
    angle = 0
    while i < len(head):
        t = head[i]
        if t.kind == "op" and t.text == "(" and angle == 0 and kept and \
                kept[-1].kind == "id" and kept[-1].text not in _GROUP_WORDS:
            # the parameter list (or a macro we do not know): nothing after it is expanded
            kept.extend(head[i:])
            break
        if t.kind == "op" and t.text in ("<", ">", ">>"):
            angle = max(0, angle + (1 if t.text == "<" else -len(t.text)))
        macro = macros.get(t.text) if t.kind == "id" and angle == 0 else None
        words = qualifier_words(macro, macros) if macro is not None else None
        if words is None or (macro.function_like and
                             (i + 1 >= len(head) or head[i + 1].text != "(")):
            kept.append(t)
            if t.kind == "id" and t.text in _GROUP_WORDS:
                end = _skip_group(head, i + 1)
                kept.extend(head[i + 1:end])
                i = end
                continue
            i += 1
            continue
        end = _skip_group(head, i + 1) if macro.function_like else i + 1
        result.words |= words
        result.blanks.append((t.start, head[end - 1].end))
        i = end
    if not result.blanks:
        return None
    result.name = function_name(kept)
    return result


def unknown_head_call(head: list[Tok], macros: dict[str, Macro]) -> str | None:
    """The name of an identifier called in the head before the function's name
    (`void LB(256, 2) kernel(`) that is no macro gmprof knows, if there is one."""
    for i, t in enumerate(head):
        if t.kind == "id" and t.text not in _GROUP_WORDS and t.text not in macros and \
                i + 1 < len(head) and head[i + 1].text == "(":
            end = _skip_group(head, i + 1)
            if end < len(head) and head[end].kind == "id":
                return t.text
    return None


def _skip_group(toks: list[Tok], i: int) -> int:
    """The index after the parenthesised group at toks[i] (i itself if there is none)."""
    if i >= len(toks) or toks[i].text != "(":
        return i
    depth = 0
    for j in range(i, len(toks)):
        if toks[j].text == "(":
            depth += 1
        elif toks[j].text == ")":
            depth -= 1
            if depth == 0:
                return j + 1
    return len(toks)
