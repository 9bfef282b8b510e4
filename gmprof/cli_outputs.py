"""The report outputs of `gmprof profile` and `gmprof report`, with Nsight Compute's
conventions (argument parsing and output only).

    -o FILE / --output FILE    the run in the format FILE's extension names (.json, .html, .csv);
                               an existing file is refused (exit 2) unless -f/--force is given
    --csv                      print one table that pandas.read_csv loads, the page --page names:
                               details (arrays, the default), sites, source (lines), raw (every
                               counter's count)
    --csv FILE                 write the arrays, sites and lines tables to FILE (blank lines
                               between them), or FILE holds the --page table when one is named
    --print-summary MODE       per-kernel or per-gpu: one summary table instead of the full ones
                               (none: the full tables, the default)

Every output goes through gmprof.outputs: checked before the run, written whole, all or none.
"""
from __future__ import annotations

import os
from pathlib import Path

from .errors import OptionError, OutputError
from .report.csvout import PAGES
from .report.summary import MODES

CSV_SWITCH = "\0page"  # --csv without a file name (argparse's const): the page on stdout


def add_output_options(p, *, output: bool = True) -> None:
    """--csv [FILE], --page, --print-summary and (output=True) -o/--output; -f/--force."""
    p.add_argument("--csv", nargs="?", const=CSV_SWITCH, metavar="FILE",
                   help="print the --page table as CSV (one table, loadable by "
                        "pandas.read_csv); --csv FILE writes every table to FILE (- for "
                        "standard output). Put it after the positional arguments, or write "
                        "--csv=FILE")
    p.add_argument("--page", choices=PAGES,
                   help="the table --csv writes: details (arrays, default for --csv alone), "
                        "sites, source (per line), raw (every counter's count)")
    p.add_argument("--print-summary", choices=MODES, metavar="MODE",
                   help="per-kernel or per-gpu: print one summary table instead of the full "
                        "tables (none: the full tables, the default)")
    if output:
        p.add_argument("-o", "--output", metavar="FILE",
                       help="write the run to FILE, in the format its extension names: .json, "
                            ".html, .csv (refused if FILE exists, unless -f)")
    p.add_argument("-f", "--force", action="store_true",
                   help="let -o overwrite an existing file")


def reserve_reports(args, inputs, html_option: str = "--out"):
    """The report outputs (--json on standard output, --csv, the HTML page, -o), checked before
    the run. Returns (Outputs, {"json"|"csv"|"html": reserved output or None}); the CSV page
    chosen is left on args.csv_page (None: every table)."""
    from .outputs import Outputs

    outs = Outputs(inputs=inputs)
    csv, page = getattr(args, "csv", None), getattr(args, "page", None)
    if csv == CSV_SWITCH:
        csv, page = "-", page or "details"
    html = getattr(args, "html", None) if html_option == "--html" else getattr(args, "out", None)
    wanted = {"json": ("-" if getattr(args, "json", False) else None, "--json"),
              "csv": (csv, "--csv"), "html": (html, html_option)}
    output = getattr(args, "output", None)
    if output is not None:
        kind = {".json": "json", ".html": "html", ".htm": "html", ".csv": "csv"}.get(
            Path(output).suffix.lower())
        if kind is None:
            raise OptionError(f"-o {output}: name a .json, .html or .csv file (the extension "
                              "chooses the format)")
        if wanted[kind][0] is not None:
            raise OptionError(f"-o {output} and {wanted[kind][1]} both ask for the "
                              f"{'HTML' if kind == 'html' else kind.upper()} output")
        if os.path.isfile(output) and not getattr(args, "force", False):
            raise OutputError(f"-o {output}: the file exists; give -f (--force) to overwrite "
                              "it")
        wanted[kind] = (output, "-o")
    if page is not None and wanted["csv"][0] is None:
        raise OptionError(f"--page {page}: choose the table --csv writes; give --csv too")
    args.csv_page = page
    files = {kind: outs.reserve(path, option) for kind, (path, option) in wanted.items()}
    return outs, files


def document_on_stdout(files) -> bool:
    """Whether standard output carries a document (--json, or `-` for --csv or the HTML): the
    kernels' printf output then goes to standard error, and no table is printed."""
    return any(o is not None and o.kind == "stdout" for o in files.values())


def put_documents(doc: dict, args, outs, files, console, render, reports=None) -> None:
    """The tables (render(doc, console), or the --print-summary table) unless standard output
    carries a document; the document's JSON, CSV and HTML into the reserved outputs."""
    from .report import csvout
    from .report.document import dumps

    if not document_on_stdout(files):
        mode = getattr(args, "print_summary", None)
        if mode in (None, "none"):
            render(doc, console)
        else:
            from .report.summary import render as summary

            summary(doc, console, mode)
    if files.get("json") is not None:
        outs.put(files["json"], dumps(doc))
    if files.get("csv") is not None:
        page = getattr(args, "csv_page", None)
        outs.put(files["csv"], csvout.page_text(doc, page) if page else csvout.csv_text(doc))
    if files.get("html") is not None:
        from .report.html import html_text

        # with the run's Reports the page draws every element (saved JSON packs large arrays)
        outs.put(files["html"], html_text(doc, reports) if reports else html_text(doc))


__all__ = ["add_output_options", "reserve_reports", "document_on_stdout", "put_documents",
           "CSV_SWITCH"]
