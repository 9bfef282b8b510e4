"""Source files: reading them (with plain errors for a user's mistakes) and mapping offsets.

Stage 0 of the frontend. Takes a path or a string; returns a SourceFile whose `text` is exactly
the file's contents (newlines untouched, so spans patch the original bytes back) and whose
`location(offset)` gives the Location used in every message.
"""
from __future__ import annotations

from pathlib import Path

from ..errors import GmprofError, InputError, Location
from .cxx_ast import LineTable


class SourceFile:
    """One file's text, its display name, and offset -> line:col."""

    def __init__(self, name: str, text: str, path: Path | None = None):
        self.name = name
        self.text = text
        self.path = path
        self._lines: LineTable | None = None

    @property
    def lines(self) -> LineTable:
        if self._lines is None:
            self._lines = LineTable(self.text)
        return self._lines

    def line_col(self, offset: int) -> tuple[int, int]:
        return self.lines.line_col(offset)

    def line_text(self, line: int) -> str:
        starts = self.lines.starts
        start = starts[line - 1]
        end = starts[line] - 1 if line < len(starts) else len(self.text)
        return self.text[start:end]

    def location(self, offset: int) -> Location:
        line, col = self.line_col(offset)
        return Location(self.name, line, col, self.line_text(line))

    def error(self, message: str, offset: int) -> GmprofError:
        return GmprofError(message, self.location(offset), kind="syntax")

    def __repr__(self) -> str:
        return f"SourceFile({self.name!r}, {len(self.text)} chars)"


def read_source(path: str | Path, *, display_name: str | None = None,
                included_from: Location | None = None) -> SourceFile:
    """Read a .cu/.cuh file as UTF-8. Missing, unreadable or non-UTF-8 files are GmprofErrors,
    located at the #include that named them when there is one."""
    path = Path(path)
    name = display_name or str(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"no such file: {path}", included_from) from None
    except IsADirectoryError:
        raise InputError(f"{path} is a directory, not a source file", included_from) from None
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}", included_from) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputError(f"{path} is not UTF-8 text (byte 0x{data[exc.start]:02x})",
                          Location(name, line, col)) from None
    if text.startswith("\ufeff"):
        # Keep the byte-order mark in the text so offsets and round trips stay exact; the lexers
        # treat it as white space.
        pass
    return SourceFile(name, text, path)
