// s[j]: j is read from memory before the loop, so s[j] is not static; it is loop-invariant in
// 'for k' and tid-invariant: one thread counts it once, with the trip count.
__global__ void uniform_reads(const int *col, float *out, int n)
{ ::gmprof::enter();
    __shared__ float s[128];
    s[threadIdx.x] = threadIdx.x;
    __syncthreads();
    int j = col[0];
    float acc = 0.0f;
    { { int k = 0; unsigned __gmprof_trip_0 = ::gmprof::trips((long long)(k), (long long)(n), (long long)(1), 0); if (__gmprof_trip_0) { ::gmprof::sm<2, 2, ::gmprof::BLOCK>(&(s[j]), (const void *)(s), __gmprof_trip_0, nullptr); } } for (int k = 0; k < n; k++)
        acc += s[j]; }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
 ::gmprof::leave_all(); }
