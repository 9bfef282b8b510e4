"""The analysis pipeline: an ordered list of passes over a translation unit.

Each pass is a named function from the facts gathered so far to new facts; the runner calls them
in order, names the pass in any internal error that escapes it, and can stop after a named pass
(`analyze(tu, upto="accesses")`) so a program's state after each pass can be inspected.

    names     ResolveNames         ID -> Symbol, per device function
    objects   FindMemoryObjects    shared arrays, pointer parameters, file-scope variables
    accesses  FindAccesses         every access site, its object and read/write kind
    loops     FindLoops            loops, iterators, exits, trip counts
    dataflow  ReachingDefinitions  definitions reaching each use of a local or parameter
    classify  ClassifyKernels      static / tid-invariant / warp-uniform / loop-invariant per
                                   site, per kernel, following calls into device functions
    liveranges FindLiveRanges      statements that start and end shared arrays' live ranges
"""
from __future__ import annotations

from dataclasses import dataclass, field

from gmprof.errors import GmprofError
from gmprof.frontend.program import Function, TranslationUnit

from .accesses import AccessSite, find_accesses, parent_map
from .dataflow import reaching_definitions
from .loops import find_loops
from .scopes import Names, resolve_names
from .symbols import MemoryObject, file_objects, find_memory_objects


@dataclass
class FunctionFacts:
    function: Function
    names: Names | None = None
    objects: list[MemoryObject] = field(default_factory=list)
    sites: list[AccessSite] = field(default_factory=list)
    extra: dict = field(default_factory=dict)  # later passes' results, by pass name

    @property
    def name(self) -> str:
        return self.function.name


@dataclass
class ProgramFacts:
    tu: TranslationUnit
    functions: list[FunctionFacts] = field(default_factory=list)
    file_objects: list[MemoryObject] = field(default_factory=list)
    extra: dict = field(default_factory=dict)

    def facts(self, name: str) -> FunctionFacts | None:
        for f in self.functions:
            if f.function.name == name:
                return f
        return None

    # -- shared, cached analyses (used by the passes) ---------------------------------------
    def values(self, facts: FunctionFacts, context=None):
        """The ValueAnalysis of a function in a context (memoised per call chain)."""
        from .values import Context, ValueAnalysis

        context = context or Context(facts)
        cache = self.extra.setdefault("_values", {})
        key = (id(facts), context.chain)
        if key not in cache:
            cache[key] = ValueAnalysis(self, facts, context)
        return cache[key]

    def guards(self, facts: FunctionFacts):
        from .control import ControlGuards

        cache = self.extra.setdefault("_guards", {})
        if id(facts) not in cache:
            cache[id(facts)] = ControlGuards(facts.function.funcdef.body,
                                             facts.extra["parents"], facts.extra["loops"])
        return cache[id(facts)]

    def file_symbol(self, name: str):
        """Resolve a name at file scope (for names inside macro bodies)."""
        from .scopes import BUILTIN, BUILTIN_VARIABLES, MACRO, UNKNOWN, Symbol, _file_scope

        scope = self.extra.get("_file_scope")
        if scope is None:
            scope = self.extra["_file_scope"] = _file_scope(self.tu)
        if name in scope:
            return scope[name]
        if name in BUILTIN_VARIABLES:
            return Symbol(name, BUILTIN)
        if name in self.tu.macros:
            return Symbol(name, MACRO, self.tu.macros[name])
        return Symbol(name, UNKNOWN)

    def macro_expression(self, name: str):
        """An object-like macro's body parsed as an expression (None if it is not one)."""
        cache = self.extra.setdefault("_macros", {})
        if name not in cache:
            cache[name] = _parse_macro_body(self.tu, name)
        return cache[name]

    def macro_call_expression(self, name: str, args):
        """A function-like macro call `M(a, b)` as its body with the arguments substituted."""
        body = self.macro_expression(name)
        macro = self.tu.macros.get(name)
        if body is None or macro is None or macro.params is None or \
                len(macro.params) != len(args):
            return None
        return _substitute(body, dict(zip(macro.params, args)))
    @property
    def sites(self) -> list[AccessSite]:
        return [s for f in self.functions for s in f.sites]


def _names(program: ProgramFacts) -> None:
    for facts in program.functions:
        facts.names = resolve_names(program.tu, facts.function)


def _objects(program: ProgramFacts) -> None:
    program.file_objects = file_objects(program.tu)
    for facts in program.functions:
        facts.objects = find_memory_objects(facts.function, facts.names)


def _accesses(program: ProgramFacts) -> None:
    next_id = 0
    for facts in program.functions:
        facts.sites = find_accesses(facts.function, facts.names, facts.objects)
        for site in facts.sites:
            site.id = next_id
            next_id += 1


def _loops(program: ProgramFacts) -> None:
    for facts in program.functions:
        body = facts.function.funcdef.body
        facts.extra["parents"] = parent_map(facts.function.funcdef)
        facts.extra["loops"] = find_loops(body, facts.names)


def _dataflow(program: ProgramFacts) -> None:
    for facts in program.functions:
        facts.extra["dataflow"] = reaching_definitions(facts.function.funcdef, facts.names)


def _liveranges(program: ProgramFacts) -> None:
    from .liveranges import find_live_ranges

    for facts in program.functions:
        facts.extra["liveranges"] = find_live_ranges(facts)


def _classify(program: ProgramFacts) -> None:
    from .interproc import ClassifyKernels

    program.extra["kernels"] = ClassifyKernels(program).run()


PASSES = [
    ("names", _names),
    ("objects", _objects),
    ("accesses", _accesses),
    ("loops", _loops),
    ("dataflow", _dataflow),
    ("classify", _classify),
    ("liveranges", _liveranges),
]


def _parse_macro_body(tu, name):
    from gmprof.frontend.parser import get_parser
    from gmprof.frontend.source import SourceFile

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
    import copy

    from pycparser import c_ast

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


class PassError(Exception):
    """An internal error inside a named pass (a bug in gmprof, not the user's input)."""


def analyze(tu: TranslationUnit, upto: str | None = None, passes=None) -> ProgramFacts:
    program = ProgramFacts(tu, [FunctionFacts(f) for f in tu.functions if f.parsed is not None])
    for name, run in passes or PASSES:
        try:
            run(program)
        except GmprofError:
            raise
        except Exception as exc:
            raise PassError(f"internal error in pass {name!r}: {exc.__class__.__name__}: {exc}") \
                from exc
        if name == upto:
            break
    return program
