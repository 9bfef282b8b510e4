"""Build pycparser c_ast nodes, with exact spans, straight from the LALR parse.

Stage 5 of the frontend. The lark parser calls this Transformer inline (no parse tree is built;
that halves parse time), with every token kept, so each method sees its rule's whole extent and
sets `node.coord = Span(source, start, end)` from its first and last child. Method names are the
grammar's rule names and aliases (grammar/cuda.lark). This module holds the declaration rules;
statements and expressions are in build_stmt.py, the C++ rules (templates, members, operators,
new/delete, device-side launches, asm) in build_cxx.py.

Declarations follow pycparser's own model: declaration specifiers are collected into Specs; a
declarator is a chain of ArrayDecl/PtrDecl/FuncDecl/RefDecl ending in a TypeDecl, and the base
type is attached at the bottom when the declaration is complete.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from lark import Token, Transformer
from pycparser import c_ast
from .build_cxx import CxxRules, _Constructed, _not_constructed
from .build_stmt import StatementRules
from .cxx_ast import Span, make_node

_CUDA_FUNCTION_WORDS = ("__global__", "__device__", "__host__")


@dataclass
class Specs:
    """Declaration specifiers, sorted into pycparser's buckets."""

    storage: list = field(default_factory=list)
    funcspec: list = field(default_factory=list)
    quals: list = field(default_factory=list)
    types: list = field(default_factory=list)  # words ('unsigned', 'int') or one type node
    align: list = field(default_factory=list)
    launch_bounds: list | None = None
    start: int = 0
    end: int = 0

    def add(self, item) -> None:
        kind, value = item[0], item[1]
        if kind == "launch_bounds":
            self.launch_bounds = value
        else:
            getattr(self, kind).append(value)


@dataclass
class ParsedFunction:
    """The result of the function_definition entry point."""

    funcdef: c_ast.FuncDef
    template_params: list
    launch_bounds: list | None
    specs: Specs
    statement_spans: dict = field(default_factory=dict)
    #: a constructor's member initialisers (`: low(l), up(u)`), each a FuncCall(ID, args); they
    #: sit outside the body, so the analyses do not see them
    member_initializers: list = field(default_factory=list)
    #: an explicit specialisation's template arguments (`template <> f<float>(...)`), else None
    specialization_args: list | None = None
    #: the lambda expressions in the body (cxx_ast.Lambda), read as functions of their own
    lambdas: list = field(default_factory=list)


def _bottom(chain):
    node = _not_constructed(chain)
    while not isinstance(node, c_ast.TypeDecl):
        node = node.type
    return node


def _modify(chain, modifier):
    """Insert `modifier` (an ArrayDecl/PtrDecl/FuncDecl/RefDecl with type None) just above the
    TypeDecl at the bottom of `chain` (pycparser's _type_modify_decl)."""
    _not_constructed(chain)
    if isinstance(chain, c_ast.TypeDecl):
        modifier.type = chain
        return modifier
    node = chain
    while not isinstance(node.type, c_ast.TypeDecl):
        node = node.type
    modifier.type = node.type
    node.type = modifier
    return chain


