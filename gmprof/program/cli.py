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

class _Parser(argparse.ArgumentParser):
    """argparse for gmprof run's own options, its mistakes raised as OptionError (exit 2)."""

    def error(self, message):
        raise OptionError(message)


def run_parser() -> argparse.ArgumentParser:
    from gmprof import options as O

    from . import run_options as R

    # the options the program reads as GMPROF_* variables take the values it accepts
    # (run_options: the host runtime's rules)
    p = _Parser(prog="gmprof run", add_help=False, allow_abbrev=False)
    p.add_argument("-h", "--help", action="store_true")
    p.add_argument("-k", "--kernel-name", dest="kernel", default="",
                   type=O.cli_type(R.kernel, "--kernel-name"))
    p.add_argument("-s", "--launch-skip", dest="skip", default=0,
                   type=O.cli_type(R.integer, "--launch-skip"))
    p.add_argument("-c", "--launch-count", dest="count", default=-1,
                   type=O.cli_type(R.count, "--launch-count"))
    p.add_argument("-o", "--output", default=None, type=O.cli_type(R.output, "--output"))
    p.add_argument("--mode", default="default")
    p.add_argument("--profile", default="both", choices=("shm", "dm", "both"))
    p.add_argument("--threshold", type=O.cli_type(O.count, "--threshold"))
    p.add_argument("--counter-bits", type=int, default=32, choices=(8, 16, 32))
    p.add_argument("--sampling", type=O.cli_type(O.rate, "--sampling"))
    p.add_argument("--enhanced", action="store_true")
    p.add_argument("--access-stats", action="store_true")
    p.add_argument("--access-stats-exact", action="store_true")
    p.add_argument("--access-stats-blocks", type=O.cli_type(R.integer, "--access-stats-blocks"))
    p.add_argument("--backend", choices=("gpu", "cpu"))
    p.add_argument("--json", action="store_true")
    p.add_argument("--csv", metavar="FILE")
    p.add_argument("--html", "--out", dest="html", metavar="FILE.html")
    p.add_argument("--source", action="store_true")
    p.add_argument("--check", action="store_true")
    p.add_argument("--check-ignore", action="append", default=[], type=_regex)
    p.add_argument("--timeout", type=O.cli_type(O.seconds, "--timeout"))
    p.add_argument("--error-exitcode", type=O.cli_type(O.count, "--error-exitcode", maximum=255),
                   default=EXIT_CHECK_FAILED)
    p.add_argument("--keep", action="store_true")
    return p


def _regex(text: str) -> str:
    try:
        re.compile(text)
    except re.error as exc:
        raise argparse.ArgumentTypeError(f"{text!r}: not a regular expression ({exc})") \
            from None
    return text


def parse_run(argv: list[str]) -> argparse.Namespace:
    """gmprof run's options (argparse), the nvcc arguments (read with nvcc's table: an option
    that neither knows is refused), and the program's arguments (after `--`)."""
    from .nvcc_args import forwarding, read_option

    program = []
    if "--" in argv:
        k = argv.index("--")
        argv, program = argv[:k], argv[k + 1:]
    parser = run_parser()
    ours = {s: a for a in parser._actions for s in a.option_strings}
    mine, build = [], []
    i = 0
    while i < len(argv):
        a = argv[i]
        head, eq, _ = a.partition("=")
        action = ours.get(a) or (ours.get(head) if eq and head.startswith("--") else None)
        if action is not None:
            takes = action.nargs != 0 and not eq
            mine += argv[i:i + 1 + takes]
            i += 1 + takes
        elif a.startswith("-") and a != "-":
            opt, i = read_option(argv, i, extra=list(ours), forward=forwarding(argv))
            build += opt.written
        else:
            build.append(a)
            i += 1
    ns = parser.parse_args(mine)
    ns.build, ns.program = build, program
    return ns


RUN_USAGE = """usage: gmprof run [options] SOURCES... [nvcc options] [-- program arguments]

Build a CUDA program with gmprof nvcc, run it, and print the report.

options:
  -k, --kernel-name NAME   profile launches of this kernel (a name, or regex:RE)
  -s, --launch-skip N      skip the first N launches that match
  -c, --launch-count N     profile N launches after those (default: all)
  -o, --output PATTERN     keep the raw report files (%p process id, %h host, %q{ENV}),
                           each with its counts file beside it (.json -> .counts)
  --mode M                 default, basic, or SA/NA/SM/TH joined by '-' (as gmprof profile)
  --profile shm|dm|both    --threshold N  --counter-bits 8|16|32  --enhanced  --sampling RATE
  --access-stats           per-warp requests of every site (bank conflicts, coalescing); a
                           large grid measures 1 block in 2^s (approximate, labelled)
  --access-stats-exact     ... measured in every block (GMPROF_ACCESS_STATS_BLOCKS=0)
  --access-stats-blocks N  the fewest blocks measured (default 2048, 0: every block; at
                           run time: GMPROF_ACCESS_STATS_BLOCKS=N)
  --backend gpu|cpu        where the program runs (default: a GPU when there is one)
  --json                   print the report as JSON (gmprof.run/2, as profile --json)
  --csv FILE, --html FILE  also write the report as CSV or HTML (- for standard output)
  --source                 also print each kernel's source lines with their counts
  --check                  also build and run natively; compare standard output and exit status
  --check-ignore REGEX     lines of output that may differ (timings); may be repeated
  --timeout SECONDS        stop the program if it runs longer
  --error-exitcode N       exit status when a check fails (an access out of range, a differing
                           output or status under --check); default 1
  --keep                   keep the build directory (printed)

Any other option is nvcc's (nvcc --help); one that neither knows is refused.
"""


