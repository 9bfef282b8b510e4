// gmprof CPU backend: vector types, math and integer intrinsics, atomics, and the
// typed front ends of the warp collectives.
//
// Included by gmprof_cpu.h after the runtime's interface. Vector types have CUDA's sizes and alignments
// (float4 is 16-byte aligned, float3 is 12 bytes, ...) because gmprof turns addresses into
// element indices. Atomics are plain read-modify-writes: every block runs on one OS thread and a
// fiber never switches inside an atomic, so nothing can interleave. A CAS that fails and an
// exchange that changes nothing are the signs of a spin lock; they yield, so that the lock's
// holder, which on one OS thread can only run when we stop, gets to release it.
#ifndef GMPROF_CPU_MATH_H
#define GMPROF_CPU_MATH_H

#include <fenv.h>
#include <math.h>
#include <string.h>
#include <time.h>

// ---------------------------------------------------------------- vector types
#define GMPROF_VEC1(N, T) struct N##1 { T x; };
#define GMPROF_VEC2(N, T, A) struct __attribute__((aligned(A))) N##2 { T x, y; };
#define GMPROF_VEC3(N, T) struct N##3 { T x, y, z; };
#define GMPROF_VEC4(N, T, A) struct __attribute__((aligned(A))) N##4 { T x, y, z, w; };
#define GMPROF_VEC2N(N, T) struct N##2 { T x, y; };
#define GMPROF_VEC4N(N, T) struct N##4 { T x, y, z, w; };

GMPROF_VEC1(char, signed char) GMPROF_VEC2(char, signed char, 2) GMPROF_VEC3(char, signed char) GMPROF_VEC4(char, signed char, 4)
GMPROF_VEC1(uchar, unsigned char) GMPROF_VEC2(uchar, unsigned char, 2) GMPROF_VEC3(uchar, unsigned char) GMPROF_VEC4(uchar, unsigned char, 4)
GMPROF_VEC1(short, short) GMPROF_VEC2(short, short, 4) GMPROF_VEC3(short, short) GMPROF_VEC4(short, short, 8)
GMPROF_VEC1(ushort, unsigned short) GMPROF_VEC2(ushort, unsigned short, 4) GMPROF_VEC3(ushort, unsigned short) GMPROF_VEC4(ushort, unsigned short, 8)
GMPROF_VEC1(int, int) GMPROF_VEC2(int, int, 8) GMPROF_VEC3(int, int) GMPROF_VEC4(int, int, 16)
GMPROF_VEC1(uint, unsigned int) GMPROF_VEC2(uint, unsigned int, 8) /* uint3 is built in */ GMPROF_VEC4(uint, unsigned int, 16)
GMPROF_VEC1(long, long) GMPROF_VEC2(long, long, 16) GMPROF_VEC3(long, long) GMPROF_VEC4(long, long, 16)
GMPROF_VEC1(ulong, unsigned long) GMPROF_VEC2(ulong, unsigned long, 16) GMPROF_VEC3(ulong, unsigned long) GMPROF_VEC4(ulong, unsigned long, 16)
GMPROF_VEC1(longlong, long long) GMPROF_VEC2(longlong, long long, 16) GMPROF_VEC3(longlong, long long) GMPROF_VEC4(longlong, long long, 16)
GMPROF_VEC1(ulonglong, unsigned long long) GMPROF_VEC2(ulonglong, unsigned long long, 16) GMPROF_VEC3(ulonglong, unsigned long long) GMPROF_VEC4(ulonglong, unsigned long long, 16)
GMPROF_VEC1(float, float) GMPROF_VEC2(float, float, 8) GMPROF_VEC3(float, float) GMPROF_VEC4(float, float, 16)
GMPROF_VEC1(double, double) GMPROF_VEC2(double, double, 16) GMPROF_VEC3(double, double) GMPROF_VEC4(double, double, 16)
// CUDA 13's explicitly aligned 4-vectors of 8-byte elements
struct __attribute__((aligned(16))) long4_16a { long x, y, z, w; };
struct __attribute__((aligned(32))) long4_32a { long x, y, z, w; };
struct __attribute__((aligned(16))) ulong4_16a { unsigned long x, y, z, w; };
struct __attribute__((aligned(32))) ulong4_32a { unsigned long x, y, z, w; };
struct __attribute__((aligned(16))) longlong4_16a { long long x, y, z, w; };
struct __attribute__((aligned(32))) longlong4_32a { long long x, y, z, w; };
struct __attribute__((aligned(16))) ulonglong4_16a { unsigned long long x, y, z, w; };
struct __attribute__((aligned(32))) ulonglong4_32a { unsigned long long x, y, z, w; };
struct __attribute__((aligned(16))) double4_16a { double x, y, z, w; };
struct __attribute__((aligned(32))) double4_32a { double x, y, z, w; };

