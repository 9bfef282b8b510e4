// Matrix transpose through a padded shared-memory tile (the GMProf paper's Figure 1 with the
// usual fix for bank conflicts).
//
// Same as transpose_naive except that each row of the tile has one extra word: the transposed
// read shared_data[threadIdx.x][threadIdx.y] then walks a column whose words are BLK_DIM + 1
// apart, which falls in a different bank for each thread of a row. The padding column
// (shared_data[*][BLK_DIM]) is never written or read: a profiler should show BLK_DIM words of
// the array with zero accesses, next to BLK_DIM * BLK_DIM words written once and read once.
#define BLK_DIM 16

__global__ void transpose(float *odata, float *idata, int width, int height)
{
    __shared__ float shared_data[BLK_DIM][BLK_DIM + 1];
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
