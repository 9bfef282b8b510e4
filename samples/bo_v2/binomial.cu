// European call options priced on a Cox-Ross-Rubinstein binomial lattice, version 2 (the GMProf
// paper's bo_v2): the two lattice rows are resized to one option's worth and kept in shared
// memory, and the per-option lattice parameters come from a new array, params.
//
// binomial_prepare computes params[opt] = (vDt, puByDf, pdByDf, unused) once per option, with
// the same float operations as bo_v1; binomial_v2 then prices one option per block exactly as
// bo_v1 does, with callA and callB replaced by the shared rows sA and sB. numSteps must be even
// and at most MAX_STEPS.
//
// What a profile shows: the words of sA and sB take the hundreds of accesses that callA and
// callB took in device memory; in device memory, S, X and params are read once by every thread
// of the block (blockDim reads per element), T once, and price written once.

#define MAX_STEPS 1024

__global__ void binomial_prepare(float4 *params, const float *T, float R, float V, int numSteps,
                                 int numOptions)
{
    int opt = blockIdx.x * blockDim.x + threadIdx.x;
    if (opt < numOptions) {
        float dt = T[opt] / numSteps;
        float vDt = V * sqrtf(dt);
        float rDt = R * dt;
        float u = expf(vDt);
        float d = expf(-vDt);
        float pu = (expf(rDt) - d) / (u - d);
        params[opt] = make_float4(vDt, pu * expf(-rDt), (1.0f - pu) * expf(-rDt), 0.0f);
    }
}

__global__ void binomial_v2(float *price, const float4 *params, const float *S, const float *X,
                            int numSteps)
{
    __shared__ float sA[MAX_STEPS + 1];
    __shared__ float sB[MAX_STEPS + 1];
    int opt = blockIdx.x;
    float4 p = params[opt];
    float vDt = p.x;
    float puByDf = p.y;
    float pdByDf = p.z;

    float s = S[opt];
    float x = X[opt];
    for (int i = threadIdx.x; i <= numSteps; i += blockDim.x) {
        float payoff = s * expf(vDt * (float)(2 * i - numSteps)) - x;
        sA[i] = payoff > 0.0f ? payoff : 0.0f;
    }
    __syncthreads();
    for (int j = numSteps; j > 0; j -= 2) {
        for (int i = threadIdx.x; i < j; i += blockDim.x)
            sB[i] = puByDf * sA[i + 1] + pdByDf * sA[i];
        __syncthreads();
        for (int i = threadIdx.x; i < j - 1; i += blockDim.x)
            sA[i] = puByDf * sB[i + 1] + pdByDf * sB[i];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        price[opt] = sA[0];
}
