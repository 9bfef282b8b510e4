"""`gmprof nvcc <nvcc arguments>`: a drop-in compiler wrapper that builds whole programs with gmprof.

Stage: whole programs, build (the command-line side). Takes an nvcc command line, as a Makefile
or CMake writes it, and gmprof's own options (`--gmprof-mode M`, ... anywhere, or the GMPROF_*
variables); runs it with each .cu file translated (gmprof/program/translate.py: launches routed
through the host runtime, instrumented copies of the device functions) and the host runtime
linked into executables. On the GPU backend the real nvcc does the work; on the CPU backend g++
does, against gmprof's CUDA runtime emulation, so the program runs without a GPU.

    make NVCC="gmprof nvcc"
    gmprof nvcc --gmprof-mode basic -O2 -c kernels.cu -o kernels.o
    GMPROF_BACKEND=cpu gmprof nvcc main.cu kernels.cu -o app

A .cu file gmprof cannot translate, or whose instrumented text does not compile, is compiled as
it was (with a warning naming the reason): the program still builds, that file's kernels run
unprofiled. Nothing is written beside the user's files but what the compiler would write.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from gmprof.errors import GmprofError, OptionError

from . import build as B
from . import run_options as R
from .nvcc_args import Command, links as _links, parse

_GMPROF_FLAGS = {"--gmprof-mode": "mode", "--gmprof-backend": "backend",
                 "--gmprof-profile": "profile", "--gmprof-threshold": "threshold",
                 "--gmprof-counter-bits": "counter_bits", "--gmprof-sampling": "sampling",
                 "--gmprof-kernel": "kernel", "--gmprof-launch-skip": "skip",
                 "--gmprof-launch-count": "count", "--gmprof-output": "output"}
_GMPROF_SWITCHES = {"--gmprof-enhanced": "enhanced", "--gmprof-native": "native",
                    "--gmprof-verbose": "verbose", "--gmprof-link-flags": "link_flags",
                    "--gmprof-cmake": "cmake", "--gmprof-access-stats": "access_stats"}


@dataclass
class Options:
    """gmprof's own options, from --gmprof-* arguments over GMPROF_* variables."""

    mode: str = "default"
    backend: str | None = None
    profile: str = "both"
    threshold: int | None = None
    counter_bits: int = 32
    sampling: float | None = None
    enhanced: bool = False
    kernel: str = ""
    skip: int = 0
    count: int = -1
    output: str = ""
    native: bool = False
    verbose: bool = False
    link_flags: bool = False
    cmake: bool = False
    access_stats: bool = False

    def mode_object(self):
        from gmprof.mode import Mode

        m = Mode.parse(self.mode, threshold=self.threshold, counter_bits=self.counter_bits,
                       enhanced=self.enhanced, sampling=self.sampling, profile=self.profile)
        if m.trace:
            raise GmprofError("--gmprof-mode trace is for single launches (gmprof profile); a "
                              "whole program's trace would not fit any buffer", kind="bad-option")
        if m.sampling is not None and m.sampler != "rng":
            raise GmprofError("whole programs sample with the rng sampler only", kind="bad-option")
        if self.access_stats:
            # every site measured by its hook: `gmprof profile` moves a static site whose
            # formula does not give its warps' requests to a hook at that launch; a whole
            # program cannot run a launch again, so its sites are hooked from the start
            import dataclasses

            m = dataclasses.replace(m, warps=True, static_counts=False)
        return m

    def defaults(self) -> str:
        """Build-time launch selection, baked into the modules (variables at run time win)."""
        lines = []
        if self.kernel:
            lines.append(f"kernel={self.kernel}")
        if self.skip:
            lines.append(f"skip={self.skip}")
        if self.count >= 0:
            lines.append(f"count={self.count}")
        if self.output:
            lines.append(f"output={self.output}")
        return "\n".join(lines)


def _env_number(name: str, cast):
    """A build-time variable's number (its range is Mode.parse's), its error naming it."""
    value = os.environ[name]
    try:
        return cast(value)
    except ValueError:
        what = "an integer" if cast is int else "a number"
        raise OptionError(f"{name}={value}: expected {what}") from None