#define GMPROF_MAKE(N, T)                                                                          \
  static inline N##1 make_##N##1(T x) { return N##1{x}; }                                          \
  static inline N##2 make_##N##2(T x, T y) { return N##2{x, y}; }                                  \
  static inline N##3 make_##N##3(T x, T y, T z) { return N##3{x, y, z}; }                          \
  static inline N##4 make_##N##4(T x, T y, T z, T w) { return N##4{x, y, z, w}; }
GMPROF_MAKE(char, signed char)
GMPROF_MAKE(uchar, unsigned char)
GMPROF_MAKE(short, short)
GMPROF_MAKE(ushort, unsigned short)
GMPROF_MAKE(int, int)
GMPROF_MAKE(uint, unsigned int)
GMPROF_MAKE(long, long)
GMPROF_MAKE(ulong, unsigned long)
GMPROF_MAKE(longlong, long long)
GMPROF_MAKE(ulonglong, unsigned long long)
GMPROF_MAKE(float, float)
GMPROF_MAKE(double, double)
#undef GMPROF_MAKE
#undef GMPROF_VEC1
#undef GMPROF_VEC2
#undef GMPROF_VEC3
#undef GMPROF_VEC4
#undef GMPROF_VEC2N
#undef GMPROF_VEC4N
static inline dim3 make_dim3(unsigned x, unsigned y, unsigned z) { return dim3(x, y, z); }

// ---------------------------------------------------------------- min and max
//
// CUDA declares non-template overloads for every pair of these types, returning the usual
// arithmetic conversion of the two; being non-templates they also beat std::min/max in an
// exact tie, as in CUDA code that says `using namespace std`.
namespace gmprof_cpu {
// floating-point min/max follow fmin/fmax on NaN (the other operand wins), as CUDA's do
template <class C>
static inline C min_of(C a, C b) {
  if (std::is_floating_point<C>::value) return std::fmin(a, b);
  return a < b ? a : b;
}
template <class C>
static inline C max_of(C a, C b) {
  if (std::is_floating_point<C>::value) return std::fmax(a, b);
  return a > b ? a : b;
}
}  // namespace gmprof_cpu
#define GMPROF_MINMAX(A, B)                                                                    \
  static inline std::common_type<A, B>::type min(A a, B b) {                                   \
    return gmprof_cpu::min_of<std::common_type<A, B>::type>(a, b);                             \
  }                                                                                            \
  static inline std::common_type<A, B>::type max(A a, B b) {                                   \
    return gmprof_cpu::max_of<std::common_type<A, B>::type>(a, b);                             \
  }
#define GMPROF_MINMAX_ROW(A)                                                                   \
  GMPROF_MINMAX(A, int) GMPROF_MINMAX(A, unsigned int) GMPROF_MINMAX(A, long)                  \
  GMPROF_MINMAX(A, unsigned long) GMPROF_MINMAX(A, long long)                                  \
  GMPROF_MINMAX(A, unsigned long long) GMPROF_MINMAX(A, float) GMPROF_MINMAX(A, double)
GMPROF_MINMAX_ROW(int)
GMPROF_MINMAX_ROW(unsigned int)
GMPROF_MINMAX_ROW(long)
GMPROF_MINMAX_ROW(unsigned long)
GMPROF_MINMAX_ROW(long long)
GMPROF_MINMAX_ROW(unsigned long long)
GMPROF_MINMAX_ROW(float)
GMPROF_MINMAX_ROW(double)
#undef GMPROF_MINMAX_ROW
#undef GMPROF_MINMAX

// ---------------------------------------------------------------- reinterpretation

static inline int __float_as_int(float x) { int r; memcpy(&r, &x, 4); return r; }
static inline unsigned int __float_as_uint(float x) { unsigned r; memcpy(&r, &x, 4); return r; }
static inline float __int_as_float(int x) { float r; memcpy(&r, &x, 4); return r; }
static inline float __uint_as_float(unsigned int x) { float r; memcpy(&r, &x, 4); return r; }
static inline long long __double_as_longlong(double x) { long long r; memcpy(&r, &x, 8); return r; }
static inline double __longlong_as_double(long long x) { double r; memcpy(&r, &x, 8); return r; }
static inline int __double2hiint(double x) { return (int)(__double_as_longlong(x) >> 32); }
static inline int __double2loint(double x) { return (int)__double_as_longlong(x); }
static inline double __hiloint2double(int hi, int lo) {
  return __longlong_as_double((long long)(((unsigned long long)(unsigned)hi << 32) | (unsigned)lo));
}

