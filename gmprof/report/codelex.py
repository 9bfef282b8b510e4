"""Source lines cut into code, comments and literals, so that the HTML source view links array
names only where they are code.

Stage: report (imports nothing from gmprof). A function's lines are lexed together: a block
comment may run over several lines. Preprocessor lines are code (`#define N tile` names
`tile`); string and character literals are kept apart (a name inside "..." is text).

    parts(["a[i] = 1; // a is read", "/* a */ b"])
    -> [[("code", "a[i] = 1; "), ("comment", "// a is read")],
        [("comment", "/* a */"), ("code", " b")]]
"""
from __future__ import annotations

import re

# one token at a time, in this order: a block comment's end is searched for separately
_TOKEN = re.compile(r'//.*|/\*|"(?:\\.|[^"\\])*"?|\'(?:\\.|[^\'\\])*\'?')


def parts(lines: list[str]) -> list[list[tuple[str, str]]]:
    out = []
    in_comment = False
    for line in lines:
        pieces, pos = [], 0
        while pos < len(line):
            if in_comment:
                end = line.find("*/", pos)
                stop = len(line) if end < 0 else end + 2
                pieces.append(("comment", line[pos:stop]))
                in_comment, pos = end < 0, stop
                continue
            m = _TOKEN.search(line, pos)
            if m is None:
                pieces.append(("code", line[pos:]))
                break
            if m.start() > pos:
                pieces.append(("code", line[pos:m.start()]))
            if m.group(0) == "/*":
                in_comment, pos = True, m.start()
                continue
            kind = "comment" if m.group(0).startswith("//") else "literal"
            pieces.append((kind, m.group(0)))
            pos = m.end()
        out.append(pieces)
    return out


__all__ = ["parts"]
