// Secondary induction variables of a for loop (passes/value_variables.py _induction);
// tests/runtime/test_induction.py derives every count.

#define TILE 8
#define STAGES 4

// cuda-samples' globalToShmemAsyncCopy: `i` is stepped beside the iterator `a`, and picks the
// stage of a rotating buffer (`maxPipelineStages` is a constexpr size_t there too)
__global__ void pipeline(float *C, const float *A, const float *B, int wA, int wB)
{
    constexpr size_t stages = STAGES;
    __shared__ float As[STAGES][TILE][TILE];
    __shared__ float Bs[STAGES][TILE][TILE];
    float sum = 0.0f;
    const int aBegin = wA * TILE * blockIdx.y;
    const int aEnd = aBegin + wA - 1;
    int aStep = TILE;
    const int bBegin = TILE * blockIdx.x;
    int bStep = TILE * wB;
    for (int a = aBegin, b = bBegin, i = 0; a <= aEnd; a += aStep, b += bStep, ++i) {
        const int j = i % stages;
        As[j][threadIdx.y][threadIdx.x] = A[a + wA * threadIdx.y + threadIdx.x];
        Bs[j][threadIdx.y][threadIdx.x] = B[b + wB * threadIdx.y + threadIdx.x];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k)
            sum += As[j][threadIdx.y][k] * Bs[j][k][threadIdx.x];
    }
    C[(blockIdx.y * TILE + threadIdx.y) * wB + blockIdx.x * TILE + threadIdx.x] = sum;
}

// initialised before the loop, stepped by a launch value (`up`) and down (`down`)
__global__ void strides(int *out, int n, int step)
{
    __shared__ int ring[STAGES * 32];
    int up = 3;
    int down = 5 * n + 2;
    for (int t = 0; t < n; t++, up += step, down -= 5) {
        ring[(up % STAGES) * 32 + threadIdx.x] += 1;
        out[down * 32 + threadIdx.x] += t;
    }
}

// not static: `i` also changes in the body; `s` starts where the last run of its loop stopped
__global__ void not_induction(int *out, const int *flags, int n)
{
    __shared__ int ring[STAGES * 32];
    ring[threadIdx.x] = 0;
    for (int t = 0, i = 0; t < n; ++t, ++i) {
        if (flags[t] > 0)
            ++i;
        ring[(i % STAGES) * 32 + threadIdx.x] += 1;
    }
    int s = 0;
    for (int o = 0; o < n; ++o)
        for (; s < 2 * o + 2; ++s)
            out[s * 32 + threadIdx.x] += 1;
}

// `i % stages` with stages a size_t converts i to unsigned: static while i >= 0 (`pipeline`),
// measured where i may be negative (-1 % (size_t)4 is 3, not -1)
__global__ void unsigned_stage(int *out, int n)
{
    constexpr size_t stages = STAGES;
    __shared__ int ring[STAGES];
    if (threadIdx.x < STAGES)
        ring[threadIdx.x] = 0;
    __syncthreads();
    for (int t = 0, i = 2; t < n; ++t, --i)
        if (threadIdx.x == 0)
            ring[i % stages] += 1;
    __syncthreads();
    if (threadIdx.x < STAGES)
        out[threadIdx.x] = ring[threadIdx.x];
}
