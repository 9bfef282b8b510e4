"""Command-line interface: argument parsing and output only; the library never exits.

    gmprof parse FILE.cu [-D NAME[=VAL]]... [-I DIR]... [--json]
    (analyze, instrument, profile, compare and bench are added by their stages)

A GmprofError (a user's mistake) is printed as `file:line:col: error: ...` with the source line
and a caret, and the exit status is 2; output files are written whole or not at all.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from .errors import GmprofError


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


def write_output(path: str | os.PathLike, text: str | bytes) -> None:
    """Write a file atomically: a temporary file in the same directory, then a rename, so a
    failure never leaves a half-written output."""
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    if not directory.is_dir():
        raise GmprofError(f"cannot write {path}: no such directory {directory}")
    mode = "wb" if isinstance(text, bytes) else "w"
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=directory)
    try:
        with os.fdopen(fd, mode) as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


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
        raise GmprofError(f"no kernel named {args.kernel!r} in {args.file} (kernels: "
                          f"{', '.join(program.extra['kernels']) or 'none'})")
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
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except GmprofError as exc:
        print(exc.render(), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("gmprof: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
