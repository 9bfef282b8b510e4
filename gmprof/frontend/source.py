"""Source files: reading them (with plain errors for a user's mistakes) and mapping offsets.

Stage 0 of the frontend. Takes a path or a string; returns a SourceFile whose `text` is exactly
the file's contents (newlines untouched, so spans patch the original bytes back) and whose
`location(offset)` gives the Location used in every message.
"""
from __future__ import annotations

import re
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
        # for display: a byte that is not UTF-8 shows as U+FFFD (one character, so the caret
        # under a later column stays in place)
        return self.text[start:end].encode("utf-8", "surrogateescape").decode("utf-8", "replace")

    def location(self, offset: int) -> Location:
        line, col = self.line_col(offset)
        return Location(self.name, line, col, self.line_text(line))

    def error(self, message: str, offset: int) -> GmprofError:
        return GmprofError(message, self.location(offset), kind="syntax")

    def __repr__(self) -> str:
        return f"SourceFile({self.name!r}, {len(self.text)} chars)"

    def not_utf8(self) -> list[int]:
        """Offsets of the bytes that are not UTF-8 (read as lone surrogates)."""
        return [m.start() for m in _UNDECODED.finditer(self.text)]

    def not_utf8_error(self, offset: int) -> GmprofError:
        byte = ord(self.text[offset]) - 0xDC00
        return InputError(f"{self.path or self.name} is not UTF-8 text (byte 0x{byte:02x})",
                           self.location(offset))


_UNDECODED = re.compile("[\udc80-\udcff]")


def read_source(path: str | Path, *, display_name: str | None = None,
                included_from: Location | None = None) -> SourceFile:
    """Read a .cu/.cuh file as UTF-8. Missing or unreadable files are GmprofErrors, located at
    the #include that named them when there is one; bytes that are not UTF-8 are kept as lone
    surrogates for the loader to judge."""
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
    except UnicodeDecodeError:
        # Old code has Latin-1 or cp1252 in its comments (`heart\x92s`), which nvcc accepts.
        # Each byte that is not UTF-8 becomes one lone surrogate (U+DC80..U+DCFF), so offsets
        # stay one character per byte and writing back with "surrogateescape" restores the
        # bytes; the loader allows them only in comments (not_utf8, below).
        text = data.decode("utf-8", "surrogateescape")
    if text.startswith("\ufeff"):
        # Keep the byte-order mark in the text so offsets and round trips stay exact; the lexers
        # treat it as white space.
        pass
    return SourceFile(name, text, path)
