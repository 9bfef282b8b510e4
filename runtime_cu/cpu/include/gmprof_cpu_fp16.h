// gmprof CPU backend: __half, __half2, __nv_bfloat16 and __nv_bfloat162 for kernels run on the
// CPU. Stage: runtime (device side, CPU). Included by <cuda_fp16.h> and <cuda_bf16.h> (this
// directory, on g++'s path with -isystem).
//
// Results are the GPU's bit for bit where the GPU rounds: every conversion and every arithmetic
// operation is correctly rounded (round to nearest even unless the name says _rz/_rd/_ru), as
// sm_53+ (half) and sm_80+ (bfloat16) compute one operation. + - * / and sqrt are computed in
// float and rounded once more: float's 24 bits are at least 2p + 2 for half's p = 11 and
// bfloat16's p = 8, so the second rounding is innocuous (Figueroa's theorem). The fused
// multiply-add is the exact product (22 bits, exact in double) plus the addend rounded to odd in
// double, then rounded to the format: a single correct rounding. NaN results are the canonical
// 0x7fff, as the GPU's. Transcendental functions (hexp, hsin, ...) are the C library's float
// functions rounded to the format: a GPU's approximations may differ in the last bit.
#ifndef GMPROF_CPU_FP16_H
#define GMPROF_CPU_FP16_H

#ifndef GMPROF_CPU
#error "this header is gmprof's CPU backend's: compile with gmprof_cpu.h"
#endif

namespace gmprof_cpu {
namespace fp16 {

enum Round { RN, RZ, RD, RU };

// A binary format of P significand bits (the hidden one included) and exponents up to EMAX
// (bias EMAX, minimum normal exponent 1 - EMAX), 16 bits wide.
template <int P, int EMAX>
struct Format {
  static constexpr int kEmin = 1 - EMAX;
  static constexpr unsigned short kInf = (unsigned short)(((2 * EMAX + 1) << (P - 1)));
  static constexpr unsigned short kMaxFinite = (unsigned short)(kInf - 1);
  static constexpr unsigned short kNaN = 0x7fff;

  // x (any double) rounded to the format, as bits
  static unsigned short encode(double x, Round mode) {
    if (x != x) return kNaN;
    const unsigned short sign = std::signbit(x) ? 0x8000 : 0;
    double a = std::fabs(x);
    if (a == 0) return sign;
    const bool neg = sign != 0;
    if (!std::isinf(a)) {
      int k;
      std::frexp(a, &k);  // a = m * 2^k, m in [0.5, 1)
      const int e = k - 1 < kEmin ? kEmin : k - 1;
      const double quantum = std::ldexp(1.0, e - (P - 1));
      const double q = a / quantum;  // exact: a power-of-2 scaling
      double n = std::floor(q);
      const double frac = q - n;
      bool up = false;
      switch (mode) {
        case RN: up = frac > 0.5 || (frac == 0.5 && std::fmod(n, 2.0) == 1.0); break;
        case RZ: up = false; break;
        case RU: up = !neg && frac > 0; break;
        case RD: up = neg && frac > 0; break;
      }
      if (up) n += 1;
      a = n * quantum;
    }
    if (a >= std::ldexp(1.0, EMAX + 1)) {  // overflow: infinity, or the largest finite value
      const bool to_inf = std::isinf(x) || mode == RN || (mode == RU && !neg) || (mode == RD && neg);
      return (unsigned short)(sign | (to_inf ? kInf : kMaxFinite));
    }
    if (a == 0) return sign;
    if (a < std::ldexp(1.0, kEmin))  // subnormal
      return (unsigned short)(sign | (unsigned)(a / std::ldexp(1.0, kEmin - (P - 1))));
    int k;
    std::frexp(a, &k);
    const int e = k - 1;
    const unsigned mant = (unsigned)(a / std::ldexp(1.0, e - (P - 1))) - (1u << (P - 1));
    return (unsigned short)(sign | ((unsigned)(e + EMAX) << (P - 1)) | mant);
  }

