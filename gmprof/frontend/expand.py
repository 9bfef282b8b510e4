"""The retry for functions that parse only with their macros expanded.

Stage 3 of the frontend, used by program.py when a function's parse view does not parse. The
frontend reads the user's text unexpanded, which keeps positions and lets the rewriter patch the
user's bytes; but a macro that stands for a statement (`OP20 OP20`, `FOR_EACH(i) body`) or for a
string literal in a concatenation (`"node (" FMT "): "`) makes no sense to a grammar until it is
expanded. Takes the function's parse view and the macros; returns an ExpandedSource: the
function's text with every macro expanded as the C preprocessor does (object-like and
function-like macros, `#` and `##`, `__VA_ARGS__`, a macro not expanded inside itself), laid out
so that every token stays on its user's line (and the text has as many lines as the function),
and a map from each expanded offset back to the user's text: a token copied from the user's
text (outside macros, or in a macro's argument) maps to where it was written, a token from a
macro's body to the macro's call. Spans on the expanded text therefore report the user's lines,
and the instrumented file holds the expansion in the function's place: the same lines, so
nvcc's messages and the CPU backend's faults point at the user's lines too.

    #define OP(x) x = x * 2 + 1;
    __global__ void k(float *a) { OP(a[0]) OP(a[1]) }
        -> "__global__ void k ( float * a ) { a [ 0 ] = a [ 0 ] * 2 + 1 ; a [ 1 ] = ..."
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass

from ..errors import GmprofError, Location
from .preprocess import Macro
from .scan import scan
from .source import SourceFile

_MAX_TOKENS = 200_000  # an expansion that grows past this is not read (runaway macros)


@dataclass
class _T:
    text: str
    kind: str
    origin: int | None  # offset in the user's file of a token copied from it, else None
    call: int | None  # offset of the outermost macro call that produced a body token
    hide: frozenset = frozenset()

    @property
    def position(self) -> int:
        return self.origin if self.origin is not None else self.call


class ExpandedSource(SourceFile):
    """A function's text with its macros expanded; locations are the user's."""

    def __init__(self, original: SourceFile, text: str, starts: list, origins: list,
                 verbatim: list, used: list):
        super().__init__(original.name, text, None)
        self.original = original
        self._starts = starts  # expanded offset of each token
        self._origins = origins  # user's offset of each token
        self._verbatim = verbatim  # whether the token is the user's text itself
        self.macros_used = used  # names of the macros expanded, in order of first use

    def original_offset(self, offset: int) -> int:
        k = bisect.bisect_right(self._starts, offset) - 1
        if k < 0:
            return self._origins[0] if self._origins else 0
        inside = offset - self._starts[k]
        return self._origins[k] + (inside if self._verbatim[k] else 0)

    def line_col(self, offset: int) -> tuple[int, int]:
        return self.original.line_col(self.original_offset(offset))

    def location(self, offset: int) -> Location:
        return self.original.location(self.original_offset(offset))

    def __repr__(self) -> str:
        return f"ExpandedSource({self.name!r}, {len(self.text)} chars)"


def expand_function(source: SourceFile, view: str, base: int,
                    macros: dict[str, Macro]) -> ExpandedSource | None:
    """The expansion of the parse view `view` (at offset `base` of `source`), or None when it
    uses no macro."""
    toks = [_T(t.text, t.kind, base + t.start, None) for t in scan(view)
            if t.kind != "comment"]
    used: list[str] = []
    out = _Expander(macros, used, source).run(toks)
    if not used:
        return None
    return _layout(source, view, base, out, used)


def expand_text(macro: Macro, macros: dict[str, Macro]) -> str:
    """A macro's body with the macros in it expanded (its own parameters left as they are)."""
    toks = [_T(t.text, t.kind, None, 0, frozenset({macro.name})) for t in _body(macro)]
    return " ".join(t.text for t in _Expander(macros, [], None).run(toks))


