// Tiled matrix product with prefetching (paper 004, Figure 2(d)): the next tiles of A and B are
// loaded into registers (a, b) while the current tiles in shared memory are being used, so the
// device-memory latency overlaps the inner product.
//
// Unlike the paper's sketch, the prefetch is skipped on the last trip, which would read one tile
// past the end of A and B. Shared-memory counts are those of matmul_tiled; device reads of A and
// B are the same too, only issued one trip earlier. M, N and K must be multiples of TILE.

#define TILE 16

__global__ void matmul_prefetch(float *C, const float *A, const float *B, int M, int N, int K)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x;
    int ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    int indexA = row * K + tx;
    int indexB = ty * N + col;
    float a = A[indexA];
    float b = B[indexB];
    float Ctemp = 0.0f;
    for (int t = 0; t < K; t += TILE) {
        As[ty][tx] = a;
        Bs[ty][tx] = b;
        indexA += TILE;
        indexB += TILE * N;
        __syncthreads();
        if (t + TILE < K) {
            a = A[indexA];
            b = B[indexB];
        }
        for (int i = 0; i < TILE; i++)
            Ctemp += As[ty][i] * Bs[i][tx];
        __syncthreads();
    }
    C[row * N + col] = Ctemp;
}
