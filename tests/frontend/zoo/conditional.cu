// Syntax zoo: #if inside bodies, resolved with -D flags; macros kept as written.
#ifndef WIDTH
#define WIDTH 32
#endif

__global__ void cond(float *a, float *b)
{
    int i = threadIdx.x;
#if WIDTH > 16
    a[i] = b[i];
#else
    a[i] = b[i] * this is not valid code;
#endif
#ifdef USE_SQUARE
    a[i] = a[i] * a[i];
#endif
}
