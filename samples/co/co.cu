// Co-clustering, row-cluster step (the GMProf paper's co, its Figure 2): information-theoretic
// co-clustering of a nonnegative nRow x nCol matrix `data` into nRowCL row clusters and as many
// column clusters, given the column labels colCL, the row-cluster sizes rowCS and the current
// co-cluster model Acomp[rc][cc] = log q(column cluster cc | row cluster rc).
//
// Each row moves to the row cluster rc that maximises sum_c data[row][c] * Acomp[rc][colCL[c]]
// (the row's log-likelihood under that cluster: the KL distance to it, negated, up to a term
// that does not depend on rc). Empty clusters (rowCS[rc] == 0) are skipped. Rows are spread over
// the threads with a stride of ROWCL_THRDS x gridDim.x, and nRow must be a multiple of it; each
// block counts the rows it assigns to each cluster in shared memory ("Cnt"): integer atomics,
// so the counts do not depend on the order.
//
// What a profile shows: colCL, rowCS and Acomp are copied to shared memory once a block and then
// read there over and over: sColCL[c] and sAcomp words by every thread for every row and
// cluster, sRowCS[rc] (r-loop-invariant and thread-invariant, as the paper notes) by every
// thread for every row. In device memory each element of data is read once per nonempty cluster.

#define ROWCL_THRDS 128
#define MAX_CL 32
#define MAX_COLS 1024

__device__ void RClusterCnt(const float *data, int nRowCL, const int *colCL, const int *rowCS,
                            const float *Acomp, int nRow, int nCol, int n_idx, int *rowCL,
                            float *rowScore, int *clCnt)
{
    // Computation and reduction on memory
    for (int r = 0; r < nRow; r += ROWCL_THRDS * gridDim.x) {
        int best = -1;
        float bestDistance = 0.0f;
        for (int rc = 0; rc < nRowCL; rc++)
            if (rowCS[rc] > 0) {
                float tempDistance = 0.0f;
                for (int c = 0; c < nCol; c++) {
                    tempDistance += data[(r + n_idx) * nCol + c] *
                                    Acomp[rc * nRowCL + colCL[c]];
                }
                if (best < 0 || tempDistance > bestDistance) {
                    best = rc;
                    bestDistance = tempDistance;
                }
            }
        rowCL[r + n_idx] = best;
        rowScore[r + n_idx] = bestDistance;
        if (best >= 0)  // -1 only if every cluster is empty
            atomicAdd(&clCnt[best], 1);
    }
}

__global__ void co_row_clusters(int *rowCL, float *rowScore, int *blockCnt, const float *data,
                                const int *colCL, const int *rowCS, const float *Acomp, int nRow,
                                int nCol, int nRowCL)
{
    __shared__ float sAcomp[MAX_CL * MAX_CL];
    __shared__ int sColCL[MAX_COLS];
    __shared__ int sRowCS[MAX_CL];
    __shared__ int sCnt[MAX_CL];
    int tid = threadIdx.x;
    for (int i = tid; i < nRowCL * nRowCL; i += ROWCL_THRDS)
        sAcomp[i] = Acomp[i];
    for (int i = tid; i < nCol; i += ROWCL_THRDS)
        sColCL[i] = colCL[i];
    if (tid < nRowCL) {
        sRowCS[tid] = rowCS[tid];
        sCnt[tid] = 0;
    }
    __syncthreads();
    RClusterCnt(data, nRowCL, sColCL, sRowCS, sAcomp, nRow, nCol, blockIdx.x * ROWCL_THRDS + tid,
                rowCL, rowScore, sCnt);
    __syncthreads();
    if (tid < nRowCL)
        blockCnt[blockIdx.x * nRowCL + tid] = sCnt[tid];
}
