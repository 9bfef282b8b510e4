"""`gmprof nvcc` on the CPU backend: an nvcc command line carried out with g++.

Stage: whole programs, build. Takes a parsed nvcc command (gmprof/program/nvcc.py) and runs it
as nvcc would, but with g++: each .cu file is translated (cpu=True: every launch goes through the
host runtime, which runs kernels on the CPU backend's fibers) and compiled as C++17 against
gmprof's CUDA runtime emulation; host .cpp files are compiled against it too; executables link
the emulation, the scheduler and the host runtime. nvcc's device options (-arch, -gencode,
-rdc, ...) mean nothing here and are dropped; host options (-I -D -U -O -g -std -Xcompiler
-Xlinker -L -l) are kept. A call outside the emulated subset is a plain error naming it.
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from . import build as B
from .nvcc_args import CPU_DROP_LIBS, FORWARDED, OTHER_STEPS, links

_COMPILE = {"--include-path": "-I", "--define-macro": "-D", "--undefine-macro": "-U"}
_COMPILE_SPLIT = {"--pre-include": "-include", "--system-include": "-isystem"}
# host compiler options that the link needs too (nvcc links with the host compiler and its
# -Xcompiler options)
_LINK_TOO = ("-fopenmp", "-pthread", "-fsanitize")


def host_flags(cmd) -> tuple[list[str], list[str], list[str]]:
    """(compile flags, link flags, link inputs) for g++ from the nvcc arguments (the options
    read with nvcc's table: gmprof/program/nvcc_args.py)."""
    comp, link = [], []
    std = opt = None
    for o in cmd.options:
        name, value = o.name, o.value
        if name in _COMPILE:
            comp.append(_COMPILE[name] + value)
        elif name in _COMPILE_SPLIT:
            comp += [_COMPILE_SPLIT[name], value]
        elif name == "--library-path":
            link.append("-L" + value)
        elif name == "--library":
            # the CUDA runtime and driver are the emulation's; libm, libgomp, ... are the host's
            link += [f"-l{lib}" for lib in value.split(",") if lib and lib not in CPU_DROP_LIBS]
        elif name == "--std":
            std = f"-std={value}"
        elif name == "--optimize":
            opt = f"-O{value}"
        elif name == "--debug":
            comp.append("-g")
        elif name == "--compiler-options":
            flags = [v for v in value.split(",") if v]
            comp += flags
            link += [f for f in flags if f.startswith(_LINK_TOO)]
        elif name == "--linker-options":
            link.append("-Wl," + value)
        elif name == "--disable-warnings":
            comp.append("-w")
        elif name == "--m64":
            comp.append("-m64")
        elif name == FORWARDED:  # -forward-unknown-to-host-compiler and the like
            if cmd.forward in ("compiler", "both"):
                comp.append(value)
            if cmd.forward in ("linker", "both") or value.startswith(_LINK_TOO):
                link.append(value)
    inputs = [cmd.args[i] for i in cmd.inputs
              if re.search(r"\.(o|a|so(\.\d+)*)$", cmd.args[i])]
    # nvcc compiles C++17 by default; kernels on fibers want optimisation (docs/cpu-backend.md)
    return [std or "-std=c++17", opt or "-O2", *comp], link, inputs


_UNDECLARED = re.compile(r"^(?P<loc>[^\s:][^:]*:\d+:\d+): error: '(?P<name>\w+)' was not "
                         r"declared in this scope", re.M)
_NO_MEMBER = re.compile(r"^(?P<loc>[^\s:][^:]*:\d+:\d+): error: '(?:struct )?(?P<type>cuda\w+)' "
                        r"has no member named '(?P<name>\w+)'", re.M)
_NO_HEADER = re.compile(r"^(?P<loc>[^\s:][^:]*:\d+:\d+): fatal error: (?P<name>[\w/.]+): No such "
                        r"file or directory", re.M)
_DELETED = re.compile(r"^(?P<loc>[^\s:][^:]*:\d+:\d+): error: use of deleted function "
                      r"'(?:[^'(]*\s)?(?P<name>cu[A-Z]\w*)\(", re.M)
_CUDA_HEADERS = ("cuda.h", "cudaGL.h", "cuda_gl_interop.h", "cooperative_groups", "cublas",
                 "cufft", "curand", "cusparse", "cusolver", "nvrtc", "npp", "cuda_fp16",
                 "cuda_bf16", "cuda_fp8", "mma.h", "cub/", "thrust/", "cuda/", "nvml")


def explain(stderr: str) -> str | None:
    """A plain error for a program that uses CUDA outside the CPU backend's subset."""
    text = stderr.replace("\u2018", "'").replace("\u2019", "'")
    m = _UNDECLARED.search(text)
    if m and m.group("name").startswith(("cuda", "cu", "CU", "make_cuda", "tex", "surf")):
        return (f"{m.group('loc')}: error: {m.group('name')} is not part of the CUDA runtime "
                "subset that the CPU backend emulates (docs/whole-programs.md lists it); build "
                "for a GPU, or leave the call out")
    m = _DELETED.search(text)
    if m:  # runtime_cu/cpu/include/cuda.h declares the driver API's functions deleted
        return (f"{m.group('loc')}: error: {m.group('name')} is part of CUDA's driver API, which "
                "the CPU backend does not emulate (it emulates the runtime API: "
                "docs/whole-programs.md); build for a GPU, or use the runtime API's call")
    m = _NO_MEMBER.search(text)
    if m:
        return (f"{m.group('loc')}: error: {m.group('type')}.{m.group('name')} is not emulated "
                "by the CPU backend (docs/whole-programs.md)")
    m = _NO_HEADER.search(text)
    if m and m.group("name").startswith(_CUDA_HEADERS):
        return (f"{m.group('loc')}: error: {m.group('name')}: the CPU backend emulates the CUDA "
                "runtime API only, not this library or header (build for a GPU)")
    return None


def _compile(src_for_gxx: str, original: str, obj: str, cflags, language: str) -> int:
    cmd = [B.CXX, *cflags, *B.CPU_FLAGS, *B.cpu_includes(),
           "-I", str(Path(original).resolve().parent), "-x", language, "-c", src_for_gxx,
           "-o", obj]
    if language == "c":
        cmd = [B.CXX.replace("g++", "gcc"), *[f for f in cflags if not f.startswith("-std=c++")],
               "-c", src_for_gxx, "-o", obj]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        plain = explain(proc.stderr)
        if plain:
            print(plain, file=sys.stderr)
        else:
            sys.stderr.write(proc.stderr)
        return proc.returncode
    sys.stderr.write(proc.stderr)
    return 0


def _with_instances(t, src, cmd, opts, mode, cflags, tmp: Path, translate_file):
    """The translation again, with the specialisations of template kernels that its host
    templates launch registered (instances.py: found by compiling it once, at -O0)."""
    from .instances import discover

    def compile_cmd(source, obj):
        return [B.CXX, *[f for f in cflags if not f.startswith("-O")], "-O0", *B.CPU_FLAGS,
                *B.cpu_includes(), "-I", str(Path(src).resolve().parent), "-x", "c++", "-c",
                source, "-o", obj]
    found = discover(t.text, t.generic, compile_cmd, tmp)
    if not found:
        return t
    again = translate_file(src, cmd, opts, mode, cpu=True, instances=found, quiet=True)
    return again if again is not None else t


def cpu_build(cmd, opts, mode, tmp: Path, translate_file) -> int:
    """translate_file(path, cmd, opts, mode, cpu=True) -> Translation or None (nvcc.py's)."""
    cflags, lflags, inputs = host_flags(cmd)
    args = cmd.args
    objects = []
    for idx in sorted(cmd.sources + cmd.host_sources):
        src = args[idx]
        if idx in cmd.sources:
            t = translate_file(src, cmd, opts, mode, cpu=True)
            if t is None and mode is not None:
                t = translate_file(src, cmd, opts, None, cpu=True)
            if t is None:
                return 2
            if t.generic and mode is not None:
                t = _with_instances(t, src, cmd, opts, mode, cflags, tmp, translate_file)
            gen = tmp / f"{len(objects)}_{Path(src).stem}.cpp"
            gen.write_text(t.text, errors="surrogateescape")  # non-UTF-8 comments kept
            compiled, language = str(gen), "c++"
        else:
            compiled, language = src, "c" if src.endswith(".c") else "c++"
        if cmd.compile_only:
            obj = cmd.output if cmd.output and len(cmd.sources + cmd.host_sources) == 1 else \
                Path(src).with_suffix(".o").name
        else:
            obj = str(tmp / f"{len(objects)}_{Path(src).stem}.o")
        status = _compile(compiled, src, obj, cflags, language)
        if status:
            return status
        objects.append(obj)
    if not links(cmd):
        return 0
    out = cmd.output or "a.out"
    runtime = B.runtime_objects("cpu")
    link = [B.CXX, *([f for f in cflags if f.startswith("-O")] or []), *objects, *inputs,
            *runtime, *lflags, *B.CPU_LIBS, "-o", out]
    if cmd.shared:
        link.insert(1, "-shared")
    proc = subprocess.run(link, capture_output=True, text=True)
    sys.stderr.write(proc.stderr)
    return proc.returncode


# nvcc's preprocessing and dependency options, as g++ spells them (--cuda, the host C++ of
# each .cu file in FILE.cu.cpp.ii: here the C++ that g++ compiles, preprocessed)
_STEPS = {"--preprocess": "-E", "--cuda": "-E", "--generate-dependencies": "-M",
          "--generate-nonsystem-dependencies": "-MM", "--dependency-output": "-MF",
          "--dependency-target-name": "-MT", "--generate-dependency-targets": "-MP"}


def cpu_other_step(cmd) -> int:
    """-E, -M, --version and the like, for the CPU backend."""
    args = cmd.args
    if any(o.name == "--version" for o in cmd.options):
        print(f"gmprof nvcc (CPU backend): {B.CXX} against gmprof's CUDA runtime emulation")
        return 0
    steps = [o.name for o in cmd.options if o.name in OTHER_STEPS]
    cannot = [s for s in steps if s not in _STEPS]
    if cannot:
        print(f"gmprof: error: the CPU backend cannot do nvcc's {cannot[0]} (it compiles and "
              "links with g++; build for a GPU)", file=sys.stderr)
        return 2
    cflags, _, _ = host_flags(cmd)
    passthrough = []
    for o in cmd.options:
        if o.name in _STEPS:
            passthrough += [_STEPS[o.name]] + ([o.value] if o.value is not None else [])
    sources = [args[i] for i in cmd.sources + cmd.host_sources]
    if not sources:
        print(f"gmprof: error: no input files (nvcc's {steps[0]} needs a source)",
              file=sys.stderr)
        return 2
    gxx = [B.CXX, *cflags, *B.CPU_FLAGS, *B.cpu_includes(), *passthrough, "-x", "c++"]
    if "--cuda" in steps and not cmd.output:
        # one output per file, beside the working directory as nvcc writes them
        for src in sources:
            status = subprocess.call([*gxx, src, "-o", Path(src).name + ".cpp.ii"])
            if status:
                return status
        return 0
    extra = ["-o", cmd.output] if cmd.output else []
    return subprocess.call([*gxx, *sources, *extra])
