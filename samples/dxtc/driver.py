"""dxtc: DXT1 (BC1) compression of 4x4 pixel blocks, four endpoint candidates, shared staging.

The encoder is integer-only, so the numpy reference below repeats it exactly and the check asks
for every output word to match: both endpoint colours and all sixteen indices of every block.
(A float encoder would instead be checked by the error of its decoded image; decode() is here
for the reference test, which checks that the reference's own decoded image is close to the
input.)
"""
from __future__ import annotations

import numpy as np

from gmprof.driver import Driver, Launch

DXT_PER_BLOCK = 4  # as #defined in dxtc.cu: 4x4 blocks per CUDA block of 64 threads


def pack565(rgb):
    """(..., 3) 8-bit channels -> 5:6:5 words, rounding to the nearest level (as pack565)."""
    r = (rgb[..., 0] * 31 + 127) // 255
    g = (rgb[..., 1] * 63 + 127) // 255
    b = (rgb[..., 2] * 31 + 127) // 255
    return (r << 11) | (g << 5) | b


def unpack565(c):
    """5:6:5 words -> (..., 3) 8-bit channels, top bits replicated (as unpack565)."""
    r, g, b = (c >> 11) & 31, (c >> 5) & 63, c & 31
    return np.stack([(r << 3) | (r >> 2), (g << 2) | (g >> 4), (b << 3) | (b >> 2)], axis=-1)


