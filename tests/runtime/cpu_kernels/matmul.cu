// The tiled matrix product of the CPU backend's performance target (a copy of
// samples/matmul_tiled/matmul.cu, so the test does not depend on the samples).
template <int TILE>
__global__ void matmul_tiled(float *C, const float *A, const float *B, int M, int N, int K)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x;
    int ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
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
        __syncthreads();
    }
    C[row * N + col] = Ctemp;
}