  static float decode(unsigned short h) {
    const bool neg = (h & 0x8000) != 0;
    const unsigned ef = (h >> (P - 1)) & (unsigned)(2 * EMAX + 1);
    const unsigned mant = h & ((1u << (P - 1)) - 1u);
    float v;
    if (ef == (unsigned)(2 * EMAX + 1)) {
      if (mant == 0) {
        v = std::numeric_limits<float>::infinity();
      } else {  // a quiet NaN keeping the payload's bits, as cvt.f32 does
        unsigned bits = 0x7fc00000u | (mant << (24 - P));
        memcpy(&v, &bits, 4);
      }
    } else if (ef == 0) {
      v = (float)std::ldexp((double)mant, kEmin - (P - 1));
    } else {
      v = (float)std::ldexp((double)(mant | (1u << (P - 1))), (int)ef - EMAX - (P - 1));
    }
    return neg ? -v : v;
  }

  // a * b + c with one rounding (see the file's comment)
  static unsigned short fma(float a, float b, float c) {
    const double p = (double)a * (double)b;  // exact
    double s = p + (double)c;
    if (std::isfinite(s)) {
      const double bb = s - p;
      const double err = (p - (s - bb)) + ((double)c - bb);  // TwoSum: s + err == p + c
      unsigned long long bits;
      memcpy(&bits, &s, 8);
      if (err != 0 && !(bits & 1)) s = std::nextafter(s, err > 0 ? INFINITY : -INFINITY);
    }
    return encode(s, RN);
  }
};

typedef Format<11, 15> Half;
typedef Format<8, 127> BFloat;

}  // namespace fp16
}  // namespace gmprof_cpu

// ------------------------------------------------------------------------------ the types

struct __half_raw { unsigned short x; };
struct __nv_bfloat16_raw { unsigned short x; };

