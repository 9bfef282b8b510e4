"""AST additions: spans on every node, and node classes for the C++ that c_ast lacks.

The frontend builds pycparser `c_ast` nodes. c_ast nodes have `__slots__`, so extra attributes
cannot be hung on them; but every node has a `coord` slot, and that is where a `Span` goes: the
exact start and end offsets of the node in its source file, from which the rewriter patches text.

C++ constructs used in kernels that c_ast has no class for get one here, generated from a
one-line-per-node table in pycparser's own format (`Name: [attr, child*, children**]`), so they
behave like c_ast nodes for `NodeVisitor`, `children()` and iteration.
"""
from __future__ import annotations

import bisect
import functools
import inspect
from typing import TYPE_CHECKING

from pycparser import c_ast

if TYPE_CHECKING:  # pragma: no cover
    from .source import SourceFile


class Span:
    """Where a node is: file, [start, end) character offsets, and line/col computed on demand.

    Quacks like pycparser's Coord (`file`, `line`, `column`, `str()` as `file:line:col`).
    """

    __slots__ = ("source", "start", "end")

    def __init__(self, source: "SourceFile", start: int, end: int):
        self.source = source
        self.start = start
        self.end = end

    @property
    def file(self) -> str:
        return self.source.name

    @property
    def line(self) -> int:
        return self.source.line_col(self.start)[0]

    @property
    def column(self) -> int:
        return self.source.line_col(self.start)[1]

    @property
    def text(self) -> str:
        return self.source.text[self.start:self.end]

    def location(self):
        return self.source.location(self.start)

    def __str__(self) -> str:
        line, col = self.source.line_col(self.start)
        return f"{self.source.name}:{line}:{col}"

    __repr__ = __str__


# name: [fields]; `x*` is a child node, `x**` a list of child nodes, plain names are attributes.
_NODE_TABLE = """
TemplateId: [name, args**]
RefDecl: [quals, rvalue, type*]
CxxCast: [kind, to_type*, expr*]
ScopedMember: [scope*, member]
TemplateParam: [kind, name, type*, default*]
UsingAlias: [name, type*]
Asm: [template, qualifiers, outputs**, inputs**, clobbers]
AsmOperand: [symbolic, constraint, expr*]
StaticAssert: [cond*, message]
KernelLaunch: [name*, config**, args*]
New: [placement**, to_type*, dims**, init*]
Delete: [array, expr*]
Lambda: [name, captures, address_uses**, funcdef]
"""


def _make_node_class(name: str, fields: list[str]) -> type:
    plain = [f.rstrip("*") for f in fields]
    child_fields = [f[:-1] for f in fields if f.endswith("*") and not f.endswith("**")]
    sequences = [f[:-2] for f in fields if f.endswith("**")]
    attrs = tuple(f for f in fields if not f.endswith("*"))

    def __init__(self, *args, coord=None, **kwargs):
        values = dict(zip(plain, args))
        values.update(kwargs)
        for field in plain:
            setattr(self, field, values.get(field))
        self.coord = coord

    def children(self):
        nodelist = []
        for field in plain:
            value = getattr(self, field)
            if field in child_fields and value is not None:
                nodelist.append((field, value))
            elif field in sequences:
                for i, child in enumerate(value or ()):
                    nodelist.append((f"{field}[{i}]", child))
        return tuple(nodelist)

    def __iter__(self):
        for _, child in self.children():
            yield child

    return type(
        name,
        (c_ast.Node,),
        {
            "__slots__": tuple(plain) + ("coord", "__weakref__"),
            "__init__": __init__,
            "children": children,
            "__iter__": __iter__,
            "attr_names": attrs,
            "__module__": __name__,
        },
    )


def _build_table() -> dict[str, type]:
    classes = {}
    for line in _NODE_TABLE.strip().splitlines():
        name, _, rest = line.partition(":")
        fields = [f.strip() for f in rest.strip().strip("[]").split(",") if f.strip()]
        classes[name.strip()] = _make_node_class(name.strip(), fields)
    return classes


_classes = _build_table()
TemplateId = _classes["TemplateId"]
RefDecl = _classes["RefDecl"]
CxxCast = _classes["CxxCast"]
ScopedMember = _classes["ScopedMember"]
TemplateParam = _classes["TemplateParam"]
UsingAlias = _classes["UsingAlias"]
Asm = _classes["Asm"]
AsmOperand = _classes["AsmOperand"]
StaticAssert = _classes["StaticAssert"]
KernelLaunch = _classes["KernelLaunch"]
New = _classes["New"]
Delete = _classes["Delete"]
# A lambda expression. Its body is not a child: the frontend reads it as a function of its own
# (named `name`, its FuncDef in `funcdef`), reached through the calls that run it. The children
# are `&x` for each variable the body assigns through a by-reference capture: taking the address
# is what such a capture does, and tells the analyses that a call may change x.
Lambda = _classes["Lambda"]


@functools.lru_cache(maxsize=None)
def _constructor_fields(cls) -> tuple:
    params = inspect.signature(cls.__init__).parameters.values()
    return tuple(p.name for p in params if p.kind is p.POSITIONAL_OR_KEYWORD
                 and p.name not in ("self", "coord"))


def make_node(cls, **fields):
    """A c_ast node from named fields, whichever pycparser release is installed.

    pycparser's constructors differ between releases: 3.1 added required fields
    (`CompoundLiteral(type, init, storage)`, `Enum(name, values, underlying_type)`) that 2.21 to
    3.0 lack. Fields this release has and the caller did not give are None; fields the caller
    gave that this release lacks are dropped (an enum's underlying type, say, which gmprof never
    reads). The supported range is declared in pyproject.toml and tested by
    bench/pycparser_versions.sh.
    """
    names = _constructor_fields(cls)
    return cls(**{name: fields.get(name) for name in names})


def span(node) -> Span | None:
    """The Span of a node, or None for nodes the frontend did not place."""
    coord = getattr(node, "coord", None)
    return coord if isinstance(coord, Span) else None


def walk(node):
    """Pre-order iteration over a node and all its descendants."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        kids = [child for _, child in current.children()]
        stack.extend(reversed(kids))


class LineTable:
    """Offset -> (line, col) for one text, by binary search over line starts."""

    __slots__ = ("starts",)

    def __init__(self, text: str):
        starts = [0]
        find = text.find
        pos = find("\n")
        while pos != -1:
            starts.append(pos + 1)
            pos = find("\n", pos + 1)
        self.starts = starts

    def line_col(self, offset: int) -> tuple[int, int]:
        index = bisect.bisect_right(self.starts, offset) - 1
        return index + 1, offset - self.starts[index] + 1

    def line_start(self, line: int) -> int:
        return self.starts[line - 1]
