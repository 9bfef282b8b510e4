__global__ void scale(float *a, const int *idx, int n)
{
    extern __shared__ float buf[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    buf[threadIdx.x] = a[idx[i]];
    __syncthreads();
    a[idx[i]] = 2.0f * buf[threadIdx.x];
}
