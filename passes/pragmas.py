"""Where code that goes before a loop goes when pragmas stand in front of it.

A rewrite helper (rewrite.py asks it for every loop it wraps). `#pragma unroll 4`, `#pragma
unroll`, `#pragma nounroll` and `_Pragma("unroll")` apply to the loop right after them: code
between a pragma and its loop takes the unrolling away (nvcc: "the #pragma unroll must precede a
loop"), so the loop-entry counts and first-iteration flags go before the pragmas. A `#pragma`
line must start its line and the rewriter inserts no newline, so the code goes at the end of the
code before the first `#pragma` line:

    s += a[0];  // x                 s += a[0];{ { int j = lo; ... } }  // x
    #pragma unroll 4            ->   #pragma unroll 4
    for (int j = lo; ...) ...        for (int j = lo; ...) ... }

and right before a `_Pragma(...)`, which is an operator. Where gmprof cannot tell that the place
is code (a directive such as `#if`, or a comment, on the way), it answers None and the code goes
between pragma and loop, as it used to.
"""
from __future__ import annotations

import re

from pycparser import c_ast

from gmprof.frontend import cxx_ast as X

# what may lie between a statement and the `#pragma` lines in front of a loop: space, comments
# and the statement's own ';'
_GAP_PIECE = re.compile(r"\s+|//[^\n]*|/\*.*?\*/|;", re.S)
_GAP = re.compile(r"(?:\s+|//[^\n]*|/\*.*?\*/|;)*", re.S)
# a pragma read back from the text before a loop: a whole `#pragma` line, or a `_Pragma(...)`
# ending where the search ends
_PRAGMA_LINE = re.compile(r"[ \t]*#[ \t]*pragma\b[^\n]*")
_PRAGMA_OP_BEFORE = re.compile(r'_Pragma[ \t]*\([ \t]*"(?:[^"\\\n]|\\.)*"[ \t]*\)\Z')
_OP_WINDOW = 400  # characters searched back for one `_Pragma("...")`


def before_pragmas(program, node, statement_span) -> int | None:
    """The offset before the pragmas directly in front of a loop, None when it has none (or
    when the code cannot go there). In a block the pragmas are its items (c_ast.Pragma): the
    code goes at the end of the previous statement (statement_span(node): its extent with the
    ';') or after the block's `{`, before any comment."""
    parent = None
    for facts in program.functions:
        parent = facts.parents.get(node)
        if parent is not None:
            break
    if not isinstance(parent, c_ast.Compound):
        return before_pragma_text(node)  # `if (c) #pragma unroll for ...`
    items = parent.block_items
    if not items or not any(item is node for item in items):
        return None
    at = next(i for i, item in enumerate(items) if item is node)
    first = at
    while first > 0 and isinstance(items[first - 1], c_ast.Pragma):
        first -= 1
    if first == at:
        return None
    pragma = X.span(items[first])
    if pragma.text.lstrip().startswith("_Pragma"):
        return pragma.start  # an operator, not a line: code may precede it
    if first > 0:
        prev = items[first - 1]
        end = max(X.span(prev).end, statement_span(prev).end)
    else:
        end = X.span(parent).start + 1  # after the block's '{'
    text = pragma.source.text
    gap = text[end:pragma.start]
    if not _GAP.fullmatch(gap):
        return None  # a directive (`#if`) between: leave the pragma's line alone
    # after a ';' the statement's span left out, before the comments
    semicolons = [m.end() for m in _GAP_PIECE.finditer(gap) if m.group(0) == ";"]
    return end + (semicolons[-1] if semicolons else 0)


def before_pragma_text(node) -> int | None:
    """before_pragmas for a statement of an if, else, loop or label (the parser keeps no
    pragma node there, frontend pragma_body): the pragmas are read back from the text before
    it, and the code goes at the end of the line before the first `#pragma` line (after `if
    (c)`), unless that line has a comment or is a directive."""
    sp = X.span(node)
    text = sp.source.text
    pos, line_pragma = sp.start, None
    while True:
        k = len(text[:pos].rstrip())
        m = _PRAGMA_OP_BEFORE.search(text, max(0, k - _OP_WINDOW), k)
        if m is not None:
            pos = m.start()
            continue
        line_start = text.rfind("\n", 0, k) + 1
        if _PRAGMA_LINE.fullmatch(text[line_start:k]):
            pos = line_pragma = line_start + text[line_start:k].index("#")
            continue
        break
    if pos == sp.start:
        return None
    if line_pragma is None or line_pragma > pos:
        return pos  # a `_Pragma` comes first: code may go right before it
    k = len(text[:pos].rstrip())
    previous = text[text.rfind("\n", 0, k) + 1:k]
    if "//" in previous or "/*" in previous or "*/" in previous or \
            previous.lstrip().startswith("#") or not previous.strip():
        return None
    return k


__all__ = ["before_pragmas", "before_pragma_text"]
