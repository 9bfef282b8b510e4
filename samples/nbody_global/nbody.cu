// All-pairs n-body "kick" with global memory only (the unoptimised starting point of papers 003
// and 000): one thread per body i sums the softened gravitational pull of every body j,
//     a_i = sum_j m_j (p_j - p_i) / (|p_j - p_i|^2 + eps2)^(3/2),
// and updates its velocity, v_i += dt * a_i. Positions do not move in this kernel, so no thread
// reads a value that another thread writes.
//
// Layout: paper 003's "structure of arrays of aligned structures": pos[i] = (x, y, z, mass) and
// vel[i] = (vx, vy, vz, unused), two float4 arrays, one 128-bit load each. The softening makes the
// self term exactly zero (p_j - p_i = 0), so no i != j test is needed in the inner loop (the
// branch paper 000 removes). Every pos[j] is read from device memory by all n threads: n reads
// per element (the warp reads the same pos[j], so it is served as a broadcast by the caches).

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

__global__ void nbody_global(float4 *vel, const float4 *pos, int n, float dt, float eps2)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float4 bi = pos[i];
    float3 acc = make_float3(0.0f, 0.0f, 0.0f);
    for (int j = 0; j < n; j++)
        acc = body_pull(acc, bi, pos[j], eps2);
    float4 v = vel[i];
    v.x += dt * acc.x;
    v.y += dt * acc.y;
    v.z += dt * acc.z;
    vel[i] = v;
}