def _env_options() -> Options:
    o = Options()
    env = os.environ
    o.mode = env.get("GMPROF_MODE", o.mode)
    o.backend = env.get("GMPROF_BACKEND") or None
    o.profile = env.get("GMPROF_PROFILE", o.profile)
    if env.get("GMPROF_THRESHOLD"):
        o.threshold = _env_number("GMPROF_THRESHOLD", int)
    if env.get("GMPROF_COUNTER_BITS"):
        o.counter_bits = _env_number("GMPROF_COUNTER_BITS", int)
    if env.get("GMPROF_SAMPLING"):
        o.sampling = _env_number("GMPROF_SAMPLING", float)
    o.enhanced = env.get("GMPROF_ENHANCED", "") not in ("", "0")
    o.native = env.get("GMPROF_DISABLE", "") not in ("", "0")
    o.access_stats = env.get("GMPROF_ACCESS_STATS", "") not in ("", "0")
    return o


# the launch selection and report name built into the program's modules (Options.defaults),
# which its host runtime reads as it reads GMPROF_KERNEL, ...: checked by its rules
_BUILT_IN = {"kernel": R.kernel, "skip": R.integer, "count": R.count, "output": R.output}


def split_gmprof_args(argv: list[str]) -> tuple[Options, list[str]]:
    """(gmprof's options, the nvcc arguments). `--` ends gmprof's options explicitly."""
    o = _env_options()
    rest: list[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--" and not rest:
            i += 1
            continue
        name, eq, value = a.partition("=")
        if name in _GMPROF_FLAGS:
            if not eq:
                if i + 1 >= len(argv):
                    raise GmprofError(f"{name} needs a value", kind="bad-option")
                value = argv[i + 1]
                i += 1
            field_name = _GMPROF_FLAGS[name]
            if field_name in _BUILT_IN:
                setattr(o, field_name, _BUILT_IN[field_name](value, name))
                i += 1
                continue
            try:
                cast = {"threshold": int, "counter_bits": int, "sampling": float}.get(field_name,
                                                                                   str)
                setattr(o, field_name, cast(value))
            except ValueError:
                raise GmprofError(f"{name} {value!r}: not a number", kind="bad-option") from None
        elif a in _GMPROF_SWITCHES:
            setattr(o, _GMPROF_SWITCHES[a], True)
        elif a.startswith("--gmprof-"):
            import difflib

            known = sorted([*_GMPROF_FLAGS, *_GMPROF_SWITCHES])
            close = difflib.get_close_matches(name, known, n=1)
            raise OptionError(f"unknown option {a} (" + (f"did you mean {close[0]}?)" if close
                              else f"gmprof's options: {', '.join(known)})"))
        else:
            rest.append(a)
        i += 1
    return o, rest


USAGE = "usage: gmprof nvcc [--gmprof-OPTION VALUE]... [--] <nvcc options and input files>"
HELP = USAGE + """

Compile and link like nvcc, with gmprof's profiling built in (make NVCC="gmprof nvcc").
The program runs as usual and writes gmprof-report-<pid>.json at exit; `gmprof report` decodes
it. nvcc's options are nvcc's (`nvcc --help`); gmprof's own (or GMPROF_* variables at build
time; docs/whole-programs.md):

  --gmprof-mode M             default, basic, or SA/NA/SM/TH joined by '-'
  --gmprof-profile P          shm, dm or both: which memories are counted
  --gmprof-threshold N        thresholded counters; --gmprof-counter-bits 8|16|32
  --gmprof-sampling RATE      sampled counts (labelled, scaled by 1/rate)
  --gmprof-enhanced           live-range statistics of shared arrays
  --gmprof-access-stats       per-warp requests of every site (bank conflicts, coalescing);
                              every site is then counted by its hook
  --gmprof-backend gpu|cpu    build for a GPU (the real nvcc) or the CPU backend (g++)
  --gmprof-native             build as it was, without profiling
  --gmprof-kernel NAME, --gmprof-launch-skip N, --gmprof-launch-count N, --gmprof-output PATTERN
                              launch selection and report name baked into the build
  --gmprof-verbose            also show warnings about headers gmprof did not read
  --gmprof-link-flags         print what a link that gmprof nvcc does not run must add
  --gmprof-cmake              print the path of a CMake file that profiles a whole project:
                              cmake -S . -B build -DCMAKE_PROJECT_INCLUDE="$(gmprof nvcc --gmprof-cmake)"
"""


def run(argv: list[str]) -> int:
    opts, args = split_gmprof_args(argv)
    cmd = parse(args, extra=[*_GMPROF_FLAGS, *_GMPROF_SWITCHES])
    if cmd.help:
        print(HELP, end="")
        return 0
    backend = B.choose_backend(opts.backend)
    if opts.link_flags:
        print(" ".join(link_flags(backend)))
        return 0
    if opts.cmake:
        from .cmake import cmake_include

        print(cmake_include(backend, link_flags(backend)))
        return 0
    if not cmd.inputs and not cmd.other_step:
        raise OptionError("no input files (gmprof nvcc --help shows the usage)")
    mode = None if opts.native else opts.mode_object()
    if cmd.other_step or (mode is None and backend == "gpu") or \
            (backend == "gpu" and not cmd.sources and not _links(cmd)):
        return _passthrough(backend, cmd)
    with tempfile.TemporaryDirectory(prefix="gmprof-nvcc-") as tmp:
        if backend == "gpu":
            return _gpu(cmd, opts, mode, Path(tmp))
        from .cpu_build import cpu_build

        return cpu_build(cmd, opts, mode, Path(tmp), translate_file)


def link_flags(backend: str) -> list[str]:
    """What a link that gmprof nvcc does not run must add (CMake links CUDA programs with the
    host compiler, not through the compiler launcher): the host runtime's objects, and on the
    CPU backend the CUDA runtime emulation."""
    if backend == "gpu":
        return B.gpu_link_flags("-Wl,")
    return [*B.runtime_objects("cpu"), *B.CPU_LIBS]


def _passthrough(backend: str, cmd: Command) -> int:
    if backend == "gpu":
        return subprocess.call([B.find_nvcc(), *cmd.args])
    from .cpu_build import cpu_other_step

    return cpu_other_step(cmd)


def translate_file(path: str, cmd: Command, opts: Options, mode, cpu: bool, instances=None,
                   quiet: bool = False):
    """The Translation, or None when gmprof cannot translate the file. `instances`: the
    specialisations of template kernels found by instances.discover (the second translation of
    a file whose host templates launch them; its warnings were shown the first time: quiet)."""
    from .translate import translate

    include_dirs = [d for d in cmd.include_dirs if Path(d).is_dir()]
    try:
        t = translate(path, defines=cmd.defines, include_dirs=include_dirs, mode=mode, cpu=cpu,
                      defaults=opts.defaults(), instances=instances)
    except GmprofError as exc:
        print(exc.render(), file=sys.stderr)
        print(f"gmprof: warning: {path}: compiled without profiling (gmprof cannot translate it)",
              file=sys.stderr)
        return None
    for w in [] if quiet else t.warnings:
        if w.kind != "include-not-found" or opts.verbose:
            print(w.render(), file=sys.stderr)
    return t


def _gpu(cmd: Command, opts: Options, mode, tmp: Path) -> int:
    nvcc = B.find_nvcc()
    args = list(cmd.args)
    translated = {}
    uncapped = {}  # the text without register caps, should nvcc refuse them
    for idx in cmd.sources:
        src = args[idx]
        t = translate_file(src, cmd, opts, mode, cpu=False)
        if t is None:
            continue
        if t.generic:
            t = _with_instances(nvcc, t, src, cmd, opts, mode, tmp)
        out = tmp / f"{len(translated)}_{Path(src).stem}.cu"
        text = _with_caps(nvcc, t, src, cmd, tmp) if t.capped else t.text
        out.write_text(text, errors="surrogateescape")  # non-UTF-8 comments kept
        if text is not t.text:
            uncapped[idx] = t.text
        translated[idx] = str(out)
    extra = []
    # local headers gmprof did not inline are still found beside the user's file
    for idx in translated:
        d = str(Path(args[idx]).resolve().parent)
        if f"-I{d}" not in extra:
            extra.append(f"-I{d}")
    link = _links(cmd)
    runtime = B.gpu_link_flags() if link else []
    if cmd.compile_only and len(cmd.sources) > 1 or (cmd.compile_only and cmd.output is None):
        # one compile per file, so that each object keeps the name nvcc would give it
        status = 0
        others = [a for k, a in enumerate(args) if k not in cmd.sources]
        for idx in cmd.sources:
            obj = str(Path(args[idx]).with_suffix(".o").name) if cmd.output is None else cmd.output
            src = translated.get(idx, args[idx])
            status = status or _gpu_compile(nvcc, others, src, args[idx], obj, extra,
                                            idx in translated, uncapped.get(idx))
        return status
    new = [translated.get(k, a) for k, a in enumerate(args)]
    proc = subprocess.run([nvcc, *extra, *new, *runtime], capture_output=True, text=True)
    if proc.returncode != 0 and uncapped:
        proc = _uncapped([nvcc, *extra, *new, *runtime],
                         {translated[k]: text for k, text in uncapped.items()})
    if proc.returncode != 0 and translated:
        _warn_fallback(proc.stderr, [args[k] for k in translated])
        return subprocess.call([nvcc, *args, *runtime])
    sys.stdout.write(proc.stdout)
    sys.stderr.write(proc.stderr)
    return proc.returncode


def _compile_flags(cmd: Command) -> list:
    """The command's flags for one more compile of one file: no inputs, output or step."""
    skip = set(cmd.inputs)
    flags, args = [], cmd.args
    k = 0
    while k < len(args):
        if args[k] == "-o":
            k += 2
            continue
        if k not in skip and args[k] not in ("-c", "-dc", "-dlink", "-lib", "-shared"):
            flags.append(args[k])
        k += 1
    return flags


def _with_caps(nvcc, t, src, cmd: Command, tmp: Path) -> str:
    """The translated text with the register caps of its cooperative kernels' copies
    (registers.py), read from one device-only compile of the user's file as it was."""
    from . import registers

    flags, k = [], 0
    plain = _compile_flags(cmd)
    while k < len(plain):  # (no intermediate files of this compile beside the user's)
        f = plain[k]
        if f in ("-keep-dir", "--keep-dir"):
            k += 2
            continue
        if f.split("=")[0] not in ("-keep", "--keep", "-keep-dir", "--keep-dir", "-save-temps",
                                   "--save-temps"):
            flags.append(f)
        k += 1
    report, error = registers.measure(nvcc, flags, src,
                                      str(tmp / f"{Path(src).stem}.usage.fatbin"))
    caps = registers.parse_usage(report, t.capped) if error is None else {}
    missing = sorted(set(t.capped) - set(caps))
    if missing:
        print(f"gmprof: warning: {src}: the registers of {', '.join(missing)} could not be read "
              f"({error or 'not in ptxas report'}); a cooperative launch of their instrumented "
              "copy may need more registers than the grid leaves (it then runs unprofiled)",
              file=sys.stderr)
    return registers.defines(caps) + t.text


def _with_instances(nvcc, t, src, cmd: Command, opts: Options, mode, tmp: Path):
    """The translation again, with the specialisations of template kernels that its host
    templates launch registered (instances.py: found in the host stubs of one compile)."""
    from .instances import discover

    flags = _compile_flags(cmd)
    d = str(Path(src).resolve().parent)
    found = discover(t.text, t.generic, lambda source, obj: [
        nvcc, *flags, f"-I{d}", "-x", "cu", "-c", source, "-o", obj], tmp)
    if not found:
        return t
    again = translate_file(src, cmd, opts, mode, cpu=False, instances=found, quiet=True)
    return again if again is not None else t


def _uncapped(nvcc_args: list, texts: dict):
    """nvcc refused a build with register caps (a `__launch_bounds__` that a macro hid from
    gmprof cannot be joined by `__maxnreg__`): each translated file written again without them
    (`texts`: path -> text) and built once more; the CompletedProcess."""
    for path, text in texts.items():
        Path(path).write_text(text, errors="surrogateescape")
    proc = subprocess.run(nvcc_args, capture_output=True, text=True)
    if proc.returncode == 0:
        print("gmprof: warning: the instrumented build with register caps on cooperative kernels "
              "does not compile; built without them (a cooperative launch of their copies may "
              "then run unprofiled)", file=sys.stderr)
    return proc


def _gpu_compile(nvcc, others, src, original, obj, extra, was_translated, uncapped=None) -> int:
    if "-o" in others:
        k = others.index("-o")
        others = others[:k] + others[k + 2:]
    proc = subprocess.run([nvcc, *extra, *others, src, "-o", obj], capture_output=True, text=True)
    if proc.returncode != 0 and uncapped is not None:
        proc = _uncapped([nvcc, *extra, *others, src, "-o", obj], {src: uncapped})
    if proc.returncode != 0 and was_translated:
        _warn_fallback(proc.stderr, [original])
        return subprocess.call([nvcc, *others, original, "-o", obj])
    sys.stdout.write(proc.stdout)
    sys.stderr.write(proc.stderr)
    return proc.returncode


def _warn_fallback(stderr: str, files) -> None:
    first = next((line for line in stderr.splitlines() if "error" in line), stderr.strip()[:300])
    print(f"gmprof: warning: the instrumented build of {', '.join(map(str, files))} does not "
          f"compile ({first.strip()}); compiled as it was, without profiling", file=sys.stderr)
