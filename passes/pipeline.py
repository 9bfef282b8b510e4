"""The pipeline, defined once: load -> analyze (named passes) -> plan -> instrument -> emit.

Every user of gmprof's stages goes through here: the command line (`gmprof parse`, `analyze`,
`instrument`), the profiler (gmprof/runtime) and the tests. The runner calls the stages in
order, names the stage in any internal error that escapes it (PassError), and can print the
program after a named stage (`--dump-after NAME`, passes/dump.py).

    load       frontend.program.load  source -> segments -> lark tree -> c_ast (+ spans)
    names      ResolveNames           ID -> Symbol, per device function
    objects    FindMemoryObjects      shared arrays, pointer parameters, file-scope variables
    accesses   FindAccesses           every access site, its object and read/write kind
    loops      FindLoops              loops, iterators, exits, trip counts (and parent links)
    dataflow   ReachingDefinitions    definitions reaching each use of a local or parameter
    guards     ControlGuards          the conditions under which each statement executes
    values     ValueAnalyses          what each expression depends on; its affine form
    classify   ClassifyKernels        static / tid-invariant / warp-uniform / loop-invariant per
                                      site, per kernel, following calls into device functions
    liveranges FindLiveRanges         statements that start and end shared arrays' live ranges
    plan       PlanCounters           per site: static, a hook (and its mode), or nothing
    instrument InstrumentSource       the counters as text patches, and the GMPROF_* macros
    emit       emit                   one translation unit for a Target (nvcc, NVRTC, CPU)
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Callable

from gmprof.errors import GmprofError, OptionError
from gmprof.frontend.nesting import deep_recursion
from gmprof.frontend.program import TranslationUnit, load

from . import dump
from .accesses import find_accesses, parent_map
from .control import ControlGuards
from .dataflow import reaching_definitions
from .emit import emit as emit_text
from .facts import FunctionFacts, ProgramFacts
from .interproc import ClassifyKernels
from .liveranges import find_live_ranges
from .loops import find_loops
from .plan import Plan, plan_counters
from .rewrite import instrument as instrument_patches
from .scopes import resolve_names
from .struct_members import array_members
from .symbols import file_objects, find_memory_objects
from .targets import Target
from .values import ValueAnalyses


@dataclass(frozen=True)
class Pass:
    name: str
    run: Callable[[ProgramFacts], None]


def _names(program: ProgramFacts) -> None:
    for facts in program.functions:
        facts.names = resolve_names(program.tu, facts.function)


def _objects(program: ProgramFacts) -> None:
    program.file_objects = file_objects(program.tu)
    for facts in program.functions:
        facts.objects = find_memory_objects(facts.function, facts.names)


def _accesses(program: ProgramFacts) -> None:
    next_id = 0
    members = array_members(program.tu)
    for facts in program.functions:
        facts.sites = find_accesses(facts.function, facts.names, facts.objects, members)
        for site in facts.sites:
            site.id = next_id
            next_id += 1


def _loops(program: ProgramFacts) -> None:
    for facts in program.functions:
        facts.parents = parent_map(facts.function.funcdef)
        facts.loops = find_loops(facts.function.funcdef.body, facts.names)


def _dataflow(program: ProgramFacts) -> None:
    for facts in program.functions:
        facts.dataflow = reaching_definitions(facts.function.funcdef, facts.names)


def _guards(program: ProgramFacts) -> None:
    for facts in program.functions:
        facts.guards = ControlGuards(facts.function.funcdef.body, facts.parents, facts.loops)


def _values(program: ProgramFacts) -> None:
    program.values = ValueAnalyses(program)


def _classify(program: ProgramFacts) -> None:
    program.kernels = ClassifyKernels(program).run()


def _liveranges(program: ProgramFacts) -> None:
    for facts in program.functions:
        facts.liveranges = find_live_ranges(facts)


ANALYSES = (
    Pass("names", _names),
    Pass("objects", _objects),
    Pass("accesses", _accesses),
    Pass("loops", _loops),
    Pass("dataflow", _dataflow),
    Pass("guards", _guards),
    Pass("values", _values),
    Pass("classify", _classify),
    Pass("liveranges", _liveranges),
)
ANALYSIS_STAGES = ("load",) + tuple(p.name for p in ANALYSES)
STAGES = ANALYSIS_STAGES + ("plan", "instrument", "emit")


class PassError(Exception):
    """An internal error inside a named stage (a bug in gmprof, not the user's input)."""


@dataclass(frozen=True)
class Instrumented:
    """The instrument stage's result: the plan, its text patches, and the macros the
    instrumented unit is compiled with (the mode's GMPROF_* and GMPROF_SHARED_BASES)."""

    plan: Plan
    patches: dict
    defines: dict
    # kernels emitted with two bodies (passes/dual.py): the header's second pass follows it
    dual: tuple = ()


class Pipeline:
    """Runs the stages; `dump_after`: print the program after that stage (to `out`)."""

    def __init__(self, dump_after: str | None = None, out=None, stages=STAGES):
        if dump_after is not None and dump_after not in stages:
            raise OptionError(f"--dump-after {dump_after!r}: no such pass (passes: "
                              f"{', '.join(stages)})")
        self.dump_after = dump_after
        self.out = out

    def _stage(self, name: str, run, *args):
        try:
            with deep_recursion():  # the passes walk trees up to MAX_NESTING deep
                return run(*args)
        except GmprofError:
            raise
        except Exception as exc:
            raise PassError(f"internal error in pass {name!r}: {exc.__class__.__name__}: "
                            f"{exc}") from exc

    def _after(self, name: str, what) -> None:
        if name == self.dump_after:
            print(f"=== after {name} ===\n{dump.describe(name, what)}",
                  file=self.out or sys.stderr)

    def load(self, path=None, **options) -> TranslationUnit:
        tu = load(path, **options)
        self._after("load", tu)
        return tu

    def analyze(self, tu: TranslationUnit, upto: str | None = None) -> ProgramFacts:
        """The analysis passes in order (up to and including `upto`)."""
        if upto is not None and upto not in ANALYSIS_STAGES:
            raise ValueError(f"no analysis pass {upto!r} ({', '.join(ANALYSIS_STAGES)})")
        program = ProgramFacts(tu, [FunctionFacts(f) for f in tu.functions
                                    if f.parsed is not None])
        for p in ANALYSES if upto != "load" else ():
            self._stage(p.name, p.run, program)
            self._after(p.name, program)
            if p.name == upto:
                break
        return program

    def plan(self, program: ProgramFacts, mode, demoted=frozenset(),
             for_launch=False, samples_blocks=False) -> Plan:
        plan = self._stage("plan", plan_counters, program, mode, demoted, for_launch,
                           samples_blocks)
        self._after("plan", plan)
        return plan

    def instrument(self, plan: Plan, sm: bool | None = None) -> Instrumented:
        """sm: where the block's counters live at this launch (None: as the mode says)."""
        patches, rewriter = self._stage("instrument", instrument_patches, plan)
        # the registered bases of shared arrays: one per slot up to the last shared one
        # (gmprof.cuh; 0: none needed)
        bases = max([s.index + 1 for s in plan.slots if s.kind == "shared"] + [1])
        defines = plan.mode.defines(sm=sm) | {
            "GMPROF_SHARED_BASES": bases if rewriter.needs_shared_bases else 0}
        done = Instrumented(plan, patches, defines, tuple(rewriter.dual))
        self._after("instrument", done)
        return done

    def emit(self, program: ProgramFacts, instrumented: Instrumented | None, target: Target,
             *, header: bool = True, defines: bool = True, extra: str = "") -> str:
        """The unit for a target: instrumented, or native (None). defines: write the
        GMPROF_* macros at its top (else the compiler is given them)."""
        text = self._stage(
            "emit", lambda: emit_text(
                program, instrumented.patches if instrumented else {}, target, header=header,
                defines=instrumented.defines if instrumented and defines else None,
                extra=extra, unmeasured_pass=bool(instrumented and instrumented.dual)))
        self._after("emit", text)
        return text

    def instrumented_source(self, program: ProgramFacts, plan: Plan, target: Target, *,
                            sm: bool | None = None, defines: bool = True):
        """instrument -> emit: (text, Instrumented)."""
        done = self.instrument(plan, sm)
        return self.emit(program, done, target, defines=defines), done


def analyze(tu: TranslationUnit, upto: str | None = None) -> ProgramFacts:
    return Pipeline().analyze(tu, upto)


__all__ = ["Pipeline", "Instrumented", "PassError", "ANALYSES", "ANALYSIS_STAGES", "STAGES",
           "analyze"]
