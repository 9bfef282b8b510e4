// Matrix product with 1x2 rectangular tiling (paper 004, Figure 2(b)): each thread computes two
// elements of C, TILE columns apart, so a block of TILE x TILE threads covers a TILE x 2*TILE
// tile of C.
//
// Each As[ty][i] loaded from shared memory now feeds two products, and every Bs word is still
// read TILE times per live range; Bs holds two TILE x TILE tiles of B side by side. M and K must
// be multiples of TILE and N a multiple of 2 * TILE.

#define TILE 16

__global__ void matmul_rect(float *C, const float *A, const float *B, int M, int N, int K)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][2 * TILE];
    int tx = threadIdx.x;
    int ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * (2 * TILE) + tx;
    int indexA = row * K + tx;
    int indexB = ty * N + col;
    float Ctemp = 0.0f;
    float Dtemp = 0.0f;
    for (int t = 0; t < K; t += TILE) {
        As[ty][tx] = A[indexA];
        Bs[ty][tx] = B[indexB];
        Bs[ty][tx + TILE] = B[indexB + TILE];
        indexA += TILE;
        indexB += TILE * N;
        __syncthreads();
        for (int i = 0; i < TILE; i++) {
            Ctemp += As[ty][i] * Bs[i][tx];
            Dtemp += As[ty][i] * Bs[i][tx + TILE];
        }
        __syncthreads();
    }
    C[row * N + col] = Ctemp;
    C[row * N + col + TILE] = Dtemp;
}
