// DXT1 (BC1) texture compression, one of the GMProf paper's six applications (dxtc): every 4x4
// block of an RGBA8 image becomes two 5:6:5 endpoint colours and sixteen 2-bit palette indices.
//
// A CUDA block of DXT_THREADS = 64 threads encodes DXT_PER_BLOCK = 4 horizontally adjacent 4x4
// blocks (a 16 x 4 strip of the image), one thread a pixel. The threads stage their pixels in
// `pix` and every thread then reads its 4x4 block's sixteen pixels from there to get the block's
// colour bounds and covariance signs. Four endpoint candidates are tried: the bounding box
// diagonal, the same box inset by 1/16, and both with the red and blue ends swapped where they
// vary against green. Each thread finds its pixel's nearest palette colour for each candidate;
// the sixteen errors meet in `err`, every thread of the 4x4 block picks the candidate with the
// smallest total (the first one on ties), and lane 0 packs the chosen indices from `sel`.
// Everything is integer arithmetic, so the output is exact and the same on every run.
//
// What a profile shows: pix words are read 16 times each (once by each thread of the 4x4
// block), err words 16 times, sel words once; in device memory the image is read once and the
// output written once. Several shared accesses sit inside __device__ helpers (block_stats),
// which GMProf's paper singles out as the hard case for dxtc's static analysis.

#include "dxt_color.cuh"

#define DXT_PER_BLOCK 4
#define DXT_THREADS (16 * DXT_PER_BLOCK)
#define CANDIDATES 4

struct BlockStats {
    int lo[3];
    int hi[3];
    int covRG;  // 16^2 x covariance of red with green: only its sign is used
    int covBG;
};

// Bounds and covariance signs of the 4x4 block whose pixels are pix[*][first .. first + 15].
__device__ BlockStats block_stats(const int pix[3][DXT_THREADS], int first)
{
    BlockStats st;
    int sum[3] = {0, 0, 0};
    int sumRG = 0;
    int sumBG = 0;
    for (int ch = 0; ch < 3; ch++) {
        st.lo[ch] = 255;
        st.hi[ch] = 0;
    }
    for (int k = 0; k < 16; k++) {
        int r = pix[0][first + k];
        int g = pix[1][first + k];
        int b = pix[2][first + k];
        st.lo[0] = min(st.lo[0], r);
        st.hi[0] = max(st.hi[0], r);
        st.lo[1] = min(st.lo[1], g);
        st.hi[1] = max(st.hi[1], g);
        st.lo[2] = min(st.lo[2], b);
        st.hi[2] = max(st.hi[2], b);
        sum[0] += r;
        sum[1] += g;
        sum[2] += b;
        sumRG += r * g;
        sumBG += b * g;
    }
    st.covRG = 16 * sumRG - sum[0] * sum[1];
    st.covBG = 16 * sumBG - sum[2] * sum[1];
    return st;
}

// Endpoint pair number `cand` (see the file comment) as 5:6:5 words with c0 >= c1.
__device__ void candidate_endpoints(const BlockStats *st, int cand, unsigned int *c0,
                                    unsigned int *c1)
{
    int hi[3];
    int lo[3];
    for (int ch = 0; ch < 3; ch++) {
        int inset = (cand & 1) ? (st->hi[ch] - st->lo[ch]) >> 4 : 0;
        hi[ch] = st->hi[ch] - inset;
        lo[ch] = st->lo[ch] + inset;
    }
    if (cand >= 2) {
        if (st->covRG < 0) {
            int t = hi[0];
            hi[0] = lo[0];
            lo[0] = t;
        }
        if (st->covBG < 0) {
            int t = hi[2];
            hi[2] = lo[2];
            lo[2] = t;
        }
    }
    unsigned int a = pack565(hi);
    unsigned int b = pack565(lo);
    *c0 = a > b ? a : b;
    *c1 = a > b ? b : a;
}

__global__ void dxt1_compress(unsigned int *out, const unsigned int *image, int width)
{
    __shared__ int pix[3][DXT_THREADS];
    __shared__ int err[CANDIDATES][DXT_THREADS];
    __shared__ int sel[DXT_THREADS];
    int t = threadIdx.x;
    int lane = t % 16;            // pixel within the 4x4 block, row-major
    int first = t - lane;         // the 4x4 block's first thread
    int bx = blockIdx.x * DXT_PER_BLOCK + t / 16;
    int by = blockIdx.y;
    int x = bx * 4 + lane % 4;
    int y = by * 4 + lane / 4;

    unsigned int texel = image[y * width + x];
    int rgb[3];
    rgb[0] = texel & 255;
    rgb[1] = (texel >> 8) & 255;
    rgb[2] = (texel >> 16) & 255;
    for (int ch = 0; ch < 3; ch++)
        pix[ch][t] = rgb[ch];
    __syncthreads();

    BlockStats st = block_stats(pix, first);
    unsigned int c0[CANDIDATES];
    unsigned int c1[CANDIDATES];
    int index[CANDIDATES];
    for (int c = 0; c < CANDIDATES; c++) {
        int pal[4][3];
        candidate_endpoints(&st, c, &c0[c], &c1[c]);
        build_palette(c0[c], c1[c], pal);
        int e;
        index[c] = best_index(rgb, pal, &e);
        err[c][t] = e;
    }
    __syncthreads();

    int best = 0;
    int bestTotal = 0;
    for (int c = 0; c < CANDIDATES; c++) {
        int total = 0;
        for (int k = 0; k < 16; k++)
            total += err[c][first + k];
        if (c == 0 || total < bestTotal) {
            bestTotal = total;
            best = c;
        }
    }
    sel[t] = index[best];
    __syncthreads();

    if (lane == 0) {
        unsigned int bits = 0;
        for (int k = 0; k < 16; k++)
            bits |= (unsigned int)sel[first + k] << (2 * k);
        int blocksPerRow = width / 4;
        out[2 * (by * blocksPerRow + bx)] = c0[best] | (c1[best] << 16);
        out[2 * (by * blocksPerRow + bx) + 1] = bits;
    }
}
