// EM clustering with a Gaussian mixture (diagonal covariances), version 1 (the GMProf paper's
// em_v1). The driver launches em_estep and em_mstep once per iteration.
//
// em_estep: a block walks over tiles of EM_BLOCK consecutive points (grid-stride), one thread a
// point. For each tile it stages the points in sX, each thread computes its point's log-density
// under each of the K clusters and normalises them into responsibilities (sResp, and resp in
// device memory); the block then adds, per cluster, the responsibilities r, r * x_d and
// r * x_d^2 of the tile's points to running sums kept in registers (task j of the K * (2D + 1)
// sums belongs to thread j % EM_BLOCK), and sums the tile's log-likelihood in a tree in sLL. At
// the end each block writes its sums as one row of partials, and its log-likelihood to blockLL.
// em_mstep: one block a cluster. Adds the rows of partials in block order and sets the new mean,
// inverse variance and log-normaliser (log weight - 1/2 log|Sigma| - D/2 log 2 pi); block 0 also
// adds up the iteration's log-likelihood.
//
// No atomics, every sum in a fixed order: the result is the same on every run.
//
// What a profile of em_estep shows (the paper's Table 3 story): the four shared arrays are all
// used, sLogConst most (read by every thread for every tile), sX and sResp tens of times a word
// per tile, but sLL only about 3 times a word per tile (the paper's a4, rarely used). Meanwhile
// the device arrays mu and invVar (a5, a6) are read by every thread for every point: N reads
// per element per iteration, far more than any shared word. Version 2 moves them into shared
// memory and moves sLL out to make room.

#define EM_BLOCK 128
#define MAX_D 16
#define MAX_K 16
#define MAX_TASKS ((MAX_K * (2 * MAX_D + 1) + EM_BLOCK - 1) / EM_BLOCK)
#define LOG_2PI 1.8378770664093453f
#define VAR_FLOOR 1e-4f

__global__ void em_estep(float *resp, float *partials, float *blockLL, const float *X,
                         const float *mu, const float *invVar, const float *logConst, int N,
                         int D, int K)
{
    __shared__ float sX[EM_BLOCK * MAX_D];
    __shared__ float sResp[EM_BLOCK * MAX_K];
    __shared__ float sLogConst[MAX_K];
    __shared__ float sLL[EM_BLOCK];
    int tid = threadIdx.x;
    int S = 2 * D + 1;  // sums per cluster: r, r x_d (D of them), r x_d^2 (D)
    float acc[MAX_TASKS];
    for (int a = 0; a < MAX_TASKS; a++)
        acc[a] = 0.0f;
    float blockTotal = 0.0f;
    if (tid < K)
        sLogConst[tid] = logConst[tid];

    for (int first = blockIdx.x * EM_BLOCK; first < N; first += gridDim.x * EM_BLOCK) {
        int n = first + tid;
        // The tile's points are contiguous in X: load them as one coalesced run.
        for (int i = tid; i < EM_BLOCK * D; i += EM_BLOCK)
            sX[i] = (first * D + i < N * D) ? X[first * D + i] : 0.0f;
        __syncthreads();

        float maxLog = 0.0f;
        for (int k = 0; k < K; k++) {
            float dist = 0.0f;
            for (int d = 0; d < D; d++) {
                float diff = sX[tid * D + d] - mu[k * D + d];
                dist += diff * diff * invVar[k * D + d];
            }
            float l = sLogConst[k] - 0.5f * dist;
            sResp[tid * K + k] = l;
            if (k == 0 || l > maxLog)
                maxLog = l;
        }
        float total = 0.0f;
        for (int k = 0; k < K; k++) {
            float e = expf(sResp[tid * K + k] - maxLog);
            sResp[tid * K + k] = e;
            total += e;
        }
        // Threads past the last point keep zero responsibilities, so they add nothing below.
        for (int k = 0; k < K; k++) {
            float r = (n < N) ? sResp[tid * K + k] / total : 0.0f;
            sResp[tid * K + k] = r;
            if (n < N)
                resp[n * K + k] = r;
        }
        sLL[tid] = (n < N) ? maxLog + logf(total) : 0.0f;
        __syncthreads();

        // a runs to the constant MAX_TASKS so that acc[] can live in registers
        for (int a = 0; a < MAX_TASKS; a++) {
            int j = tid + a * EM_BLOCK;
            if (j < K * S) {
                int k = j / S;
                int q = j % S;
                for (int p = 0; p < EM_BLOCK; p++) {
                    float r = sResp[p * K + k];
                    if (q == 0) {
                        acc[a] += r;
                    } else if (q <= D) {
                        acc[a] += r * sX[p * D + q - 1];
                    } else {
                        float x = sX[p * D + q - 1 - D];
                        acc[a] += r * x * x;
                    }
                }
            }
        }
        for (int s = EM_BLOCK / 2; s > 0; s >>= 1) {
            if (tid < s)
                sLL[tid] += sLL[tid + s];
            __syncthreads();
        }
        if (tid == 0)
            blockTotal += sLL[0];
        // The next tile overwrites sX, sResp and sLL: every thread must be done with them.
        __syncthreads();
    }

    for (int a = 0; a < MAX_TASKS; a++)
        if (tid + a * EM_BLOCK < K * S)
            partials[blockIdx.x * K * S + tid + a * EM_BLOCK] = acc[a];
    if (tid == 0)
        blockLL[blockIdx.x] = blockTotal;
}

__global__ void em_mstep(float *mu, float *invVar, float *logConst, float *ll,
                         const float *partials, const float *blockLL, int numBlocks, int N, int D,
                         int K, int iter)
{
    __shared__ float sSum[2 * MAX_D + 1];
    __shared__ float sLogVar[MAX_D];
    int k = blockIdx.x;
    int j = threadIdx.x;
    int S = 2 * D + 1;
    if (j < S) {
        float acc = 0.0f;
        for (int b = 0; b < numBlocks; b++)
            acc += partials[(b * K + k) * S + j];
        sSum[j] = acc;
    }
    __syncthreads();
    float nk = fmaxf(sSum[0], 1e-20f);
    if (j < D) {
        float m = sSum[1 + j] / nk;
        float var = fmaxf(sSum[1 + D + j] / nk - m * m, VAR_FLOOR);
        mu[k * D + j] = m;
        invVar[k * D + j] = 1.0f / var;
        sLogVar[j] = logf(var);
    }
    __syncthreads();
    if (j == 0) {
        float sumLogVar = 0.0f;
        for (int d = 0; d < D; d++)
            sumLogVar += sLogVar[d];
        logConst[k] = logf(nk / N) - 0.5f * (sumLogVar + D * LOG_2PI);
        if (k == 0) {
            float t = 0.0f;
            for (int b = 0; b < numBlocks; b++)
                t += blockLL[b];
            ll[iter] = t;
        }
    }
}
