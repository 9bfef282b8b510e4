"""em_v1: Gaussian-mixture EM, four shared arrays, the model read from device memory."""
from __future__ import annotations

import numpy as np

from gmprof.driver import Driver, Launch

EM_BLOCK = 128  # as #defined in em.cu
MSTEP_THREADS = 64  # at least 2 * MAX_D + 1
VAR_FLOOR = 1e-4
LOG_2PI = np.log(2.0 * np.pi)


class EmV1(Driver):
    source = "em.cu"
    outputs = ("mu", "invVar", "logConst", "resp", "ll")
    # small: 500 points (4 tiles, the last one partial) in 4 dimensions, 3 clusters, 2 blocks,
    #   2 iterations.
    # large: 2M points in 16 dimensions, 16 clusters, 528 blocks (4 an SM on an H100) walking
    #   16384 tiles, 5 iterations.
    sizes = {"small": {"points": 500, "dims": 4, "clusters": 3, "blocks": 2, "iterations": 2},
             "large": {"points": 1 << 21, "dims": 16, "clusters": 16, "blocks": 528,
                       "iterations": 5}}
    # float32 sums over up to 2M points (in block order) against float64 totals
    rtol = {"mu": 1e-3, "invVar": 1e-3, "logConst": 1e-4, "resp": 0.0, "ll": 1e-4}
    atol = {"mu": 1e-3, "invVar": 1e-4, "logConst": 1e-3, "resp": 1e-3, "ll": 1e-2}
    description = ("EM for a diagonal Gaussian mixture (the GMProf paper's em_v1): E-step blocks "
                   "walk point tiles with sX, sResp, sLogConst and a rarely used sLL in shared "
                   "memory, while mu and invVar are read from device memory N times an element "
                   "per iteration; deterministic block-ordered M-step sums. Large: 2M points, "
                   "D = K = 16, 5 iterations, 17 ms native on an H100.")

    def scratch(self, size):
        """Per-version scratch arrays (v2 adds llScratch)."""
        return {}

    @staticmethod
    def blocks(size):
        return min(size["blocks"], -(-size["points"] // EM_BLOCK))

    def arrays(self, size, rng):
        n, d, k = size["points"], size["dims"], size["clusters"]
        blocks = self.blocks(size)
        centers = rng.uniform(-8.0, 8.0, (k, d))
        spread = rng.uniform(0.5, 1.5, (k, d))
        label = rng.choice(k, n, p=rng.dirichlet(np.full(k, 4.0)))
        label[:k] = np.arange(k)  # every cluster has a point
        x = (centers[label] + spread[label] * rng.standard_normal((n, d))).astype(np.float32)
        # Start from one point of each cluster and the data's overall variance, equal weights.
        start = np.array([np.flatnonzero(label == c)[0] for c in range(k)])
        var = np.broadcast_to(x.astype(np.float64).var(axis=0), (k, d))
        log_const = np.log(1.0 / k) - 0.5 * (np.log(var).sum(axis=1) + d * LOG_2PI)
        out = {"mu": x[start].copy(),
               "invVar": (1.0 / var).astype(np.float32),
               "logConst": log_const.astype(np.float32),
               "resp": np.zeros((n, k), np.float32),
               "ll": np.zeros(size["iterations"], np.float32),
               "X": x,
               "partials": np.zeros((blocks, k, 2 * d + 1), np.float32),
               "blockLL": np.zeros(blocks, np.float32)}
        out.update(self.scratch(size))
        return out

    def estep_args(self, size):
        return ("resp", "partials", "blockLL", "X", "mu", "invVar", "logConst")

    def launches(self, size):
        n, d, k = size["points"], size["dims"], size["clusters"]
        blocks = self.blocks(size)
        dims = (np.int32(n), np.int32(d), np.int32(k))
        out = []
        for it in range(size["iterations"]):
            out.append(Launch("em_estep", grid=blocks, block=EM_BLOCK,
                              args=(*self.estep_args(size), *dims)))
            out.append(Launch("em_mstep", grid=k, block=MSTEP_THREADS,
                              args=("mu", "invVar", "logConst", "ll", "partials", "blockLL",
                                    np.int32(blocks), *dims, np.int32(it))))
        return out

    def reference(self, size, inputs):
        x = inputs["X"].astype(np.float64)
        mu = inputs["mu"].astype(np.float64)
        inv_var = inputs["invVar"].astype(np.float64)
        log_const = inputs["logConst"].astype(np.float64)
        n, d = x.shape
        x2 = x * x
        ll = np.zeros(size["iterations"])
        for it in range(size["iterations"]):
            # sum_d (x - mu)^2 / var, expanded into products of (n, d) and (k, d) matrices
            dist = x2 @ inv_var.T - 2.0 * x @ (mu * inv_var).T + (mu * mu * inv_var).sum(axis=1)
            log_p = log_const - 0.5 * dist
            top = log_p.max(axis=1, keepdims=True)
            e = np.exp(log_p - top)
            total = e.sum(axis=1, keepdims=True)
            resp = e / total
            ll[it] = (top + np.log(total)).sum()
            nk = np.maximum(resp.sum(axis=0), 1e-20)
            mu = (resp.T @ x) / nk[:, None]
            var = np.maximum((resp.T @ x2) / nk[:, None] - mu * mu, VAR_FLOOR)
            inv_var = 1.0 / var
            log_const = np.log(nk / n) - 0.5 * (np.log(var).sum(axis=1) + d * LOG_2PI)
        return {"mu": mu.astype(np.float32), "invVar": inv_var.astype(np.float32),
                "logConst": log_const.astype(np.float32), "resp": resp.astype(np.float32),
                "ll": ll.astype(np.float32)}


DRIVER = EmV1()
