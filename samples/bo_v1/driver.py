"""bo_v1: binomial option pricing with the lattice in device memory (GMProf's bo_v1)."""
from __future__ import annotations

import numpy as np

from gmprof.driver import Driver, Launch


class BinomialV1(Driver):
    source = "binomial.cu"
    outputs = ("price",)
    # small: 8 options, 64 steps, 32 threads: each thread handles 2-3 nodes a step.
    # large: 32768 options x 1024 steps (2^34 node updates), 256 threads an option.
    sizes = {"small": {"options": 8, "steps": 64, "threads": 32},
             "large": {"options": 32768, "steps": 1024, "threads": 256}}
    # A float32 lattice against the float64 closed form; prices lie in [0, 40]. A numpy float32
    # emulation of the kernel is off by up to 6e-3 at 1024 steps (pu loses digits in float32).
    rtol = 2e-3
    atol = 5e-3
    description = ("CRR binomial pricing of European calls, one block an option, the two lattice "
                   "rows in device memory (callA/callB, ~3/4 numSteps accesses per element) and no "
                   "shared memory. Large: 32768 options x 1024 steps, 23 ms native on an H100.")
    riskfree = np.float32(0.04)
    volatility = np.float32(0.25)

    def arrays(self, size, rng):
        n = size["options"]
        out = {"price": np.zeros(n, np.float32),
               "S": rng.uniform(20.0, 60.0, n).astype(np.float32),
               "X": rng.uniform(20.0, 60.0, n).astype(np.float32),
               "T": rng.uniform(0.1, 2.0, n).astype(np.float32)}
        out.update(self.scratch(size))
        return out

    def scratch(self, size):
        rows = np.zeros((size["options"], size["steps"] + 1), np.float32)
        return {"callA": rows, "callB": rows.copy()}

    def launches(self, size):
        return [Launch("binomial_v1", grid=size["options"], block=size["threads"],
                       args=("price", "callA", "callB", "S", "X", "T", self.riskfree,
                             self.volatility, np.int32(size["steps"])))]

    def reference(self, size, inputs):
        """The lattice's value in closed form: disc^N sum_i C(N, i) pu^i pd^(N-i) payoff_i."""
        n_steps = size["steps"]
        s = inputs["S"].astype(np.float64)[:, None]
        x = inputs["X"].astype(np.float64)[:, None]
        t = inputs["T"].astype(np.float64)[:, None]
        r, v = float(self.riskfree), float(self.volatility)
        dt = t / n_steps
        vdt = v * np.sqrt(dt)
        u, d = np.exp(vdt), np.exp(-vdt)
        pu = (np.exp(r * dt) - d) / (u - d)
        i = np.arange(n_steps + 1, dtype=np.float64)[None, :]
        k = np.arange(1, n_steps + 1, dtype=np.float64)
        log_binom = np.concatenate([[0.0], np.cumsum(np.log(n_steps - k + 1) - np.log(k))])
        log_w = log_binom[None, :] + i * np.log(pu) + (n_steps - i) * np.log1p(-pu) - r * t
        payoff = np.maximum(s * np.exp(vdt * (2 * i - n_steps)) - x, 0.0)
        return {"price": (np.exp(log_w) * payoff).sum(axis=1).astype(np.float32)}


DRIVER = BinomialV1()
