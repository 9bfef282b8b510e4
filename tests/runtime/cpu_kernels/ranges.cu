// Kernels whose device accesses walk ranges in loops (passes/ranges.py, gmprof.cuh dm_range).
// tests/runtime/test_range_counts.py derives every expected count with numpy.

#define LANES 32

// CSR rows, one thread a row: val[j] walks [rowPtr[r], rowPtr[r + 1]) (stride 1, data bounds)
__global__ void csr_scalar(float *y, const int *rowPtr, const float *val, int nRows)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < nRows) {
        float s = 0.0f;
        for (int j = rowPtr[r]; j < rowPtr[r + 1]; j++)
            s += val[j];
        y[r] = s;
    }
}

// CSR rows, LANES threads a row: each lane walks its row with stride LANES (merged per warp)
__global__ void csr_vector(float *y, const int *rowPtr, const float *val, int nRows)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int r = t / LANES;
    int lane = t % LANES;
    float s = 0.0f;
    if (r < nRows) {
        int end = rowPtr[r + 1];
        for (int j = rowPtr[r] + lane; j < end; j += LANES)
            s += val[j];
    }
    y[t] = s;
}

// backwards (stride -1), stride 2 per thread (not merged), a stride through a local set in
// the iteration, and a column walk of a 2-D array (stride = its row length)
__global__ void walks(float *out, const float *a, const float *b, const float *c,
                      float (*m)[8], const int *lo, const int *hi, int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n)
        return;
    float s = 0.0f;
    for (int j = hi[t] - 1; j >= lo[t]; j--)
        s += a[j];
    for (int j = lo[t]; j < hi[t]; j += 2)
        s += b[j];
    for (int j = lo[t]; j < hi[t]; ++j) {
        int k = 3 * j + 1;
        s += c[k];
    }
    for (int i = 0; i < lo[t] % 5; i++)
        s += m[i][t % 8];
    out[t] = s;
}

// every thread of the block walks the same row: one thread counts for the block
__global__ void shared_row(float *out, const float *a, const int *len, int n)
{
    float s = 0.0f;
    int start = blockIdx.x * n;
    for (int c = 0; c < len[blockIdx.x]; c++)
        s += a[start + c];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// not ranges: an early exit, a condition inside the loop, a bound the body changes
__global__ void not_ranges(float *out, const float *a, const int *lo, const int *hi, int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n)
        return;
    float s = 0.0f;
    for (int j = lo[t]; j < hi[t]; j++) {
        if (a[j] > 0.9f)
            break;
        s += a[j];
    }
    for (int j = lo[t]; j < hi[t]; j++)
        if (j % 3)
            s += a[j];
    int e = hi[t];
    for (int j = lo[t]; j < e; j++) {
        s += a[j];
        e -= (j & 1);
    }
    out[t] = s;
}

// gathers through an index that walks a range (passes/gathers.py): x's counts come from
// colIdx's contents; tab may be the same memory as idx (then counted per access)
__global__ void csr_gather(float *y, const int *rowPtr, const int *colIdx, const float *x,
                           int nRows)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int r = t / LANES;
    int lane = t % LANES;
    float s = 0.0f;
    if (r < nRows) {
        for (int j = rowPtr[r] + lane; j < rowPtr[r + 1]; j += LANES)
            s += x[colIdx[j]];
    }
    y[t] = s;
}

// spmv's loop: val[j] and colIdx[j] walk the gather's index elements (gathers.py twins), and
// colIdx[j] is read again after the loop (a site of its own, not a twin)
__global__ void csr_twins(float *y, const int *rowPtr, const int *colIdx, const float *val,
                          const float *x, int nRows)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int r = t / LANES;
    int lane = t % LANES;
    float s = 0.0f;
    if (r < nRows) {
        for (int j = rowPtr[r] + lane; j < rowPtr[r + 1]; j += LANES)
            s += val[j] * x[colIdx[j]];
        if (lane == 0 && rowPtr[r] < rowPtr[r + 1])
            s += colIdx[rowPtr[r]];
    }
    y[t] = s;
}

__global__ void int_gather(int *out, const int *lo, const int *idx, const int *tab, int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) {
        int s = 0;
        for (int j = lo[t]; j < lo[t] + 4; j++)
            s += tab[idx[j]];
        int keep[2];  // a thread's own array: its writes cannot change idx
        keep[0] = s;
        keep[1] = -s;
        out[t] = keep[t & 0];
    }
}

// the index array is written: no gather
__global__ void written_index(float *y, int *idx, const float *x, int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    int k = idx[t] & 3;
    for (int j = t; j < t + k; j++)
        s += x[idx[j]];
    if (t < n)
        idx[t] = 0;
    y[t] = s;
}

// a loop-invariant read in a one-statement body: counted once with the trip count, which the
// loop computes before the counts placed in front of that statement
__global__ void invariant_one_statement(float *out, const int *col, const float *a, int n)
{
    int j = col[0];
    float acc = 0.0f;
    for (int k = 0; k < n; k++)
        acc += a[j];
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
