"""co: the row-cluster step of information-theoretic co-clustering (GMProf's co, Figure 2)."""
from __future__ import annotations

import numpy as np

from gmprof.driver import Driver, Launch

ROWCL_THRDS = 128  # as #defined in co.cu


class CoClustering(Driver):
    source = "co.cu"
    outputs = ("rowCL", "rowScore", "blockCnt")
    # small: 1024 rows x 24 columns, 4 clusters (one empty), 4 blocks: each thread takes 2 rows.
    # large: 540672 rows x 256 columns, 16 clusters, 528 blocks (4 an SM), 8 rows a thread.
    sizes = {"small": {"rows": 1024, "cols": 24, "clusters": 4, "blocks": 4},
             "large": {"rows": 540672, "cols": 256, "clusters": 16, "blocks": 528}}
    rtol = {"rowCL": 0.0, "blockCnt": 0.0, "rowScore": 1e-4}
    atol = {"rowCL": 0.0, "blockCnt": 0.0, "rowScore": 1e-4}
    description = ("Co-clustering row step as in GMProf's Figure 2: RClusterCnt's r/rc/c loop nest "
                   "reads colCL, rowCS and Acomp from shared copies (heavy reuse) and data from "
                   "device memory once per nonempty cluster; per-block cluster counts with shared "
                   "integer atomics. Large: 540672 x 256, 16 clusters, 8 ms native on an H100.")

    def arrays(self, size, rng):
        n, m, k = size["rows"], size["cols"], size["clusters"]
        assert n % (ROWCL_THRDS * size["blocks"]) == 0, "rows must fill every thread's trips"
        # A planted co-clustering: row cluster a puts most of its mass on column cluster
        # target[a]. Cluster k - 1 gets no rows (rowCS = 0): its Acomp row is all zeros, the best
        # possible score, so a kernel that did not skip it would pick it for every row.
        row_true = rng.integers(0, k - 1, n)
        col_cl = rng.integers(0, k, m).astype(np.int32)
        target = rng.permutation(k)
        # data = boost * U(0.5, 1.5), made in float32 in place (the large size is 138M
        # elements: float64 temporaries took seconds of the user's wait, issue 16)
        data = rng.random((n, m), dtype=np.float32)
        data += np.float32(0.5)
        planted = col_cl[None, :] == target[row_true][:, None]
        np.multiply(data, np.float32(4.0), out=data, where=planted)
        # Acomp[a][b] = log q(b | a), estimated from the planted row clusters: the rows' mass
        # per cluster as one product with the clusters' indicator matrix
        member = np.zeros((k, n), np.float32)
        member[row_true, np.arange(n)] = 1.0
        row_mass = (member @ data).astype(np.float64)
        block_mass = np.stack([row_mass[:, col_cl == b].sum(axis=1) for b in range(k)], axis=1)
        q = (block_mass + 1e-3) / (block_mass + 1e-3).sum(axis=1, keepdims=True)
        acomp = np.log(q)
        acomp[k - 1] = 0.0
        return {"rowCL": np.full(n, -2, np.int32),
                "rowScore": np.zeros(n, np.float32),
                "blockCnt": np.zeros((size["blocks"], k), np.int32),
                "data": data,
                "colCL": col_cl,
                "rowCS": np.bincount(row_true, minlength=k).astype(np.int32),
                "Acomp": acomp.astype(np.float32)}

    def launches(self, size):
        return [Launch("co_row_clusters", grid=size["blocks"], block=ROWCL_THRDS,
                       args=("rowCL", "rowScore", "blockCnt", "data", "colCL", "rowCS", "Acomp",
                             np.int32(size["rows"]), np.int32(size["cols"]),
                             np.int32(size["clusters"])))]

    def reference(self, size, inputs):
        n, k, blocks = size["rows"], size["clusters"], size["blocks"]
        acomp = inputs["Acomp"].astype(np.float64)
        scores = inputs["data"].astype(np.float64) @ acomp[:, inputs["colCL"]].T   # (n, k)
        scores[:, inputs["rowCS"] <= 0] = -np.inf
        labels = scores.argmax(axis=1)                                # first maximum on ties
        block = (np.arange(n) % (ROWCL_THRDS * blocks)) // ROWCL_THRDS
        counts = np.bincount(block * k + labels, minlength=blocks * k).reshape(blocks, k)
        return {"rowCL": labels.astype(np.int32),
                "rowScore": scores[np.arange(n), labels].astype(np.float32),
                "blockCnt": counts.astype(np.int32)}


DRIVER = CoClustering()
