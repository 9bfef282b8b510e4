"""Subcommands report and diff: saved runs re-rendered and compared, whole programs' report
files decoded and merged (argument parsing and output only).

    gmprof profile samples/em_v1 --json > v1.json
    gmprof report v1.json [--source] [--html v1.html] [--csv v1.csv] [-o v1.html -f]
    gmprof report report-*.json [--json]        (files written by programs built with gmprof nvcc)
    gmprof diff v1.json v2.json

Both read gmprof.run/2 documents (`--json` of profile); `report` also reads the raw report files
(gmprof.raw/1) that whole programs write at exit, one per process: several of them are decoded
and merged into one run document (totals per kernel, and a per-process and per-device
breakdown under "program"). A file that is neither is a usage error (status 2) located where it
stops being one. Outputs go through gmprof.outputs like profile's.
"""
from __future__ import annotations

import os
import sys

from . import options as O
from .errors import EXIT_CHECK_FAILED


def cmd_report(args) -> int:
    from .cli_commands import _console
    from .cli_outputs import put_documents, reserve_reports
    from .report import terminal
    from .report.document import load

    outs, files = reserve_reports(args, [f for f in args.files if f != "-"], "--html")
    doc = _load_documents(args.files, load, args.argv)

    def render(d, console):
        if "program" in d:
            from .program.cli import render_program

            render_program(d, console, source=args.source)
        else:
            terminal.render(d, console, source=args.source)

    put_documents(doc, args, outs, files, _console(), render)
    outs.commit()
    if "program" in doc:  # whole programs' failed checks (program/cli.py), as profile's
        from .program.cli import failed_checks

        return failed_checks(doc, args.error_exitcode)
    # a saved run's failed checks (outputs that differed, accesses out of range, a failed
    # self-check) set the status as they did when it ran: CI can assert on a saved run
    for text in doc.get("failed_checks") or []:
        print(text, file=sys.stderr)
    return args.error_exitcode if doc.get("failed_checks") else 0


def _load_documents(paths: list, load, argv) -> dict:
    """One run document from the files: a saved run as it is; whole programs' raw report
    files decoded and merged into one."""
    from .errors import InputError
    from .program.countsfile import counts_path
    from .program.records import RAW_SCHEMA

    raw = [p for p in paths if p != "-" and _schema_of(p) == RAW_SCHEMA]
    # a report file's counts file, named too (`gmprof report gmprof-report-*` matches both), is
    # read through its report file
    partners = {os.path.normpath(counts_path(p)) for p in raw}
    saved = [p for p in paths if p not in raw and (p == "-" or os.path.normpath(p) not in partners)]
    if raw and not saved:
        from .program.cli import program_document
        from .program.records import decode

        return program_document(decode(raw), command=argv)
    if len(saved) == 1 and not raw:
        return load(saved[0])
    for p in saved:
        load(p)  # a file that is neither kind is reported as such first
    raise InputError(f"{saved[-1] if raw else saved[1]}: `gmprof report` reads one saved run, "
                     "or any number of report files written by programs built with gmprof "
                     "nvcc (merged); compare two saved runs with `gmprof diff A.json B.json`")


def _schema_of(path: str):
    from .report.fromdoc import schema_of

    return schema_of(path)


def cmd_diff(args) -> int:
    import json

    from .cli_commands import _console
    from .report.diff import diff, render
    from .report.document import load

    a, b = load(args.a), load(args.b)
    d = diff(a, b, args.a, args.b)
    if args.json:
        print(json.dumps(d, indent=2))
    else:
        render(d, _console())
    return 0


def register(sub) -> None:
    from .cli_outputs import add_output_options

    p = sub.add_parser("report", help="print or convert a saved run (gmprof profile --json), "
                                      "or merge whole programs' report files")
    p.add_argument("files", nargs="+", metavar="FILE",
                   help="a saved run: gmprof.run/2 JSON from `gmprof profile --json` (- for "
                        "standard input); or report files written by programs built with "
                        "gmprof nvcc (report-%%p.json), decoded and merged")
    p.add_argument("--source", action="store_true",
                   help="also print each kernel's source lines with their counts")
    p.add_argument("--html", "--out", dest="html", metavar="FILE.html",
                   help="write the run as one self-contained HTML page (- for standard "
                        "output)")
    add_output_options(p)
    p.add_argument("--json", action="store_true",
                   help="print the document again (checked) instead of tables")
    p.add_argument("--error-exitcode", type=O.cli_type(O.count, "--error-exitcode",
                                                       maximum=255),
                   default=EXIT_CHECK_FAILED, metavar="N",
                   help="exit status when the run holds a failed check (outputs that differ, "
                        "an access out of range, a failed self-check); 0 reports and exits 0 "
                        "(default 1)")
    p.set_defaults(run=cmd_report)

    p = sub.add_parser("diff", help="compare two saved runs per kernel and array "
                                    "(e.g. a kernel's v1 and v2)")
    p.add_argument("a", help="the first saved run (gmprof.run/2 JSON)")
    p.add_argument("b", help="the second saved run")
    p.add_argument("--json", action="store_true",
                   help="print the comparison as JSON (schema gmprof.diff/1)")
    p.set_defaults(run=cmd_diff)
