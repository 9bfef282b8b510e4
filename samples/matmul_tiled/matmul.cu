// Tiled matrix product C = A * B (paper 004, Figure 2(a)): each block computes a TILE x TILE tile
// of C, and its threads stage TILE x TILE tiles of A and B through shared memory.
//
// Templated on the tile size; the driver launches matmul_tiled<16>, the paper's 16 x 16 tiles.
// Per live range (one trip of the t loop) each word of As and Bs is written once and read TILE
// times, so device reads of A and B drop from N and M per element (matmul_naive) to N / TILE and
// M / TILE. M, N and K must be multiples of TILE: there are no bounds checks, as in the paper.

template <int TILE>
__global__ void matmul_tiled(float *C, const float *A, const float *B, int M, int N, int K)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x;
    int ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    // indexA walks right along A's row band, indexB down B's column band, as in the paper.
    int indexA = row * K + tx;
    int indexB = ty * N + col;
    float Ctemp = 0.0f;
    for (int t = 0; t < K; t += TILE) {
        As[ty][tx] = A[indexA];
        Bs[ty][tx] = B[indexB];
        indexA += TILE;
        indexB += TILE * N;
        __syncthreads();
        for (int i = 0; i < TILE; i++)
            Ctemp += As[ty][i] * Bs[i][tx];
        // The next trip overwrites As and Bs: wait until every thread has read this tile.
        __syncthreads();
    }
    C[row * N + col] = Ctemp;
}
