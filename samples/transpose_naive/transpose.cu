// Matrix transpose through a shared-memory tile: the GMProf paper's Figure 1, completed.
//
// Each block reads a BLK_DIM x BLK_DIM tile of idata row by row (coalesced) into shared_data,
// then writes it to odata column by column of the tile, reading shared_data transposed. Every
// shared word is written once and read once per tile: shared memory is used for reordering, not
// for reuse. The transposed read shared_data[threadIdx.x][threadIdx.y] walks a column of the
// tile: its words are BLK_DIM apart, so the 32 threads of a warp fall on 4 banks (an 8-way bank
// conflict with BLK_DIM 16). The padded variant (transpose_padded) removes those conflicts.

#define BLK_DIM 16

__global__ void transpose(float *odata, float *idata, int width, int height)
{
    __shared__ float shared_data[BLK_DIM][BLK_DIM];
    unsigned int xIndex = blockIdx.x * BLK_DIM + threadIdx.x;
    unsigned int yIndex = blockIdx.y * BLK_DIM + threadIdx.y;
    if ((xIndex < width) && (yIndex < height)) {
        unsigned int index_in = yIndex * width + xIndex;
        shared_data[threadIdx.y][threadIdx.x] = idata[index_in];
    }
    __syncthreads();
    // The block now writes the tile at the mirrored position: (blockIdx.y, blockIdx.x).
    xIndex = blockIdx.y * BLK_DIM + threadIdx.x;
    yIndex = blockIdx.x * BLK_DIM + threadIdx.y;
    if ((xIndex < height) && (yIndex < width)) {
        unsigned int index_out = yIndex * height + xIndex;
        odata[index_out] = shared_data[threadIdx.x][threadIdx.y];
    }
}