// ---------------------------------------------------------------- integer intrinsics

static inline int __popc(unsigned int x) { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static inline int __ffs(int x) { return __builtin_ffs(x); }
static inline int __ffsll(long long x) { return __builtin_ffsll(x); }
static inline int __clz(int x) { return x ? __builtin_clz((unsigned)x) : 32; }
static inline int __clzll(long long x) { return x ? __builtin_clzll((unsigned long long)x) : 64; }
static inline unsigned int __brev(unsigned int x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
  return __builtin_bswap32(x);
}
static inline unsigned long long __brevll(unsigned long long x) {
  return ((unsigned long long)__brev((unsigned)x) << 32) | __brev((unsigned)(x >> 32));
}
static inline unsigned int __byte_perm(unsigned int x, unsigned int y, unsigned int s) {
  const unsigned long long v = ((unsigned long long)y << 32) | x;
  unsigned r = 0;
  for (int i = 0; i < 4; ++i) r |= (unsigned)((v >> (8 * ((s >> (4 * i)) & 7u))) & 0xffu) << (8 * i);
  return r;
}
static inline int __mul24(int x, int y) {
  return (int)((unsigned)(((x << 8) >> 8) * ((y << 8) >> 8)));
}
static inline unsigned int __umul24(unsigned int x, unsigned int y) {
  return (x & 0xffffffu) * (y & 0xffffffu);
}
static inline int __mulhi(int x, int y) { return (int)(((long long)x * y) >> 32); }
static inline unsigned int __umulhi(unsigned int x, unsigned int y) {
  return (unsigned)(((unsigned long long)x * y) >> 32);
}
static inline long long __mul64hi(long long x, long long y) {
  return (long long)(((__int128)x * y) >> 64);
}
static inline unsigned long long __umul64hi(unsigned long long x, unsigned long long y) {
  return (unsigned long long)(((unsigned __int128)x * y) >> 64);
}
static inline unsigned int __sad(int x, int y, unsigned int z) {
  return z + (x > y ? (unsigned)x - (unsigned)y : (unsigned)y - (unsigned)x);
}
static inline unsigned int __usad(unsigned int x, unsigned int y, unsigned int z) {
  return z + (x > y ? x - y : y - x);
}
static inline int __hadd(int x, int y) { return (int)(((long long)x + y) >> 1); }
static inline int __rhadd(int x, int y) { return (int)(((long long)x + y + 1) >> 1); }
static inline unsigned int __uhadd(unsigned int x, unsigned int y) {
  return (unsigned)(((unsigned long long)x + y) >> 1);
}
static inline unsigned int __urhadd(unsigned int x, unsigned int y) {
  return (unsigned)(((unsigned long long)x + y + 1) >> 1);
}
static inline unsigned int __funnelshift_l(unsigned int lo, unsigned int hi, unsigned int s) {
  return (unsigned)(((((unsigned long long)hi << 32) | lo) << (s & 31u)) >> 32);
}
static inline unsigned int __funnelshift_lc(unsigned int lo, unsigned int hi, unsigned int s) {
  return (unsigned)(((((unsigned long long)hi << 32) | lo) << (s > 32u ? 32u : s)) >> 32);
}
static inline unsigned int __funnelshift_r(unsigned int lo, unsigned int hi, unsigned int s) {
  return (unsigned)((((unsigned long long)hi << 32) | lo) >> (s & 31u));
}
static inline unsigned int __funnelshift_rc(unsigned int lo, unsigned int hi, unsigned int s) {
  return (unsigned)((((unsigned long long)hi << 32) | lo) >> (s > 32u ? 32u : s));
}
static inline int __dp4a(int a, int b, int c) {
  for (int i = 0; i < 4; ++i) c += (int)(signed char)(a >> (8 * i)) * (int)(signed char)(b >> (8 * i));
  return c;
}
static inline unsigned int __dp4a(unsigned int a, unsigned int b, unsigned int c) {
  for (int i = 0; i < 4; ++i) c += ((a >> (8 * i)) & 0xffu) * ((b >> (8 * i)) & 0xffu);
  return c;
}

// ---------------------------------------------------------------- rounding and conversions

namespace gmprof_cpu {
enum Round { RN, RZ, RU, RD };

// Directed rounding from an exact error term: r = round-to-nearest(x), err = x - r exactly
// (error-free transformations: TwoSum, fma for products, remainders for division and sqrt).
template <class F>
static inline F directed(F r, F err, Round mode) {
  if (err == 0 || mode == RN || std::isnan(r) || std::isinf(r)) return r;
  if (mode == RU) return err > 0 ? std::nextafter(r, (F)INFINITY) : r;
  if (mode == RD) return err < 0 ? std::nextafter(r, -(F)INFINITY) : r;
  return (err > 0) != (r > 0) ? std::nextafter(r, (F)0) : r;  // RZ: step towards zero
}
template <class F>
static inline F add_r(F a, F b, Round m) {
  volatile F s = a + b;  // volatile: the error term must see the rounded sum
  F bb = s - a, err = (a - (s - bb)) + (b - bb);
  return directed((F)s, err, m);
}
template <class F>
static inline F mul_r(F a, F b, Round m) {
  F p = a * b;
  return directed(p, std::fma(a, b, -p), m);
}
template <class F>
static inline F div_r(F a, F b, Round m) {
  F q = a / b;
  F rem = std::fma(-q, b, a);  // a - q b, exact
  return directed(q, b > 0 ? rem : -rem, m);
}
template <class F>
static inline F sqrt_r(F a, Round m) {
  F s = std::sqrt(a);
  return directed(s, std::fma(-s, s, a), m);
}
// fma with a directed rounding mode: the C library's software fma honours the dynamic mode.
template <class F>
static inline F fma_r(F a, F b, F c, Round m) {
  if (m == RN) return std::fma(a, b, c);
  const int old = fegetround();
  fesetround(m == RZ ? FE_TOWARDZERO : m == RU ? FE_UPWARD : FE_DOWNWARD);
  volatile F va = a, vb = b, vc = c;
  F r = std::fma((F)va, (F)vb, (F)vc);
  volatile F vr = r;
  fesetround(old);
  return vr;
}
// integer -> floating with a rounding mode: convert, then correct by the exact difference
template <class F, class I>
static inline F itof(I v, Round m) {
  F r = (F)v;
  if (m == RN || std::isinf(r)) return r;
  long double d = (long double)v - (long double)r;  // exact: long double holds any 64-bit int
  return directed(r, (F)(d > 0 ? 1 : d < 0 ? -1 : 0), m);
}
template <class I, class F>
static inline I ftoi(F x, Round m) {
  if (std::isnan(x)) return (I)0;  // CUDA converts NaN to 0 (unsigned) or INT_MIN-like; keep 0
  F r = m == RN ? std::nearbyint(x) : m == RZ ? std::trunc(x) : m == RU ? std::ceil(x) : std::floor(x);
  // CUDA saturates out-of-range conversions
  if (r <= (F)std::numeric_limits<I>::min()) return std::numeric_limits<I>::min();
  if (r >= (F)std::numeric_limits<I>::max()) return std::numeric_limits<I>::max();
  return (I)r;
}
}  // namespace gmprof_cpu

#define GMPROF_ROUNDED(SUFFIX, MODE)                                                               \
  static inline float __fadd_##SUFFIX(float a, float b) { return gmprof_cpu::add_r(a, b, gmprof_cpu::MODE); } \
  static inline float __fsub_##SUFFIX(float a, float b) { return gmprof_cpu::add_r(a, -b, gmprof_cpu::MODE); } \
  static inline float __fmul_##SUFFIX(float a, float b) { return gmprof_cpu::mul_r(a, b, gmprof_cpu::MODE); } \
  static inline float __fdiv_##SUFFIX(float a, float b) { return gmprof_cpu::div_r(a, b, gmprof_cpu::MODE); } \
  static inline float __frcp_##SUFFIX(float a) { return gmprof_cpu::div_r(1.0f, a, gmprof_cpu::MODE); } \
  static inline float __fsqrt_##SUFFIX(float a) { return gmprof_cpu::sqrt_r(a, gmprof_cpu::MODE); } \
  static inline float __fmaf_##SUFFIX(float a, float b, float c) { return gmprof_cpu::fma_r(a, b, c, gmprof_cpu::MODE); } \
  static inline double __dadd_##SUFFIX(double a, double b) { return gmprof_cpu::add_r(a, b, gmprof_cpu::MODE); } \
  static inline double __dsub_##SUFFIX(double a, double b) { return gmprof_cpu::add_r(a, -b, gmprof_cpu::MODE); } \
  static inline double __dmul_##SUFFIX(double a, double b) { return gmprof_cpu::mul_r(a, b, gmprof_cpu::MODE); } \
  static inline double __ddiv_##SUFFIX(double a, double b) { return gmprof_cpu::div_r(a, b, gmprof_cpu::MODE); } \
  static inline double __drcp_##SUFFIX(double a) { return gmprof_cpu::div_r(1.0, a, gmprof_cpu::MODE); } \
  static inline double __dsqrt_##SUFFIX(double a) { return gmprof_cpu::sqrt_r(a, gmprof_cpu::MODE); } \
  static inline double __fma_##SUFFIX(double a, double b, double c) { return gmprof_cpu::fma_r(a, b, c, gmprof_cpu::MODE); } \
  static inline int __float2int_##SUFFIX(float x) { return gmprof_cpu::ftoi<int>(x, gmprof_cpu::MODE); } \
  static inline unsigned int __float2uint_##SUFFIX(float x) { return gmprof_cpu::ftoi<unsigned>(x, gmprof_cpu::MODE); } \
  static inline long long __float2ll_##SUFFIX(float x) { return gmprof_cpu::ftoi<long long>(x, gmprof_cpu::MODE); } \
  static inline unsigned long long __float2ull_##SUFFIX(float x) { return gmprof_cpu::ftoi<unsigned long long>(x, gmprof_cpu::MODE); } \
  static inline int __double2int_##SUFFIX(double x) { return gmprof_cpu::ftoi<int>(x, gmprof_cpu::MODE); } \
  static inline unsigned int __double2uint_##SUFFIX(double x) { return gmprof_cpu::ftoi<unsigned>(x, gmprof_cpu::MODE); } \
  static inline long long __double2ll_##SUFFIX(double x) { return gmprof_cpu::ftoi<long long>(x, gmprof_cpu::MODE); } \
  static inline unsigned long long __double2ull_##SUFFIX(double x) { return gmprof_cpu::ftoi<unsigned long long>(x, gmprof_cpu::MODE); } \
  static inline float __int2float_##SUFFIX(int x) { return gmprof_cpu::itof<float>(x, gmprof_cpu::MODE); } \
  static inline float __uint2float_##SUFFIX(unsigned int x) { return gmprof_cpu::itof<float>(x, gmprof_cpu::MODE); } \
  static inline float __ll2float_##SUFFIX(long long x) { return gmprof_cpu::itof<float>(x, gmprof_cpu::MODE); } \
  static inline float __ull2float_##SUFFIX(unsigned long long x) { return gmprof_cpu::itof<float>(x, gmprof_cpu::MODE); } \
  static inline double __ll2double_##SUFFIX(long long x) { return gmprof_cpu::itof<double>(x, gmprof_cpu::MODE); } \
  static inline double __ull2double_##SUFFIX(unsigned long long x) { return gmprof_cpu::itof<double>(x, gmprof_cpu::MODE); } \
  static inline float __double2float_##SUFFIX(double x) {                                          \
    float r = (float)x;                                                                            \
    return gmprof_cpu::directed(r, (float)(x > (double)r ? 1 : x < (double)r ? -1 : 0), gmprof_cpu::MODE); \
  }
