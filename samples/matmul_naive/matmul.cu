// Dense matrix product C = A * B without shared memory (paper 004's starting point, before
// tiling). A is M x K, B is K x N, C is M x N, all row-major.
//
// One thread computes one element of C and reads a row of A and a column of B straight from
// device memory: every element of A is read N times and every element of B M times, once by
// each thread that needs it. A[row * K + k] does not depend on threadIdx.x, so the threads of a
// warp read the same word of A (warp-uniform), while B[k * N + col] is a coalesced row segment.

__global__ void matmul_naive(float *C, const float *A, const float *B, int M, int N, int K)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {
        float sum = 0.0f;
        for (int k = 0; k < K; k++)
            sum += A[row * K + k] * B[k * N + col];
        C[row * N + col] = sum;
    }
}
