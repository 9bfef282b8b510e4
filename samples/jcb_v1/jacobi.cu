// Jacobi sweep for Laplace's equation on an nx x ny grid, version 1 (the GMProf paper's jcb_v1):
// a tile of the OUTPUT is kept in shared memory.
//
// Each interior point becomes the mean of its four neighbours; the boundary rows and columns are
// never written (fixed values). The driver launches the kernel once per sweep, swapping in and
// out. A block walks over the tiles of the interior (grid-stride), so the same shared words hold
// a new tile on every trip: a new live range each time.
//
// What a profile shows: every word of otile is written once and read once per live range (no
// reuse: the tile only delays the store), while each element of `in` is read 4 times from device
// memory, once for each neighbour that needs it. Version 2 stages `in` instead.

#define TILE_X 32
#define TILE_Y 8

__global__ void jacobi_v1(float *out, const float *in, int nx, int ny)
{
    __shared__ float otile[TILE_Y][TILE_X];
    int tilesX = (nx - 2 + TILE_X - 1) / TILE_X;
    int tilesY = (ny - 2 + TILE_Y - 1) / TILE_Y;
    for (int t = blockIdx.x; t < tilesX * tilesY; t += gridDim.x) {
        int i = (t / tilesX) * TILE_Y + threadIdx.y + 1;
        int j = (t % tilesX) * TILE_X + threadIdx.x + 1;
        bool inside = (i < ny - 1) && (j < nx - 1);
        if (inside)
            otile[threadIdx.y][threadIdx.x] = 0.25f * (in[(i - 1) * nx + j] + in[(i + 1) * nx + j] +
                                                       in[i * nx + j - 1] + in[i * nx + j + 1]);
        __syncthreads();
        if (inside)
            out[i * nx + j] = otile[threadIdx.y][threadIdx.x];
        __syncthreads();
    }
}
