"""nbody_soa: all-pairs n-body kick on seven float arrays, one per field (paper 003, Figure 3)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from gmprof.driver import Launch, load_sample

_Global = type(load_sample(Path(__file__).resolve().parent.parent / "nbody_global").driver)
NB_BLOCK = 128  # as #defined in nbody.cu


class NbodySoa(_Global):
    outputs = ("vx", "vy", "vz")
    sizes = {"small": {"n": 200}, "large": {"n": 32768}}
    description = ("All-pairs n-body kick on seven float arrays (structure of arrays), tiled "
                   "through four static shared arrays; the hot (px, py, pz, mass) and cold (vx, "
                   "vy, vz) fields are separate arrays. Pairs with nbody_aos. Large: 32768 bodies, "
                   "3.4 ms native on an H100.")

    def arrays(self, size, rng):
        pos, vel, mass = self.make_bodies(size["n"], rng)
        out = {name: np.ascontiguousarray(vel[:, c])
               for c, name in enumerate(("vx", "vy", "vz"))}
        out.update({name: np.ascontiguousarray(pos[:, c])
                    for c, name in enumerate(("px", "py", "pz"))})
        out["mass"] = mass
        return out

    def launches(self, size):
        n = size["n"]
        return [Launch("nbody_soa", grid=-(-n // NB_BLOCK), block=NB_BLOCK,
                       args=("vx", "vy", "vz", "px", "py", "pz", "mass", np.int32(n),
                             self.dt, self.eps2))]

    def reference(self, size, inputs):
        pos = np.column_stack([inputs["px"], inputs["py"], inputs["pz"]])
        vel = np.column_stack([inputs["vx"], inputs["vy"], inputs["vz"]])
        new = self.kicked_velocity(pos, vel, inputs["mass"]).astype(np.float32)
        return {name: np.ascontiguousarray(new[:, c]) for c, name in enumerate(("vx", "vy", "vz"))}


DRIVER = NbodySoa()
