"""nbody_global: all-pairs n-body velocity kick from device memory only (papers 003 and 000).

The other n-body samples reuse this driver's bodies and float64 physics (make_bodies,
kicked_velocity), so that all four compute the same thing from the same inputs.
"""
from __future__ import annotations

import numpy as np

from gmprof.driver import Driver, Launch


class NbodyGlobal(Driver):
    source = "nbody.cu"
    outputs = ("vel",)
    # small: 200 bodies, not a multiple of the block, so a partial block takes part.
    # large: 32768 bodies, 2^30 pairs.
    sizes = {"small": {"n": 200, "block": 64}, "large": {"n": 32768, "block": 128}}
    rtol = 1e-4
    atol = 1e-5
    description = ("All-pairs n-body kick (v += dt * a), float4 position/velocity arrays, every "
                   "thread reading every body from device memory (n reads per element of pos). "
                   "Pairs with nbody_shared (same layout, shared tiling). Large: 32768 bodies, "
                   "5.7 ms native on an H100.")
    dt = np.float32(0.01)
    eps2 = np.float32(1e-4)  # softening length 0.01 in a unit cube

    @staticmethod
    def make_bodies(n, rng):
        """Positions in the unit cube, small velocities, masses summing to about 1 (float32)."""
        pos = rng.random((n, 3), dtype=np.float32)
        vel = ((rng.random((n, 3), dtype=np.float32) - 0.5) * 0.2).astype(np.float32)
        mass = ((0.5 + rng.random(n, dtype=np.float32)) / n).astype(np.float32)
        return pos, vel, mass

    def kicked_velocity(self, pos, vel, mass):
        """v + dt * a in float64, a_i = sum_j m_j (p_j - p_i) / (|p_j - p_i|^2 + eps2)^1.5."""
        p = pos.astype(np.float64)
        m = mass.astype(np.float64)
        acc = np.empty_like(p)
        chunk = max(1, (1 << 22) // len(p))  # rows per step: keeps the temporaries ~100 MB
        for lo in range(0, len(p), chunk):
            d = p[None, :, :] - p[lo:lo + chunk, None, :]
            r2 = np.einsum("ijk,ijk->ij", d, d) + float(self.eps2)
            s = m[None, :] / (r2 * np.sqrt(r2))
            acc[lo:lo + chunk] = np.einsum("ij,ijk->ik", s, d)
        return vel.astype(np.float64) + float(self.dt) * acc

    def arrays(self, size, rng):
        pos, vel, mass = self.make_bodies(size["n"], rng)
        return {"pos": np.column_stack([pos, mass]).astype(np.float32),
                "vel": np.column_stack([vel, np.zeros(len(vel), np.float32)]).astype(np.float32)}

    def launches(self, size):
        n, block = size["n"], size["block"]
        return [Launch("nbody_global", grid=-(-n // block), block=block,
                       args=("vel", "pos", np.int32(n), self.dt, self.eps2))]

    def reference(self, size, inputs):
        pos, vel = inputs["pos"], inputs["vel"]
        out = vel.copy()
        out[:, :3] = self.kicked_velocity(pos[:, :3], vel[:, :3], pos[:, 3])
        return {"vel": out}


DRIVER = NbodyGlobal()
