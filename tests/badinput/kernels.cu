// Kernels for the bad-input battery (tests/badinput/): one that works, and one for each way a
// launch can fail. The tests find lines by their marker comments (`// LINE: name`).

__global__ void saxpy(float *y, const float *x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

// writes one element per thread, whatever the array's size
__global__ void overrun(float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    y[i] = 1.0f;  // LINE: overrun
}

// never ends: clock64() keeps the loop (it cannot be proven finite) and is no yield point
__global__ void spin(int *out)
{
    while (clock64() >= 0) {  // LINE: spin
    }
    out[threadIdx.x] = 1;
}

__global__ void diverge(int *out)
{
    if (threadIdx.x < 16) {
        __syncthreads();  // LINE: diverge-a
        out[threadIdx.x] = 1;
    } else {
        __syncthreads();  // LINE: diverge-b
        out[threadIdx.x] = 2;
    }
}

__device__ int recurse(int n)  // LINE: recurse
{
    int big[4096];
    big[n % 4096] = n;
    return n == 0 ? 0 : recurse(n - 1) + big[(n * 7) % 4096];
}

__global__ void deep(int *out, int n)
{
    out[threadIdx.x] = recurse(n);
}

// each launch adds 1 to a __device__ counter and reports it
__device__ int launches;

__global__ void count_launches(int *out)
{
    if (threadIdx.x == 0) out[0] = atomicAdd(&launches, 1) + 1;
}

// a pointer to pointers: row r of the list gets r + 1 added to its first element
__global__ void rows(float **r, int n)
{
    if (threadIdx.x < n) r[threadIdx.x][0] += threadIdx.x + 1;
}

// the result depends on when it runs: the two runs' outputs differ
__global__ void stamp(long long *out)
{
    out[threadIdx.x] = clock64();
}
