// Geometric loops (passes/geometric.py); tests/runtime/test_geometric.py derives every count.

#define WIDTH 64

__global__ void tree(float *out, const float *in)
{
    __shared__ float part[WIDTH];
    int tid = threadIdx.x;
    part[tid] = in[blockIdx.x * WIDTH + tid];
    __syncthreads();
    for (int s = WIDTH / 2; s > 0; s >>= 1) {
        if (tid < s)
            part[tid] += part[tid + s];
        __syncthreads();
    }
    for (int s = 100; s >= 1; s /= 2)
        if (tid % 8 < s % 8)
            out[blockIdx.x * WIDTH + tid] += part[s % WIDTH];
    for (int s = WIDTH; s > 1; s = s >> 2)
        out[blockIdx.x * WIDTH + (tid + s) % WIDTH] += 1.0f;
}

// not static: the iterator also changes in the body; the start is not known when compiling
__global__ void not_geometric(float *out, const float *in)
{
    __shared__ float part[WIDTH];
    int tid = threadIdx.x;
    part[tid] = in[tid];
    __syncthreads();
    for (int s = WIDTH / 2; s > 0; s >>= 1) {
        if (tid < s)
            out[tid] += part[tid + s];
        if (in[0] > 2.0f)
            s = 0;
    }
    for (int s = blockDim.x / 2; s > 0; s >>= 1)
        if (tid < s)
            out[tid] += part[s];
}
