"""Subcommands for whole programs: nvcc and run (argument handling and output only).

    gmprof nvcc [--gmprof-OPTION VALUE]... [--] <nvcc arguments>
    gmprof run [gmprof options] SOURCES... [nvcc flags] [-- program arguments]

(`gmprof report A.json B.json ...`, gmprof/cli_report.py, decodes and merges the report files
programs write, with program_document and render_program below.)

`nvcc` takes its arguments raw (nvcc's `-c`, `-o`, `-I` are not gmprof's), so it is dispatched
before argparse; so is `gmprof /path/to/nvcc ...`, the form CMake's CMAKE_CUDA_COMPILER_LAUNCHER
produces. `run` builds the sources with `gmprof nvcc` into a temporary directory, runs the
program with the launch selection given (Nsight Compute's options: -k/--kernel-name NAME or
regex:RE, -s/--launch-skip N, -c/--launch-count N), and prints the report as `gmprof profile`
does; `--check` also builds and runs it natively and compares standard output and exit status.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from gmprof.errors import EXIT_CHECK_FAILED, GmprofError, OptionError


def raw_command(argv: list[str]):
    """A Namespace for `gmprof nvcc ...`, `gmprof run ...` (or `gmprof .../nvcc ...`), else
    None."""
    if not argv:
        return None
    first = argv[0]
    if first == "run":
        return argparse.Namespace(run=lambda a: cmd_run(a.raw), raw=list(argv[1:]))
    if first == "nvcc":
        return argparse.Namespace(run=lambda a: _nvcc(a.raw), raw=list(argv[1:]))
    if os.path.basename(first) == "nvcc" and os.path.isfile(first):
        os.environ["GMPROF_NVCC"] = first
        return argparse.Namespace(run=lambda a: _nvcc(a.raw), raw=list(argv[1:]))
    return None


def _nvcc(argv) -> int:
    from .nvcc import run

    return run(argv)


# -- run ----------------------------------------------------------------------------------

_RUN_VALUE = {"-k": "kernel", "--kernel-name": "kernel", "-s": "skip", "--launch-skip": "skip",
              "-c": "count", "--launch-count": "count", "-o": "output", "--output": "output",
              "--mode": "mode", "--profile": "profile", "--threshold": "threshold",
              "--counter-bits": "counter_bits", "--sampling": "sampling", "--backend": "backend",
              "--check-ignore": "check_ignore", "--timeout": "timeout"}
_RUN_SWITCH = {"--json": "json", "--check": "check", "--enhanced": "enhanced", "--keep": "keep",
               "-h": "help", "--help": "help"}


def parse_run(argv: list[str]) -> argparse.Namespace:
    from .nvcc_args import NO_VALUE_EXCEPT, WITH_VALUE

    ns = argparse.Namespace(kernel="", skip=0, count=-1, output=None, mode="default",
                            profile="both", threshold=None, counter_bits=32, sampling=None,
                            backend=None, check_ignore=[], json=False, check=False,
                            enhanced=False, keep=False, help=False, timeout=None,
                            build=[], program=[])
    if "--" in argv:
        k = argv.index("--")
        argv, ns.program = argv[:k], argv[k + 1:]
    i = 0
    while i < len(argv):
        a = argv[i]
        name, eq, value = a.partition("=")
        if name in _RUN_VALUE:
            if not eq:
                if i + 1 >= len(argv):
                    raise OptionError(f"{name} needs a value")
                value = argv[i + 1]
                i += 1
            key = _RUN_VALUE[name]
            try:
                if key in ("skip", "count", "threshold", "counter_bits"):
                    value = int(value)
                    if value < (-1 if key == "count" else 0):
                        raise ValueError
                elif key in ("sampling", "timeout"):
                    value = float(value)
            except ValueError:
                raise OptionError(f"{name} {value!r}: expected a number >= 0") from None
            if key == "check_ignore":
                try:
                    re.compile(value)
                except re.error as exc:
                    raise OptionError(f"--check-ignore {value!r}: not a regular expression "
                                      f"({exc})") from None
                ns.check_ignore.append(value)
            else:
                setattr(ns, key, value)
        elif a in _RUN_SWITCH:
            setattr(ns, _RUN_SWITCH[a], True)
        else:
            ns.build.append(a)
            if a in WITH_VALUE and a not in NO_VALUE_EXCEPT and i + 1 < len(argv):
                ns.build.append(argv[i + 1])
                i += 1
        i += 1
    return ns


RUN_USAGE = """usage: gmprof run [options] SOURCES... [nvcc flags] [-- program arguments]

Build a CUDA program with gmprof nvcc, run it, and print the report.

