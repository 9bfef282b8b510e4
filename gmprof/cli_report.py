"""Subcommands report and diff: saved runs re-rendered and compared (argument parsing and
output only).

    gmprof profile samples/em_v1 --json > v1.json
    gmprof report v1.json [--source] [--html v1.html] [--csv v1.csv]
    gmprof diff v1.json v2.json

Both read gmprof.run/1 documents (`--json` of profile); a file that is not one is a usage error
(status 2) located where it stops being one. Outputs go through gmprof.outputs like profile's.
"""
from __future__ import annotations


def cmd_report(args) -> int:
    from .cli_commands import _console
    from .outputs import Outputs
    from .report import csvout, terminal
    from .report.document import dumps, load

    outs = Outputs(inputs=[args.file] if args.file != "-" else [])
    files = {"json": outs.reserve("-" if args.json else None, "--json"),
             "csv": outs.reserve(args.csv, "--csv"),
             "html": outs.reserve(args.html, "--html")}
    doc = load(args.file)
    if not any(o is not None and o.kind == "stdout" for o in files.values()):
        terminal.render(doc, _console(), source=args.source)
    outs.put(files["json"], dumps(doc) if args.json else "")
    if files["csv"] is not None:
        outs.put(files["csv"], csvout.csv_text(doc))
    if files["html"] is not None:
        from .report.html import html_text

        outs.put(files["html"], html_text(doc))
    outs.commit()
    return 0


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
    p = sub.add_parser("report", help="print or convert a saved run (gmprof profile --json)")
    p.add_argument("file", help="a saved run: gmprof.run/1 JSON from `gmprof profile --json` "
                                "(- for standard input)")
    p.add_argument("--source", action="store_true",
                   help="also print each kernel's source lines with their counts")
    p.add_argument("--html", "--out", dest="html", metavar="FILE.html",
                   help="write the run as one self-contained HTML page (- for standard "
                        "output)")
    p.add_argument("--csv", metavar="FILE", help="write CSV (- for standard output)")
    p.add_argument("--json", action="store_true",
                   help="print the document again (checked) instead of tables")
    p.set_defaults(run=cmd_report)

    p = sub.add_parser("diff", help="compare two saved runs per kernel and array "
                                    "(e.g. a kernel's v1 and v2)")
    p.add_argument("a", help="the first saved run (gmprof.run/1 JSON)")
    p.add_argument("b", help="the second saved run")
    p.add_argument("--json", action="store_true",
                   help="print the comparison as JSON (schema gmprof.diff/1)")
    p.set_defaults(run=cmd_diff)
