// A read and a write of one element in one statement (passes/rewrite.py: one dm_pair call).
__global__ void pair(float *a, const float *b, const int *idx, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int j = idx[i];
        a[j] = a[j] + b[i];
    }
}

// The same with a double array, 8-byte elements (one counter an element as well).
__global__ void pair_double(double *a, const int *idx, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int j = idx[i];
        a[j] = a[j] * 2.0;
    }
}
