"""Errors and warnings: the one located error type, and warnings as values.

A user's mistake (bad input, a syntax error in a kernel, wrong launch arguments) is a GmprofError:
rendered `file:line:col: error: message`, then the source line and a caret; the CLI prints it and
exits with status 2, never with a traceback. Warnings (a function left uninstrumented, an access
that could not be classified) are Diagnostic values returned to the caller, which decides whether
to print them. Internal errors stay ordinary exceptions and keep their traceback.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Location:
    """A point in a source file. line and col are 1-based; col counts characters."""

    file: str
    line: int
    col: int
    source_line: str | None = None  # the text of that line, for the caret display

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


def _render(kind: str, message: str, location: Location | None) -> str:
    if location is None:
        return f"gmprof: {kind}: {message}"
    text = f"{location}: {kind}: {message}"
    if location.source_line is not None:
        line = location.source_line.rstrip("\n").expandtabs(1)
        text += f"\n{line}\n{' ' * max(location.col - 1, 0)}^"
    return text


class GmprofError(Exception):
    """A user-facing error, located where possible."""

    def __init__(self, message: str, location: Location | None = None):
        super().__init__(message)
        self.message = message
        self.location = location

    def render(self) -> str:
        return _render("error", self.message, self.location)

    def __str__(self) -> str:
        return self.render()


@dataclass(frozen=True)
class Diagnostic:
    """A warning as a value. kind is a short machine-readable tag (tests assert on it)."""

    kind: str
    message: str
    location: Location | None = None

    def render(self) -> str:
        return _render("warning", self.message, self.location)

    def __str__(self) -> str:
        return self.render()
