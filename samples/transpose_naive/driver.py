"""transpose_naive: the GMProf paper's Figure 1, a transpose through a BLK_DIM x BLK_DIM tile."""
from __future__ import annotations

import numpy as np

from gmprof.driver import Driver, Launch

BLK_DIM = 16  # as #defined in transpose.cu


class Transpose(Driver):
    source = "transpose.cu"
    outputs = ("odata",)
    # small: not a multiple of BLK_DIM in either direction, so both bounds checks cut threads off.
    # large: 16384 x 16384 floats, 1 GiB each way (copy bound: 2 GiB moved).
    sizes = {"small": {"width": 72, "height": 40}, "large": {"width": 16384, "height": 16384}}
    rtol = 0.0
    atol = 0.0
    description = ("Transpose through a shared tile exactly as in GMProf's Figure 1 (tile "
                   "[BLK_DIM][BLK_DIM], bank conflicts on the transposed read); every shared word "
                   "is written once and read once. Large: 16384^2 floats, 1.2 ms native on an "
                   "H100.")

    def arrays(self, size, rng):
        w, h = size["width"], size["height"]
        return {"idata": rng.random((h, w), dtype=np.float32),
                "odata": np.zeros((w, h), np.float32)}

    def launches(self, size):
        w, h = size["width"], size["height"]
        grid = (-(-w // BLK_DIM), -(-h // BLK_DIM))
        return [Launch("transpose", grid=grid, block=(BLK_DIM, BLK_DIM),
                       args=("odata", "idata", np.int32(w), np.int32(h)))]

    def reference(self, size, inputs):
        return {"odata": np.ascontiguousarray(inputs["idata"].T)}


DRIVER = Transpose()
