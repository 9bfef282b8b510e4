"""An nvcc command line, read: its inputs, output, step and the -D/-I options gmprof needs.

Stage: whole programs, build. Takes the arguments of an nvcc command line as a Makefile or CMake
writes it; returns a Command (indexes of the .cu and host sources in it, -o, whether it only
compiles or does another step such as -E or -M, the macros and include directories). Nothing
here runs anything; gmprof/program/nvcc.py and cpu_build.py act on the Command.
"""
from __future__ import annotations

from dataclasses import dataclass, field

# nvcc options that take a value as the next argument (long and short spellings)
WITH_VALUE = {
    "-o", "--output-file", "-I", "--include-path", "-D", "--define-macro", "-U",
    "--undefine-macro", "-L", "--library-path", "-l", "--library", "-x", "--x", "-arch",
    "--gpu-architecture", "-gencode", "--generate-code", "-code", "--gpu-code", "-std", "--std",
    "-Xcompiler", "--compiler-options", "-Xlinker", "--linker-options", "-Xptxas",
    "--ptxas-options", "-Xnvlink", "--nvlink-options", "-Xcudafe", "-ccbin", "--compiler-bindir",
    "-maxrregcount", "--maxrregcount", "-include", "--pre-include", "-isystem",
    "--system-include", "-MF", "--dependency-output", "-MT", "--dependency-target-name",
    "-t", "--threads", "-default-stream", "--default-stream", "-rdc", "--relocatable-device-code",
    "-odir", "--output-directory", "-Xarchive", "--archive-options", "-G", "-ftz", "-prec-div",
    "-prec-sqrt", "-fmad", "--ftz", "--prec-div", "--prec-sqrt", "--fmad", "-Xfatbin",
    "--fatbin-options", "-dlto", "-split-compile", "--split-compile", "-time", "--time",
}
# of those, the ones whose value is glued after `=` when long; -G/-dlto take none
NO_VALUE_EXCEPT = {"-G", "-dlto"}
_SOURCE = (".cu",)
_HOST_SOURCE = (".cpp", ".cc", ".cxx", ".c", ".C", ".c++")
CPU_DROP_LIBS = {"cudart", "cudart_static", "cuda", "cudadevrt", "nvToolsExt", "nvtx3interop"}


@dataclass
class Command:
    """An nvcc command line, read."""

    args: list[str]
    sources: list[int] = field(default_factory=list)       # indexes of .cu inputs
    host_sources: list[int] = field(default_factory=list)  # .cpp/.c inputs
    output: str | None = None
    compile_only: bool = False     # -c / -dc / -dw
    other_step: bool = False       # -E, -M, -MM, --version, -ptx, -cubin, -fatbin, -lib, -dlink...
    defines: dict = field(default_factory=dict)
    include_dirs: list = field(default_factory=list)
    shared: bool = False
    language_cu: bool = False      # -x cu: every source is CUDA


def parse(args: list[str]) -> Command:
    from gmprof.frontend.program import parse_define_option

    c = Command(list(args))
    i = 0
    while i < len(args):
        a = args[i]
        takes = a in WITH_VALUE and a not in NO_VALUE_EXCEPT
        value = args[i + 1] if takes and i + 1 < len(args) else None
        if a in ("-c", "--compile", "-dc", "--device-c", "-dw", "--device-w"):
            c.compile_only = True
        elif a in ("-E", "--preprocess", "-M", "--generate-dependencies", "-MM",
                   "--generate-nonsystem-dependencies", "-ptx", "--ptx", "-cubin", "--cubin",
                   "-fatbin", "--fatbin", "-lib", "--lib", "-dlink", "--device-link",
                   "--version", "-V", "-cuda", "--cuda", "-optix-ir", "-ltoir", "--list-gpu-arch",
                   "--list-gpu-code", "-h", "--help", "-dryrun", "--dryrun", "-run", "--run"):
            c.other_step = True
        elif a in ("-shared", "--shared"):
            c.shared = True
        elif a in ("-o", "--output-file"):
            c.output = value
        elif a.startswith("--output-file="):
            c.output = a.split("=", 1)[1]
        elif a in ("-x", "--x") and value in ("cu",):
            c.language_cu = True
        elif a in ("-D", "--define-macro") and value is not None:
            k, v = parse_define_option(value)
            c.defines[k] = v
        elif a.startswith("-D") and len(a) > 2:
            k, v = parse_define_option(a[2:])
            c.defines[k] = v
        elif a.startswith("--define-macro="):
            k, v = parse_define_option(a.split("=", 1)[1])
            c.defines[k] = v
        elif a in ("-I", "--include-path") and value is not None:
            c.include_dirs.append(value)
        elif a.startswith("-I") and len(a) > 2:
            c.include_dirs.append(a[2:])
        elif a.startswith("--include-path="):
            c.include_dirs.append(a.split("=", 1)[1])
        elif not a.startswith("-"):
            if a.endswith(_SOURCE):
                c.sources.append(i)
            elif a.endswith(_HOST_SOURCE):
                c.host_sources.append(i)
        if takes:
            i += 2
            continue
        i += 1
    if c.language_cu:
        c.sources = sorted(c.sources + c.host_sources)
        c.host_sources = []
    return c


def links(c: Command) -> bool:
    """Whether the command links an executable (or a shared library)."""
    return not c.compile_only and not c.other_step
