"""An independent model of samples/app_stencil's kernels: per-element access counts, derived by
enumerating the CUDA threads in numpy (not from gmprof), for the tests that compare gmprof's
reports with it."""
from __future__ import annotations

import numpy as np

TILE = 16


def stencil_counts(nx: int, ny: int) -> dict:
    """{array: (reads per element, writes per element)} for one launch of `stencil` over
    ceil(nx/16) x ceil(ny/16) blocks of 16 x 16 threads; `tile` per shared word summed over
    the blocks, `coef` per element."""
    gx, gy = -(-nx // TILE), -(-ny // TILE)
    r_in = np.zeros(nx * ny, np.int64)
    w_out = np.zeros(nx * ny, np.int64)
    r_tile = np.zeros((TILE + 2) * (TILE + 2), np.int64)
    w_tile = np.zeros((TILE + 2) * (TILE + 2), np.int64)
    r_coef = np.zeros(5, np.int64)
    T = TILE + 2
    for by in range(gy):
        for bx in range(gx):
            for ty in range(TILE):
                for tx in range(TILE):
                    x, y = bx * TILE + tx, by * TILE + ty
                    cx, cy = min(x, nx - 1), min(y, ny - 1)
                    w_tile[(ty + 1) * T + tx + 1] += 1
                    r_in[cy * nx + cx] += 1
                    if tx == 0:
                        w_tile[(ty + 1) * T] += 1
                        r_in[cy * nx + max(cx - 1, 0)] += 1
                    if tx == TILE - 1:
                        w_tile[(ty + 1) * T + TILE + 1] += 1
                        r_in[cy * nx + min(cx + 1, nx - 1)] += 1
                    if ty == 0:
                        w_tile[tx + 1] += 1
                        r_in[max(cy - 1, 0) * nx + cx] += 1
                    if ty == TILE - 1:
                        w_tile[(TILE + 1) * T + tx + 1] += 1
                        r_in[min(cy + 1, ny - 1) * nx + cx] += 1
                    if x < nx and y < ny:
                        w_out[y * nx + x] += 1
                        r_coef += 1
                        for dy, dx in ((1, 1), (1, 0), (1, 2), (0, 1), (2, 1)):
                            r_tile[(ty + dy) * T + tx + dx] += 1
    zero = np.zeros
    return {"in": (r_in, zero(nx * ny, np.int64)), "out": (zero(nx * ny, np.int64), w_out),
            "tile": (r_tile, w_tile), "coef": (r_coef, zero(5, np.int64))}


def fill_counts(nx: int, ny: int) -> dict:
    gx, gy = -(-nx // TILE), -(-ny // TILE)
    w = np.zeros(nx * ny, np.int64)
    for y in range(gy * TILE):
        for x in range(gx * TILE):
            if x < nx and y < ny:
                w[y * nx + x] += 1
    return {"a": (np.zeros(nx * ny, np.int64), w)}
