// Kernels for tests/runtime/test_cpu_backend.py: plain CUDA features on the CPU backend.

#define BLOCK 256

__global__ void vadd(float *c, const float *a, const float *b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

// Tree reduction through shared memory, one partial sum per block.
__global__ void block_sum(const float *in, float *out, int n)
{
    __shared__ float s[BLOCK];
    unsigned t = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (t < stride) s[t] += s[t + stride];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}

// A __shared__ array declared inside a __device__ function.
__device__ int block_max(int v)
{
    __shared__ int scratch[BLOCK];
    scratch[threadIdx.x] = v;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride) scratch[threadIdx.x] = max(scratch[threadIdx.x], scratch[threadIdx.x + stride]);
        __syncthreads();
    }
    int r = scratch[0];
    __syncthreads();
    return r;
}

__global__ void use_block_max(const int *in, int *out)
{
    int m = block_max(in[blockIdx.x * blockDim.x + threadIdx.x]);
    out[blockIdx.x * blockDim.x + threadIdx.x] = m;
}

// Dynamic shared memory: the block's segment reversed through `buf`; `words` aliases `buf`.
__global__ void reverse_dynamic(const float *in, float *out, unsigned long long *addr, int n_per_block)
{
    GMPROF_DYNAMIC_SHARED(float, buf);
    GMPROF_DYNAMIC_SHARED(volatile unsigned int, words);
    int base = blockIdx.x * n_per_block;
    for (int k = threadIdx.x; k < n_per_block; k += blockDim.x) buf[k] = in[base + k];
    __syncthreads();
    for (int k = threadIdx.x; k < n_per_block; k += blockDim.x) out[base + k] = buf[n_per_block - 1 - k];
    __syncthreads();
    if (threadIdx.x == 0) {
        addr[0] = (unsigned long long)buf;
        addr[1] = (unsigned long long)words;
        addr[2] = words[0];
    }
}

template <typename T, int K>
__global__ void scale_add(T *x, T a)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    x[i] = x[i] * (T)K + a;
}

// Every thread records its built-in variables at its global linear id.
__global__ void dims(unsigned *out)
{
    unsigned bid = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    unsigned tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    unsigned g = bid * (blockDim.x * blockDim.y * blockDim.z) + tid;
    unsigned *o = out + 12 * g;
    o[0] = threadIdx.x; o[1] = threadIdx.y; o[2] = threadIdx.z;
    o[3] = blockIdx.x;  o[4] = blockIdx.y;  o[5] = blockIdx.z;
    o[6] = blockDim.x;  o[7] = blockDim.y;  o[8] = blockDim.z;
    o[9] = gridDim.x;   o[10] = gridDim.y;  o[11] = gridDim.z;
}

// Threads past `live` return before the barrier; the others still get through it.
__global__ void early_return(const int *in, int *out, int live)
{
    __shared__ int s[BLOCK];
    int t = threadIdx.x;
    if (t >= live) return;
    s[t] = in[t] * 10;
    __syncthreads();
    out[t] = s[live - 1 - t];
}

__global__ void sync_votes(const int *pred, int *out)
{
    int p = pred[blockIdx.x * blockDim.x + threadIdx.x];
    int c = __syncthreads_count(p);
    int a = __syncthreads_and(p);
    int o = __syncthreads_or(p);
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    out[3 * g + 0] = c;
    out[3 * g + 1] = a;
    out[3 * g + 2] = o;
}

__device__ int counter;
__device__ float table[16];
__constant__ float coef[4];

// table[i] = coef[i % 4] * i; counter counts the threads.
__global__ void use_globals()
{
    int i = threadIdx.x;
    table[i] = coef[i % 4] * i;
    atomicAdd(&counter, 1);
}

__global__ void print_some(int n)
{
    if (threadIdx.x < n) printf("thread %d of %d says %.1f\n", threadIdx.x, blockDim.x, 0.5f * threadIdx.x);
}

struct Pair { int a; float b; double c; };

__global__ void take_struct(Pair p, float4 v, float *out)
{
    out[0] = p.a; out[1] = p.b; out[2] = (float)p.c;
    out[3] = v.x; out[4] = v.y; out[5] = v.z; out[6] = v.w;
    out[7] = sizeof(float4) + 100 * __alignof__(float4);
    out[8] = sizeof(float3) + 100 * __alignof__(float3);
    out[9] = sizeof(double2) + 100 * __alignof__(double2);
    out[10] = sizeof(int2) + 100 * __alignof__(int2);
    out[11] = sizeof(short4) + 100 * __alignof__(short4);
    out[12] = sizeof(uchar4) + 100 * __alignof__(uchar4);
}
