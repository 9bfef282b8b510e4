"""matmul_naive: C = A * B with one thread per element of C and no shared memory (paper 004)."""
from __future__ import annotations

import numpy as np

from gmprof.driver import Driver, Launch


class MatmulNaive(Driver):
    source = "matmul.cu"
    outputs = ("C",)
    # small: three different extents, so a swapped index shows; multiples of 32 for matmul_rect.
    # large: 4096^3, the paper's size; 26 ms native on an H100 (14-17 ms for the tiled ones).
    sizes = {"small": {"m": 64, "n": 96, "k": 48},
             "large": {"m": 4096, "n": 4096, "k": 4096}}
    # float32 sums of k products in [0, 1) against a float64 reference
    rtol = 1e-4
    atol = 1e-5
    description = ("Naive matrix product (paper 004's baseline): each element of A is read N times "
                   "and each element of B M times from device memory. Large: 4096^3, 26 ms "
                   "native on an H100.")
    #: threads per block side (and, in the tiled variants, the tile side)
    tile = 16

    def arrays(self, size, rng):
        m, n, k = size["m"], size["n"], size["k"]
        return {"A": rng.random((m, k), dtype=np.float32),
                "B": rng.random((k, n), dtype=np.float32),
                "C": np.zeros((m, n), np.float32)}

    def kernel(self):
        return "matmul_naive"

    def grid(self, size):
        return (-(-size["n"] // self.tile), -(-size["m"] // self.tile))

    def launches(self, size):
        return [Launch(self.kernel(), grid=self.grid(size), block=(self.tile, self.tile),
                       args=("C", "A", "B", np.int32(size["m"]), np.int32(size["n"]),
                             np.int32(size["k"])))]

    def reference(self, size, inputs):
        product = inputs["A"].astype(np.float64) @ inputs["B"].astype(np.float64)
        return {"C": product.astype(np.float32)}


DRIVER = MatmulNaive()
