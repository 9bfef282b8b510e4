"""jcb_v1: Jacobi 5-point sweeps with a tile of the output in shared memory (GMProf's jcb_v1)."""
from __future__ import annotations

import numpy as np

from gmprof.driver import Driver, Launch

TILE_X, TILE_Y = 32, 8  # as #defined in jacobi.cu


class JacobiV1(Driver):
    source = "jacobi.cu"
    kernel = "jacobi_v1"
    # The sweeps alternate a -> b and b -> a; with an even count the result is in a, and b holds
    # the sweep before it. Both are compared.
    outputs = ("a", "b")
    # small: interior 68 x 40, not a multiple of the 32 x 8 tile; 4 blocks walk 15 tiles.
    # large: 4096^2 interior, 50 sweeps; 1056 blocks (8 an SM on an H100) walk 65536 tiles.
    sizes = {"small": {"nx": 70, "ny": 42, "sweeps": 4, "blocks": 4},
             "large": {"nx": 4098, "ny": 4098, "sweeps": 50, "blocks": 1056}}
    # The reference repeats the kernel's float32 operations in the same order: it should match
    # bit for bit; the tolerance only allows for a backend that contracts differently.
    rtol = 1e-6
    atol = 1e-7
    description = ("Jacobi (4-neighbour mean) sweeps, one launch per sweep swapping in/out, a tile "
                   "of the OUTPUT in shared memory: each shared word is written once and read once "
                   "per live range, `in` is read 4 times per element from device memory. Large: "
                   "4096^2 x 50 sweeps, 3.4 ms native on an H100.")

    def arrays(self, size, rng):
        a = rng.random((size["ny"], size["nx"]), dtype=np.float32)
        return {"a": a, "b": a.copy()}  # b needs a's boundary; its interior is overwritten

    def launches(self, size):
        nx, ny = np.int32(size["nx"]), np.int32(size["ny"])
        pairs = [("b", "a"), ("a", "b")]  # (out, in)
        return [Launch(self.kernel, grid=size["blocks"], block=(TILE_X, TILE_Y),
                       args=(*pairs[s % 2], nx, ny))
                for s in range(size["sweeps"])]

    @staticmethod
    def sweep(grid):
        """One Jacobi sweep in float32, summing N + S + W + E in the kernel's order."""
        out = grid.copy()
        out[1:-1, 1:-1] = np.float32(0.25) * (((grid[:-2, 1:-1] + grid[2:, 1:-1])
                                               + grid[1:-1, :-2]) + grid[1:-1, 2:])
        return out

    def reference(self, size, inputs):
        grids = {"a": inputs["a"].copy(), "b": inputs["b"].copy()}
        for s in range(size["sweeps"]):
            out, src = ("b", "a") if s % 2 == 0 else ("a", "b")
            grids[out] = self.sweep(grids[src])
        return grids


DRIVER = JacobiV1()
