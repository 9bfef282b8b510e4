"""The analysis pipeline: an ordered list of passes over a translation unit.

Each pass is a named function from the facts gathered so far to new facts; the runner calls them
in order, names the pass in any internal error that escapes it, and can stop after a named pass
(`analyze(tu, upto="accesses")`) so a program's state after each pass can be inspected.

    names     ResolveNames         ID -> Symbol, per device function
    objects   FindMemoryObjects    shared arrays, pointer parameters, file-scope variables
    accesses  FindAccesses         every access site, its object and read/write kind
"""
from __future__ import annotations

from dataclasses import dataclass, field

from gmprof.errors import GmprofError
from gmprof.frontend.program import Function, TranslationUnit

from .accesses import AccessSite, find_accesses
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


PASSES = [
    ("names", _names),
    ("objects", _objects),
    ("accesses", _accesses),
]


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
