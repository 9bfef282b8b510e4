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
