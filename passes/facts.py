"""What the analysis passes know about a translation unit: one typed field per pass.

FunctionFacts holds a device function's results (names, objects, accesses, loops, dataflow,
guards, liveranges); ProgramFacts holds the functions' facts and the program-wide results
(file-scope objects, values, kernels). A field is None (or empty) until its pass has run
(passes/pipeline.py runs them in order); a pass never changes another pass's result.

Both hash by identity (eq=False): analyses and caches key by them, never by id().
ProgramFacts also reads names at file scope and object-like and function-like macros' bodies
as expressions, cached by name (the values pass follows names inside macros).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field

from pycparser import c_ast

from gmprof.errors import GmprofError
from gmprof.frontend.parser import get_parser
from gmprof.frontend.program import Function, TranslationUnit
from gmprof.frontend.source import SourceFile

from .accesses import AccessSite
from .scopes import BUILTIN, BUILTIN_VARIABLES, MACRO, UNKNOWN, Names, Symbol, file_scope
from .symbols import MemoryObject


@dataclass(eq=False)
class FunctionFacts:
    function: Function
    names: Names | None = None  # names: ID -> Symbol
    objects: list[MemoryObject] = field(default_factory=list)  # objects
    sites: list[AccessSite] = field(default_factory=list)  # accesses
    parents: dict | None = None  # loops: node -> parent node
    loops: object = None  # loops: loops.Loops
    dataflow: object = None  # dataflow: dataflow.Reaching
    guards: object = None  # guards: control.ControlGuards
    liveranges: object = None  # liveranges: liveranges.LiveRanges

    @property
    def name(self) -> str:
        return self.function.name


@dataclass(eq=False)
class ProgramFacts:
    tu: TranslationUnit
    functions: list[FunctionFacts] = field(default_factory=list)
    file_objects: list[MemoryObject] = field(default_factory=list)  # objects
    values: object = None  # values: values.ValueAnalyses
    kernels: dict | None = None  # classify: kernel name -> interproc.KernelAnalysis
    _file_scope: dict | None = field(default=None, repr=False)
    _macros: dict = field(default_factory=dict, repr=False)

    def facts(self, name: str) -> FunctionFacts | None:
        for f in self.functions:
            if f.function.name == name:
                return f
        return None

    @property
    def sites(self) -> list[AccessSite]:
        return [s for f in self.functions for s in f.sites]

    def file_symbol(self, name: str) -> Symbol:
        """Resolve a name at file scope (for names inside macro bodies)."""
        if self._file_scope is None:
            self._file_scope = file_scope(self.tu)
        if name in self._file_scope:
            return self._file_scope[name]
        if name in BUILTIN_VARIABLES:
            return Symbol(name, BUILTIN)
        if name in self.tu.macros:
            return Symbol(name, MACRO, self.tu.macros[name])
        return Symbol(name, UNKNOWN)

    def macro_expression(self, name: str):
        """An object-like macro's body parsed as an expression (None if it is not one)."""
        if name not in self._macros:
            self._macros[name] = _parse_macro_body(self.tu, name)
        return self._macros[name]

    def macro_call_expression(self, name: str, args):
        """A function-like macro call `M(a, b)` as its body with the arguments substituted."""
        body = self.macro_expression(name)
        macro = self.tu.macros.get(name)
        if body is None or macro is None or macro.params is None or \
                len(macro.params) != len(args):
            return None
        return _substitute(body, dict(zip(macro.params, args)))


def _parse_macro_body(tu, name):
    macro = tu.macros.get(name)
    if macro is None or not macro.body.strip():
        return None
    body = macro.body
    source = SourceFile(f"<macro {name}>", body)
    try:
        return get_parser().parse(body, "expression_entry", source, 0, tu.oracle)
    except GmprofError:
        return None
    except Exception:
        return None


def _substitute(node, mapping):
    """A copy of `node` with ID(param) replaced by the argument nodes (macro expansion)."""
    if isinstance(node, c_ast.ID) and node.name in mapping:
        return mapping[node.name]
    new = copy.copy(node)
    for name, child in node.children():
        if "[" in name:
            field_name, index = name[:-1].split("[")
            seq = list(getattr(new, field_name))
            seq[int(index)] = _substitute(child, mapping)
            setattr(new, field_name, seq)
        else:
            setattr(new, name, _substitute(child, mapping))
    return new


__all__ = ["FunctionFacts", "ProgramFacts"]