class Builder(StatementRules, CxxRules, Transformer):
    """lark inline transformer producing c_ast. `source` and `base` are set before each parse:
    token offsets are relative to the parsed text, which starts at `base` in `source`."""

    def __init__(self):
        super().__init__(visit_tokens=False)
        self.source = None
        self.base = 0
        # Decl node -> Span of its whole declaration statement (specifiers to ';'), which c_ast
        # has no node for; the rewriter needs it to replace `extern __shared__` declarations.
        self.statement_spans: dict = {}
        # node -> (start, end) including the parentheses around it, which c_ast drops: the
        # span of `*(a + i)` must end at its ')'.
        self.paren_extent: dict = {}
        # TypeDecl of an explicit specialisation's name -> its template arguments
        self.specialized: dict = {}
        self.lambdas: list = []  # the Lambda nodes built in this parse

    # -- spans ---------------------------------------------------------------------------
    def _bounds(self, item):
        if isinstance(item, Token):
            return item.start_pos + self.base, item.end_pos + self.base
        if isinstance(item, Span):
            return item.start, item.end
        if isinstance(item, Specs):
            return item.start, item.end
        if isinstance(item, (list, tuple)):
            lo = hi = None
            for sub in item:
                b = self._bounds(sub)
                if b is None:
                    continue
                lo = b[0] if lo is None else min(lo, b[0])
                hi = b[1] if hi is None else max(hi, b[1])
            return None if lo is None else (lo, hi)
        extent = self.paren_extent.get(item)
        if extent is not None:
            return extent
        coord = getattr(item, "coord", None)
        if isinstance(coord, Span):
            return coord.start, coord.end
        return None

    def _span(self, children) -> Span:
        b = self._bounds(children)
        if b is None:
            return Span(self.source, self.base, self.base)
        return Span(self.source, b[0], b[1])

    def _place(self, node, children):
        node.coord = self._span(children)
        return node

    @staticmethod
    def _nodes(children):
        return [c for c in children if not isinstance(c, Token)]

    # -- entry points ----------------------------------------------------------------------
    def function_definition(self, c):
        template_params = []
        if isinstance(c[0], tuple) and c[0][0] == "template_head":
            template_params = c[0][1]
            c = c[1:]
        specs, chain, body = c[0], c[1], c[-1]
        members = next((x[1] for x in c if isinstance(x, tuple) and x[0] == "ctor_initializer"),
                       [])
        decl = self._declaration(specs, chain, None, whole=c)
        trailing = next((x[1] for x in c if isinstance(x, tuple) and x[0] == "trailing_return"),
                        None)
        if trailing is not None and isinstance(decl.type, c_ast.FuncDecl):
            # `auto f(int x) -> float`: the trailing type is the return type
            _bottom(trailing.type).declname = decl.name
            decl.type.type = trailing.type
        funcdef = c_ast.FuncDef(decl, None, body)
        funcdef.coord = self._span(c)
        return ParsedFunction(funcdef, template_params, specs.launch_bounds, specs,
                              self.statement_spans, members,
                              self.specialized.get(_bottom(chain)), list(self.lambdas))

    def file_declaration(self, c):
        if isinstance(c[0], tuple) and c[0][0] == "template_head":
            return c[1]
        return c[0]

    def expression_entry(self, c):
        return c[0]

    def function_suffix(self, c):
        return c[0]

    # -- declaration specifiers --------------------------------------------------------------
    def decl_specifiers(self, c):
        specs = Specs()
        for item in c:
            specs.add(item)
        b = self._bounds([item[2] for item in c if len(item) > 2])
        specs.start, specs.end = b if b else (self.base, self.base)
        return specs

    specifier_qualifier_list = decl_specifiers

    def storage_class_specifier(self, c):
        if c[0].type == "EXTERN" and len(c) > 1:
            return ("storage", "extern " + c[1].value, c)
        return ("storage", c[0].value, c)

    def function_specifier(self, c):
        return ("funcspec", c[0].value, c)

    def launch_bounds(self, c):
        args = next((x for x in c if isinstance(x, c_ast.ExprList)), None)
        return ("launch_bounds", list(args.exprs) if args else [], c)

    def kernel_qualifier(self, c):
        # `__maxnreg__(N)`, `__cluster_dims__(x, y, z)`: code generation only; the instrumented
        # copy keeps them with the rest of the head's text (gmprof/program/registers.py)
        return ("funcspec", c[0].value, c)

    def cuda_specifier(self, c):
        return ("storage", c[0].value, c)

    def align_specifier(self, c):
        return ("align", c_ast.Alignas(c[2], coord=self._span(c)), c)

    def type_qualifier(self, c):
        return ("quals", c[0].value, c)

    def type_specifier(self, c):
        x = c[0]
        if isinstance(x, Token):
            return ("types", x.value, c)
        return ("types", x, c)

    def struct_key(self, c):
        return c[0]

    def base_clause(self, c):
        return ("base_clause", c)

    def struct_or_union_specifier(self, c):
        key = c[0].value
        name = None
        decls = None
        for x in c[1:]:
            if isinstance(x, Token) and x.type in ("IDENTIFIER", "TYPE_NAME"):
                name = x.value
            elif isinstance(x, Token) and x.value == "{":
                decls = []
            elif isinstance(x, list) and decls is not None:
                decls.extend(x)
        cls = c_ast.Union if key == "union" else c_ast.Struct
        return self._place(cls(name, decls), c)

    def struct_declaration(self, c):
        specs = c[0]
        out = []
        declarators = c[1] if len(c) > 2 else []
        if not declarators:
            return [self._declaration(specs, c_ast.TypeDecl(None, [], None, None), None, whole=c)]
        for chain, bitsize, whole in declarators:
            decl = self._declaration(specs, chain, None, whole=whole)
            decl.bitsize = bitsize
            out.append(decl)
        return out

    def struct_declarator_list(self, c):
        return self._nodes(c)

    def struct_declarator(self, c):
        chain = None
        bitsize = None
        if not isinstance(c[0], Token):
            chain = c[0]
            if len(c) > 2:
                bitsize = c[2]
        else:
            bitsize = c[1]
            chain = c_ast.TypeDecl(None, [], None, None)
        return (chain, bitsize, c)

    def enum_specifier(self, c):
        name = None
        values = None
        underlying = None
        for x in c[1:]:
            if isinstance(x, Token) and x.type in ("IDENTIFIER", "TYPE_NAME"):
                name = x.value
            elif isinstance(x, c_ast.EnumeratorList):
                values = x
            elif isinstance(x, c_ast.Typename):
                underlying = x  # enum E : unsigned char {...}
        return self._place(make_node(c_ast.Enum, name=name, values=values,
                                     underlying_type=underlying), c)

    def enumerator_list(self, c):
        return self._place(make_node(c_ast.EnumeratorList, enumerators=self._nodes(c)), c)

    def enumerator(self, c):
        value = c[2] if len(c) > 2 else None
        return self._place(make_node(c_ast.Enumerator, name=c[0].value, value=value), c)

    # -- declarators ---------------------------------------------------------------------
    def init_declarator_list(self, c):
        return [x for x in c if isinstance(x, tuple)]

    def init_declarator(self, c):
        if isinstance(c[0], _Constructed):
            # `T v(a)` initialises like `T v = a`; `T v(a, b)` like `T v{a, b}`
            args = c[0].args
            init = args.exprs[0] if len(args.exprs) == 1 else \
                self._place(c_ast.InitList(list(args.exprs)), [args])
            return (c[0].chain, init, c)
        init = c[2] if len(c) > 2 else None
        return (c[0], init, c)

    def init_declarator_braced(self, c):
        return (c[0], c[1], c)

    def declarator(self, c):
        if len(c) == 1:
            return c[0]
        ops, chain = c[0], c[1]
        if isinstance(chain, _Constructed):
            inner = self.declarator([ops, chain.chain])
            return _Constructed(inner, chain.args, self._span(c))
        for op in reversed(ops):
            chain = _modify(chain, op)
        chain.coord = self._span(c) if not isinstance(chain, c_ast.TypeDecl) else chain.coord
        return chain

    def pointer(self, c):
        return list(c)

    def pointer_star(self, c):
        quals = [q[1] for q in c[1:]]
        return self._place(c_ast.PtrDecl(quals, None), c)

    def declarator_name(self, c):
        return self._place(c_ast.TypeDecl(c[0].value, [], None, None), c)

    def declarator_paren(self, c):
        return c[1]

    def declarator_array(self, c):
        dim = c[2] if len(c) > 3 else None
        node = self._place(c_ast.ArrayDecl(None, dim, []), c)
        return _modify(c[0], node)

    def declarator_function(self, c):
        params = next((x for x in c[1:] if isinstance(x, c_ast.ParamList)), None)
        node = self._place(c_ast.FuncDecl(params, None), c)
        return _modify(c[0], node)

    def abstract_declarator(self, c):
        if len(c) == 1 and isinstance(c[0], list):
            chain = c_ast.TypeDecl(None, [], None, None)
            for op in reversed(c[0]):
                chain = _modify(chain, op)
            return chain
        if len(c) == 1:
            return c[0]
        ops, chain = c[0], c[1]
        for op in reversed(ops):
            chain = _modify(chain, op)
        return chain

    def abstract_paren(self, c):
        return c[1]

    def abstract_array(self, c):
        inner = c[0] if not isinstance(c[0], Token) else c_ast.TypeDecl(None, [], None, None)
        rest = c[1:] if not isinstance(c[0], Token) else c
        dim = rest[1] if len(rest) > 2 else None
        return _modify(inner, self._place(c_ast.ArrayDecl(None, dim, []), c))

    def abstract_function(self, c):
        inner = c[0] if not isinstance(c[0], Token) else c_ast.TypeDecl(None, [], None, None)
        params = next((x for x in c if isinstance(x, c_ast.ParamList)), None)
        return _modify(inner, self._place(c_ast.FuncDecl(params, None), c))

    def parameter_type_list(self, c):
        params = []
        for x in c:
            if isinstance(x, Token) and x.type == "ELLIPSIS":
                params.append(self._place(c_ast.EllipsisParam(), [x]))
            elif not isinstance(x, Token):
                params.append(x)
        return self._place(c_ast.ParamList(params), c)

    def parameter(self, c):
        init = c[3] if len(c) > 3 else None
        return self._declaration(c[0], c[1], init, whole=c)

    def parameter_abstract(self, c):
        specs = c[0]
        chain = c_ast.TypeDecl(None, [], None, None)
        init = None
        rest = c[1:]
        if rest and not isinstance(rest[0], Token):
            chain = rest[0]
            rest = rest[1:]
        if len(rest) == 2:
            init = rest[1]
        decl = self._declaration(specs, chain, init, whole=c)
        return decl

    def type_name(self, c):
        specs = c[0]
        chain = c[1] if len(c) > 1 else c_ast.TypeDecl(None, [], None, None)
        bottom = _bottom(chain)
        bottom.quals = list(specs.quals)
        bottom.type = self._base_type(specs, c)
        if bottom.coord is None:
            bottom.coord = self._span(c)
        node = c_ast.Typename(None, list(specs.quals), None, chain)
        return self._place(node, c)

    # -- declarations ----------------------------------------------------------------------
    def _base_type(self, specs: Specs, whole):
        nodes = [t for t in specs.types if not isinstance(t, str)]
        if nodes:
            return nodes[0]
        words = [t for t in specs.types if isinstance(t, str)] or ["int"]
        node = c_ast.IdentifierType(words)
        node.coord = Span(self.source, specs.start, specs.end)
        return node

    def _declaration(self, specs: Specs, chain, init, whole):
        bottom = _bottom(chain)
        bottom.quals = list(specs.quals)
        bottom.type = self._base_type(specs, whole)
        if bottom.coord is None:
            bottom.coord = self._span(whole)
        is_function = isinstance(chain, c_ast.FuncDecl)
        storage = list(specs.storage)
        funcspec = list(specs.funcspec)
        if not is_function:
            storage += [f for f in funcspec if f in _CUDA_FUNCTION_WORDS]
            funcspec = [f for f in funcspec if f not in _CUDA_FUNCTION_WORDS]
        if "typedef" in storage:
            node = c_ast.Typedef(bottom.declname, list(specs.quals),
                                 [s for s in storage if s != "typedef"], chain)
        else:
            node = c_ast.Decl(bottom.declname, list(specs.quals), list(specs.align), storage,
                              funcspec, chain, init, None)
        node.coord = self._span(whole)
        return node

    def declaration(self, c):
        specs = c[0]
        if len(c) > 1 and isinstance(c[1], list):
            decls = [self._declaration(specs, chain, init, whole) for chain, init, whole in c[1]]
        else:
            # `struct S {...};` or `enum E {...};`: a declaration with no declarator
            decls = [self._declaration(specs, c_ast.TypeDecl(None, [], None, None), None,
                                       whole=c)]
        statement = self._span(c)
        for decl in decls:
            self.statement_spans[decl] = statement
        return decls

    def initializer(self, c):
        return c[0]

    def braced_init_list(self, c):
        return self._place(c_ast.InitList(self._nodes(c)), c)

    def initializer_item(self, c):
        if len(c) == 2:
            return self._place(c_ast.NamedInitializer(c[0], c[1]), c)
        return c[0]

    def designation(self, c):
        return self._nodes(c)

    def designator_index(self, c):
        return c[1]

    def designator_field(self, c):
        return self._place(c_ast.ID(c[1].value), c)
