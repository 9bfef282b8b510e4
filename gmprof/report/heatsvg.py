"""A heat map as inline SVG: the grid of gmprof.report.heatgrid drawn in the declared shape.

Stage: report (HTML). Takes a heat grid and the array's name; returns an <svg> element as text
(no external references, no script: a <title> on every cell is the hover text, with the
element's index and count). Cells are square, so a 16 x 17 padded tile looks like one; a 1-D
array is a strip; axis ticks sit on integer indices; a run of equal cells in a row is one
rectangle. Counts of 0 (never accessed) are grey; the rest run through viridis from the
array's smallest to its largest count.
"""
from __future__ import annotations

import html
import math

# matplotlib's viridis at 0, 0.1, ..., 1
VIRIDIS = ["#440154", "#482475", "#414487", "#355f8d", "#2a788e", "#21918c", "#22a884",
           "#44bf70", "#7ad151", "#bddf26", "#fde725"]
ZERO = "#d9d9d9"
PLOT_W, PLOT_H, MAX_CELL = 640.0, 400.0, 24.0
MIN_SIDE = 12.0  # a thin array still gets a visible band
LEFT, TOP, BOTTOM, RIGHT = 44.0, 6.0, 22.0, 10.0


def _hex(c: str) -> tuple:
    return tuple(int(c[i:i + 2], 16) for i in (1, 3, 5))


def colour(value, lo, hi) -> str:
    if value is None:
        return "#ffffff"
    if value == 0:
        return ZERO
    t = 0.0 if hi <= lo else min(1.0, max(0.0, (value - lo) / (hi - lo)))
    x = t * (len(VIRIDIS) - 1)
    i = min(int(x), len(VIRIDIS) - 2)
    f = x - i
    a, b = _hex(VIRIDIS[i]), _hex(VIRIDIS[i + 1])
    return "#" + "".join(f"{round(p + (q - p) * f):02x}" for p, q in zip(a, b))


