__global__ void stage(const float *in, float *out, int *hist, int n)
{ ::gmprof::enter();
    __shared__ float tile[64];
    int t = threadIdx.x;
    { bool __gmprof_first_0 = true; unsigned __gmprof_trip_0 = 0u; for (int base = 0; base < n; base += 64) { if (__gmprof_first_0) __gmprof_trip_0 = ::gmprof::trips((long long)(base), (long long)(n), (long long)(64), 0);
        ::gmprof::lr_start<0, 3>(&(tile[t]), (const void *)(tile)); tile[t] = in[base + t];
        __syncthreads();
        ::gmprof::sm<3, 3, ::gmprof::EACH>(&(tile[63 - t]), (const void *)(tile), 1u, nullptr); ::gmprof::sm<4, 3, ::gmprof::EACH>(&(tile[t]), (const void *)(tile), 1u, nullptr); out[base + t] = tile[63 - t] + tile[t];
        ::gmprof::dm<5, 2, ::gmprof::EACH>(&(hist[t % 8]), ((__gmprof_first_0) ? (__gmprof_trip_0) : 0u), nullptr); atomicAdd(&hist[t % 8], 1);
        __syncthreads();
     __gmprof_first_0 = false; } }
 ::gmprof::leave(); }
