"""ResolveNames: which declaration each identifier in a device function refers to.

Read-only analysis over one parsed function. Takes the Function and its TranslationUnit; returns
a Names result mapping every ID node (keyed by node object) to a Symbol: a parameter, a local
variable (with its block scope honoured, so shadowing is right), a file-scope variable, a CUDA
built-in (threadIdx, blockIdx, blockDim, gridDim, warpSize), a template parameter, a macro, a
file-scope constant, a function, or `unknown`.

    __global__ void k(float *a) { int i = threadIdx.x; { int i = 2; a[i] = 0; } }
    -> the `i` in `a[i]` is the inner local (declared in the inner block), `a` the parameter
"""
from __future__ import annotations

from dataclasses import dataclass, field

from pycparser import c_ast

from gmprof.frontend import cxx_ast as X
from gmprof.frontend.program import FileVariable, Function, TranslationUnit

from .visitor import Visitor

BUILTIN_VARIABLES = ("threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize")

# Symbol kinds
PARAM = "param"
LOCAL = "local"
GLOBAL = "global"  # a file-scope __device__/__constant__/__managed__/__shared__ variable
BUILTIN = "builtin"
TEMPLATE_PARAM = "template_param"
MACRO = "macro"
CONSTANT = "constant"  # a file-scope const/constexpr, an enumerator
FUNCTION = "function"
UNKNOWN = "unknown"


@dataclass(eq=False)
class Symbol:
    name: str
    kind: str
    decl: c_ast.Node | None = None  # Decl for params/locals; FileVariable for globals
    index: int | None = None  # parameter position
    function: Function | None = None

    @property
    def type(self):
        if isinstance(self.decl, c_ast.Decl):
            return self.decl.type
        if isinstance(self.decl, FileVariable) and self.decl.decl is not None:
            return self.decl.decl.type
        return None

    def __repr__(self) -> str:
        return f"Symbol({self.name!r}, {self.kind})"


@dataclass
class Names:
    function: Function
    symbol_of: dict = field(default_factory=dict)  # ID node -> Symbol
    declared: dict = field(default_factory=dict)  # Decl node -> Symbol
    params: list = field(default_factory=list)  # Symbols, in order
    locals: list = field(default_factory=list)  # Symbols, in declaration order
    template_params: list = field(default_factory=list)  # Symbols, in order

    def __getitem__(self, node) -> Symbol | None:
        return self.symbol_of.get(node)


class ResolveNames(Visitor):
    """Walk a function in declaration order with a stack of block scopes."""

    def __init__(self, tu: TranslationUnit, function: Function):
        self.tu = tu
        self.function = function
        self.result = Names(function)
        self.scopes: list[dict[str, Symbol]] = []
        self.file_scope = file_scope(tu)

    def run(self) -> Names:
        fn = self.function
        funcdef = fn.funcdef
        scope: dict[str, Symbol] = {}
        for tp in fn.template_params:
            if tp.name:
                scope[tp.name] = Symbol(tp.name, TEMPLATE_PARAM, tp, function=fn)
                self.result.template_params.append(scope[tp.name])
        for index, param in enumerate(fn.params):
            if isinstance(param, c_ast.Decl) and param.name:
                sym = Symbol(param.name, PARAM, param, index=index, function=fn)
                scope[param.name] = sym
                self.result.declared[param] = sym
                self.result.params.append(sym)
                if param.init is not None:  # default argument
                    self.visit(param.init)
        self.scopes.append(scope)
        # the parameters' array dimensions may use template parameters or macros
        for param in fn.params:
            self._visit_type(param.type)
        self.visit(funcdef.body)
        self.scopes.pop()
        return self.result

    # -- scopes ----------------------------------------------------------------------------
    def lookup(self, name: str) -> Symbol:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        sym = self.file_scope.get(name)
        if sym is not None:
            return sym
        if name in BUILTIN_VARIABLES:
            return Symbol(name, BUILTIN)
        if name in self.tu.macros:
            return Symbol(name, MACRO, self.tu.macros[name])
        return Symbol(name, UNKNOWN)

    def visit_Compound(self, node):
        self.scopes.append({})
        for item in node.block_items or ():
            self.visit(item)
        self.scopes.pop()

    def visit_For(self, node):
        self.scopes.append({})
        for child in (node.init, node.cond, node.next):
            if child is not None:
                self.visit(child)
        if node.stmt is not None:
            self.visit(node.stmt)
        self.scopes.pop()

    def visit_Decl(self, node):
        self._visit_type(node.type)
        if node.init is not None:
            self.visit(node.init)
        if node.bitsize is not None:
            self.visit(node.bitsize)
        if node.name and not isinstance(node.type, c_ast.FuncDecl):
            sym = Symbol(node.name, LOCAL, node, function=self.function)
            self.scopes[-1][node.name] = sym
            self.result.declared[node] = sym
            self.result.locals.append(sym)

    def visit_Typedef(self, node):
        self._visit_type(node.type)

    def _visit_type(self, node):
        """Visit expressions inside a type (array dimensions), not the declared names."""
        while node is not None:
            if isinstance(node, c_ast.ArrayDecl) and node.dim is not None:
                self.visit(node.dim)
            node = getattr(node, "type", None)
            if isinstance(node, (c_ast.IdentifierType, c_ast.Struct, c_ast.Union, c_ast.Enum,
                                 X.TemplateId)):
                break

    def visit_ID(self, node):
        self.result.symbol_of[node] = self.lookup(node.name)

    def visit_StructRef(self, node):
        self.visit(node.name)  # the field name is not a variable

    def visit_FuncCall(self, node):
        name = node.name
        if isinstance(name, c_ast.ID):
            sym = self.lookup(name.name)
            if sym.kind in (UNKNOWN, MACRO):
                callee = self.tu.function(name.name)
                if callee is not None and sym.kind == UNKNOWN:
                    sym = Symbol(name.name, FUNCTION, callee)
                elif sym.kind == UNKNOWN:
                    sym = Symbol(name.name, FUNCTION, None)
            self.result.symbol_of[name] = sym
        else:
            self.visit(name)
        if node.args is not None:
            self.visit(node.args)

    def visit_Typename(self, node):
        self._visit_type(node.type)

    def visit_Label(self, node):
        if node.stmt is not None:
            self.visit(node.stmt)

    def visit_Goto(self, node):
        pass


def file_scope(tu: TranslationUnit) -> dict[str, Symbol]:
    scope: dict[str, Symbol] = {}
    for var in tu.variables:
        if var.name:
            scope[var.name] = Symbol(var.name, GLOBAL, var)
    for seg_list in tu.segments.values():
        for seg in seg_list:
            if seg.kind == "constant" and seg.name and tu.active.get(seg, True):
                scope.setdefault(seg.name, Symbol(seg.name, CONSTANT, seg))
    return scope


def resolve_names(tu: TranslationUnit, function: Function) -> Names:
    return ResolveNames(tu, function).run()
