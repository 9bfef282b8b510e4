"""Command-line interface: argument parsing and output only; the library never exits.

    gmprof parse FILE.cu [-D NAME[=VAL]]... [-I DIR]... [--json]
    (analyze, instrument, profile, compare and bench are added by their stages)

A GmprofError (a user's mistake) is printed as `file:line:col: error: ...` with the source line
and a caret, never with a traceback. Exit statuses (docs/errors.md): 0 success, 1 a failed check
(outputs that differ, an out-of-range access, a kernel fault or timeout; `--error-exitcode`
changes it), 2 a usage error (a bad option, bad source, a kernel that does not compile, a file
that cannot be read or written), 3 an internal error (with its traceback), 130 and 143 when
stopped by SIGINT or SIGTERM. Output files go through gmprof.outputs: checked before any work,
written whole, all of a command's or none.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import threading
import traceback

from .errors import (EXIT_CHECK_FAILED, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_TERMINATED,
                     EXIT_USAGE, CheckFailed, GmprofError)


def _add_frontend_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="CUDA source file (.cu)")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VAL]",
                   help="define a macro, as for nvcc")
    p.add_argument("-I", dest="include_dirs", action="append", default=[], metavar="DIR",
                   help="add a directory to the search path for #include \"...\"")


def load_tu(args):
    from .frontend.program import load, parse_define_option

    defines = dict(parse_define_option(d) for d in args.defines)
    return load(args.file, defines=defines, include_dirs=args.include_dirs)


def write_output(path: str | os.PathLike, text: str | bytes, inputs=()) -> None:
    """Write one output file (see gmprof.outputs: checked, written whole or not at all, never
    over an input, `-` for standard output)."""
    from .outputs import write_outputs

    write_outputs({os.fspath(path): text}, inputs=inputs)


def _console(stderr: bool = False):
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=True)


def _print_warnings(warnings) -> None:
    for w in warnings:
        print(w.render(), file=sys.stderr)


def cmd_parse(args) -> int:
    from .passes.pipeline import analyze
    from .report.inventory import inventory, render_text

    tu = load_tu(args)
    program = analyze(tu, upto="accesses")
    data = inventory(tu, program)
    if args.json:
        print(json.dumps(data, indent=2))
    else:
        render_text(data, _console())
        _print_warnings(tu.warnings)
    return 0


def cmd_analyze(args) -> int:
    from .passes.pipeline import analyze
    from .report.analysis import analysis, render_text

    tu = load_tu(args)
    program = analyze(tu)
    if args.kernel is not None and args.kernel not in program.extra["kernels"]:
        from .runtime.session import missing_kernel

        raise missing_kernel(tu, args.kernel)
    data = analysis(program, args.kernel)
    if args.json:
        print(json.dumps(data, indent=2, default=str))
    else:
        render_text(data, _console(), verbose=args.verbose)
        _print_warnings(tu.warnings)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gmprof", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("parse", help="list device functions, memory objects and access sites")
    _add_frontend_options(p)
    p.add_argument("--json", action="store_true", help="print JSON (schema gmprof.parse/1)")
    p.set_defaults(run=cmd_parse)

    p = sub.add_parser("analyze", help="classify every access site (static, tid-invariant, "
                                       "warp-uniform, loop-invariant) with reasons")
    _add_frontend_options(p)
    p.add_argument("--kernel", help="only this kernel")
    p.add_argument("--json", action="store_true", help="print JSON (schema gmprof.analyze/1)")
    p.add_argument("-v", "--verbose", action="store_true", help="also say why classes fail")
    p.set_defaults(run=cmd_analyze)

    from . import cli_commands

    cli_commands.register(sub, _add_frontend_options)
    from .program import cli as program_cli

    program_cli.register(sub)
    return parser


class Terminated(BaseException):
    """SIGTERM arrived: unwind (temporaries are removed on the way) and exit with 143."""


@contextlib.contextmanager
def _sigterm_unwinds():
    """While a command runs, SIGTERM raises Terminated instead of killing the process at once,
    so that temporary files are removed and no output is left half-written (a background job
    stopped with `kill`). Only where SIGTERM had its default action, and on the main thread."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return

    def on_term(signum, frame):
        raise Terminated()

    signal.signal(signal.SIGTERM, on_term)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        from .program.cli import raw_command  # nvcc and run take their arguments raw

        args = raw_command(sys.argv[1:] if argv is None else list(argv)) or \
            parser.parse_args(argv)
    except SystemExit as e:  # argparse: --help (0), or a usage error it has printed (2)
        return e.code if isinstance(e.code, int) else EXIT_USAGE
    try:
        with _sigterm_unwinds():
            return args.run(args)
    except GmprofError as exc:
        print(exc.render(), file=sys.stderr)
        if isinstance(exc, CheckFailed):
            return getattr(args, "error_exitcode", EXIT_CHECK_FAILED)
        return exc.exit_status
    except KeyboardInterrupt:
        print("gmprof: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Terminated:
        print("gmprof: terminated", file=sys.stderr)
        return EXIT_TERMINATED
    except BrokenPipeError:
        # the reader went away (`gmprof parse x.cu | head`): not an error of ours
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")
        return 0
    except MemoryError:
        print("gmprof: error: out of memory (a problem size too large for this machine?)",
              file=sys.stderr)
        return EXIT_USAGE
    except Exception:
        traceback.print_exc()
        print("gmprof: internal error: this is a bug in gmprof, not in your input; please "
              "report it with the traceback above", file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
