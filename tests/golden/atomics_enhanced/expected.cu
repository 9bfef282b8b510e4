__global__ void stage(const float *in, float *out, int *hist, int n)
{ ::gmprof::enter();
    __shared__ float tile[64];
    int t = threadIdx.x;
    for (int base = 0; base < n; base += 64) {
        ::gmprof::lr_start<0, 3>(&(tile[t]), (const void *)(tile)); tile[t] = in[base + t];
        __syncthreads();
        ::gmprof::sm<3, 3, ::gmprof::EACH>(&(tile[63 - t]), (const void *)(tile), ::gmprof::One(), nullptr); ::gmprof::sm<4, 3, ::gmprof::EACH>(&(tile[t]), (const void *)(tile), ::gmprof::One(), nullptr); out[base + t] = tile[63 - t] + tile[t];
        atomicAdd(&hist[t % 8], 1);
        __syncthreads();
    }
 ::gmprof::leave_all(); }
