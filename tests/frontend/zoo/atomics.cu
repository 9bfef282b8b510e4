// Syntax zoo: atomics, scalars and file-scope variables.
__device__ unsigned int counter;
__constant__ float weights[8];

__global__ void atomics(int *hist, const int *keys, float *acc, int n)
{
    __shared__ int local_hist[64];
    __shared__ int total;
    int t = threadIdx.x;
    if (t == 0) total = 0;
    local_hist[t % 64] = 0;
    __syncthreads();
    atomicAdd(&local_hist[keys[t] % 64], 1);
    atomicAdd(&total, 1);
    __syncthreads();
    atomicMax(&hist[t], local_hist[t % 64]);
    atomicAdd(acc + t, weights[t % 8]);
    if (t == 0) atomicInc(&counter, 1000u);
    counter++;
}
