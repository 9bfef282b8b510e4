// Syntax zoo: arrays, shared memory, pointer arithmetic, structs, vector types.
#define TILE 16
#define IDX(r, c) ((r) * TILE + (c))

struct Particle { float x, y, z, m; };

__global__ void shared_2d(float *out, const float *in, int n)
{
    __shared__ float tile[TILE][TILE + 1];
    int tx = threadIdx.x, ty = threadIdx.y;
    tile[ty][tx] = in[IDX(ty, tx)];
    __syncthreads();
    out[ty * n + tx] = tile[tx][ty];
}

__global__ void dynamic_cast_smem(float4 *dst, int n)
{
    extern __shared__ float smem[];
    float4 *v4 = (float4 *)smem;
    int i = threadIdx.x;
    smem[i] = 0.0f;
    v4[i / 4] = make_float4(1.0f, 2.0f, 3.0f, 4.0f);
    dst[i] = reinterpret_cast<float4 *>(smem)[i];
}

__global__ void structs_and_pointers(Particle *p, float *a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    p[i].x = p[i].y + 1.0f;
    *(a + i) = *(a + i + 1) * 2.0f;
    float *row = a + i * n;
    row[2] += 1.0f;
    p->m = 0.0f;
    a[i]++;
    --a[i + 1];
    a[i] -= a[i + 2];
}
