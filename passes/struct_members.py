"""Which members of the file's structs are arrays: `p->arr[i]` then reads the struct p points
to (arr's bytes are inside it), where `p->ptr[i]` follows a pointer loaded from it.

Read from the struct definitions the frontend keeps whole (TYPE segments, as text): a member
is an array when its one declaration in the body is `NAME [`. Anything unclear (a name declared
twice, nested types, a name that also appears after `*`) is not claimed, and the access stays
one whose object gmprof finds at run time.
"""
from __future__ import annotations

import re

from pycparser import c_ast

from gmprof.frontend import cxx_ast as X
from gmprof.frontend import segment as S

_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_HEAD = re.compile(r"^\s*(?:typedef\s+)?(?:struct|class)\s*(\w*)\s*\{(.*)\}\s*(\w*)\s*;?\s*$",
                   re.S)
_ARRAY = re.compile(r"\b(\w+)\s*\[")


def array_members(tu) -> dict[str, frozenset]:
    """struct name (and typedef name) -> the names of its array members."""
    out: dict = {}
    for source, segments in tu.segments.items():
        for seg in segments:
            if seg.kind != S.TYPE or not tu.active.get(seg, True):
                continue
            text = _COMMENT.sub(" ", seg.text(source))
            m = _HEAD.match(text)
            if m is None or "{" in m.group(2):
                continue  # not a plain struct body (nested types, member functions)
            body = m.group(2)
            names = set()
            for decl in body.split(";"):
                found = _ARRAY.findall(decl)
                if len(found) == 1 and "*" not in decl and "(" not in decl:
                    names.add(found[0])
            # a name declared (or mentioned) more than once is not claimed
            names = {n for n in names if len(re.findall(rf"\b{n}\b", body)) == 1}
            for key in (m.group(1), m.group(3)):
                if key:
                    out[key] = frozenset(names)
    return out


def pointee_struct(decl_type) -> str | None:
    """The struct a pointer declaration points to: `const BlockStats *st` -> 'BlockStats'."""
    t = decl_type
    if not isinstance(t, c_ast.PtrDecl):
        return None
    t = t.type
    if not isinstance(t, c_ast.TypeDecl):
        return None
    base = t.type
    if isinstance(base, c_ast.Struct):
        return base.name
    if isinstance(base, c_ast.IdentifierType) and len(base.names) == 1:
        return base.names[0].rsplit("::", 1)[-1]
    if isinstance(base, X.TemplateId):
        return None
    return None
