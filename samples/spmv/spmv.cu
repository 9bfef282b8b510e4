// Sparse matrix-vector product y = A x with A in CSR form (rowPtr, colIdx, val): the "vector"
// scheme, THREADS_PER_ROW threads to a row, one of the GMProf paper's six applications (spmv).
//
// A block of blockDim.x threads handles blockDim.x / THREADS_PER_ROW consecutive rows. It first
// stages its slice of rowPtr in `bounds` (each entry is then read by the 2 * THREADS_PER_ROW
// threads of the two rows it bounds); each thread then sums a strided part of its row's
// products val[jj] * x[colIdx[jj]], and the row's threads add their partial sums in a tree in
// `partial` (dynamic shared memory, one float a thread). The order of every addition is fixed,
// so the result is the same on every run.
//
// What a profile shows: bounds words are read 64 times per live range and partial words a few
// times each (the tree): shared memory is used well. In device memory val, colIdx and rowPtr
// are read about once per element, y written once, and x read once per nonzero in its column:
// an irregular, input-dependent count that only a run can tell.

#define THREADS_PER_ROW 32
#define MAX_ROWS_PER_BLOCK (1024 / THREADS_PER_ROW)

__global__ void spmv_csr(float *y, const int *rowPtr, const int *colIdx, const float *val,
                         const float *x, int nRows)
{
    extern __shared__ float partial[];
    __shared__ int bounds[MAX_ROWS_PER_BLOCK + 1];
    int rowsPerBlock = blockDim.x / THREADS_PER_ROW;
    int firstRow = blockIdx.x * rowsPerBlock;
    int tid = threadIdx.x;
    if (tid <= rowsPerBlock)
        bounds[tid] = rowPtr[min(firstRow + tid, nRows)];
    __syncthreads();

    int local = tid / THREADS_PER_ROW;
    int lane = tid % THREADS_PER_ROW;
    int row = firstRow + local;
    float sum = 0.0f;
    if (row < nRows) {
        int end = bounds[local + 1];
        for (int jj = bounds[local] + lane; jj < end; jj += THREADS_PER_ROW)
            sum += val[jj] * x[colIdx[jj]];
    }
    partial[tid] = sum;
    __syncthreads();
    for (int s = THREADS_PER_ROW / 2; s > 0; s >>= 1) {
        if (lane < s)
            partial[tid] += partial[tid + s];
        __syncthreads();
    }
    if (lane == 0 && row < nRows)
        y[row] = partial[tid];
}
