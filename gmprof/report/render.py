"""Render Reports: text for a terminal, one JSON document, CSV and one HTML page per run.

Stage: report. Takes a Report, a list of them (one per kernel of a run) or an already built
run document (gmprof.report.document); returns text (the CLI writes it through
gmprof.outputs). Every renderer reads the document, so a saved JSON re-renders the same
(`gmprof report run.json`). The JSON schema is documented in docs/report.md.

    json_text([report_a, report_b])           # one gmprof.run/2 document
    render_text(report, Console(), source=True)
"""
from __future__ import annotations

from . import csvout, terminal
from .document import SCHEMA, document, dumps, kernel_entry
from .model import Report

__all__ = ["SCHEMA", "as_document", "to_json", "json_text", "csv_text", "html_text",
           "render_text"]


def as_document(reports, **kw) -> dict:
    """A run document from a Report, a list of Reports, or a document (returned as it is)."""
    if isinstance(reports, dict):
        return reports
    if isinstance(reports, Report):
        reports = [reports]
    return document(reports, **kw)


def to_json(report: Report, include_counts: bool = False) -> dict:
    """One kernel's part of a run document (schema gmprof.report/2)."""
    return kernel_entry(report, include_counts)


def json_text(reports, include_counts: bool | None = None, **kw) -> str:
    return dumps(as_document(reports, include_counts=include_counts, **kw))


def csv_text(reports) -> str:
    return csvout.csv_text(as_document(reports))


def html_text(reports) -> str:
    from .html import html_text as page

    if isinstance(reports, dict):
        return page(reports)
    reports = [reports] if isinstance(reports, Report) else list(reports)
    return page(as_document(reports), reports)  # the Reports' counts: every element drawn


def render_text(reports, console, source: bool = False) -> None:
    terminal.render(as_document(reports), console, source=source)
