// European call options priced on a Cox-Ross-Rubinstein binomial lattice, version 1 (the GMProf
// paper's bo_v1): no shared memory at all.
//
// One block prices one option. Its threads fill the numSteps + 1 leaves (payoffs at expiry) of
// a lattice row, then step back to the root, each step replacing node i by the discounted
// expectation puByDf * V[i + 1] + pdByDf * V[i]. The two lattice rows live in device memory, a
// (numSteps + 1)-float slice of callA and callB per option, used alternately (two steps a trip,
// so numSteps must be even); __syncthreads() orders the steps.
//
// What a profile shows: every element of callA and callB is read and written hundreds of times
// (about 3/4 numSteps accesses on average) by one block: heavy reuse in device memory, the hint
// that version 2 acts on. S, X and T are read by every thread of the block (blockDim reads per
// element) since each thread derives the lattice parameters itself; price is written once.

__global__ void binomial_v1(float *price, float *callA, float *callB, const float *S,
                            const float *X, const float *T, float R, float V, int numSteps)
{
    int opt = blockIdx.x;
    int base = opt * (numSteps + 1);
    float dt = T[opt] / numSteps;
    float vDt = V * sqrtf(dt);
    float rDt = R * dt;
    float u = expf(vDt);
    float d = expf(-vDt);
    float pu = (expf(rDt) - d) / (u - d);
    float puByDf = pu * expf(-rDt);
    float pdByDf = (1.0f - pu) * expf(-rDt);

    float s = S[opt];
    float x = X[opt];
    for (int i = threadIdx.x; i <= numSteps; i += blockDim.x) {
        float payoff = s * expf(vDt * (float)(2 * i - numSteps)) - x;
        callA[base + i] = payoff > 0.0f ? payoff : 0.0f;
    }
    __syncthreads();
    for (int j = numSteps; j > 0; j -= 2) {
        // callA holds the j + 1 nodes of step j; step j - 1 goes to callB, step j - 2 back to callA
        for (int i = threadIdx.x; i < j; i += blockDim.x)
            callB[base + i] = puByDf * callA[base + i + 1] + pdByDf * callA[base + i];
        __syncthreads();
        for (int i = threadIdx.x; i < j - 1; i += blockDim.x)
            callA[base + i] = puByDf * callB[base + i + 1] + pdByDf * callB[base + i];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        price[opt] = callA[base];
}
