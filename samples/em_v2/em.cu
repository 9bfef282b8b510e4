// EM clustering with a Gaussian mixture (diagonal covariances), version 2 (the GMProf paper's
// em_v2): the same algorithm, launches and results as em_v1 (see there), with the shared arrays
// chosen from em_v1's profile.
//
// Changes from em_v1, in em_estep only:
// - mu and invVar (the paper's a5 and a6, read N times an element per iteration in em_v1) are
//   copied into shared memory, sMu and sInvVar, once a block: device reads drop to one per
//   block, and each shared word is read by every thread for every tile. The whole model fits in
//   one block's share here (K * D <= 256 floats each); a larger model would be split across
//   blocks by cluster, each block taking the clusters that fit.
// - sLL (the paper's a4, touched about 3 times a word per tile) leaves shared memory, as the
//   paper did to make room: the tile's log-likelihood tree now runs in llScratch, a device
//   array with an EM_BLOCK-float slice per block, reused for every tile. __syncthreads() orders
//   device-memory accesses within the block as it does shared ones.
//
// What a profile of em_estep shows: sMu and sInvVar words read EM_BLOCK times per tile next to
// sX, sResp and sLogConst as before; in device memory mu and invVar are read once per block, and
// the llScratch words take the few accesses per tile that sLL took.

#define EM_BLOCK 128
#define MAX_D 16
#define MAX_K 16
#define MAX_TASKS ((MAX_K * (2 * MAX_D + 1) + EM_BLOCK - 1) / EM_BLOCK)
#define LOG_2PI 1.8378770664093453f
#define VAR_FLOOR 1e-4f

__global__ void em_estep(float *resp, float *partials, float *blockLL, float *llScratch,
                         const float *X, const float *mu, const float *invVar,
                         const float *logConst, int N, int D, int K)
{
    __shared__ float sX[EM_BLOCK * MAX_D];
    __shared__ float sResp[EM_BLOCK * MAX_K];
    __shared__ float sLogConst[MAX_K];
    __shared__ float sMu[MAX_K * MAX_D];
    __shared__ float sInvVar[MAX_K * MAX_D];
    int tid = threadIdx.x;
    int S = 2 * D + 1;  // sums per cluster: r, r x_d (D of them), r x_d^2 (D)
    float acc[MAX_TASKS];
    for (int a = 0; a < MAX_TASKS; a++)
        acc[a] = 0.0f;
    float blockTotal = 0.0f;
    int slice = blockIdx.x * EM_BLOCK;  // this block's part of llScratch
    if (tid < K)
        sLogConst[tid] = logConst[tid];
    for (int i = tid; i < K * D; i += EM_BLOCK) {
        sMu[i] = mu[i];
        sInvVar[i] = invVar[i];
    }

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
                float diff = sX[tid * D + d] - sMu[k * D + d];
                dist += diff * diff * sInvVar[k * D + d];
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
        llScratch[slice + tid] = (n < N) ? maxLog + logf(total) : 0.0f;
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
                llScratch[slice + tid] += llScratch[slice + tid + s];
            __syncthreads();
        }
        if (tid == 0)
            blockTotal += llScratch[slice];
        // The next tile overwrites sX, sResp and llScratch: every thread must be done with them.
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
