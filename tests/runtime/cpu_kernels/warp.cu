// Kernels for tests/runtime/test_cpu_backend.py: warp-level intrinsics.

// out[5 * t + k]: k = 0 full-warp sum by __shfl_down_sync (valid in lane 0), 1 butterfly sum by
// __shfl_xor_sync (every lane), 2 sum over segments of `width` lanes by __shfl_xor_sync with the
// width argument, 3 inclusive scan over segments by __shfl_up_sync, 4 broadcast of lane 3 of
// each segment by __shfl_sync.
__global__ void shuffles(const int *in, int *out, int width)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[t];
    int down = v;
    for (int off = 16; off > 0; off >>= 1) down += __shfl_down_sync(0xffffffffu, down, off);
    int bfly = v;
    for (int m = 1; m < 32; m <<= 1) bfly += __shfl_xor_sync(0xffffffffu, bfly, m);
    int seg = v;
    for (int m = 1; m < width; m <<= 1) seg += __shfl_xor_sync(0xffffffffu, seg, m, width);
    int scan = v;
    for (int d = 1; d < width; d <<= 1) {
        int y = __shfl_up_sync(0xffffffffu, scan, d, width);
        if ((threadIdx.x & (width - 1)) >= d) scan += y;
    }
    int bcast = __shfl_sync(0xffffffffu, v, 3, width);
    out[5 * t + 0] = down;
    out[5 * t + 1] = bfly;
    out[5 * t + 2] = seg;
    out[5 * t + 3] = scan;
    out[5 * t + 4] = bcast;
}

// double values through shuffles (8-byte payloads)
__global__ void shuffle_double(const double *in, double *out)
{
    double v = in[threadIdx.x];
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    out[threadIdx.x] = v;
}

// out[8 * t + k]: ballot of in & 1, any of in == 7, all of in >= 0, the __activemask() inside
// a branch taken by lanes with in % 3 == 0 (0 elsewhere), __match_any_sync on in / 4,
// __match_all_sync's mask and predicate on blockIdx.x, __popc of the ballot.
__global__ void votes(const int *in, unsigned *out)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[t];
    unsigned ballot = __ballot_sync(0xffffffffu, v & 1);
    int any = __any_sync(0xffffffffu, v == 7);
    int all = __all_sync(0xffffffffu, v >= 0);
    unsigned am = 0;
    if (v % 3 == 0) {
        am = __activemask();
    }
    unsigned ma = __match_any_sync(0xffffffffu, v / 4);
    int pred = -1;
    unsigned mall = __match_all_sync(0xffffffffu, (int)blockIdx.x, &pred);
    out[8 * t + 0] = ballot;
    out[8 * t + 1] = any;
    out[8 * t + 2] = all;
    out[8 * t + 3] = am;
    out[8 * t + 4] = ma;
    out[8 * t + 5] = mall;
    out[8 * t + 6] = pred;
    out[8 * t + 7] = __popc(ballot);
}

// Lanes 0..15 and 16..31 synchronise separately (masks that name half a warp), and lanes that
// exited early are not waited for.
__global__ void half_warps(int *out)
{
    int lane = threadIdx.x & 31;
    if (lane >= 28) return;
    unsigned mask = lane < 16 ? 0x0000ffffu : 0xffff0000u;
    int v = lane;
    for (int off = 8; off > 0; off >>= 1) v += __shfl_xor_sync(mask, v, off, 16);
    __syncwarp(mask);
    out[threadIdx.x] = v + 1000 * __reduce_add_sync(mask, 1);
}
