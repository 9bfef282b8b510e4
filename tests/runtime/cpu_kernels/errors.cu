// Kernels for tests/runtime/test_cpu_backend.py: kernels that fail, and one that works after.
// The tests find the lines below by their marker comments (`// LINE: name`).

__global__ void fine(int *out)
{
    out[threadIdx.x] = 2 * threadIdx.x;
}

// Lanes 0..15 of warp 0 wait at a block barrier that lanes 16..31 never reach: those wait at a
// warp barrier for lanes 0..15. (Threads that exit would count as arrived, so the others must
// not just return.)
__global__ void deadlock(int *out)
{
    if (threadIdx.x < 16) {
        __syncthreads();  // LINE: deadlock-barrier
    } else {
        __syncwarp();  // LINE: deadlock-syncwarp
    }
    out[threadIdx.x] = 1;
}

__global__ void wild_write(int *out, long long offset)
{
    if (threadIdx.x == 5 && blockIdx.x == 1)
        out[offset] = 1;  // LINE: wild-write
    out[threadIdx.x] = 3;
}

__global__ void trap(int *out)
{
    out[threadIdx.x] = 4;
    if (threadIdx.x == 7) __trap();  // LINE: trap
}

__global__ void failed_assert(const int *in)
{
    assert(in[threadIdx.x] < 100);  // LINE: assert
}

__global__ void divide(const int *num, const int *den, int *out)
{
    out[threadIdx.x] = num[threadIdx.x] / den[threadIdx.x];  // LINE: divide
}

__device__ int deep(int n, volatile char *sink)
{
    volatile char frame[4096];
    frame[0] = (char)n;
    *sink = frame[0];
    return n == 0 ? 0 : deep(n - 1, sink) + frame[0];
}

__global__ void overflow(int *out, int depth)
{
    char sink;
    out[threadIdx.x] = deep(depth, &sink);
}

// Threads 16.. spin until thread 0 sets a flag after a barrier that they never reach.
__global__ void livelock(int *out)
{
    __shared__ volatile int flag;
    if (threadIdx.x == 0) flag = 0;
    if (threadIdx.x < 16) {
        __syncthreads();  // LINE: livelock-barrier
        flag = 1;
    } else {
        while (flag == 0) __nanosleep(50);  // LINE: livelock-spin
    }
    out[threadIdx.x] = flag;
}

// A spin with no yield point at all: only Ctrl-C ends it.
__global__ void spin_forever(volatile int *flag)
{
    while (*flag == 0) {}
}
