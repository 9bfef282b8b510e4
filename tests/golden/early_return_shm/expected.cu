__global__ void scale(float *a, const int *idx, int n)
{ ::gmprof::enter();
    extern __shared__ float buf[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) { ::gmprof::leave(); return; }
    ::gmprof::dm<1, 0, ::gmprof::EACH>(&(a[idx[i]]), ::gmprof::One(), nullptr); buf[threadIdx.x] = a[idx[i]];
    __syncthreads();
    ::gmprof::dm<3, 0, ::gmprof::EACH>(&(a[idx[i]]), ::gmprof::One(), nullptr); a[idx[i]] = 2.0f * buf[threadIdx.x];
 ::gmprof::leave(); }
