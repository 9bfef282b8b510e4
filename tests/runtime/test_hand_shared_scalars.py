"""Non-array `__shared__` variables (issue 11): the hooks take the variable's address (its name
is its value, not its first byte), so `__shared__ int s;` is counted on its own word and
`__shared__ double u;`, a struct or a float compile. Expected counts derived by hand."""
from __future__ import annotations

import numpy as np
import pytest

from gmprof.mode import Mode
from gmprof.runtime.session import Profiler

MODES = ["default", "SA", "basic", "trace", "SA-SM", "basic-SM"]

SOURCE = r"""
struct Pair { int a; float b; };
__global__ void scalars(int *out, double *o2, const int *flag) {
    __shared__ int s;
    __shared__ double u;
    __shared__ Pair pr;
    __shared__ float f;
    if (threadIdx.x == 0) { s = 0; u = 1.0; pr.a = 0; f = 0.0f; }
    __syncthreads();
    atomicAdd(&s, 1);
    if (flag[threadIdx.x]) atomicAdd(&f, 1.0f);
    if (flag[threadIdx.x]) pr.b = 2.0f;
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = s + pr.a;
    if (threadIdx.x == 0) o2[blockIdx.x] = u + f;
}
"""


# (on a GPU too: a scalar's site is counted in SCALAR mode there, one lane per converged group
# adding the active lanes without comparing addresses, gmprof.cuh leader)
@pytest.fixture(scope="module", params=["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
def prof(request):
    return Profiler(text=SOURCE, name="scalars.cu", backend=request.param)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("block", [64, 40])
def test_shared_scalars_counted_on_their_words(prof, mode, block):
    grid = 2
    flag = (np.arange(block) % 3 == 0).astype(np.int32)
    F = int(flag.sum())  # threads (of each block) whose flag is set
    out, o2 = np.zeros(grid * block, np.int32), np.zeros(grid, np.float64)
    report = prof.launch("scalars", grid, block, [out, o2, flag], mode=Mode.parse(mode))
    assert report.run.outputs_identical
    assert (out == block).all() and (o2 == 1.0 + F).all()
    # per block: s written by thread 0, updated by every thread's atomicAdd, read by every
    # thread; u (8 bytes: two words) written once and read once; f written once, updated by
    # the flagged threads, read once; pr: shared memory is counted per word, so a member's
    # access is on the member's words: pr.a (word 0) written once and read by every thread,
    # pr.b (word 1) written by the flagged threads
    expect = {"s": [2 * block + 1], "u": [2, 2], "pr": [block + 1, F], "f": [F + 2]}
    for name, words in expect.items():
        arr = report.array(name)
        np.testing.assert_array_equal(arr.counts, grid * np.array(words), err_msg=name)
        assert arr.out_of_range == 0 and arr.label == "exact", name
