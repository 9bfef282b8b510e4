"""Tables for the terminal that never cut a number or a location.

Stage: report (terminal rendering). Takes a title, columns and rows of plain strings; prints a
rich table sized to the console (80 columns when piped) in which numbers keep their full width,
long text (paths, expressions, code) folds onto more lines, columns that hold nothing are left
out, and columns with one value for every row move into the title. When even the narrowest
such table is wider than the console, each row is printed as a block of `name value` pairs
instead: rich would otherwise crop cells to `2,…`.

    print_table(console, "arrays", [Col("array", FOLD), Col("accesses", NUM)], rows)
"""
from __future__ import annotations

from dataclasses import dataclass

NUM = "num"      # a number: never split, right-aligned
WORD = "word"    # short words (read, write, exact): wrap between words only
FOLD = "fold"    # a location, an expression, code: folded wherever it must

GAP = 3  # a SIMPLE_HEAD table without edges: padding 1 + divider 1 + padding 1 between columns
FOLD_MIN = 12


@dataclass
class Col:
    header: str
    kind: str = WORD
    hoist: bool = False  # one value for every row: say it in the title instead
    drop_if: tuple = ()  # values that carry nothing ("0", ""): a column of only these is left out
    hoist_as: str = ""  # how the hoisted value reads in the title ("{}" is the value)
    keep_spaces: bool = False  # code: leading spaces are indentation


def _longest_word(text: str) -> int:
    return max((len(w) for w in text.split()), default=0)


def _min_width(col: Col, cells: list[str]) -> int:
    head = _longest_word(col.header)
    if col.kind == NUM:
        return max([head] + [len(c) for c in cells])
    if col.kind == WORD:
        return max([head] + [_longest_word(c) for c in cells])
    natural = max([len(c) for c in cells] + [head, 1])
    return max(head, min(FOLD_MIN, natural))


def _natural_width(col: Col, cells: list[str]) -> int:
    return max([len(c) for c in cells] + [len(col.header), 1])


def prune(cols: list[Col], rows: list[list[str]], title: str) -> tuple:
    """Leave out columns that carry nothing; move one-valued columns into the title."""
    keep, notes = [], []
    for i, col in enumerate(cols):
        values = [r[i] for r in rows]
        if col.drop_if and rows and all(v in col.drop_if for v in values):
            continue
        if col.hoist and rows and len(set(values)) == 1:
            notes.append((col.hoist_as or f"{col.header} {{}}").format(values[0]))
            continue
        keep.append(i)
    if notes:
        title = f"{title} ({'; '.join(notes)})" if title else "; ".join(notes)
    return [cols[i] for i in keep], [[r[i] for i in keep] for r in rows], title


def widths(cols: list[Col], rows: list[list[str]], width: int,
           order: tuple = (WORD, FOLD)) -> list[int] | None:
    """Column widths that fit `width`, or None when the narrowest layout does not."""
    cells = [[r[i] for r in rows] for i in range(len(cols))]
    mins = [_min_width(c, cs) for c, cs in zip(cols, cells)]
    nats = [max(m, _natural_width(c, cs)) for c, cs, m in zip(cols, cells, mins)]
    room = width - GAP * (len(cols) - 1)
    if sum(mins) > room:
        return None
    out = list(nats)
    excess = sum(out) - room
    # by default words wrap more readably than a folded line of code: shrink WORD columns to
    # their longest word first, then FOLD columns, the one with the most slack first
    for kinds in ((k,) for k in order):
        while excess > 0:
            slack = [(out[i] - mins[i], i) for i in range(len(cols))
                     if cols[i].kind in kinds and out[i] > mins[i]]
            if not slack:
                break
            best = max(slack)[1]
            step = max(1, min(excess, (out[best] - mins[best]) // 2 or 1))
            out[best] -= step
            excess -= step
    if excess > 0:
        return None
    return out


def print_table(console, title: str, cols: list[Col], rows: list[list[str]],
                caption: str = "", split: str | None = None, split_title: str = "",
                carry: tuple = (), order: tuple = (WORD, FOLD)) -> None:
    """split: the header of the column where a table too wide for the console is cut in two
    (the first column repeated in the second) before it falls back to records. carry: headers
    of first-part columns repeated in the second part too (the counts' label). order: which
    kind of column gives up width first."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    heads = [c.header for c in cols]
    if split in heads and heads.index(split) > 1:
        full = prune(cols, rows, title)
        if full[0] and widths(full[0], full[1], console.width) is None:
            cut = heads.index(split)
            first = prune(cols[:cut], [r[:cut] for r in rows], title)
            if first[0] and widths(first[0], first[1], console.width) is not None:
                # each part says its own hoisted values (the counts' label with the counts)
                keep = [0] + [i for i in range(1, cut) if heads[i] in carry] + \
                    list(range(cut, len(cols)))
                print_table(console, title, cols[:cut], [r[:cut] for r in rows])
                print_table(console, split_title, [cols[i] for i in keep],
                            [[r[i] for i in keep] for r in rows], caption=caption)
                return
    cols, rows, title = prune(cols, rows, title)
    if not cols:
        if title:
            console.print(Text(title, style="bold", overflow="fold"), soft_wrap=False)
        return
    w = widths(cols, rows, console.width, order)
    if w is None:
        print_records(console, title, cols, rows, caption)
        return
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, title=None,
                  caption=None)
    for col, cw in zip(cols, w):
        table.add_column(Text(col.header, overflow="fold"), width=cw,
                         justify="right" if col.kind == NUM else "left",
                         overflow="fold")
    for row in rows:
        table.add_row(*(Text(cell, overflow="fold") for cell in row))
    if title:
        console.print(Text(title, style="bold", overflow="fold"), soft_wrap=False)
    console.print(table, soft_wrap=False)
    if caption:
        console.print(Text(caption, overflow="fold"), soft_wrap=False)


def print_records(console, title: str, cols: list[Col], rows: list[list[str]],
                  caption: str = "") -> None:
    """Each row as its first cell, then `header value` pairs packed into lines."""
    from rich.text import Text

    if title:
        console.print(Text(title, style="bold", overflow="fold"), soft_wrap=False)
    width = max(console.width, 20)
    for row in rows:
        console.print(Text(row[0], style="bold", overflow="fold"), soft_wrap=False)
        line = ""
        for col, cell in zip(cols[1:], row[1:]):
            if cell == "":
                continue
            item = f"{col.header} {cell}"
            if line and len(line) + 2 + len(item) > width - 2:
                console.print(Text("  " + line, overflow="fold"), soft_wrap=False)
                line = item
            else:
                line = f"{line}  {item}" if line else item
        if line:
            console.print(Text("  " + line, overflow="fold"), soft_wrap=False)
    if caption:
        console.print(Text(caption, overflow="fold"), soft_wrap=False)
