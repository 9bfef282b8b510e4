// Colour helpers for the DXT1 (BC1) encoder in dxtc.cu: 5:6:5 packing, palettes, distances.
// All integer, so the numpy reference in driver.py reproduces every bit.

#ifndef DXT_COLOR_CUH
#define DXT_COLOR_CUH

// 8-bit channels to a 5:6:5 word, rounding to the nearest level.
__device__ unsigned int pack565(const int *rgb)
{
    unsigned int r = (rgb[0] * 31 + 127) / 255;
    unsigned int g = (rgb[1] * 63 + 127) / 255;
    unsigned int b = (rgb[2] * 31 + 127) / 255;
    return (r << 11) | (g << 5) | b;
}

// A 5:6:5 word back to 8-bit channels, replicating the top bits into the low ones as decoders do.
__device__ void unpack565(unsigned int c, int *rgb)
{
    int r = (c >> 11) & 31;
    int g = (c >> 5) & 63;
    int b = c & 31;
    rgb[0] = (r << 3) | (r >> 2);
    rgb[1] = (g << 2) | (g >> 4);
    rgb[2] = (b << 3) | (b >> 2);
}

__device__ int color_distance(const int *a, const int *b)
{
    int dr = a[0] - b[0];
    int dg = a[1] - b[1];
    int db = a[2] - b[2];
    return dr * dr + dg * dg + db * db;
}

// The four colours of a 4-colour block (c0 > c1): the endpoints and the two points at 1/3 and
// 2/3 between them. With c0 == c1 (the 3-colour mode) only index 0 is used, so the palette is c0
// four times.
__device__ void build_palette(unsigned int c0, unsigned int c1, int pal[4][3])
{
    unpack565(c0, pal[0]);
    unpack565(c1, pal[1]);
    for (int ch = 0; ch < 3; ch++) {
        if (c0 > c1) {
            pal[2][ch] = (2 * pal[0][ch] + pal[1][ch]) / 3;
            pal[3][ch] = (pal[0][ch] + 2 * pal[1][ch]) / 3;
        } else {
            pal[1][ch] = pal[0][ch];
            pal[2][ch] = pal[0][ch];
            pal[3][ch] = pal[0][ch];
        }
    }
}

// The palette index nearest to the pixel (the first one on ties) and its squared distance.
__device__ int best_index(const int *rgb, const int pal[4][3], int *err)
{
    int best = 0;
    int bestErr = color_distance(rgb, pal[0]);
    for (int i = 1; i < 4; i++) {
        int e = color_distance(rgb, pal[i]);
        if (e < bestErr) {
            bestErr = e;
            best = i;
        }
    }
    *err = bestErr;
    return best;
}

#endif
