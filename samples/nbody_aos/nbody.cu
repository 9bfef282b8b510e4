// All-pairs n-body "kick", array-of-structures layout (paper 003's Gravit original, its Figure 1):
// one 7-float Particle per body, fields read one by one. Tiled through shared memory like
// nbody_shared, so that the pair nbody_aos / nbody_soa differs in the device-memory layout only.
//
// Per element of p, the four fields px, py, pz, mass are read n / NB_BLOCK + 1 times (tile loads
// and the body's own position) while vx, vy, vz are read once and written once: the access
// counts show the fields with different use in one structure, which paper 003 splits into a
// hot (position and mass) and a cold (velocity) array. The shared tile sh is a float4 per body.

#define NB_BLOCK 128

struct Particle {
    float px, py, pz;
    float vx, vy, vz;
    float mass;
};

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

__global__ void nbody_aos(Particle *p, int n, float dt, float eps2)
{
    __shared__ float4 sh[NB_BLOCK];
    int i = blockIdx.x * NB_BLOCK + threadIdx.x;
    float4 bi = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (i < n)
        bi = make_float4(p[i].px, p[i].py, p[i].pz, p[i].mass);
    float3 acc = make_float3(0.0f, 0.0f, 0.0f);
    for (int tile = 0; tile < n; tile += NB_BLOCK) {
        int j = tile + threadIdx.x;
        if (j < n)
            sh[threadIdx.x] = make_float4(p[j].px, p[j].py, p[j].pz, p[j].mass);
        else
            sh[threadIdx.x] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        __syncthreads();
        for (int k = 0; k < NB_BLOCK; k++)
            acc = body_pull(acc, bi, sh[k], eps2);
        __syncthreads();
    }
    if (i < n) {
        p[i].vx += dt * acc.x;
        p[i].vy += dt * acc.y;
        p[i].vz += dt * acc.z;
    }
}
