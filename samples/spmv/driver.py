"""spmv: CSR sparse matrix-vector product, 32 threads a row, shared rowPtr slice and tree sums."""
from __future__ import annotations

import numpy as np

from gmprof.driver import Driver, Launch

THREADS_PER_ROW = 32  # as #defined in spmv.cu


class Spmv(Driver):
    source = "spmv.cu"
    outputs = ("y",)
    # small: 200 rows of 0..24 nonzeros (empty rows included), 4 rows a block.
    # large: 4M x 4M, 16..48 nonzeros a row (134M nonzeros, 1 GiB of val + colIdx).
    sizes = {"small": {"rows": 200, "cols": 150, "min_nnz": 0, "max_nnz": 24, "block": 128},
             "large": {"rows": 1 << 22, "cols": 1 << 22, "min_nnz": 16, "max_nnz": 48,
                       "block": 256}}
    rtol = 1e-5
    atol = 1e-6
    description = ("CSR SpMV, the GMProf paper's spmv: 32 threads a row, each block staging its "
                   "rowPtr slice in shared `bounds` and reducing partial sums in extern __shared__ "
                   "`partial`; x is gathered once per nonzero in its column. Large: 4M rows, 134M "
                   "nonzeros, 1.3 ms native on an H100.")

    def arrays(self, size, rng):
        rows, cols = size["rows"], size["cols"]
        lengths = rng.integers(size["min_nnz"], size["max_nnz"] + 1, rows)
        row_ptr = np.zeros(rows + 1, np.int32)
        np.cumsum(lengths, out=row_ptr[1:])
        nnz = int(row_ptr[-1])
        return {"y": np.zeros(rows, np.float32),
                "rowPtr": row_ptr,
                "colIdx": rng.integers(0, cols, nnz, dtype=np.int32),
                "val": rng.random(nnz, dtype=np.float32),
                "x": rng.random(cols, dtype=np.float32)}

    def launches(self, size):
        rows, block = size["rows"], size["block"]
        rows_per_block = block // THREADS_PER_ROW
        return [Launch("spmv_csr", grid=-(-rows // rows_per_block), block=block,
                       args=("y", "rowPtr", "colIdx", "val", "x", np.int32(rows)),
                       shared_mem=4 * block)]

    def reference(self, size, inputs):
        row_ptr = inputs["rowPtr"]
        row_of = np.repeat(np.arange(len(row_ptr) - 1), np.diff(row_ptr))
        x = inputs["x"].astype(np.float64)
        products = inputs["val"].astype(np.float64) * x[inputs["colIdx"]]
        y = np.bincount(row_of, weights=products, minlength=len(row_ptr) - 1)
        return {"y": y.astype(np.float32)}


DRIVER = Spmv()
