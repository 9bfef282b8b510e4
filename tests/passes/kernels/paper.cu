// The paper's own examples (Zheng et al., GMProf): Figure 1, Figure 2, and friends.
#define BLK_DIM 16
#define ROWCL_THRDS 64
#define ROWCL_BLKS 8

// Figure 1: transpose through a shared tile.
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
    xIndex = blockIdx.y * BLK_DIM + threadIdx.x;
    yIndex = blockIdx.x * BLK_DIM + threadIdx.y;
    if ((xIndex < height) && (yIndex < width)) {
        unsigned int index_out = yIndex * height + xIndex;
        odata[index_out] = shared_data[threadIdx.x][threadIdx.y];
    }
}

// Figure 2: the co-clustering row-cluster distance loop nest.
__device__ void RClusterCnt(float *data, int nRowCL, int *colCL, int *rowCS, float *Acomp,
                            float *dist, int nRow, int nCol, int n_idx)
{
    float tempDistance = 0.0f;
    for (int r = 0; r < nRow; r += ROWCL_THRDS * ROWCL_BLKS) {
        for (int rc = 0; rc < nRowCL; rc++)
            if (rowCS[rc] > 0)
                for (int c = 0; c < nCol; c++) {
                    tempDistance += data[(r + n_idx) * nCol + c] *
                        Acomp[rc * nRowCL + colCL[c]];
                }
    }
    dist[n_idx] = tempDistance;
}

__global__ void coclustering(float *data, int nRowCL, int *colCL, int *rowCS, float *Acomp,
                             float *dist, int nRow, int nCol)
{
    int n_idx = blockIdx.x * blockDim.x + threadIdx.x;
    RClusterCnt(data, nRowCL, colCL, rowCS, Acomp, dist, nRow, nCol, n_idx);
}

// The tiled matrix product: every shared and device access is static.
#define TILE 16
__global__ void matmul_tiled(const float *A, const float *B, float *C, int N)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    float sum = 0.0f;
    for (int t = 0; t < N / TILE; ++t) {
        As[ty][tx] = A[row * N + t * TILE + tx];
        Bs[ty][tx] = B[(t * TILE + ty) * N + col];
        __syncthreads();
        for (int k = 0; k < TILE; ++k)
            sum += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    C[row * N + col] = sum;
}

// A Jacobi step with the input tile (and halo) staged in shared memory.
__global__ void jacobi_tile(const float *in, float *out, int n)
{
    __shared__ float tile[TILE + 2][TILE + 2];
    int tx = threadIdx.x, ty = threadIdx.y;
    int i = blockIdx.y * TILE + ty + 1;
    int j = blockIdx.x * TILE + tx + 1;
    tile[ty + 1][tx + 1] = in[i * n + j];
    if (tx == 0) tile[ty + 1][0] = in[i * n + j - 1];
    if (tx == TILE - 1) tile[ty + 1][TILE + 1] = in[i * n + j + 1];
    if (ty == 0) tile[0][tx + 1] = in[(i - 1) * n + j];
    if (ty == TILE - 1) tile[TILE + 1][tx + 1] = in[(i + 1) * n + j];
    __syncthreads();
    out[i * n + j] = 0.25f * (tile[ty][tx + 1] + tile[ty + 2][tx + 1] +
                              tile[ty + 1][tx] + tile[ty + 1][tx + 2]);
}
