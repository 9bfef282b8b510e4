"""--access-stats of a gather x[idx[j]] whose index walks its loop (spmv's x[colIdx[jj]]):
measured once per loop entry (gmprof.cuh warp_walk_gather, reading the index there), not at
each access, so the loop's body keeps no statistics call. The expected requests come from
numpy: the lanes of a warp that start the loop together make iteration k's request together
where their trip count exceeds k (a warp's lanes converged at each iteration, as on a GPU)."""
from __future__ import annotations

import numpy as np
import pytest

from gmprof.mode import Mode
from gmprof.runtime.session import Profiler

SOURCE = r"""
#define TPR THREADS_PER_ROW
__global__ void csr(float *y, const int *rowPtr, const int *colIdx, const float *x, int nRows) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int row = t / TPR, lane = t % TPR;
    float sum = 0.0f;
    if (row < nRows) {
        int end = rowPtr[row + 1];
        for (int jj = rowPtr[row] + lane; jj < end; jj += TPR)
            sum += x[colIdx[jj]];
    }
    if (lane == 0 && row < nRows) y[row] = sum;
}
"""


def expected(row_ptr, col, tpr, threads):
    """(requests, sectors, ideal, lines) of x[colIdx[jj]] over the launch, with numpy."""
    requests = sectors = ideal = lines = 0
    rows = len(row_ptr) - 1
    for w0 in range(0, threads, 32):
        lanes = np.arange(w0, w0 + 32)
        row, lane = lanes // tpr, lanes % tpr
        ok = row < rows
        start = np.where(ok, row_ptr[np.minimum(row, rows - 1)] + lane, 0)
        end = np.where(ok, row_ptr[np.minimum(row + 1, rows)], 0)
        trips = np.where(ok & (start < end), (end - start + tpr - 1) // tpr, 0)
        for k in range(int(trips.max(initial=0))):
            act = trips > k
            addr = 4 * col[start[act] + k * tpr]  # x's byte offsets (x 128-byte aligned)
            requests += 1
            sectors += len(np.unique(addr // 32))
            lines += len(np.unique(addr // 128))
            ideal += max(1, -(-len(np.unique(addr)) * 4 // 32))
    return requests, sectors, ideal, lines


@pytest.mark.parametrize("tpr", [32, 16])
def test_a_csr_gather_measured_at_its_loop_entry(tpr):
    rng = np.random.default_rng(7)
    rows, cols = 12, 300
    lengths = rng.integers(0, 70, rows)  # rows of 0..69: a partial last iteration, empty rows
    row_ptr = np.zeros(rows + 1, np.int32)
    np.cumsum(lengths, out=row_ptr[1:])
    col = rng.integers(0, cols, int(row_ptr[-1])).astype(np.int32)
    col[:40] = np.arange(40)  # a contiguous stretch: 4 sectors a full request
    x = rng.random(cols, dtype=np.float32)
    y = np.zeros(rows, np.float32)
    threads = rows * tpr
    prof = Profiler(text=SOURCE, name="csr.cu", backend="cpu",
                    defines={"THREADS_PER_ROW": str(tpr)})
    report = prof.launch("csr", -(-threads // 64), 64,
                         [y, row_ptr, col, x, np.int32(rows)],
                         mode=Mode.parse("default", warps=True))
    # (lane 0's part of each row: every tpr-th nonzero from the row's first)
    want_y = np.array([x[col[row_ptr[r]:row_ptr[r + 1]:tpr]].sum() for r in range(rows)])
    np.testing.assert_allclose(y, want_y, rtol=1e-5)
    site = next(s for s in report.sites if s.text == "x[colIdx[jj]]")
    w = site.warps
    assert w.how == "measured"
    blocks_threads = -(-threads // 64) * 64
    assert (w.requests, w.units, w.ideal, w.lines) == expected(row_ptr, col, tpr,
                                                               blocks_threads)
