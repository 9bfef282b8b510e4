"""nbody_aos: all-pairs n-body kick on an array of 7-float Particle structs (paper 003, Fig. 1)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from gmprof.driver import Launch, load_sample

_Global = type(load_sample(Path(__file__).resolve().parent.parent / "nbody_global").driver)
NB_BLOCK = 128  # as #defined in nbody.cu


class NbodyAos(_Global):
    outputs = ("p",)
    sizes = {"small": {"n": 200}, "large": {"n": 32768}}
    description = ("All-pairs n-body kick on an array of structs {px,py,pz,vx,vy,vz,mass} "
                   "(Gravit's original layout), tiled through a static shared float4 tile; "
                   "per-field counts show hot position/mass and cold velocity fields inside one "
                   "struct. Pairs with nbody_soa. Large: 32768 bodies, 3.3 ms native on an H100.")

    def arrays(self, size, rng):
        pos, vel, mass = self.make_bodies(size["n"], rng)
        # one row per Particle: px py pz vx vy vz mass, 28 bytes, as the struct lays them out
        return {"p": np.column_stack([pos, vel, mass]).astype(np.float32)}

    def launches(self, size):
        n = size["n"]
        return [Launch("nbody_aos", grid=-(-n // NB_BLOCK), block=NB_BLOCK,
                       args=("p", np.int32(n), self.dt, self.eps2))]

    def reference(self, size, inputs):
        p = inputs["p"].copy()
        p[:, 3:6] = self.kicked_velocity(p[:, 0:3], p[:, 3:6], p[:, 6])
        return {"p": p}


DRIVER = NbodyAos()
