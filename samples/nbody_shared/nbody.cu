// All-pairs n-body "kick" with the bodies tiled through shared memory (papers 003 and 000): the
// same computation and float4 layout as nbody_global, but each block first copies blockDim.x
// bodies into sh_pos (one each thread), and all its threads then read them from there.
//
// sh_pos is dynamic shared memory (blockDim.x float4, sized at launch). Per live range (one trip
// of the tile loop) each word is written once and read blockDim.x times; device reads of pos drop
// from n per element to n / blockDim.x + 1. Threads past the last body still take part in the
// loads and barriers; they stage a zero-mass body, whose pull is exactly zero.

__device__ float3 body_pull(float3 acc, float4 bi, float4 bj, float eps2)
{
    float dx = bj.x - bi.x;
    float dy = bj.y - bi.y;
    float dz = bj.z - bi.z;
    float d2 = dx * dx + dy * dy + dz * dz + eps2;
    float inv = 1.0f / sqrtf(d2);
    float s = bj.w * inv * inv * inv;
    acc.x += dx * s;
    acc.y += dy * s;
    acc.z += dz * s;
    return acc;
}

__global__ void nbody_shared(float4 *vel, const float4 *pos, int n, float dt, float eps2)
{
    extern __shared__ float4 sh_pos[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float4 bi = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (i < n)
        bi = pos[i];
    float3 acc = make_float3(0.0f, 0.0f, 0.0f);
    for (int tile = 0; tile < n; tile += blockDim.x) {
        int j = tile + threadIdx.x;
        if (j < n)
            sh_pos[threadIdx.x] = pos[j];
        else
            sh_pos[threadIdx.x] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        __syncthreads();
        for (int k = 0; k < blockDim.x; k++)
            acc = body_pull(acc, bi, sh_pos[k], eps2);
        __syncthreads();
    }
    if (i < n) {
        float4 v = vel[i];
        v.x += dt * acc.x;
        v.y += dt * acc.y;
        v.z += dt * acc.z;
        vel[i] = v;
    }
}