def ticks(n: int, length_px: float) -> list[int]:
    """Integer indices 0, step, 2 step, ... with step 1, 2 or 5 x 10^k, about one per 60 px."""
    want = max(1, int(length_px // 60))
    step = 1
    for k in range(0, 12):
        for m in (1, 2, 5):
            step = m * 10 ** k
            if math.ceil(n / step) <= want + 1:
                return list(range(0, n, step))
    return [0]


def fmt(v, threshold=None) -> str:
    if v is None:
        return "-"
    if threshold is not None and v >= threshold:
        return f">={threshold}"
    if isinstance(v, float) and not v.is_integer():
        return f"{v:,.2f}"
    return f"{int(v):,}"


def _index(name, declared, row, cols: tuple, flat_rows: bool) -> str:
    """name[i][j0..j1] for a row and a column range, the leading dimensions unflattened."""
    j0, j1 = cols
    cj = f"{j0}" if j0 == j1 else f"{j0}..{j1}"
    if row is None:
        return f"{name}[{cj}]"
    r0, r1 = row
    if flat_rows and r0 == r1 and len(declared) > 2:
        lead, rest = [], r0
        for d in reversed(declared[:-1]):
            lead.append(rest % d)
            rest //= d
        return name + "".join(f"[{i}]" for i in reversed(lead)) + f"[{cj}]"
    ri = f"{r0}" if r0 == r1 else f"{r0}..{r1}"
    return f"{name}[{ri}][{cj}]"


def svg(hg: dict, name: str, uid: str) -> str:
    return "".join(svg_parts(hg, name, uid))


def svg_parts(hg: dict, name: str, uid: str) -> tuple[str, str, str]:
    """(the map, its colour legend, its notes as <p> elements): the HTML page shows the
    legend beside its own (script-drawn) map too."""
    e = html.escape
    shape, block, thr = hg["shape"], hg["block"], hg.get("threshold")
    lo, hi = hg["lo"], hg["hi"]
    lo_pos = lo if lo > 0 else 1  # zero is grey; the colour scale starts at the least non-zero
    one_d = len(shape) == 1
    rows, cols = (1, shape[0]) if one_d else (shape[0], shape[1])
    s = min(PLOT_W / cols, PLOT_H / rows if not one_d else MAX_CELL, MAX_CELL)
    sx, sy = s, (MAX_CELL if one_d else s)
    stretched = False
    if cols * sx < MIN_SIDE:
        sx, stretched = MIN_SIDE / cols, True
    if rows * sy < MIN_SIDE:
        sy, stretched = MIN_SIDE / rows, True
    pw, ph = cols * sx, rows * sy
    width, height = LEFT + pw + RIGHT, TOP + ph + BOTTOM
    mean = hg["mean"] if not one_d else [hg["mean"]]
    mins = hg.get("min") if not one_d or hg.get("min") is None else [hg["min"]]
    maxs = hg.get("max") if not one_d or hg.get("max") is None else [hg["max"]]
    by, bx = (1, block[0]) if one_d else (block[0], block[1])
    flat = len(hg.get("declared", shape)) > 2
    out = [f'<svg class="heat" width="{width:.0f}" height="{height:.0f}" '
           f'viewBox="0 0 {width:.1f} {height:.1f}" role="img" '
           f'aria-label="heat map of {e(name)}">']
    out.append(f'<g transform="translate({LEFT},{TOP})">')
    for i, row in enumerate(mean):
        r0, r1 = i * by, min((i + 1) * by, rows) - 1
        j = 0
        while j < len(row):
            key = (row[j], mins[i][j] if mins else None, maxs[i][j] if maxs else None)
            k = j
            while k + 1 < len(row) and (row[k + 1], mins[i][k + 1] if mins else None,
                                        maxs[i][k + 1] if maxs else None) == key:
                k += 1
            c0, c1 = j * bx, min((k + 1) * bx, cols) - 1
            where = _index(name, hg.get("declared", shape), None if one_d else (r0, r1),
                           (c0, c1), flat)
            if key[1] is None:
                tip = f"{where}: {fmt(key[0], thr)}" + (" each" if c0 != c1 else "")
            else:
                tip = (f"{where}: mean {fmt(key[0])}, min {fmt(key[1], thr)}, "
                       f"max {fmt(key[2], thr)}")
            out.append(f'<rect x="{c0 * sx:.2f}" y="{r0 * sy:.2f}" '
                       f'width="{(c1 - c0 + 1) * sx:.2f}" height="{(r1 - r0 + 1) * sy:.2f}" '
                       f'fill="{colour(key[0], lo_pos, hi)}"><title>{e(tip)}</title></rect>')
            j = k + 1
    out.append(f'<rect x="0" y="0" width="{pw:.2f}" height="{ph:.2f}" fill="none" '
               'stroke="#888" stroke-width="0.5"/>')
    for t in ticks(cols, pw):
        x = (t + 0.5) * sx
        out.append(f'<line x1="{x:.2f}" y1="{ph:.2f}" x2="{x:.2f}" y2="{ph + 4:.2f}" '
                   'stroke="#444"/>'
                   f'<text x="{x:.2f}" y="{ph + 15:.2f}" text-anchor="middle">{t}</text>')
    if not one_d:
        for t in ticks(rows, ph):
            y = (t + 0.5) * sy
            out.append(f'<line x1="-4" y1="{y:.2f}" x2="0" y2="{y:.2f}" stroke="#444"/>'
                       f'<text x="-6" y="{y + 3.5:.2f}" text-anchor="end">{t}</text>')
    out.append("</g></svg>")
    legend = _legend(lo, hi, lo_pos, thr, uid, any_zero=lo == 0)
    note = []
    if bx > 1 or by > 1:
        cell = f"{bx}" if one_d else f"{by} x {bx}"
        note.append(f"each cell: a block of {cell} elements, coloured by its mean (hover: "
                    "min and max)")
    if flat:
        note.append(f"declared {' x '.join(map(str, hg['declared']))}: the leading "
                    "dimensions run down the rows")
    if stretched:
        note.append("a side under 12 pixels is drawn 12 pixels wide")
    notes = "".join(f'<p class="note">{e(n)}</p>' for n in note)
    return "".join(out), legend, notes


def _legend(lo, hi, lo_pos, thr, uid, any_zero) -> str:
    e = html.escape
    stops = "".join(f'<stop offset="{i / (len(VIRIDIS) - 1):.2f}" stop-color="{c}"/>'
                    for i, c in enumerate(VIRIDIS))
    gid = f"g-{uid}"
    parts = [f'<svg class="legend" width="330" height="30" viewBox="0 0 330 30">'
             f'<defs><linearGradient id="{e(gid)}">{stops}</linearGradient></defs>']
    x = 4
    if any_zero:
        parts.append(f'<rect x="{x}" y="4" width="12" height="12" fill="{ZERO}" '
                     'stroke="#888" stroke-width="0.5"/>'
                     f'<text x="{x + 16}" y="14">0 (never)</text>')
        x += 80
    if hi > 0:
        parts.append(f'<rect x="{x}" y="4" width="160" height="12" fill="url(#{e(gid)})"/>'
                     f'<text x="{x}" y="27">{e(fmt(lo_pos, thr))}</text>'
                     f'<text x="{x + 160}" y="27" text-anchor="end">{e(fmt(hi, thr))}</text>')
    parts.append("</svg>")
    return "".join(parts)
