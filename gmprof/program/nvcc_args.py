"""An nvcc command line, read: its inputs, output, step and the -D/-I options gmprof needs.

Stage: whole programs, build. Takes the arguments of an nvcc command line as a Makefile or CMake
writes it; returns a Command (indexes of the .cu and host sources in it, -o, whether it only
compiles or does another step such as -E or -M, the macros and include directories). Every
option is read with nvcc's own table (gmprof/program/nvcc_table.py): an option nvcc does not
know is refused, as nvcc refuses it, with the nearest known spellings. Nothing here runs
anything; gmprof/program/nvcc.py and cpu_build.py act on the Command.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from gmprof.errors import OptionError

from .nvcc_table import GLUED, by_name

_TABLE = by_name()
_SOURCE = (".cu",)
_HOST_SOURCE = (".cpp", ".cc", ".cxx", ".c", ".C", ".c++")
CPU_DROP_LIBS = {"cudart", "cudart_static", "cuda", "cudadevrt", "nvToolsExt", "nvtx3interop"}
# the options that make nvcc do another step than compiling or linking (long names)
OTHER_STEPS = {"--preprocess", "--generate-dependencies", "--generate-nonsystem-dependencies",
               "--ptx", "--cubin", "--fatbin", "--lib", "--device-link", "--version", "--cuda",
               "--optix-ir", "--ltoir", "--list-gpu-arch", "--list-gpu-code", "--help",
               "--dryrun", "--run"}
COMPILE_ONLY = {"--compile", "--device-c", "--device-w"}


@dataclass
class Option:
    """One option of the command line: as written (one or two arguments), nvcc's long name
    for it, and its value (None for a switch)."""

    written: list
    name: str
    value: str | None


# with these, nvcc hands the options it does not know to the host compiler and/or linker
FORWARD = {"--forward-unknown-to-host-compiler": "compiler",
           "--forward-unknown-to-host-linker": "linker", "--forward-unknown-opts": "both"}
FORWARDED = "(forwarded to the host compiler)"  # an Option's name for such an option


def forwarding(args: list[str]) -> str | None:
    """Where nvcc forwards unknown options on this command line (compiler, linker, both)."""
    to = {FORWARD[_TABLE[a][0]] for a in args if a in _TABLE and _TABLE[a][0] in FORWARD}
    return None if not to else "both" if len(to) > 1 else to.pop()


def read_option(args: list[str], i: int, extra=(), forward: str | None = None
                ) -> tuple[Option, int]:
    """The option at args[i] (which starts with '-') and the index after it. `extra`: other
    spellings the caller knows, suggested when the option is unknown; `forward`: where nvcc
    forwards an unknown option (forwarding(args)), which it then takes as a switch."""
    a = args[i]
    if a in _TABLE:
        name, takes = _TABLE[a]
        if not takes:
            return Option([a], name, None), i + 1
        if i + 1 >= len(args):
            raise OptionError(f"{a} needs a value (as nvcc's {name})")
        return Option([a, args[i + 1]], name, args[i + 1]), i + 2
    head, eq, value = a.partition("=")
    if eq and head in _TABLE and _TABLE[head][1]:
        return Option([a], _TABLE[head][0], value), i + 1
    for short in GLUED:
        if a.startswith(short) and len(a) > len(short):
            return Option([a], _TABLE[short][0], a[len(short):]), i + 1
    if forward:
        return Option([a], FORWARDED, a), i + 1
    raise OptionError(unknown_option(a, extra))


def unknown_option(a: str, extra=()) -> str:
    """`unknown option X (did you mean Y?)`, Y the closest spellings nvcc or the caller know."""
    head = a.partition("=")[0]
    close = difflib.get_close_matches(head, [*extra, *_TABLE], n=3, cutoff=0.75)
    hint = f" (did you mean {' or '.join(close)}?)" if close else " (nvcc --help lists nvcc's)"
    return f"unknown option {a}{hint}"


@dataclass
class Command:
    """An nvcc command line, read."""

    args: list[str]
    sources: list[int] = field(default_factory=list)       # indexes of .cu inputs
    host_sources: list[int] = field(default_factory=list)  # .cpp/.c inputs
    inputs: list[int] = field(default_factory=list)        # every input file (.o, .a, ...)
    options: list = field(default_factory=list)            # Option, in order
    output: str | None = None
    compile_only: bool = False     # -c / -dc / -dw
    other_step: bool = False       # -E, -M, -MM, --version, -ptx, -cubin, -fatbin, -lib, -dlink...
    help: bool = False             # -h / --help
    defines: dict = field(default_factory=dict)
    include_dirs: list = field(default_factory=list)
    shared: bool = False
    language_cu: bool = False      # -x cu: every source is CUDA
    forward: str | None = None     # where unknown options go: compiler, linker, both (FORWARD)


def parse(args: list[str], extra=()) -> Command:
    """Read an nvcc command line; an unknown option is an OptionError (`extra`: spellings of
    the caller's own options, for its "did you mean")."""
    from gmprof.frontend.program import parse_define_option

    c = Command(list(args))
    c.forward = forwarding(args)
    i = 0
    while i < len(args):
        a = args[i]
        if not a.startswith("-") or a == "-":
            c.inputs.append(i)
            if a.endswith(_SOURCE):
                c.sources.append(i)
            elif a.endswith(_HOST_SOURCE):
                c.host_sources.append(i)
            i += 1
            continue
        opt, i = read_option(args, i, extra, c.forward)
        c.options.append(opt)
        name, value = opt.name, opt.value
        if name in COMPILE_ONLY:
            c.compile_only = True
        elif name in OTHER_STEPS:
            c.other_step = True
            c.help |= name == "--help"
        elif name == "--shared":
            c.shared = True
        elif name == "--output-file":
            c.output = value
        elif name == "--x" and value == "cu":
            c.language_cu = True
        elif name == "--define-macro":
            k, v = parse_define_option(value)
            c.defines[k] = v
        elif name == "--include-path":
            c.include_dirs.append(value)
    if c.language_cu:
        c.sources = sorted(c.sources + c.host_sources)
        c.host_sources = []
    return c


def links(c: Command) -> bool:
    """Whether the command links an executable (or a shared library)."""
    return not c.compile_only and not c.other_step