options:
  -k, --kernel-name NAME   profile launches of this kernel (a name, or regex:RE)
  -s, --launch-skip N      skip the first N launches that match
  -c, --launch-count N     profile N launches after those (default: all)
  -o, --output PATTERN     keep the raw report files (%p process id, %h host, %q{ENV})
  --mode M                 default, basic, or SA/NA/SM/TH joined by '-' (as gmprof profile)
  --profile shm|dm|both    --threshold N  --counter-bits 8|16|32  --enhanced  --sampling RATE
  --backend gpu|cpu        where the program runs (default: a GPU when there is one)
  --json                   print the report as JSON (gmprof.run/1, as profile --json)
  --check                  also build and run natively; compare standard output and exit status
  --check-ignore REGEX     lines of output that may differ (timings); may be repeated
  --keep                   keep the build directory (printed)
"""


def cmd_run(argv: list[str]) -> int:
    from .nvcc_args import parse

    ns = parse_run(argv)
    ns.command = ["run", *argv]
    if ns.help:
        print(RUN_USAGE)
        return 0
    cmd = parse(ns.build)
    if not cmd.sources and not cmd.host_sources:
        raise OptionError("gmprof run needs at least one source file (.cu)")
    if cmd.compile_only or cmd.output:
        raise OptionError("gmprof run builds and runs the program itself: leave out -c and the "
                          "nvcc -o (gmprof run's -o names the report files)")
    for idx in cmd.sources + cmd.host_sources:
        if not Path(ns.build[idx]).is_file():
            raise GmprofError(f"{ns.build[idx]}: no such file", kind="input")
    work = Path(tempfile.mkdtemp(prefix="gmprof-run-"))
    try:
        return _run_in(work, ns)
    finally:
        if ns.keep:
            print(f"gmprof: build directory kept: {work}", file=sys.stderr)
        else:
            import shutil

            shutil.rmtree(work, ignore_errors=True)


def _gmprof_build_args(ns) -> list[str]:
    out = ["--gmprof-mode", ns.mode, "--gmprof-profile", ns.profile,
           "--gmprof-counter-bits", str(ns.counter_bits)]
    if ns.backend:
        out += ["--gmprof-backend", ns.backend]
    if ns.threshold is not None:
        out += ["--gmprof-threshold", str(ns.threshold)]
    if ns.sampling is not None:
        out += ["--gmprof-sampling", str(ns.sampling)]
    if ns.enhanced:
        out.append("--gmprof-enhanced")
    return out


def _execute(exe: Path, ns, env: dict, capture: bool):
    try:
        return subprocess.run([str(exe), *ns.program], env=env, timeout=ns.timeout,
                              stdout=subprocess.PIPE if capture else None)
    except subprocess.TimeoutExpired:
        raise GmprofError(f"the program ran past --timeout {ns.timeout} s", kind="timeout") \
            from None
    except OSError as exc:
        raise GmprofError(f"cannot run the program: {exc.strerror}", kind="input") from None


def _run_in(work: Path, ns) -> int:
    from .nvcc import run as nvcc_run
    from .records import decode

    exe = work / "program"
    status = nvcc_run([*_gmprof_build_args(ns), *ns.build, "-o", str(exe)])
    if status != 0:
        raise GmprofError(f"the build failed (status {status}; the compiler's messages are "
                          "above)", kind="compile")
    pattern = ns.output or str(work / "report-%p.json")
    env = dict(os.environ, GMPROF_OUTPUT=pattern, GMPROF_KERNEL=ns.kernel,
               GMPROF_LAUNCH_SKIP=str(ns.skip), GMPROF_LAUNCH_COUNT=str(ns.count),
               GMPROF_QUIET="1")
    if ns.backend:
        env["GMPROF_BACKEND"] = ns.backend
    before = set(_report_files(pattern))
    # with --json standard output is the report's: the program's goes to standard error
    proc = _execute(exe, ns, env, capture=ns.check or ns.json)
    if proc.stdout is not None:
        stream = sys.stderr if ns.json else sys.stdout
        stream.flush()
        stream.buffer.write(proc.stdout)
        stream.flush()
    files = [f for f in _report_files(pattern) if f not in before or ns.output is None]
    failed = False
    if ns.check:
        failed = not _check_native(work, ns, proc)
    if not files:
        print("gmprof: the program wrote no report (it ended without exit: a crash, _exit, or "
              "a signal?)", file=sys.stderr)
        return proc.returncode or EXIT_CHECK_FAILED
    result = decode(sorted(files))
    print_program_report(result, ns.json, ns.command)
    if failed:
        return EXIT_CHECK_FAILED
    return proc.returncode


def _report_files(pattern: str) -> list[str]:
    import glob

    wild = re.sub(r"%(p|h|q\{[^}]*\})", "*", pattern).replace("%%", "%")
    return glob.glob(wild)


def _normalise(text: bytes, ignore) -> list[str]:
    lines = text.decode(errors="replace").splitlines()
    return [ln for ln in lines if not any(re.search(p, ln) for p in ignore)]


def _check_native(work: Path, ns, inst) -> bool:
    from .nvcc import run as nvcc_run

    exe = work / "program-native"
    status = nvcc_run([*_gmprof_build_args(ns), "--gmprof-native", *ns.build, "-o", str(exe)])
    if status != 0:
        raise GmprofError("the native build failed (the compiler's messages are above)",
                          kind="compile")
    env = dict(os.environ, GMPROF_QUIET="1", GMPROF_OUTPUT=str(work / "native-%p.json"))
    native = _execute(exe, ns, env, capture=True)
    same_out = _normalise(native.stdout, ns.check_ignore) == _normalise(inst.stdout,
                                                                         ns.check_ignore)
    same_status = native.returncode == inst.returncode
    if same_out and same_status:
        print("gmprof: check passed: the instrumented program printed the same output and "
              f"exited with the same status ({inst.returncode}) as the native one",
              file=sys.stderr)
        return True
    import difflib

    print("gmprof: error: check failed: the instrumented program differs from the native one",
          file=sys.stderr)
    if not same_status:
        print(f"  exit status: native {native.returncode}, instrumented {inst.returncode}",
              file=sys.stderr)
    if not same_out:
        diff = difflib.unified_diff(_normalise(native.stdout, ns.check_ignore),
                                    _normalise(inst.stdout, ns.check_ignore),
                                    "native", "instrumented", lineterm="", n=1)
        for k, line in enumerate(diff):
            if k > 40:
                print("  ...", file=sys.stderr)
                break
            print("  " + line, file=sys.stderr)
    return False


# -- the report -----------------------------------------------------------------------------

def program_document(result, command=None) -> dict:
    """A whole program's report as one gmprof.run/1 document (so `gmprof report FILE.json`
    re-renders it and `gmprof diff` compares it), with the program's own part under "program":
    the processes whose report files were merged, the breakdown per process, device and
    kernel, and notes about the files."""
    from gmprof.report.document import document

    doc = document(list(result.reports.values()), command=command)
    if doc["backend"] is None and result.processes:
        doc["backend"] = result.processes[0].get("backend")
    doc["program"] = {
        "processes": result.processes,
        "breakdown": [{"file": p.file, "pid": p.pid, "host": p.host, "device": p.device,
                       "kernel": p.kernel, "launches": p.launches, "accesses": p.accesses,
                       "instrumented_ms": p.ms} for p in result.parts],
        "notes": result.notes,
    }
    return doc


def render_program(doc: dict, console, source: bool = False) -> None:
    """The run's tables (as `gmprof profile` prints them), then the per-process breakdown."""
    from rich.table import Table

    from gmprof.report import terminal

    if not doc["kernels"]:
        console.print("no launch was profiled (check -k/-s/-c, and the build's warnings)")
    else:
        terminal.render(doc, console, source=source)
    prog = doc.get("program") or {}
    parts = prog.get("breakdown", [])
    if len(parts) > 1:
        table = Table(title="per process and device", show_edge=False)
        for col in ("process", "device", "kernel", "launches", "accesses"):
            table.add_column(col)
        for p in parts:
            table.add_row(f"{p['pid']}@{p['host']}", str(p["device"]), p["kernel"],
                          str(p["launches"]),
                          ", ".join(f"{k} {v:,}" for k, v in p["accesses"].items()))
        console.print(table)
    for note in prog.get("notes", []):
        console.print(f"note: {note}")


def print_program_report(result, as_json: bool, command=None) -> None:
    from gmprof.cli_commands import _console
    from gmprof.report.document import dumps

    doc = program_document(result, command=command)
    if as_json:
        sys.stdout.write(dumps(doc))
        return
    render_program(doc, _console())


def register(sub) -> None:
    p = sub.add_parser("nvcc", help="compile like nvcc, with gmprof's profiling built in "
                                    "(make NVCC=\"gmprof nvcc\")", add_help=False)
    p.add_argument("raw", nargs=argparse.REMAINDER,
                   help="nvcc's arguments, passed through, with gmprof's own (--gmprof-mode, "
                        "--gmprof-backend, --gmprof-kernel, ...: gmprof/program/nvcc.py) "
                        "anywhere among them")
    p.set_defaults(run=lambda a: _nvcc(a.raw))
    p = sub.add_parser("run", help="build a CUDA program, run it, print the report",
                       add_help=False)
    p.add_argument("raw", nargs=argparse.REMAINDER,
                   help="[options] SOURCES... [nvcc flags] [-- program arguments] "
                        "(gmprof run --help lists the options)")
    p.set_defaults(run=lambda a: cmd_run(a.raw))
