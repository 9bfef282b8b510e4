"""Text patches: the rewriter's edits, as insertions and replacements at exact source offsets.

A rewrite collects its patches first and applies them at emit time (passes/emit.py), so the
user's text, comments and macros survive between them. Nothing here knows what a patch says.
"""
from __future__ import annotations

from dataclasses import dataclass

PREFIX, SUFFIX, REPLACE = 0, 1, 2


@dataclass
class Patch:
    offset: int
    kind: int  # PREFIX, SUFFIX or REPLACE
    text: str
    span: int  # length of the construct it belongs to: orders patches at one offset
    end: int = 0  # for REPLACE: the end of the replaced text


def apply_patches(text: str, patches: list[Patch], base: int = 0, end: int | None = None) -> str:
    """Apply patches whose offsets fall in [base, end) to text[base:end]."""
    end = len(text) if end is None else end
    mine = [p for p in patches if base <= p.offset <= end and
            (p.kind != REPLACE or p.end <= end)]
    # At one offset: suffixes of inner constructs first, then prefixes of outer ones; a
    # replacement replaces the text from its offset.
    def key(p):
        if p.kind == SUFFIX:
            return (p.offset, 0, p.span)
        if p.kind == REPLACE:
            return (p.offset, 1, 0)
        return (p.offset, 2, -p.span)

    out = []
    pos = base
    for p in sorted(mine, key=key):
        if p.offset < pos:
            continue  # inside a replaced stretch
        out.append(text[pos:p.offset])
        out.append(p.text)
        pos = p.end if p.kind == REPLACE else p.offset
    out.append(text[pos:end])
    return "".join(out)


def merge(*patch_sets: dict) -> dict:
    """SourceFile -> [Patch] dicts joined, in order (apply_patches sorts a file's patches by
    offset and kind; patches that tie keep the order they are given in)."""
    out: dict = {}
    for patches in patch_sets:
        for source, items in patches.items():
            out.setdefault(source, []).extend(items)
    return out


__all__ = ["Patch", "PREFIX", "SUFFIX", "REPLACE", "apply_patches", "merge"]
