"""argparse with "did you mean": a close misspelling of an option, a subcommand or a choice
is named in the usage error (status 2), as git and Nsight Compute do.

Stage: command-line support. Takes the parser's own option strings and choices; returns
nothing new: argparse's message gets one more sentence, found with difflib.

    gmprof: error: unrecognized arguments: --ouput run.json (did you mean --output?)
    gmprof: error: argument command: invalid choice: 'profle' (choose from ...) (did you mean
    'profile'?)

Subparsers are of the same class (argparse makes them with type(parent)), and an unknown
option is reported by the top parser after the subcommand's parser has run: the innermost
parser that parsed is remembered so that its options are the candidates.
"""
from __future__ import annotations

import argparse
import difflib
import re

_CUTOFF = 0.75  # difflib's ratio: '--ouput' ~ '--output' (0.93), '--csv' !~ '--cs' (0.8 kept)


def suggest(word: str, candidates) -> str | None:
    """The closest candidate to a misspelt word, or None when none is close."""
    found = difflib.get_close_matches(word, sorted(set(candidates)), n=1, cutoff=_CUTOFF)
    return found[0] if found else None


class Parser(argparse.ArgumentParser):
    """ArgumentParser whose usage errors suggest a close option, subcommand or choice."""

    _innermost: "Parser | None" = None

    _argv: list = []  # the command line parse_args was given (for error_hint)

    def parse_known_args(self, args=None, namespace=None):
        Parser._innermost = self  # a subcommand's parser runs after its parent's call starts
        return super().parse_known_args(args, namespace)

    def parse_args(self, args=None, namespace=None):
        import sys

        Parser._innermost = None
        Parser._argv = list(sys.argv[1:] if args is None else args)
        return super().parse_args(args, namespace)

    def _options(self) -> list[str]:
        return [s for action in self._actions for s in action.option_strings
                if s.startswith("--") or len(s) == 2]

    def error(self, message: str):
        hint, note = self._hint(message), self.error_hint(message)
        if hint:
            message = f"{message} (did you mean {hint}?)"
        super().error(f"{message} ({note})" if note else message)

    def error_hint(self, message: str) -> str | None:
        """A word that an option taking an optional value (`--csv [FILE]`) took from the
        positional arguments, when they are then missing."""
        if not message.startswith("the following arguments are required"):
            return None
        argv = Parser._argv
        for i, word in enumerate(argv[:-1]):
            if word == "--csv" and not argv[i + 1].startswith("-"):
                return (f"--csv took {argv[i + 1]!r} as its file name: put --csv after the "
                        "positional arguments, or write --csv=FILE")
        return None

    def _hint(self, message: str) -> str | None:
        m = re.match(r"unrecognized arguments: (.*)", message)
        if m:
            parser = Parser._innermost or self
            for word in m.group(1).split():
                if word.startswith("-"):
                    name = word.split("=", 1)[0]
                    found = suggest(name, parser._options())
                    if found:
                        return found
            return None
        m = re.match(r"argument (.+?): invalid choice: '([^']*)' \(choose from (.*)\)$",
                     message)
        if m:
            choices = re.findall(r"'([^']*)'", m.group(3))
            found = suggest(m.group(2), choices)
            return f"'{found}'" if found else None
        return None


__all__ = ["Parser", "suggest"]