// T: the type; F: its Format; RAW: its raw struct. The constructors from arithmetic types round
// to nearest even, and `operator float` is exact, as CUDA's (so `h + 1.0f` is ambiguous here
// too).
#define GMPROF_FP16_TYPE(T, F, RAW)                                                               \
  struct __attribute__((aligned(2))) T {                                                          \
    unsigned short __x;                                                                           \
    T() = default;                                                                                \
    constexpr T(RAW r) : __x(r.x) {}                                                              \
    T(float f) : __x(F::encode(f, ::gmprof_cpu::fp16::RN)) {}                                     \
    T(double d) : __x(F::encode(d, ::gmprof_cpu::fp16::RN)) {}                                    \
    T(int v) : __x(F::encode((double)v, ::gmprof_cpu::fp16::RN)) {}                               \
    T(unsigned v) : __x(F::encode((double)v, ::gmprof_cpu::fp16::RN)) {}                          \
    T(short v) : __x(F::encode((double)v, ::gmprof_cpu::fp16::RN)) {}                             \
    T(unsigned short v) : __x(F::encode((double)v, ::gmprof_cpu::fp16::RN)) {}                    \
    T(long v) : __x(F::encode((double)v, ::gmprof_cpu::fp16::RN)) {}                              \
    T(unsigned long v) : __x(F::encode((double)v, ::gmprof_cpu::fp16::RN)) {}                     \
    T(long long v) : __x(F::encode((double)v, ::gmprof_cpu::fp16::RN)) {}                         \
    T(unsigned long long v) : __x(F::encode((double)v, ::gmprof_cpu::fp16::RN)) {}                \
    operator float() const { return F::decode(__x); }                                             \
    operator RAW() const { return RAW{__x}; }                                                     \
    T &operator=(float f) { __x = F::encode(f, ::gmprof_cpu::fp16::RN); return *this; }           \
    T &operator=(double d) { __x = F::encode(d, ::gmprof_cpu::fp16::RN); return *this; }          \
    T &operator=(int v) { __x = F::encode((double)v, ::gmprof_cpu::fp16::RN); return *this; }     \
    T &operator=(RAW r) { __x = r.x; return *this; }                                              \
  };                                                                                              \
  static inline T gmprof_bits_##T(unsigned short b) { return T(RAW{b}); }                        \
  static inline T gmprof_round_##T(double v) { return gmprof_bits_##T(F::encode(v, ::gmprof_cpu::fp16::RN)); } \
  static inline T operator+(const T &a, const T &b) { return gmprof_round_##T((float)a + (float)b); } \
  static inline T operator-(const T &a, const T &b) { return gmprof_round_##T((float)a - (float)b); } \
  static inline T operator*(const T &a, const T &b) { return gmprof_round_##T((float)a * (float)b); } \
  static inline T operator/(const T &a, const T &b) { return gmprof_round_##T((float)a / (float)b); } \
  static inline T operator-(const T &a) { return gmprof_bits_##T((unsigned short)(a.__x ^ 0x8000u)); } \
  static inline T operator+(const T &a) { return a; }                                             \
  static inline T &operator+=(T &a, const T &b) { return a = a + b; }                             \
  static inline T &operator-=(T &a, const T &b) { return a = a - b; }                             \
  static inline T &operator*=(T &a, const T &b) { return a = a * b; }                             \
  static inline T &operator/=(T &a, const T &b) { return a = a / b; }                             \
  static inline T &operator++(T &a) { return a = a + T(1.0f); }                                   \
  static inline T &operator--(T &a) { return a = a - T(1.0f); }                                   \
  static inline T operator++(T &a, int) { T old = a; a = a + T(1.0f); return old; }               \
  static inline T operator--(T &a, int) { T old = a; a = a - T(1.0f); return old; }               \
  static inline bool operator==(const T &a, const T &b) { return (float)a == (float)b; }          \
  static inline bool operator!=(const T &a, const T &b) { return (float)a != (float)b; }          \
  static inline bool operator<(const T &a, const T &b) { return (float)a < (float)b; }            \
  static inline bool operator<=(const T &a, const T &b) { return (float)a <= (float)b; }          \
  static inline bool operator>(const T &a, const T &b) { return (float)a > (float)b; }            \
  static inline bool operator>=(const T &a, const T &b) { return (float)a >= (float)b; }          \
  static inline T __hadd(T a, T b) { return a + b; }                                              \
  static inline T __hsub(T a, T b) { return a - b; }                                              \
  static inline T __hmul(T a, T b) { return a * b; }                                              \
  static inline T __hdiv(T a, T b) { return a / b; }                                              \
  static inline T __hadd_rn(T a, T b) { return a + b; }                                           \
  static inline T __hsub_rn(T a, T b) { return a - b; }                                           \
  static inline T __hmul_rn(T a, T b) { return a * b; }                                           \
  static inline T __hfma(T a, T b, T c) { return gmprof_bits_##T(F::fma(a, b, c)); }               \
  static inline T __hneg(T a) { return -a; }                                                      \
  static inline T __habs(T a) { return gmprof_bits_##T((unsigned short)(a.__x & 0x7fffu)); }       \
  static inline T gmprof_sat_##T(T v) {                                                           \
    const float f = v;                                                                            \
    return f != f || f < 0.f ? T(0.0f) : f > 1.f ? T(1.0f) : v;                                   \
  }                                                                                               \
  static inline T __hadd_sat(T a, T b) { return gmprof_sat_##T(a + b); }                          \
  static inline T __hsub_sat(T a, T b) { return gmprof_sat_##T(a - b); }                          \
  static inline T __hmul_sat(T a, T b) { return gmprof_sat_##T(a * b); }                          \
  static inline T __hfma_sat(T a, T b, T c) { return gmprof_sat_##T(__hfma(a, b, c)); }           \
  static inline T __hfma_relu(T a, T b, T c) {                                                    \
    T r = __hfma(a, b, c);                                                                        \
    return (float)r < 0.f ? T(0.0f) : r;                                                          \
  }                                                                                               \
  /* max/min: a NaN operand gives the other one; two NaNs the canonical NaN */                    \
  static inline T __hmax(T a, T b) {                                                              \
    const float x = a, y = b;                                                                     \
    if (x != x && y != y) return gmprof_bits_##T(F::kNaN);                                        \
    return x != x ? b : y != y ? a : (x > y || (x == y && !(a.__x & 0x8000u))) ? a : b;           \
  }                                                                                               \
  static inline T __hmin(T a, T b) {                                                              \
    const float x = a, y = b;                                                                     \
    if (x != x && y != y) return gmprof_bits_##T(F::kNaN);                                        \
    return x != x ? b : y != y ? a : (x < y || (x == y && (a.__x & 0x8000u))) ? a : b;            \
  }                                                                                               \
  static inline bool __heq(T a, T b) { return a == b; }                                           \
  static inline bool __hne(T a, T b) { return a != b; }                                           \
  static inline bool __hlt(T a, T b) { return a < b; }                                            \
  static inline bool __hle(T a, T b) { return a <= b; }                                           \
  static inline bool __hgt(T a, T b) { return a > b; }                                            \
  static inline bool __hge(T a, T b) { return a >= b; }                                           \
  static inline bool __hisnan(T a) { const float f = a; return f != f; }                          \
  static inline int __hisinf(T a) {                                                               \
    return (a.__x & 0x7fffu) == F::kInf ? ((a.__x & 0x8000u) ? -1 : 1) : 0;                       \
  }                                                                                               \
  static inline T hsqrt(T a) { return gmprof_round_##T(std::sqrt((float)a)); }                    \
  static inline T hrcp(T a) { return gmprof_round_##T(1.0f / (float)a); }                         \
  static inline T hrsqrt(T a) { return gmprof_round_##T(1.0 / std::sqrt((double)(float)a)); }     \
  static inline T hexp(T a) { return gmprof_round_##T(std::exp((float)a)); }                      \
  static inline T hexp2(T a) { return gmprof_round_##T(std::exp2((float)a)); }                    \
  static inline T hexp10(T a) { return gmprof_round_##T(std::pow(10.0f, (float)a)); }             \
  static inline T hlog(T a) { return gmprof_round_##T(std::log((float)a)); }                      \
  static inline T hlog2(T a) { return gmprof_round_##T(std::log2((float)a)); }                    \
  static inline T hlog10(T a) { return gmprof_round_##T(std::log10((float)a)); }                  \
  static inline T hsin(T a) { return gmprof_round_##T(std::sin((float)a)); }                      \
  static inline T hcos(T a) { return gmprof_round_##T(std::cos((float)a)); }                      \
  static inline T htanh(T a) { return gmprof_round_##T(std::tanh((float)a)); }                    \
  static inline T hfloor(T a) { return gmprof_round_##T(std::floor((float)a)); }                  \
  static inline T hceil(T a) { return gmprof_round_##T(std::ceil((float)a)); }                    \
  static inline T htrunc(T a) { return gmprof_round_##T(std::trunc((float)a)); }                  \
  static inline T hrint(T a) { return gmprof_round_##T(std::nearbyint((float)a)); }               \
  static inline T atomicAdd(T *p, T v) { T old = *p; *p = old + v; return old; }                  \
  static inline T atomicAdd_block(T *p, T v) { return atomicAdd(p, v); }                          \
  static inline T atomicAdd_system(T *p, T v) { return atomicAdd(p, v); }

GMPROF_FP16_TYPE(__half, ::gmprof_cpu::fp16::Half, __half_raw)
GMPROF_FP16_TYPE(__nv_bfloat16, ::gmprof_cpu::fp16::BFloat, __nv_bfloat16_raw)

// ------------------------------------------------------------------------------ pairs

// T2: the pair; T: its element. Operations are element by element, each rounded once.
#define GMPROF_FP16_PAIR(T2, T)                                                                   \
  struct __attribute__((aligned(4))) T2 {                                                         \
    T x, y;                                                                                       \
    T2() = default;                                                                               \
    constexpr T2(T a, T b) : x(a), y(b) {}                                                        \
  };                                                                                              \
  static inline T2 operator+(const T2 &a, const T2 &b) { return T2(a.x + b.x, a.y + b.y); }       \
  static inline T2 operator-(const T2 &a, const T2 &b) { return T2(a.x - b.x, a.y - b.y); }       \
  static inline T2 operator*(const T2 &a, const T2 &b) { return T2(a.x * b.x, a.y * b.y); }       \
  static inline T2 operator/(const T2 &a, const T2 &b) { return T2(a.x / b.x, a.y / b.y); }       \
  static inline T2 operator-(const T2 &a) { return T2(-a.x, -a.y); }                              \
  static inline T2 &operator+=(T2 &a, const T2 &b) { return a = a + b; }                          \
  static inline T2 &operator-=(T2 &a, const T2 &b) { return a = a - b; }                          \
  static inline T2 &operator*=(T2 &a, const T2 &b) { return a = a * b; }                          \
  static inline T2 &operator/=(T2 &a, const T2 &b) { return a = a / b; }                          \
  static inline bool operator==(const T2 &a, const T2 &b) { return a.x == b.x && a.y == b.y; }    \
  static inline bool operator!=(const T2 &a, const T2 &b) { return a.x != b.x || a.y != b.y; }    \
  static inline T2 __hadd2(T2 a, T2 b) { return a + b; }                                          \
  static inline T2 __hsub2(T2 a, T2 b) { return a - b; }                                          \
  static inline T2 __hmul2(T2 a, T2 b) { return a * b; }                                          \
  static inline T2 __h2div(T2 a, T2 b) { return a / b; }                                          \
  static inline T2 __hfma2(T2 a, T2 b, T2 c) { return T2(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)); } \
  static inline T2 __hneg2(T2 a) { return -a; }                                                   \
  static inline T2 __habs2(T2 a) { return T2(__habs(a.x), __habs(a.y)); }                         \
  static inline T2 __hmax2(T2 a, T2 b) { return T2(__hmax(a.x, b.x), __hmax(a.y, b.y)); }         \
  static inline T2 __hmin2(T2 a, T2 b) { return T2(__hmin(a.x, b.x), __hmin(a.y, b.y)); }         \
  static inline T2 __hadd2_sat(T2 a, T2 b) { return T2(__hadd_sat(a.x, b.x), __hadd_sat(a.y, b.y)); } \
  static inline T2 __hmul2_sat(T2 a, T2 b) { return T2(__hmul_sat(a.x, b.x), __hmul_sat(a.y, b.y)); } \
  static inline T2 __hfma2_sat(T2 a, T2 b, T2 c) { return T2(__hfma_sat(a.x, b.x, c.x), __hfma_sat(a.y, b.y, c.y)); } \
  static inline bool __hbeq2(T2 a, T2 b) { return a.x == b.x && a.y == b.y; }                     \
  static inline T2 __heq2(T2 a, T2 b) { return T2(T(a.x == b.x ? 1.0f : 0.0f), T(a.y == b.y ? 1.0f : 0.0f)); } \
  static inline T2 __hlt2(T2 a, T2 b) { return T2(T(a.x < b.x ? 1.0f : 0.0f), T(a.y < b.y ? 1.0f : 0.0f)); } \
  static inline T2 __hgt2(T2 a, T2 b) { return T2(T(a.x > b.x ? 1.0f : 0.0f), T(a.y > b.y ? 1.0f : 0.0f)); } \
  static inline T2 h2sqrt(T2 a) { return T2(hsqrt(a.x), hsqrt(a.y)); }                            \
  static inline T2 h2rcp(T2 a) { return T2(hrcp(a.x), hrcp(a.y)); }                               \
  static inline T2 h2exp(T2 a) { return T2(hexp(a.x), hexp(a.y)); }                               \
  static inline T2 h2log(T2 a) { return T2(hlog(a.x), hlog(a.y)); }                               \
  static inline T2 h2floor(T2 a) { return T2(hfloor(a.x), hfloor(a.y)); }                         \
  static inline T2 h2ceil(T2 a) { return T2(hceil(a.x), hceil(a.y)); }                            \
  static inline float __low2float(T2 a) { return (float)a.x; }                                    \
  static inline float __high2float(T2 a) { return (float)a.y; }                                   \
  static inline T2 __lowhigh2highlow(T2 a) { return T2(a.y, a.x); }                               \
  static inline T2 atomicAdd(T2 *p, T2 v) { T2 old = *p; *p = old + v; return old; }

GMPROF_FP16_PAIR(__half2, __half)
GMPROF_FP16_PAIR(__nv_bfloat162, __nv_bfloat16)

// ------------------------------------------------------------------------------ conversions

// float/double/integers to and from the format, in each rounding mode. NAME: the type's part
// of CUDA's names (half, bfloat16); T, F as above.
#define GMPROF_FP16_CONV_MODE(NAME, T, F, M, MODE)                                                \
  static inline T __float2##NAME##_##M(float f) { return gmprof_bits_##T(F::encode(f, MODE)); }   \
  static inline T __double2##NAME##_##M(double d) { return gmprof_bits_##T(F::encode(d, MODE)); } \
  static inline T __int2##NAME##_##M(int v) { return gmprof_bits_##T(F::encode(v, MODE)); }       \
  static inline T __uint2##NAME##_##M(unsigned v) { return gmprof_bits_##T(F::encode(v, MODE)); } \
  static inline T __short2##NAME##_##M(short v) { return gmprof_bits_##T(F::encode(v, MODE)); }   \
  static inline T __ushort2##NAME##_##M(unsigned short v) { return gmprof_bits_##T(F::encode(v, MODE)); } \
  static inline T __ll2##NAME##_##M(long long v) { return gmprof_bits_##T(F::encode((double)v, MODE)); } \
  static inline T __ull2##NAME##_##M(unsigned long long v) { return gmprof_bits_##T(F::encode((double)v, MODE)); }

// to integers: CUDA's saturate, and a NaN gives 0
#define GMPROF_FP16_TO_INT(NAME, T, I, ISUFFIX, M, ROUND)                                         \
  static inline I __##NAME##2##ISUFFIX##_##M(T h) {                                               \
    const double v = ROUND((double)(float)h);                                                     \
    if (v != v) return 0;                                                                         \
    if (v <= (double)std::numeric_limits<I>::min()) return std::numeric_limits<I>::min();        \
    if (v >= (double)std::numeric_limits<I>::max()) return std::numeric_limits<I>::max();        \
    return (I)v;                                                                                  \
  }
#define GMPROF_FP16_TO_INTS(NAME, T, M, ROUND)                                                    \
  GMPROF_FP16_TO_INT(NAME, T, int, int, M, ROUND)                                                 \
  GMPROF_FP16_TO_INT(NAME, T, unsigned, uint, M, ROUND)                                           \
  GMPROF_FP16_TO_INT(NAME, T, short, short, M, ROUND)                                             \
  GMPROF_FP16_TO_INT(NAME, T, unsigned short, ushort, M, ROUND)                                   \
  GMPROF_FP16_TO_INT(NAME, T, long long, ll, M, ROUND)                                            \
  GMPROF_FP16_TO_INT(NAME, T, unsigned long long, ull, M, ROUND)

#define GMPROF_FP16_CONVERSIONS(NAME, T, F)                                                       \
  GMPROF_FP16_CONV_MODE(NAME, T, F, rn, ::gmprof_cpu::fp16::RN)                                   \
  GMPROF_FP16_CONV_MODE(NAME, T, F, rz, ::gmprof_cpu::fp16::RZ)                                   \
  GMPROF_FP16_CONV_MODE(NAME, T, F, rd, ::gmprof_cpu::fp16::RD)                                   \
  GMPROF_FP16_CONV_MODE(NAME, T, F, ru, ::gmprof_cpu::fp16::RU)                                   \
  GMPROF_FP16_TO_INTS(NAME, T, rn, std::nearbyint)                                                \
  GMPROF_FP16_TO_INTS(NAME, T, rz, std::trunc)                                                    \
  GMPROF_FP16_TO_INTS(NAME, T, rd, std::floor)                                                    \
  GMPROF_FP16_TO_INTS(NAME, T, ru, std::ceil)                                                     \
  static inline T __float2##NAME(float f) { return __float2##NAME##_rn(f); }                      \
  static inline T __double2##NAME(double d) { return __double2##NAME##_rn(d); }                   \
  static inline float __##NAME##2float(T h) { return (float)h; }                                  \
  static inline unsigned short __##NAME##_as_ushort(T h) { return h.__x; }                        \
  static inline short __##NAME##_as_short(T h) { return (short)h.__x; }                           \
  static inline T __ushort_as_##NAME(unsigned short b) { return gmprof_bits_##T(b); }             \
  static inline T __short_as_##NAME(short b) { return gmprof_bits_##T((unsigned short)b); }

GMPROF_FP16_CONVERSIONS(half, __half, ::gmprof_cpu::fp16::Half)
GMPROF_FP16_CONVERSIONS(bfloat16, __nv_bfloat16, ::gmprof_cpu::fp16::BFloat)

// CUDA's spelling of the bfloat16 -> float conversion is __bfloat162float (above); of the pair
// functions, each type has its own names
static inline __half2 __floats2half2_rn(float a, float b) { return __half2(__float2half_rn(a), __float2half_rn(b)); }
static inline __half2 __float2half2_rn(float a) { return __half2(__float2half_rn(a), __float2half_rn(a)); }
static inline __half2 __float22half2_rn(float2 v) { return __floats2half2_rn(v.x, v.y); }
static inline float2 __half22float2(__half2 h) { return float2{(float)h.x, (float)h.y}; }
static inline __half2 __halves2half2(__half lo, __half hi) { return __half2(lo, hi); }
static inline __half2 __half2half2(__half a) { return __half2(a, a); }
static inline __half __low2half(__half2 h) { return h.x; }
static inline __half __high2half(__half2 h) { return h.y; }
static inline __half2 __low2half2(__half2 h) { return __half2(h.x, h.x); }
static inline __half2 __high2half2(__half2 h) { return __half2(h.y, h.y); }
static inline __half2 __lows2half2(__half2 a, __half2 b) { return __half2(a.x, b.x); }
static inline __half2 __highs2half2(__half2 a, __half2 b) { return __half2(a.y, b.y); }
static inline __half2 make_half2(__half x, __half y) { return __half2(x, y); }

static inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b) { return __nv_bfloat162(__float2bfloat16_rn(a), __float2bfloat16_rn(b)); }
static inline __nv_bfloat162 __float2bfloat162_rn(float a) { return __nv_bfloat162(__float2bfloat16_rn(a), __float2bfloat16_rn(a)); }
static inline __nv_bfloat162 __float22bfloat162_rn(float2 v) { return __floats2bfloat162_rn(v.x, v.y); }
static inline float2 __bfloat1622float2(__nv_bfloat162 h) { return float2{(float)h.x, (float)h.y}; }
static inline __nv_bfloat162 __halves2bfloat162(__nv_bfloat16 lo, __nv_bfloat16 hi) { return __nv_bfloat162(lo, hi); }
static inline __nv_bfloat162 __bfloat162bfloat162(__nv_bfloat16 a) { return __nv_bfloat162(a, a); }
static inline __nv_bfloat16 __low2bfloat16(__nv_bfloat162 h) { return h.x; }
static inline __nv_bfloat16 __high2bfloat16(__nv_bfloat162 h) { return h.y; }
static inline __nv_bfloat162 __low2bfloat162(__nv_bfloat162 h) { return __nv_bfloat162(h.x, h.x); }
static inline __nv_bfloat162 __high2bfloat162(__nv_bfloat162 h) { return __nv_bfloat162(h.y, h.y); }
static inline __nv_bfloat162 __lows2bfloat162(__nv_bfloat162 a, __nv_bfloat162 b) { return __nv_bfloat162(a.x, b.x); }
static inline __nv_bfloat162 __highs2bfloat162(__nv_bfloat162 a, __nv_bfloat162 b) { return __nv_bfloat162(a.y, b.y); }
static inline __nv_bfloat162 make_bfloat162(__nv_bfloat16 x, __nv_bfloat16 y) { return __nv_bfloat162(x, y); }

typedef __half half;
typedef __half2 half2;
typedef __nv_bfloat16 nv_bfloat16;
typedef __nv_bfloat162 nv_bfloat162;

#define CUDART_INF_FP16 __ushort_as_half((unsigned short)0x7C00U)
#define CUDART_NAN_FP16 __ushort_as_half((unsigned short)0x7FFFU)
#define CUDART_MAX_NORMAL_FP16 __ushort_as_half((unsigned short)0x7BFFU)
#define CUDART_MIN_DENORM_FP16 __ushort_as_half((unsigned short)0x0001U)
#define CUDART_ONE_FP16 __ushort_as_half((unsigned short)0x3C00U)
#define CUDART_ZERO_FP16 __ushort_as_half((unsigned short)0x0000U)
#define CUDART_INF_BF16 __ushort_as_bfloat16((unsigned short)0x7F80U)
#define CUDART_NAN_BF16 __ushort_as_bfloat16((unsigned short)0x7FFFU)
#define CUDART_MAX_NORMAL_BF16 __ushort_as_bfloat16((unsigned short)0x7F7FU)
#define CUDART_MIN_DENORM_BF16 __ushort_as_bfloat16((unsigned short)0x0001U)
#define CUDART_ONE_BF16 __ushort_as_bfloat16((unsigned short)0x3F80U)
#define CUDART_ZERO_BF16 __ushort_as_bfloat16((unsigned short)0x0000U)

#endif  // GMPROF_CPU_FP16_H