GMPROF_ROUNDED(rn, RN)
GMPROF_ROUNDED(rz, RZ)
GMPROF_ROUNDED(ru, RU)
GMPROF_ROUNDED(rd, RD)
#undef GMPROF_ROUNDED
static inline double __int2double_rn(int x) { return (double)x; }
static inline double __uint2double_rn(unsigned int x) { return (double)x; }
static inline float __frsqrt_rn(float x) { return 1.0f / std::sqrt(x); }
static inline float __saturatef(float x) { return x >= 1.0f ? 1.0f : x > 0.0f ? x : 0.0f; }  // NaN -> 0
static inline float __fdividef(float a, float b) { return a / b; }
static inline float fdividef(float a, float b) { return a / b; }
static inline double fdivide(double a, double b) { return a / b; }

// ---------------------------------------------------------------- math functions
// The C library has most of CUDA's math API (sinf, expf, erfcf, exp10f, sincosf, ...); these
// are the ones it lacks. The fast-math intrinsics are the accurate functions here.
// Names that the C library declares too (glibc's math.h declares __expf and friends as aliases,
// and C23 adds rsqrt, sinpi and cospi) are macros onto our own functions, so that they mean the
// same whatever the C library's version.
namespace gmprof_cpu {
static inline float rsqrtf_(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt_(double x) { return 1.0 / sqrt(x); }
static inline float sinpif_(float x) { return (float)sin(M_PI * (double)x); }
static inline float cospif_(float x) { return (float)cos(M_PI * (double)x); }
static inline double sinpi_(double x) { return sin(M_PI * x); }
static inline double cospi_(double x) { return cos(M_PI * x); }
}  // namespace gmprof_cpu
#define rsqrtf(x) ::gmprof_cpu::rsqrtf_(x)
#define rsqrt(x) ::gmprof_cpu::rsqrt_(x)
#define sinpif(x) ::gmprof_cpu::sinpif_(x)
#define cospif(x) ::gmprof_cpu::cospif_(x)
#define sinpi(x) ::gmprof_cpu::sinpi_(x)
#define cospi(x) ::gmprof_cpu::cospi_(x)
#define __expf(x) ::expf(x)
#define __exp10f(x) ::exp10f(x)
#define __logf(x) ::logf(x)
#define __log2f(x) ::log2f(x)
#define __log10f(x) ::log10f(x)
#define __powf(x, y) ::powf((x), (y))
#define __sinf(x) ::sinf(x)
#define __cosf(x) ::cosf(x)
#define __tanf(x) ::tanf(x)
#define __sincosf(x, s, c) ::sincosf((x), (s), (c))
static inline float rcbrtf(float x) { return 1.0f / cbrtf(x); }
static inline double rcbrt(double x) { return 1.0 / cbrt(x); }
static inline void sincospif(float x, float *s, float *c) { *s = sinpif(x); *c = cospif(x); }
static inline void sincospi(double x, double *s, double *c) { *s = sinpi(x); *c = cospi(x); }
static inline float normcdff(float x) { return 0.5f * erfcf(-x * (float)M_SQRT1_2); }
static inline double normcdf(double x) { return 0.5 * erfc(-x * M_SQRT1_2); }
static inline double erfinv(double y) {
  if (y <= -1.0) return y == -1.0 ? -INFINITY : NAN;
  if (y >= 1.0) return y == 1.0 ? INFINITY : NAN;
  // Giles' single-precision approximation, then Newton steps on erf
  double w = -log((1.0 - y) * (1.0 + y)), x;
  if (w < 5.0) {
    w -= 2.5;
    x = 2.81022636e-08; x = 3.43273939e-07 + x * w; x = -3.5233877e-06 + x * w;
    x = -4.39150654e-06 + x * w; x = 0.00021858087 + x * w; x = -0.00125372503 + x * w;
    x = -0.00417768164 + x * w; x = 0.246640727 + x * w; x = 1.50140941 + x * w;
  } else {
    w = sqrt(w) - 3.0;
    x = -0.000200214257; x = 0.000100950558 + x * w; x = 0.00134934322 + x * w;
    x = -0.00367342844 + x * w; x = 0.00573950773 + x * w; x = -0.0076224613 + x * w;
    x = 0.00943887047 + x * w; x = 1.00167406 + x * w; x = 2.83297682 + x * w;
  }
  x *= y;
  for (int i = 0; i < 3; ++i) x -= (erf(x) - y) / (2.0 / sqrt(M_PI) * exp(-x * x));
  return x;
}
static inline float erfinvf(float y) { return (float)erfinv((double)y); }
static inline double erfcinv(double y) {
  if (y > 0.0625 && y < 1.9375) return erfinv(1.0 - y);
  // tails: Newton on erfc directly, from the erfinv estimate
  const bool upper = y > 1.0;
  const double t = upper ? 2.0 - y : y;
  if (t <= 0.0) return t == 0.0 ? (upper ? -INFINITY : INFINITY) : NAN;
  double x = sqrt(-log(t / 2.0));
  for (int i = 0; i < 40; ++i) {
    const double d = (erfc(x) - t) / (-2.0 / sqrt(M_PI) * exp(-x * x));
    x -= d;
    if (fabs(d) < 1e-15 * fabs(x)) break;
  }
  return upper ? -x : x;
}
static inline float erfcinvf(float y) { return (float)erfcinv((double)y); }
static inline double normcdfinv(double p) { return -M_SQRT2 * erfcinv(2.0 * p); }
static inline float normcdfinvf(float p) { return (float)normcdfinv((double)p); }
static inline float erfcxf(float x) { return (float)(exp((double)x * x) * erfc((double)x)); }
static inline double erfcx(double x) { return exp(x * x) * erfc(x); }
static inline float rhypotf(float x, float y) { return 1.0f / hypotf(x, y); }
static inline double rhypot(double x, double y) { return 1.0 / hypot(x, y); }
static inline float norm3df(float a, float b, float c) { return sqrtf(a * a + b * b + c * c); }
static inline float rnorm3df(float a, float b, float c) { return 1.0f / norm3df(a, b, c); }
static inline float norm4df(float a, float b, float c, float d) { return sqrtf(a * a + b * b + c * c + d * d); }
static inline float rnorm4df(float a, float b, float c, float d) { return 1.0f / norm4df(a, b, c, d); }
static inline double norm3d(double a, double b, double c) { return sqrt(a * a + b * b + c * c); }
static inline double rnorm3d(double a, double b, double c) { return 1.0 / norm3d(a, b, c); }
static inline double norm4d(double a, double b, double c, double d) { return sqrt(a * a + b * b + c * c + d * d); }
static inline double rnorm4d(double a, double b, double c, double d) { return 1.0 / norm4d(a, b, c, d); }
static inline float normf(int n, const float *a) { double s = 0; for (int i = 0; i < n; ++i) s += (double)a[i] * a[i]; return (float)sqrt(s); }
static inline double norm(int n, const double *a) { double s = 0; for (int i = 0; i < n; ++i) s += a[i] * a[i]; return sqrt(s); }
static inline float saturatef(float x) { return __saturatef(x); }

// ---------------------------------------------------------------- cache-hinted loads and stores
template <class T> static inline T __ldg(const T *p) { return *p; }
template <class T> static inline T __ldca(const T *p) { return *p; }
template <class T> static inline T __ldcg(const T *p) { return *p; }
template <class T> static inline T __ldcs(const T *p) { return *p; }
template <class T> static inline T __ldlu(const T *p) { return *p; }
template <class T> static inline T __ldcv(const T *p) { return *p; }
// the value is not deduced (CUDA's overloads convert it: __stcs(p, 2.0) on a float *)
template <class T> struct gmprof_same_type { typedef T type; };
template <class T> static inline void __stwb(T *p, typename gmprof_same_type<T>::type v) { *p = v; }
template <class T> static inline void __stcg(T *p, typename gmprof_same_type<T>::type v) { *p = v; }
template <class T> static inline void __stcs(T *p, typename gmprof_same_type<T>::type v) { *p = v; }
template <class T> static inline void __stwt(T *p, typename gmprof_same_type<T>::type v) { *p = v; }

// ---------------------------------------------------------------- fences and time

// No other OS thread runs kernel code, and a switch is an opaque call: a compiler barrier is all
// a fence has to be.
static inline void __threadfence() { __asm__ __volatile__("" ::: "memory"); }
static inline void __threadfence_block() { __asm__ __volatile__("" ::: "memory"); }
static inline void __threadfence_system() { __asm__ __volatile__("" ::: "memory"); }
static inline void __prof_trigger(int) {}

namespace gmprof_cpu {
static inline unsigned long long clock64_now() {
#if defined(__x86_64__)
  return __builtin_ia32_rdtsc();
#else
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
#endif
}
static inline void nanosleep_at(const char *file, int line, unsigned) {
  spin_yield(file, line, "__nanosleep()");
}
}  // namespace gmprof_cpu

// ---------------------------------------------------------------- atomics

#define GMPROF_RMW(NAME, T, EXPR)                                                                  \
  static inline T NAME(T *a, T v) { T old = *a; *a = (EXPR); return old; }                         \
  static inline T NAME##_block(T *a, T v) { return NAME(a, v); }                                   \
  static inline T NAME##_system(T *a, T v) { return NAME(a, v); }
GMPROF_RMW(atomicAdd, int, old + v)
GMPROF_RMW(atomicAdd, unsigned int, old + v)
GMPROF_RMW(atomicAdd, unsigned long long, old + v)
GMPROF_RMW(atomicAdd, float, old + v)
GMPROF_RMW(atomicAdd, double, old + v)
GMPROF_RMW(atomicSub, int, old - v)
GMPROF_RMW(atomicSub, unsigned int, old - v)
GMPROF_RMW(atomicMin, int, v < old ? v : old)
GMPROF_RMW(atomicMin, unsigned int, v < old ? v : old)
GMPROF_RMW(atomicMin, long long, v < old ? v : old)
GMPROF_RMW(atomicMin, unsigned long long, v < old ? v : old)
GMPROF_RMW(atomicMax, int, v > old ? v : old)
GMPROF_RMW(atomicMax, unsigned int, v > old ? v : old)
GMPROF_RMW(atomicMax, long long, v > old ? v : old)
GMPROF_RMW(atomicMax, unsigned long long, v > old ? v : old)
GMPROF_RMW(atomicAnd, int, old & v)
GMPROF_RMW(atomicAnd, unsigned int, old & v)
GMPROF_RMW(atomicAnd, unsigned long long, old & v)
GMPROF_RMW(atomicOr, int, old | v)
GMPROF_RMW(atomicOr, unsigned int, old | v)
GMPROF_RMW(atomicOr, unsigned long long, old | v)
GMPROF_RMW(atomicXor, int, old ^ v)
GMPROF_RMW(atomicXor, unsigned int, old ^ v)
GMPROF_RMW(atomicXor, unsigned long long, old ^ v)
GMPROF_RMW(atomicInc, unsigned int, old >= v ? 0u : old + 1u)
GMPROF_RMW(atomicDec, unsigned int, (old == 0u || old > v) ? v : old - 1u)
#undef GMPROF_RMW

namespace gmprof_cpu {
#define GMPROF_CAS(T)                                                                              \
  static inline T atomic_cas(const char *file, int line, T *a, T compare, T val) {                 \
    T old = *a;                                                                                    \
    if (old == compare) *a = val;                                                                  \
    else spin_yield(file, line, "atomicCAS()");                                                    \
    return old;                                                                                    \
  }
GMPROF_CAS(int)
GMPROF_CAS(unsigned int)
GMPROF_CAS(unsigned long long)
GMPROF_CAS(unsigned short)
#undef GMPROF_CAS
#define GMPROF_EXCH(T)                                                                             \
  static inline T atomic_exch(const char *file, int line, T *a, T val) {                           \
    T old = *a;                                                                                    \
    *a = val;                                                                                      \
    if (old == val) spin_yield(file, line, "atomicExch()");                                        \
    return old;                                                                                    \
  }
GMPROF_EXCH(int)
GMPROF_EXCH(unsigned int)
GMPROF_EXCH(unsigned long long)
GMPROF_EXCH(float)
#undef GMPROF_EXCH

// ---------------------------------------------------------------- warp collectives, typed

template <class T>
static inline unsigned long long bits_of(const T &v) {
  static_assert(sizeof(T) <= 8, "warp shuffles move values of at most 8 bytes");
  unsigned long long b = 0;
  memcpy(&b, &v, sizeof(T));
  return b;
}
template <class T>
static inline T from_bits(unsigned long long b) {
  T v;
  memcpy(&v, &b, sizeof(T));
  return v;
}

template <class T>
static inline T shfl(const char *file, int line, const char *what, int op, unsigned mask, T var,
                     int param, int width = 32) {
  return from_bits<T>(warp_collective(file, line, what, op, mask, bits_of(var), param, width, nullptr));
}

struct SyncwarpAt {
  const char *file;
  int line;
  void operator()(unsigned mask = 0xffffffffu) const {
    warp_collective(file, line, "__syncwarp()", OP_SYNCWARP, mask, 0, 0, 32, nullptr);
  }
};

static inline int uni_sync(const char *file, int line, unsigned mask, int pred) {
  return (int)warp_collective(file, line, "__uni_sync()", OP_UNI, mask, pred != 0, 0, 32, nullptr);
}

template <class T>
static inline unsigned match_any(const char *file, int line, unsigned mask, T value) {
  return (unsigned)warp_collective(file, line, "__match_any_sync()", OP_MATCH_ANY, mask, bits_of(value), 0, 32, nullptr);
}

template <class T>
static inline unsigned match_all(const char *file, int line, unsigned mask, T value, int *pred) {
  unsigned long long all = 0;
  const unsigned r = (unsigned)warp_collective(file, line, "__match_all_sync()", OP_MATCH_ALL, mask, bits_of(value), 0, 32, &all);
  *pred = (int)all;
  return r;
}

static inline unsigned reduce(const char *file, int line, const char *what, int op, unsigned mask, unsigned value) {
  return (unsigned)warp_collective(file, line, what, op, mask, value, 0, 32, nullptr);
}
static inline int reduce(const char *file, int line, const char *what, int op, unsigned mask, int value) {
  return (int)(unsigned)warp_collective(file, line, what, op, mask, (unsigned)value, 0, 32, nullptr);
}
static inline unsigned reduce_minmax(const char *file, int line, const char *what, bool max, unsigned mask, unsigned value) {
  return (unsigned)warp_collective(file, line, what, max ? OP_RED_MAX_U : OP_RED_MIN_U, mask, value, 0, 32, nullptr);
}
static inline int reduce_minmax(const char *file, int line, const char *what, bool max, unsigned mask, int value) {
  return (int)(unsigned)warp_collective(file, line, what, max ? OP_RED_MAX_S : OP_RED_MIN_S, mask, (unsigned)value, 0, 32, nullptr);
}

static inline int syncthreads_and(const char *file, int line, int pred) {
  unsigned n;
  const unsigned count = barrier(file, line, "__syncthreads_and()", pred, &n);
  return count == n;
}
}  // namespace gmprof_cpu

#endif  // GMPROF_CPU_MATH_H
