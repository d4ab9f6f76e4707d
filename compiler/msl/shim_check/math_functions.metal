// Math functions for float, half and their vectors, metal:: / fast:: /
// precise:: spellings.
#include <metal_stdlib>
using namespace metal;

template <typename T>
T all_math(T x, T y) {
  T r = sqrt(x) + rsqrt(x) + exp(x) + exp2(x) + exp10(x) + log(x) + log2(x) + log10(x);
  r += sin(x) + cos(x) + tan(x) + sinpi(x) + cospi(x) + tanpi(x);
  r += asin(x) + acos(x) + atan(x) + atan2(x, y) + sinh(x) + cosh(x) + tanh(x);
  r += asinh(x) + acosh(x) + atanh(x);
  r += floor(x) + ceil(x) + trunc(x) + rint(x) + round(x) + fract(x);
  r += fmin(x, y) + fmax(x, y) + fma(x, y, x) + pow(x, y) + powr(x, y) + fmod(x, y);
  r += copysign(x, y) + fabs(x) + abs(y) + fdim(x, y) + divide(x, y);
  r += fmin3(x, y, r) + fmax3(x, y, r) + fmedian3(x, y, r) + min(x, y) + max(x, y);
  r += nextafter(x, y);
  T c;
  r += sincos(x, c) + c;
  T ip;
  r += modf(x, ip) + ip;
  return r;
}

kernel void math_f(device float* f [[buffer(0)]], device half* h [[buffer(1)]],
                   device float4* f4 [[buffer(2)]], device half3* h3 [[buffer(3)]],
                   device int* e [[buffer(4)]], uint gid [[thread_position_in_grid]]) {
  f[gid] = all_math(f[gid], f[gid + 1]);
  h[gid] = all_math(h[gid], h[gid + 1]);
  f4[gid] = all_math(f4[gid], f4[gid + 1]);
  h3[gid] = all_math(h3[gid], h3[gid + 1]);
  int ex;
  f[gid + 2] = frexp(f[gid], ex) + ldexp(f[gid], 3) + float(ilogb(f[gid + 1]));
  e[gid] = ex;
  int4 ex4;
  f4[gid + 2] = frexp(f4[gid], ex4) + ldexp(f4[gid], int4(1, 2, 3, 4));
  e[gid + 1] = ex4.x + ilogb(f4[gid]).y;
  f[gid + 3] = fast::sin(f[gid]) + precise::cos(f[gid]) + fast::exp2(f[gid]) + precise::sqrt(f[gid]) +
               metal::precise::divide(f[gid], 3.0f) + fast::normalize(f4[gid]).x;
  // Scalar and vector mixes: max(v, 0.0f), pow(x, 2), mix(a, b, t).
  f4[gid + 3] = max(f4[gid], 0.0f) + pow(f4[gid], 2.0f) + fmin(f4[gid], 1) + fmax(1.0f, f4[gid]);
  f[gid + 4] = max(f[gid], 0) + fmin(h[gid], 1.0f) + pow(f[gid], 2);
  bool4 n = isnan(f4[gid]) || isinf(f4[gid]);
  f[gid + 5] = (isfinite(f[gid]) && !signbit(h[gid]) && isnormal(f[gid]) && isordered(f[gid], 1.0f) &&
                !isunordered(h[gid], h[gid]) && !any(n)) ? 1.0f : 0.0f;
  f[gid + 6] = M_PI_F * FLT_MAX + INFINITY + HALF_MAX + FLT_EPSILON + MAXFLOAT;
}
// EXPECT: air.sqrt.f32 air.sqrt.f16 air.rsqrt.f32 air.exp.f32 air.exp2.f16 air.exp10.f32 air.log.f32
// EXPECT: air.log2.f16 air.log10.f32 air.sin.f32 air.cos.f16 air.tan.f32 air.sinpi.f32 air.cospi.f16
// EXPECT: air.tanpi.f32 air.asin.f32 air.acos.f16 air.atan.f32 air.atan2.f32 air.sinh.f32 air.cosh.f16
// EXPECT: air.tanh.f32 air.asinh.f32 air.acosh.f16 air.atanh.f32 air.floor.f32 air.ceil.f16 air.trunc.f32
// EXPECT: air.rint.f32 air.round.f16 air.fract.f32 air.fmin.f32 air.fmax.f16 air.fma.f32 air.fma.f16
// EXPECT: air.pow.f32 air.pow.f16 air.fmod.f32 air.copysign.f32 air.fabs.f16 air.ldexp.f32
// EXPECT: air.isnan.f32 air.isinf.f32 air.isfinite.f32 air.signbit.f16
