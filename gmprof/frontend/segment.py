"""Segmentation: cut a translation unit into top-level pieces by span, keeping every byte.

Stage 2 of the frontend. Takes a SourceFile; returns Segments that tile the file exactly (their
texts concatenated reproduce it byte for byte). Device functions (`__global__`, `__device__`,
`__host__ __device__`, with template prefixes, `extern "C"`, `__launch_bounds__`,
`__forceinline__`), file-scope CUDA variables, types, directives and scopes (`namespace x {`,
`extern "C" {`) are recognised lexically from the token stream of scan.py; everything else is
host code, kept verbatim and never parsed, so a syntax error in host code is harmless.

    __global__ void k(float *a) { a[0] = 1; }   -> Segment('function', space='global', name='k')
    int main() { ... }                          -> Segment('function', space='host', name='main')
    #define N 16                                -> Segment('directive', directive='define')
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .scan import Tok, directive_name, scan
from .source import SourceFile

# Kinds of segment.
FUNCTION = "function"      # a function definition (device or host: see `space`)
PROTOTYPE = "prototype"    # a function declaration without a body
VARIABLE = "variable"      # a file-scope variable (device or host: see `space`)
CONSTANT = "constant"      # a file-scope const/constexpr scalar usable from device code
TYPE = "type"              # struct/class/union/enum/typedef/using/static_assert/namespace alias
DIRECTIVE = "directive"    # one preprocessor line
SCOPE_OPEN = "scope_open"  # `namespace x {` or `extern "C" {`
SCOPE_CLOSE = "scope_close"
GAP = "gap"                # white space and comments between the others
OTHER = "other"            # anything unrecognised (a stray `;`, unbalanced text)

_CUDA_VARIABLE_SPACES = ("__device__", "__constant__", "__managed__", "__shared__")
_TYPE_KEYWORDS = {"typedef", "struct", "class", "union", "enum", "using", "static_assert"}
_SCALAR_WORDS = {
    "const", "constexpr", "static", "unsigned", "signed", "int", "long", "short", "char", "float",
    "double", "bool", "size_t", "__device__", "__constant__", "inline",
}
_TRAILING_QUALIFIERS = {"const", "noexcept", "override", "final", "volatile", "throw"}


@dataclass(eq=False)  # segments hash by identity: results are keyed by segment
class Segment:
    kind: str
    start: int
    end: int
    name: str | None = None
    #: for functions: 'global', 'device', 'host_device' or 'host'; for variables the memory
    #: space: '__device__', '__constant__', '__managed__', '__shared__' or 'host'
    space: str | None = None
    #: for functions: offset of the body's opening brace
    body_start: int | None = None
    #: identifiers seen in the declaration's head (template, extern, static, __launch_bounds__...)
    keywords: frozenset = field(default_factory=frozenset)
    #: for directives: the directive's name ('define', 'include', 'if', ...)
    directive: str | None = None

    @property
    def is_device_function(self) -> bool:
        return self.kind == FUNCTION and self.space in ("global", "device", "host_device")

    def text(self, source: SourceFile) -> str:
        return source.text[self.start:self.end]


def segment(source: SourceFile, tokens: list[Tok] | None = None) -> list[Segment]:
    """Split `source` into Segments that cover it exactly, in order."""
    toks = tokens if tokens is not None else scan(source.text)
    segments: list[Segment] = []
    last_end = 0

    def emit(seg: Segment) -> None:
        nonlocal last_end
        if seg.start > last_end:
            segments.append(Segment(GAP, last_end, seg.start))
        segments.append(seg)
        last_end = seg.end

    open_scopes = 0
    i, n = 0, len(toks)
    while i < n:
        tok = toks[i]
        if tok.kind == "comment":
            i += 1
            continue
        if tok.kind == "dir":
            emit(Segment(DIRECTIVE, tok.start, tok.end, directive=directive_name(tok.text)))
            i += 1
            continue
        if tok.text == "}" and tok.kind == "op":
            kind = SCOPE_CLOSE if open_scopes else OTHER
            open_scopes = max(open_scopes - 1, 0)
            emit(Segment(kind, tok.start, tok.end))
            i += 1
            continue
        if tok.text == ";" and tok.kind == "op":
            emit(Segment(OTHER, tok.start, tok.end))
            i += 1
            continue
        seg, i = _declaration(toks, i)
        if seg.kind == SCOPE_OPEN:
            open_scopes += 1
        emit(seg)
    if last_end < len(source.text):
        segments.append(Segment(GAP, last_end, len(source.text)))
    return segments


def _code(toks: list[Tok]) -> list[Tok]:
    return [t for t in toks if t.kind not in ("comment", "dir")]


def _matching(toks: list[Tok], i: int, open_: str, close: str) -> int:
    """Index of the token closing the bracket at toks[i], or len(toks) if it never closes."""
    depth = 0
    for j in range(i, len(toks)):
        t = toks[j]
        if t.kind != "op":
            continue
        if t.text == open_:
            depth += 1
        elif t.text == close:
            depth -= 1
            if depth == 0:
                return j
    return len(toks)


def _declaration(toks: list[Tok], i: int) -> tuple[Segment, int]:
    """Scan one top-level declaration starting at toks[i]; return it and the next index."""
    start = toks[i].start
    depth = 0  # parentheses and brackets
    j = i
    n = len(toks)
    while j < n:
        t = toks[j]
        if t.kind != "op":
            j += 1
            continue
        text = t.text
        if text in ("(", "["):
            depth += 1
        elif text in (")", "]"):
            depth = max(depth - 1, 0)
        elif depth == 0 and text == ";":
            head = _code(toks[i:j])
            return _classify_statement(head, start, t.end), j + 1
        elif depth == 0 and text == "}":
            # A closing brace we did not open: the declaration was cut short (unbalanced host
            # code, or a scope closing). End it here and let the caller see the brace.
            return Segment(OTHER, start, toks[j - 1].end if j > i else t.start), j
        elif depth == 0 and text == "{":
            head = _code(toks[i:j])
            words = [h.text for h in head if h.kind == "id"]
            if _is_scope_head(head):
                return Segment(SCOPE_OPEN, start, t.end, keywords=frozenset(words)), j + 1
            if _has_depth0(_strip_template_prefix(head), "="):
                # An initializer: `__device__ int x[] = {1, 2};` — skip the braces, go on to ';'.
                j = _matching(toks, j, "{", "}") + 1
                continue
            if _is_function_head(head) and _in_member_initializers(head):
                # `Vec(T a) : x{a} {`: a member's braced initialiser, not the body yet
                j = _matching(toks, j, "{", "}") + 1
                continue
            if _is_function_head(head):
                close = _matching(toks, j, "{", "}")
                end = toks[close].end if close < n else toks[-1].end
                return _function_segment(head, start, t.start, end), close + 1
            # struct/class/union/enum body (or something we do not know): skip it, go on to ';'.
            j = _matching(toks, j, "{", "}") + 1
            continue
        j += 1
    head = _code(toks[i:n])
    return Segment(OTHER, start, toks[-1].end, keywords=frozenset(t.text for t in head)), n


def _has_depth0(head: list[Tok], text: str) -> bool:
    """Whether `text` occurs outside parentheses and brackets (default arguments do not count)."""
    depth = 0
    for t in head:
        if t.kind != "op":
            continue
        if t.text in ("(", "["):
            depth += 1
        elif t.text in (")", "]"):
            depth -= 1
        elif depth == 0 and t.text == text:
            return True
    return False


def _in_member_initializers(head: list[Tok]) -> bool:
    """Whether a '{' after `head` opens a member's initialiser in a constructor's list
    (`... ) : lo(a), hi{b}`), i.e. a depth-0 ':' follows the parameters and a name (or a
    template-id's '>') stands just before the brace."""
    if not head or not (head[-1].kind == "id" or head[-1].text == ">"):
        return False
    depth = 0
    seen_params = False
    for t in head:
        if t.kind != "op":
            continue
        if t.text in ("(", "["):
            depth += 1
        elif t.text in (")", "]"):
            depth -= 1
            seen_params = seen_params or depth == 0
        elif depth == 0 and t.text == ":" and seen_params:
            return True
    return False


def _is_scope_head(head: list[Tok]) -> bool:
    words = [t.text for t in head]
    if words and words[0] == "namespace" and "=" not in words:
        return True
    inline_ns = len(words) >= 2 and words[0] == "inline" and words[1] == "namespace"
    extern_block = len(words) == 2 and words[0] == "extern" and head[1].kind == "str"
    return inline_ns or extern_block


def _strip_template_prefix(head: list[Tok]) -> list[Tok]:
    """Drop leading `template <...>` groups (angle brackets matched, nested ones too)."""
    while len(head) >= 2 and head[0].text == "template" and head[1].text == "<":
        depth = 0
        for k, t in enumerate(head[1:], start=1):
            if t.kind != "op":
                continue
            if t.text == "<":
                depth += 1
            elif t.text == ">":
                depth -= 1
            elif t.text == ">>":
                depth -= 2
            if depth <= 0:
                head = head[k + 1:]
                break
        else:
            return []
    return head


def _is_function_head(head: list[Tok]) -> bool:
    body = _strip_template_prefix(head)
    if not body:
        return False
    if body[0].text in _TYPE_KEYWORDS or body[0].text == "namespace":
        return False
    # A parameter list at depth 0 makes it a function (trailing qualifiers, a trailing return
    # type or a constructor's initialiser list may follow it before the body).
    return any(t.kind == "op" and t.text == "(" for t in body)


def function_name(head: list[Tok]) -> str | None:
    body = _strip_template_prefix(head)
    depth = 0
    for k, t in enumerate(body):
        if t.kind == "id" and t.text == "operator" and depth == 0:
            return _operator_name(body, k)
        if t.kind == "op" and t.text == "(":
            if depth == 0:
                prev = body[k - 1] if k else None
                if prev is not None and prev.text == ">":
                    # an explicit specialisation: `template <> float f<float>(...)`
                    return _name_before_angle(body, k - 1)
                if prev is not None and prev.kind == "id" and prev.text.startswith("::") and \
                        k >= 2 and body[k - 2].text == ">":
                    # a member of a class template: `interval<T>::lower(...)`
                    outer = _name_before_angle(body, k - 2)
                    return outer + prev.text if outer else prev.text
                # the name is the identifier just before the parameter list, skipping
                # `__launch_bounds__(...)` and `__attribute__((...))` groups, and a macro
                # call that an identifier follows (`void LAUNCH_BOUNDS(256, 2) kernel(...)`):
                # a parameter list is followed only by qualifiers, `->`, `:` or the body
                prev = body[k - 1] if k else None
                if prev is not None and prev.kind == "id" and prev.text not in (
                    "__launch_bounds__", "__attribute__", "__align__", "alignas", "__declspec"
                ) and not _followed_by_declarator(body, k):
                    tilde = k >= 2 and body[k - 2].text == "~"
                    return "~" + prev.text if tilde else prev.text  # a destructor in its class
            depth += 1
        elif t.kind == "op" and t.text == ")":
            depth -= 1
    return None


def _followed_by_declarator(body: list[Tok], k: int) -> bool:
    """Whether the group opened at body[k] is followed by an identifier that cannot trail a
    parameter list, so that the group was a macro's arguments in the head, not the parameters."""
    close = _matching(body, k, "(", ")")
    after = body[close + 1] if close + 1 < len(body) else None
    return after is not None and after.kind == "id" and \
        after.text not in _TRAILING_QUALIFIERS | {"requires", "mutable"}


def _name_before_angle(body: list[Tok], close: int) -> str | None:
    """The identifier before the '<' that the '>' at body[close] closes."""
    depth = 0
    for k in range(close, -1, -1):
        t = body[k]
        if t.kind != "op":
            continue
        if t.text in (">", ">>"):
            depth += len(t.text)
        elif t.text == "<":
            depth -= 1
            if depth == 0:
                return body[k - 1].text if k and body[k - 1].kind == "id" else None
    return None


def _operator_name(body: list[Tok], k: int) -> str:
    """`operator+=` / `operator()` / `operator float`: the tokens after `operator` up to the
    parameter list."""
    parts = []
    j = k + 1
    if j + 1 < len(body) and body[j].text == "(" and body[j + 1].text == ")":
        return "operator()"
    while j < len(body) and body[j].text != "(":
        parts.append(body[j].text)
        j += 1
    if parts and (parts[0][0].isalpha() or parts[0][0] == "_"):
        return "operator " + " ".join(parts)
    return "operator" + "".join(parts)


def function_space(words: set[str]) -> str:
    if "__global__" in words:
        return "global"
    if "__device__" in words:
        return "host_device" if "__host__" in words else "device"
    return "host"


def _function_segment(head: list[Tok], start: int, body_start: int, end: int) -> Segment:
    words = {t.text for t in head if t.kind == "id"}
    return Segment(FUNCTION, start, end, name=function_name(head), space=function_space(words),
                   body_start=body_start, keywords=frozenset(words))


def _classify_statement(head: list[Tok], start: int, end: int) -> Segment:
    """A top-level declaration that ends with ';'."""
    words = [t.text for t in head if t.kind == "id"]
    wordset = frozenset(words)
    body = _strip_template_prefix(head)
    first = body[0].text if body else ""
    if first in _TYPE_KEYWORDS or (first == "namespace" and "=" in [t.text for t in head]):
        name = None
        if first == "typedef":
            ids = [t.text for t in body if t.kind == "id"]
            name = ids[-1] if ids else None
        elif first in ("struct", "class", "union", "enum", "using") and len(body) > 1:
            name = body[1].text if body[1].kind == "id" else None
        return Segment(TYPE, start, end, name=name, keywords=wordset)
    # A function prototype: a parameter list before any initializer.
    texts = [t.text for t in head]
    paren = texts.index("(") if "(" in texts else None
    while paren is not None and paren and head[paren - 1].text in _KERNEL_QUALIFIERS:
        # `__global__ void __maxnreg__(32) k(float *);`: the group before the parameters
        close = _matching(head, paren, "(", ")")
        paren = texts.index("(", close + 1) if "(" in texts[close + 1:] else None
    equal = texts.index("=") if "=" in texts else None
    if paren is not None and (equal is None or paren < equal) and head[paren - 1].kind == "id" \
            and head[paren - 1].text not in ("__align__", "alignas") \
            and not _pointer_declarator(texts, paren):
        return Segment(PROTOTYPE, start, end, name=head[paren - 1].text,
                       space=function_space(set(words)), keywords=wordset)
    spaces = [w for w in words if w in _CUDA_VARIABLE_SPACES]
    name = _variable_name(head)
    if spaces:
        return Segment(VARIABLE, start, end, name=name, space=spaces[0], keywords=wordset)
    if ("const" in wordset or "constexpr" in wordset) and set(words[:-1]) <= _SCALAR_WORDS | {name}:
        return Segment(CONSTANT, start, end, name=name, keywords=wordset)
    return Segment(VARIABLE, start, end, name=name, space="host", keywords=wordset)


#: qualifiers of a kernel's head that take a parenthesised group
_KERNEL_QUALIFIERS = ("__launch_bounds__", "__maxnreg__", "__cluster_dims__")


def _pointer_declarator(texts: list[str], paren: int) -> bool:
    """`float (*ops[3])(float)`, `float (*op)(float)`: a variable, a pointer (or an array of
    pointers) to functions, not a prototype (`float (*get(int))(float)` is one)."""
    j = paren + 1
    while j < len(texts) and texts[j] in ("*", "const", "volatile", "__restrict__"):
        j += 1
    return j > paren + 1 and j + 1 < len(texts) and texts[j + 1] in ("[", ")")


def _variable_name(head: list[Tok]) -> str | None:
    """The declared name: the last identifier before '=', '[' or the end, at depth 0 (in
    `(*name[3])(...)`, the one after the '*')."""
    texts = [t.text for t in head]
    paren = texts.index("(") if "(" in texts else None
    if paren is not None and _pointer_declarator(texts, paren):
        j = paren + 1
        while texts[j] in ("*", "const", "volatile", "__restrict__"):
            j += 1
        return texts[j]
    name = None
    for t in head:
        if t.kind == "op" and t.text in ("=", "[", "("):
            break
        if t.kind == "id":
            name = t.text
    return name


def namespaces(segments_by_source: dict) -> dict:
    """Segment -> the namespaces around it, outermost first ('' for an unnamed one, None for
    `extern "C"`)."""
    out = {}
    for source, segs in segments_by_source.items():
        stack: list = []
        for seg in segs:
            if seg.kind == SCOPE_OPEN:
                m = re.match(r"\s*(?:inline\s+)?namespace\s*([\w:]*)\s*\{", seg.text(source))
                stack.append(m.group(1) if m else None)
            elif seg.kind == SCOPE_CLOSE:
                if stack:
                    stack.pop()
            out[seg] = tuple(stack)
    return out
