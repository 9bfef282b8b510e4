"""Quasi-affine indices (quotients and remainders by launch values, min/max, conditions through
local booleans, definitions made earlier in the same loop iteration) are counted at launch, and
the counts equal the trace of every access (the oracle), element by element and site by site."""
from __future__ import annotations

import numpy as np
import pytest

import gmprof
from gmprof.mode import Mode

KERNELS = r"""
#define TILE_X 8
#define TILE_Y 4
// a tile walk as in a Jacobi sweep: i and j from t / tilesX and t % tilesX, defined in the body
__global__ void tiles(float *out, const float *in, int nx, int ny)
{
    __shared__ float s[TILE_Y][TILE_X];
    int tilesX = (nx - 2 + TILE_X - 1) / TILE_X;
    int tilesY = (ny - 2 + TILE_Y - 1) / TILE_Y;
    for (int t = blockIdx.x; t < tilesX * tilesY; t += gridDim.x) {
        int i = (t / tilesX) * TILE_Y + threadIdx.y + 1;
        int j = (t % tilesX) * TILE_X + threadIdx.x + 1;
        bool inside = (i < ny - 1) && (j < nx - 1);
        if (inside)
            s[threadIdx.y][threadIdx.x] = in[(i - 1) * nx + j] + in[i * nx + j + 1];
        __syncthreads();
        if (inside)
            out[i * nx + j] = s[threadIdx.y][threadIdx.x];
        __syncthreads();
    }
}

// groups of 16 threads, negative numerators (C truncates toward zero), min(), a grid-stride loop
// whose iterator the indices never use (its trip count only multiplies)
__global__ void groups(int *out, const int *in, int n, int reps)
{
    __shared__ int s[64];
    int t = threadIdx.x;
    int lane = t % 16;
    int first = t - lane;
    s[t] = in[min(blockIdx.x * 64 + t, n - 1)];
    __syncthreads();
    int acc = 0;
    for (int r = blockIdx.x; r < reps; r += gridDim.x)
        for (int k = 0; k < 16; k++)
            acc += s[first + k] + s[(t - 20) / 8 + 2 + 4] + ((lane % 4) ? s[lane / 4] : 0);
    out[blockIdx.x * 64 + t] = acc;
}
"""


@pytest.fixture(scope="module")
def prof(tmp_path_factory):
    src = tmp_path_factory.mktemp("qa") / "qa.cu"
    src.write_text(KERNELS)
    return gmprof.api.profiler(src, backend="cpu")


def _check(prof, kernel, grid, block, make_args):
    exact = prof.launch(kernel, grid, block, make_args(), mode=Mode.parse("default"))
    static = {s.how for s in exact.sites}
    traced = prof.launch(kernel, grid, block, make_args(), mode=Mode.parse("trace"))
    for a in traced.arrays:
        np.testing.assert_array_equal(exact.array(a.name).counts, a.counts, err_msg=a.name)
    assert sorted(s.executions for s in exact.sites) == sorted(s.executions for s in traced.sites)
    return exact, static


def test_tile_walk_is_static_and_exact(prof):
    nx, ny = 21, 14  # interior 19 x 12: partial tiles on both edges

    def args():
        rng = np.random.default_rng(1)
        return [np.zeros(nx * ny, np.float32), rng.random(nx * ny, dtype=np.float32),
                np.int32(nx), np.int32(ny)]

    report, how = _check(prof, "tiles", 3, (8, 4), args)
    assert how == {"static"}, [(s.text, s.how) for s in report.sites]


def test_groups_quotients_remainders_min_and_separable_loops_are_exact(prof):
    n, reps = 150, 5

    def args():
        return [np.zeros(3 * 64, np.int32), np.arange(n, dtype=np.int32), np.int32(n),
                np.int32(reps)]

    report, how = _check(prof, "groups", 3, 64, args)
    assert how == {"static"}, [(s.text, s.how) for s in report.sites]


def test_quotients_that_are_not_integer_indices_stay_dynamic():
    """A float quotient is not an index, and a variable defined AFTER its use in the loop body
    reaches the use from the previous iteration: neither may become a formula."""
    from gmprof.frontend.program import load
    from gmprof.passes.pipeline import analyze

    text = ("__global__ void k(float *a, const float *b, float h, int n) {\n"
            "    a[(int)(threadIdx.x / h)] = 1.0f;\n"
            "    int j = 0;\n"
            "    for (int t = 0; t < n; t++) {\n"
            "        a[j] = b[t];\n"
            "        j = t / 2;\n"
            "    }\n"
            "}\n")
    program = analyze(load(text=text, name="k.cu"))
    by_line = {(sc.site.location.line, sc.site.text): sc
               for sc in program.kernels["k"].classes}
    assert not by_line[(2, "a[(int)(threadIdx.x / h)]")].static
    assert not by_line[(5, "a[j]")].static
    assert by_line[(5, "b[t]")].static
