__global__ void stage(const float *in, float *out, int *hist, int n)
{
    __shared__ float tile[64];
    int t = threadIdx.x;
    for (int base = 0; base < n; base += 64) {
        tile[t] = in[base + t];
        __syncthreads();
        out[base + t] = tile[63 - t] + tile[t];
        atomicAdd(&hist[t % 8], 1);
        __syncthreads();
    }
}