def cmd_run(argv: list[str]) -> int:
    from gmprof.outputs import Outputs

    from .nvcc_args import parse

    ns = parse_run(argv)
    ns.command = ["run", *argv]
    if ns.help:
        print(RUN_USAGE, end="")
        return 0
    from .run_options import check_environ

    # the variables the program reads and gmprof run passes on: refused now, not after the build
    check_environ(os.environ, skip=_sets(ns))
    from .build import choose_backend

    if choose_backend(ns.backend) == "cpu":  # and the CPU backend's (gmprof_cpu_env.h)
        from gmprof.runtime import cpu_env

        cpu_env.check_environ(os.environ)
    cmd = parse(ns.build)
    if not cmd.sources and not cmd.host_sources:
        raise OptionError("gmprof run needs at least one source file (.cu)")
    if cmd.compile_only or cmd.output:
        raise OptionError("gmprof run builds and runs the program itself: leave out -c and the "
                          "nvcc -o (gmprof run's -o names the report files)")
    for idx in cmd.sources + cmd.host_sources:
        if not Path(ns.build[idx]).is_file():
            raise GmprofError(f"{ns.build[idx]}: no such file", kind="input")
    ns.outs = Outputs(inputs=[ns.build[i] for i in cmd.inputs])
    ns.files = {"json": ns.outs.reserve("-" if ns.json else None, "--json"),
                "csv": ns.outs.reserve(ns.csv, "--csv"),
                "html": ns.outs.reserve(ns.html, "--html")}
    work = Path(tempfile.mkdtemp(prefix="gmprof-run-"))
    try:
        return _run_in(work, ns)
    finally:
        if ns.keep:
            print(f"gmprof: build directory kept: {work}", file=sys.stderr)
        else:
            import shutil

            shutil.rmtree(work, ignore_errors=True)


def _sets(ns) -> set[str]:
    """The variables gmprof run sets for the program itself (_run_in)."""
    out = {"GMPROF_OUTPUT", "GMPROF_KERNEL", "GMPROF_LAUNCH_SKIP", "GMPROF_LAUNCH_COUNT",
           "GMPROF_QUIET"}
    if ns.access_stats_exact or ns.access_stats_blocks is not None:
        out.add("GMPROF_ACCESS_STATS_BLOCKS")
    return out


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
    if ns.access_stats or ns.access_stats_exact:
        out.append("--gmprof-access-stats")
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
    if ns.access_stats_exact or ns.access_stats_blocks is not None:
        # (read by the host runtime at run time: runtime_cu/host/gmprof_host_options.h)
        env["GMPROF_ACCESS_STATS_BLOCKS"] = "0" if ns.access_stats_exact else \
            str(ns.access_stats_blocks)
    before = set(_report_files(pattern))
    # with a document on standard output, the program's output goes to standard error
    to_stdout = any(o is not None and o.kind == "stdout" for o in ns.files.values())
    proc = _execute(exe, ns, env, capture=ns.check or to_stdout)
    if proc.stdout is not None:
        stream = sys.stderr if to_stdout else sys.stdout
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
        return proc.returncode or ns.error_exitcode
    doc = program_document(decode(sorted(files)), command=ns.command)
    if not to_stdout:
        from gmprof.cli_commands import _console

        render_program(doc, _console(), source=ns.source)
    _write_documents(ns.outs, ns.files, doc)
    checks = failed_checks(doc, ns.error_exitcode)
    if failed or checks:
        return ns.error_exitcode
    return proc.returncode


def _write_documents(outs, files, doc: dict) -> None:
    """--json, --csv and --html, through gmprof.outputs (written whole, all or none)."""
    from gmprof.report import csvout
    from gmprof.report.document import dumps

    outs.put(files["json"], dumps(doc) if files["json"] is not None else "")
    if files["csv"] is not None:
        outs.put(files["csv"], csvout.csv_text(doc))
    if files["html"] is not None:
        from gmprof.report.html import html_text

        outs.put(files["html"], html_text(doc))
    outs.commit()


def _report_files(pattern: str) -> list[str]:
    import glob

    from .countsfile import without_counts_files

    wild = re.sub(r"%(p|h|q\{[^}]*\})", "*", pattern).replace("%%", "%")
    return without_counts_files(glob.glob(wild))


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
        print("gmprof: output check passed: the instrumented program printed the same output "
              f"and exited with the same status ({inst.returncode}) as the native one",
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
    """A whole program's report as one gmprof.run/2 document (so `gmprof report FILE.json`
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
        "failed_launches": result.failed_launches,
    }
    return doc


def failed_checks(doc: dict, error_exitcode: int = EXIT_CHECK_FAILED) -> int:
    """Print a whole program's failed checks (as `gmprof profile` prints them, after the
    report); the exit status: error_exitcode when there is one, else 0."""
    failed = doc.get("failed_checks") or []
    for text in failed:
        print(text, file=sys.stderr)
    return error_exitcode if failed else 0


def render_program(doc: dict, console, source: bool = False) -> None:
    """The run's tables (as `gmprof profile` prints them), then the per-process breakdown."""
    from rich.table import Table

    from gmprof.report import terminal

    failed = [f for f in (doc.get("program") or {}).get("failed_launches", []) if "error" in f]
    if not doc["kernels"] and failed:
        console.print(f"no launch was profiled: {len(failed)} selected launch(es) failed "
                      "(the notes below say which)")
    elif not doc["kernels"]:
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
