// Negative cases: each access here must be classified conservatively.
// more than a single `return expr;`: gmprof does not look inside it
__device__ __noinline__ int opaque(int x) { int y = x * x; return y % 7; }

__global__ void negatives(float *a, float *b, const int *idx, int n, int flag)
{
    __shared__ float s[256];
    int t = threadIdx.x;
    int j = 0;
    float acc = 0.0f;
    for (int k = 0; k < n; k++) {
        if (flag > 0)
            acc += s[0];          // under an if inside the loop: not loop-invariant
        acc += s[1];              // runs every iteration: loop-invariant in 'for k'
        acc += a[j];              // j is written in the loop: not loop-invariant
        j += 2 * k;
    }
    int tmp = t * 2;
    b[tmp] = acc;                 // threadIdx through a temporary: not tid-invariant
    float *p = (flag > 0) ? a : b;
    p[0] = 1.0f;                  // may point into a or b: object unknown
    b[opaque(3)] = 2.0f;          // index from an unknown call: dynamic, not tid-invariant
    b[idx[t]] = 3.0f;             // data-dependent index: not static
    s[t] = b[0];                  // b is written by the kernel: b[0]'s value is not uniform
    __syncthreads();
    for (int k = 0; k < n; k++) {
        if (k == 3) break;
        a[n + 1] = s[2];          // the loop may end early: not loop-invariant
    }
}

__global__ void early_exit(float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[i] = 1.0f;                // static: affine under the exit guard i < n
}

__global__ void while_counter(float *a, int n)
{
    int k = 0;
    while (k < n) {
        a[k] = 0.0f;              // a while loop's counter is an iterator too
        k++;
    }
}