def palette(c0, c1):
    """(...) endpoint words with c0 >= c1 -> (..., 4, 3) palettes (as build_palette)."""
    p0, p1 = unpack565(c0), unpack565(c1)
    four = (c0 > c1)[..., None]
    p2 = np.where(four, (2 * p0 + p1) // 3, p0)
    p3 = np.where(four, (p0 + 2 * p1) // 3, p0)
    p1 = np.where(four, p1, p0)
    return np.stack([p0, p1, p2, p3], axis=-2)


def encode(blocks):
    """(n, 16, 3) int32 pixels of n 4x4 blocks -> (n, 2) uint32 DXT1 words, as dxt1_compress."""
    lo, hi = blocks.min(axis=1), blocks.max(axis=1)
    s = blocks.sum(axis=1)
    cov_rg = 16 * (blocks[..., 0] * blocks[..., 1]).sum(axis=1) - s[:, 0] * s[:, 1]
    cov_bg = 16 * (blocks[..., 2] * blocks[..., 1]).sum(axis=1) - s[:, 2] * s[:, 1]
    inset = (hi - lo) >> 4
    c0s, c1s, idxs, errs = [], [], [], []
    for cand in range(4):
        h = hi - inset if cand & 1 else hi.copy()
        lw = lo + inset if cand & 1 else lo.copy()
        if cand >= 2:
            for ch, cov in ((0, cov_rg), (2, cov_bg)):
                swap = cov < 0
                h[swap, ch], lw[swap, ch] = lw[swap, ch], h[swap, ch].copy()
        a, b = pack565(h), pack565(lw)
        c0, c1 = np.maximum(a, b), np.minimum(a, b)
        pal = palette(c0, c1)                                          # (n, 4, 3)
        dist = sum((blocks[:, :, None, ch] - pal[:, None, :, ch]) ** 2 for ch in range(3))
        idx = dist.argmin(axis=-1)                                     # first minimum on ties
        c0s.append(c0)
        c1s.append(c1)
        idxs.append(idx)
        errs.append(np.take_along_axis(dist, idx[..., None], axis=-1)[..., 0].sum(axis=1))
    best = np.argmin(np.stack(errs, axis=1), axis=1)                   # first minimum on ties
    rows = np.arange(len(blocks))
    c0 = np.stack(c0s, axis=1)[rows, best]
    c1 = np.stack(c1s, axis=1)[rows, best]
    idx = np.stack(idxs, axis=1)[rows, best]                           # (n, 16)
    bits = (idx.astype(np.uint64) << (2 * np.arange(16, dtype=np.uint64))).sum(axis=1)
    return np.stack([c0.astype(np.uint64) | (c1.astype(np.uint64) << 16), bits],
                    axis=1).astype(np.uint32)


def to_blocks(image):
    """(h, w) RGBA8 words -> (h/4 * w/4, 16, 3) int32 pixels, blocks row-major, pixels row-major."""
    h, w = image.shape
    rgb = np.stack([(image >> s) & 255 for s in (0, 8, 16)], axis=-1).astype(np.int32)
    return rgb.reshape(h // 4, 4, w // 4, 4, 3).transpose(0, 2, 1, 3, 4).reshape(-1, 16, 3)


def decode(words):
    """(n, 2) DXT1 words -> (n, 16, 3) decoded pixels (4-colour and 3-colour modes)."""
    c0 = words[:, 0].astype(np.int64) & 0xFFFF
    c1 = words[:, 0].astype(np.int64) >> 16
    p0, p1 = unpack565(c0), unpack565(c1)
    four = (c0 > c1)[:, None]
    p2 = np.where(four, (2 * p0 + p1) // 3, (p0 + p1) // 2)
    p3 = np.where(four, (p0 + 2 * p1) // 3, 0)
    pal = np.stack([p0, p1, p2, p3], axis=1)
    idx = (words[:, 1:2].astype(np.int64) >> (2 * np.arange(16))) & 3
    return np.take_along_axis(pal, idx[..., None], axis=1)


class Dxtc(Driver):
    source = "dxtc.cu"
    outputs = ("out",)
    # small: 32 x 16 pixels, 32 DXT blocks in 8 CUDA blocks.
    # large: 8192 x 8192 pixels (4M DXT blocks, 64M threads).
    sizes = {"small": {"width": 32, "height": 16}, "large": {"width": 8192, "height": 8192}}
    rtol = 0.0
    atol = 0.0
    description = ("DXT1 compression of 4x4 blocks (the GMProf paper's dxtc): pixels staged in "
                   "shared memory and read 16 times each by __device__ helpers, four endpoint "
                   "candidates, integer-exact output. Large: 8192^2 pixels, 2 ms native on an "
                   "H100.")

    def arrays(self, size, rng):
        w, h = size["width"], size["height"]
        y, x = np.mgrid[0:h, 0:w].astype(np.float64)
        # smooth gradients, noise, and a few flat rectangles (blocks with a single colour)
        rgb = np.stack([128 + 100 * np.sin(x / 23.0 + y / 41.0),
                        128 + 90 * np.cos(x / 17.0 - y / 29.0),
                        128 + 80 * np.sin((x + y) / 13.0)], axis=-1)
        rgb += rng.normal(0.0, 12.0, rgb.shape)
        for _ in range(w * h // 2048):
            x0, y0 = rng.integers(0, w), rng.integers(0, h)
            rgb[y0:y0 + rng.integers(4, 33), x0:x0 + rng.integers(4, 33)] = rng.integers(0, 256, 3)
        rgb[0:4, 0:8] = rng.integers(0, 256, 3)  # so that even the small image has flat blocks
        rgb = np.clip(np.rint(rgb), 0, 255).astype(np.uint32)
        image = rgb[..., 0] | (rgb[..., 1] << 8) | (rgb[..., 2] << 16) | np.uint32(255 << 24)
        return {"image": image.astype(np.uint32),
                "out": np.zeros((h // 4, w // 4, 2), np.uint32)}

    def launches(self, size):
        w, h = size["width"], size["height"]
        return [Launch("dxt1_compress", grid=(w // (4 * DXT_PER_BLOCK), h // 4),
                       block=16 * DXT_PER_BLOCK, args=("out", "image", np.int32(w)))]

    def reference(self, size, inputs):
        image = inputs["image"]
        h, w = image.shape
        out = np.empty((h // 4 * (w // 4), 2), np.uint32)
        rows = 4 * max(1, (1 << 16) // (w // 4))  # image rows per chunk: ~65536 blocks at a time
        for top in range(0, h, rows):
            blocks = to_blocks(image[top:top + rows])
            first = top // 4 * (w // 4)
            out[first:first + len(blocks)] = encode(blocks)
        return {"out": out.reshape(h // 4, w // 4, 2)}

    def check(self, size, outputs, expected):
        got, want = outputs["out"], expected["out"]
        bad = np.argwhere((got != want).any(axis=-1))
        assert len(bad) == 0, (f"output 'out': {len(bad)} of {want.shape[0] * want.shape[1]} "
                               f"blocks differ, first at block (row, col) {tuple(bad[0])}: "
                               f"got {got[tuple(bad[0])]}, want {want[tuple(bad[0])]}")


DRIVER = Dxtc()
