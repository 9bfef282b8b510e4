"""A heat map's data: an array's counts in its declared shape, reduced to a grid a page can draw.

Stage: report. Takes the counts in the declared shape (ArrayStats.grid()); returns a plain dict
(stored in the run document, so a saved report redraws the same picture):

    {"shape": [rows, cols] or [n],   the drawn grid, in elements (3-D and more: the leading
                                     dimensions flattened into rows, see "declared")
     "declared": [...],              the declared shape
     "block": [by, bx] or [b],       elements per cell (1: every element has its own cell)
     "mean": [[...]],                each cell's mean count (its count when block is 1)
     "min": [[...]], "max": [[...]], each cell's extremes (None when block is 1)
     "uniform": 6 or None,           every element's count, when they are all equal
     "lo": 0, "hi": 12,              the colour scale's ends
     "threshold": THR or None}

1-D arrays stay 1-D (a strip, never folded into a square); a 2-D grid keeps at most 64 cells
a side and a strip 256 cells, so the page stays small and hover works on every cell. The counts
may be a CuPy array: the grid is then made on the GPU, before the counts cross to the host
(Report.to_host; spmv's two 134M-element arrays took a second of the host's time).
"""
from __future__ import annotations

import math

import numpy as np

from . import where

MAX_CELLS_2D = 64
MAX_CELLS_1D = 256


