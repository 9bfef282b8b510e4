// Issue 24's data-dependent read of one hot element: every thread reads x[idx[k]] K times, idx
// all zero. grid 65,536 x 256, K = 300: 5,033,164,800 reads of x[0] (2^32 + 738,197,504).
__global__ void hot(const float *x, const int *idx, float *out, int K) {
    float s = 0.0f;
    for (int k = 0; k < K; ++k) s += x[idx[k]];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
