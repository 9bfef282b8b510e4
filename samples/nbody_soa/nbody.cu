// All-pairs n-body "kick", structure-of-arrays layout (paper 003, its Figure 3): seven float
// arrays, one per field, so the threads of a warp read consecutive words of each (coalesced).
// Tiled through shared memory like nbody_aos, with one shared array per staged field.
//
// Per element, px, py, pz and mass are read n / NB_BLOCK + 1 times, vx, vy, vz read and written
// once: the arrays themselves now carry the hot/cold split that nbody_aos hides inside a struct.
// Per live range each word of sx, sy, sz and sm is written once and read NB_BLOCK times.

#define NB_BLOCK 128

__global__ void nbody_soa(float *vx, float *vy, float *vz, const float *px, const float *py,
                          const float *pz, const float *mass, int n, float dt, float eps2)
{
    __shared__ float sx[NB_BLOCK];
    __shared__ float sy[NB_BLOCK];
    __shared__ float sz[NB_BLOCK];
    __shared__ float sm[NB_BLOCK];
    int i = blockIdx.x * NB_BLOCK + threadIdx.x;
    float xi = 0.0f, yi = 0.0f, zi = 0.0f;
    if (i < n) {
        xi = px[i];
        yi = py[i];
        zi = pz[i];
    }
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (int tile = 0; tile < n; tile += NB_BLOCK) {
        int j = tile + threadIdx.x;
        if (j < n) {
            sx[threadIdx.x] = px[j];
            sy[threadIdx.x] = py[j];
            sz[threadIdx.x] = pz[j];
            sm[threadIdx.x] = mass[j];
        } else {
            sx[threadIdx.x] = 0.0f;
            sy[threadIdx.x] = 0.0f;
            sz[threadIdx.x] = 0.0f;
            sm[threadIdx.x] = 0.0f;
        }
        __syncthreads();
        for (int k = 0; k < NB_BLOCK; k++) {
            float dx = sx[k] - xi;
            float dy = sy[k] - yi;
            float dz = sz[k] - zi;
            float d2 = dx * dx + dy * dy + dz * dz + eps2;
            float inv = 1.0f / sqrtf(d2);
            float s = sm[k] * inv * inv * inv;
            ax += dx * s;
            ay += dy * s;
            az += dz * s;
        }
        __syncthreads();
    }
    if (i < n) {
        vx[i] += dt * ax;
        vy[i] += dt * ay;
        vz[i] += dt * az;
    }
}