def _num(x: float):
    """An int where the value is one, else a float rounded to 4 decimals (block means)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return None
    xf = float(x)
    return int(xf) if xf.is_integer() else round(xf, 4)


def _along(reduce: str, a, axis: int, b: int):
    """reduce ('sum', 'min', 'max') over blocks of b along an axis: the whole blocks through a
    reshape (contiguous, ten times faster than reduceat on 16M elements), the last, partial one
    apart. numpy or CuPy, as `a` is."""
    xp = where.xp(a)
    f = getattr(xp, reduce)
    a = xp.moveaxis(a, axis, 0)
    n = a.shape[0]
    whole = n // b * b
    parts = []
    if whole:
        parts.append(f(a[:whole].reshape(n // b, b, *a.shape[1:]), axis=1))
    if whole < n:
        parts.append(f(a[whole:], axis=0, keepdims=True))
    return xp.moveaxis(xp.concatenate(parts) if len(parts) > 1 else parts[0], 0, axis)


def _reduce(grid, block: tuple) -> tuple:
    """Block means, minima and maxima; partial blocks at the ends use the elements they have."""
    xp = where.xp(grid)
    sums, mins, maxs = grid.astype(np.int64, copy=False), grid, grid
    sizes = xp.ones((1,) * grid.ndim, np.int64)
    for axis, b in enumerate(block):
        sums = _along("sum", sums, axis, b)
        mins = _along("min", mins, axis, b)
        maxs = _along("max", maxs, axis, b)
        n = grid.shape[axis]
        counts = np.full(-(-n // b), b, np.int64)
        counts[-1] = n - b * (len(counts) - 1)
        shape = [1] * grid.ndim
        shape[axis] = len(counts)
        sizes = sizes * xp.asarray(counts.reshape(shape))
    return sums / sizes, mins, maxs


def heat_grid(grid: np.ndarray, threshold: int | None = None) -> dict:
    declared = [int(s) for s in grid.shape]
    if grid.ndim == 0:
        grid = grid.reshape(1)
    if grid.ndim > 2:
        grid = grid.reshape(-1, grid.shape[-1])
    out = {"shape": [int(s) for s in grid.shape], "declared": declared, "block": None,
           "mean": [], "min": None, "max": None, "uniform": None, "lo": 0, "hi": 0,
           "threshold": threshold}
    if grid.size == 0:
        out["block"] = [1] * grid.ndim
        return out
    lo, hi = int(grid.min()), int(grid.max())
    out["lo"], out["hi"] = lo, hi
    if lo == hi:
        out["uniform"] = lo
    limit = MAX_CELLS_1D if grid.ndim == 1 else MAX_CELLS_2D
    block = tuple(max(1, -(-int(n) // limit)) for n in grid.shape)
    out["block"] = list(block)
    if all(b == 1 for b in block):
        out["mean"] = [_num(v) for v in grid.tolist()] if grid.ndim == 1 else \
            [[_num(v) for v in row] for row in grid.tolist()]
        return out
    mean, mn, mx = _reduce(grid, block)
    conv = (lambda a: [_num(v) for v in a.tolist()]) if grid.ndim == 1 else \
        (lambda a: [[_num(v) for v in row] for row in a.tolist()])
    out["mean"], out["min"], out["max"] = conv(mean), conv(mn), conv(mx)
    return out


# -- the HTML page's grid: every element, up to a cap ---------------------------------------

MAX_DRAWN = 1 << 20  # cells a page's heat map draws one per element (1,048,576); above, bins
MAX_SIDE = 1 << 15  # and along a side (32,768: a canvas's width), a strip's bound


def counts_grid(counts, shape, elem_size: int, unit: int, threshold=None):
    """A document's flat per-counter counts in the declared shape, as ArrayStats.grid() makes
    them (capped at the threshold; shared words of a wider element shown per element)."""
    c = np.asarray(counts, np.int64)
    if threshold is not None:
        c = np.minimum(c, threshold)
    if unit == 4 and elem_size > 4 and elem_size % 4 == 0 and c.size % (elem_size // 4) == 0:
        c = c.reshape(-1, elem_size // 4).max(axis=1)
    shape = tuple(int(s) for s in shape if s)
    return c.reshape(shape) if shape and math.prod(shape) == c.size else c


def drawn_block(shape: tuple) -> tuple:
    """Elements per drawn cell along each side: 1 up to MAX_DRAWN cells (and MAX_SIDE a side),
    else the smallest blocks, alike on both sides, that bring the grid under them."""
    block = [max(1, -(-int(n) // MAX_SIDE)) for n in shape]

    def cells():
        return math.prod(-(-int(n) // b) for n, b in zip(shape, block))

    while cells() > MAX_DRAWN:
        f = math.sqrt(cells() / MAX_DRAWN) if len(shape) > 1 else cells() / MAX_DRAWN
        block = [max(b + 1, math.ceil(b * f)) if -(-int(n) // b) > 1 else b
                 for n, b in zip(shape, block)]
    return tuple(block)


def _rle(a) -> dict:
    """A flat array's cells as the page's script reads them: {"runs": [value, run, value,
    run, ...]} (a map's counts are mostly runs of equal values), or {"values": [...]} where
    runs would be longer (counts that change at every element)."""
    a = np.asarray(a).ravel()
    if a.size == 0:
        return {"values": []}
    starts = np.concatenate(([0], np.flatnonzero(a[1:] != a[:-1]) + 1))
    if 2 * starts.size >= a.size:
        return {"values": [_num(v) for v in a.tolist()]}
    runs = np.diff(np.concatenate((starts, [a.size])))
    out = np.empty(2 * starts.size, dtype=object)
    out[0::2] = [_num(v) for v in a[starts].tolist()]
    out[1::2] = runs.tolist()
    return {"runs": out.tolist()}


def drawn_grid(grid, threshold: int | None = None) -> dict:
    """What a page's heat map draws (its script decodes it): {"rows", "cols", "declared",
    "block": [by, bx], "one_d", "lo", "hi", "threshold", "mean", "min", "max"}, the cells
    row-major (_rle); min and max only for binned cells (block above 1)."""
    declared = [int(s) for s in grid.shape]
    if grid.ndim == 0:
        grid = grid.reshape(1)
    if grid.ndim > 2:
        grid = grid.reshape(-1, grid.shape[-1])
    one_d = grid.ndim == 1
    g2 = grid.reshape(1, -1) if one_d else grid
    block = (1,) + drawn_block(grid.shape) if one_d else drawn_block(grid.shape)
    out = {"rows": -(-g2.shape[0] // block[0]), "cols": -(-g2.shape[1] // block[1]),
           "elements": [int(s) for s in g2.shape], "declared": declared, "block": list(block),
           "one_d": one_d, "lo": 0, "hi": 0, "threshold": threshold,
           "mean": {"values": []}, "min": None, "max": None}
    if g2.size == 0:
        return out
    out["lo"], out["hi"] = int(g2.min()), int(g2.max())
    if block == (1, 1):
        out["mean"] = _rle(where.to_host(g2))
        return out
    mean, mn, mx = _reduce(g2, block)
    out["mean"] = _rle(np.round(where.to_host(mean), 4))
    out["min"], out["max"] = _rle(where.to_host(mn)), _rle(where.to_host(mx))
    return out


def heatmap_as_drawn(hg: dict) -> dict:
    """A document's reduced heat map (heat_grid) in drawn_grid's form, for a saved run
    without its per-element counts: its cells are already blocks."""
    one_d = len(hg["shape"]) == 1
    shape = [1, hg["shape"][0]] if one_d else list(hg["shape"])
    block = [1, hg["block"][0]] if one_d else list(hg["block"])

    def flat(cells):
        if cells is None:
            return None
        return _rle(np.asarray(cells if not one_d else [cells], dtype=float))

    binned = any(b > 1 for b in block)
    return {"rows": -(-shape[0] // block[0]), "cols": -(-shape[1] // block[1]),
            "elements": shape, "declared": hg.get("declared", hg["shape"]), "block": block,
            "one_d": one_d, "lo": hg["lo"], "hi": hg["hi"], "threshold": hg.get("threshold"),
            "mean": flat(hg["mean"]), "min": flat(hg.get("min")) if binned else None,
            "max": flat(hg.get("max")) if binned else None}