class _Expander:
    def __init__(self, macros, used, source):
        self.macros = macros
        self.used = used
        self.source = source

    def run(self, toks: list[_T]) -> list[_T]:
        out: list[_T] = []
        i = 0
        while i < len(toks):
            if len(toks) > _MAX_TOKENS:
                raise GmprofError("macro expansion grows without end", None, kind="preprocess")
            t = toks[i]
            macro = self.macros.get(t.text) if t.kind == "id" else None
            if macro is None or t.text in t.hide:
                out.append(t)
                i += 1
                continue
            hide = t.hide | {t.text}
            call = t.call if t.origin is None else t.origin
            if not macro.function_like:
                body = [_T(b.text, b.kind, None, call, hide) for b in _body(macro)]
                toks[i:i + 1] = body
            else:
                if i + 1 >= len(toks) or toks[i + 1].text != "(":
                    out.append(t)  # a function-like macro's name without arguments
                    i += 1
                    continue
                args, close = _arguments(toks, i + 1)
                if args is None:
                    out.append(t)
                    i += 1
                    continue
                toks[i:close + 1] = self.substitute(macro, args, hide, call)
            if macro.name not in self.used:
                self.used.append(macro.name)
        return out

    def substitute(self, macro: Macro, args: list[list[_T]], hide, call) -> list[_T]:
        params = list(macro.params or ())
        variadic = None
        if params and params[-1].endswith("..."):
            variadic = params[-1][:-3].strip() or "__VA_ARGS__"
            params[-1] = variadic
            if len(args) > len(params):  # the variadic part keeps its commas
                merged = []
                for k, a in enumerate(args[len(params) - 1:]):
                    if k:
                        merged.append(_T(",", "op", None, call, hide))
                    merged.extend(a)
                args = args[:len(params) - 1] + [merged]
        if args == [[]] and not params:
            args = []
        if len(args) != len(params) and not (variadic and len(args) == len(params) - 1):
            raise GmprofError(f"macro {macro.name} takes {len(params)} arguments, "
                              f"not {len(args)}", None, kind="preprocess")
        actual = dict(zip(params, args))
        if variadic and variadic not in actual:
            actual[variadic] = []
        body = _body(macro)
        result: list[_T] = []
        k = 0
        while k < len(body):
            b = body[k]
            nxt = body[k + 1] if k + 1 < len(body) else None
            prev = body[k - 1] if k else None
            if b.text == "#" and nxt is not None and nxt.text in actual:
                text = " ".join(a.text for a in actual[nxt.text])
                result.append(_T('"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"',
                                 "str", None, call, hide))
                k += 2
                continue
            if b.text == "##" and result and nxt is not None:
                right = actual.get(nxt.text, [_T(nxt.text, nxt.kind, None, call, hide)])
                left = result.pop()
                if right:
                    pasted = left.text + right[0].text
                    result.append(_T(pasted, _kind(pasted), None, call, hide))
                    result.extend(right[1:])
                else:
                    result.append(left)
                k += 2
                continue
            if b.text in actual:
                raw = [_T(a.text, a.kind, a.origin, a.call, a.hide) for a in actual[b.text]]
                pasting = (nxt is not None and nxt.text == "##") or \
                    (prev is not None and prev.text == "##")
                result.extend(raw if pasting else self.run(raw))
            else:
                result.append(_T(b.text, b.kind, None, call, hide))
            k += 1
        for r in result:
            r.hide = r.hide | hide
        return result


def _body(macro: Macro):
    return [t for t in scan(macro.body) if t.kind != "comment"]


def _kind(text: str) -> str:
    if text[:1].isalpha() or text[:1] == "_":
        return "id"
    if text[:1].isdigit():
        return "num"
    return "op"


def _arguments(toks: list[_T], open_: int):
    """The arguments of a macro call whose '(' is toks[open_], and the index of its ')'."""
    args: list[list[_T]] = [[]]
    depth = 0
    for j in range(open_, len(toks)):
        t = toks[j]
        if t.text == "(":
            depth += 1
            if depth == 1:
                continue
        elif t.text == ")":
            depth -= 1
            if depth == 0:
                return args, j
        elif t.text == "," and depth == 1:
            args.append([])
            continue
        args[-1].append(t)
    return None, len(toks)


def _layout(source: SourceFile, view: str, base: int, toks: list[_T], used) -> ExpandedSource:
    """The expanded text, each token on its user's line, as many lines as the view."""
    pieces: list[str] = []
    starts, origins, verbatim = [], [], []
    line = source.line_col(base)[0]
    col0 = source.line_col(base)[1]
    pieces.append(" " * (col0 - 1))
    length = col0 - 1
    after_pragma = False
    prev = None
    for t in toks:
        pos = t.position
        tline = source.line_col(pos)[0]
        if tline > line or after_pragma or (t.kind == "dir" and length and pieces[-1] != "\n"):
            gap = max(tline - line, 1 if (after_pragma or t.kind == "dir") else 0)
            indent = " " * (source.line_col(pos)[1] - 1 if tline == line + gap else 0)
            pieces.append("\n" * gap + indent)
            length += gap + len(indent)
            line += gap
        elif prev is not None and prev.origin is not None and t.origin is not None and \
                0 <= t.origin - (prev.origin + len(prev.text)) < 80 and \
                not source.text[prev.origin + len(prev.text):t.origin].strip(" \t"):
            # neighbours in the user's text keep the user's spacing (`a[i + 1]`); only blanks:
            # between an argument's last token and the next, the text is the call's `)`
            gap_text = source.text[prev.origin + len(prev.text):t.origin]
            pieces.append(gap_text)
            length += len(gap_text)
        elif length and not pieces[-1].endswith((" ", "\n")):
            pieces.append(" ")
            length += 1
        prev = t
        starts.append(length)
        origins.append(pos)
        verbatim.append(t.origin is not None)
        pieces.append(t.text)
        length += len(t.text)
        after_pragma = t.kind == "dir"
    last = source.line_col(base + len(view))[0]
    if last > line:
        pieces.append("\n" * (last - line))
    return ExpandedSource(source, "".join(pieces), starts, origins, verbatim, used)
