// The <metal_stdlib> shims against Metal's semantics: small MSL kernels run
// on the emulator, each checked against hand-computed values or a C++
// reference loop. bfloat follows Metal 3.1's native bfloat (the standard
// library has no bfloat overloads; code adds its own the way MLX does, on
// Apple's __metal_* functions), SIMD-group shuffles take every type Metal
// allows, mixed-type calls resolve as with Apple's compiler.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "compiler/msl_compiler.h"
#include "tests/support/kernel_harness.h"

namespace mtlemu {
namespace {

using testing::KernelHarness;
using testing::Runs;

KernelHarness Compile(const std::string& source, const char* kernel) {
  return KernelHarness(
      compiler::CompileMsl(source, "stdlib_test.metal", {}, {kernel}), kernel);
}

// The test's own references (independent of the emulator's numeric code).
// float -> bfloat bits, round to nearest even, NaN -> 0x7fc0.
uint16_t BfloatBits(float f) {
  const uint32_t u = std::bit_cast<uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;
  const uint32_t lower = u & 0xffffu;
  uint32_t upper = u >> 16;
  if (lower > 0x8000u || (lower == 0x8000u && (upper & 1u))) ++upper;
  return static_cast<uint16_t>(upper);
}
float BfloatValue(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}
float RoundToBfloat(float f) { return BfloatValue(BfloatBits(f)); }
// float -> half bits for exactly representable values (normal range).
uint16_t HalfBitsOfExact(float f) {
  const uint32_t u = std::bit_cast<uint32_t>(f);
  if ((u & 0x7fffffffu) == 0) return static_cast<uint16_t>(u >> 16);
  const uint32_t sign = (u >> 16) & 0x8000u;
  const int exp = static_cast<int>((u >> 23) & 0xffu) - 127 + 15;
  return static_cast<uint16_t>(sign | (exp << 10) | ((u >> 13) & 0x3ffu));
}
float HalfValue(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const int exp = (h >> 10) & 0x1f;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0)
    return std::ldexp(static_cast<float>(mant), -24) * (sign ? -1.0f : 1.0f);
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  return std::bit_cast<float>(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

TEST(MslStdlib, PredefinedMacrosAreMetal31s) {
  KernelHarness h = Compile(R"(
#include <metal_stdlib>
using namespace metal;
#if !defined(__HAVE_BFLOAT__) || __METAL_VERSION__ < 310 || !defined(__METAL__)
#error "Metal 3.1 with native bfloat expected"
#endif
kernel void macros(device uint* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  out[i] = __METAL_VERSION__ + (__METAL_MAYBE_FAST_MATH__ == __METAL_FAST_MATH__ ? 1 : 0);
})",
                            "macros");
  h.SetBuffer(0, std::vector<uint32_t>(1));
  ASSERT_TRUE(Runs(h, {1}, {1}));
  // The front end compiles with fast math on by default, as Metal does.
  EXPECT_EQ(h.Read<uint32_t>(0)[0], 311u);
}

// float -> bfloat rounds to nearest even; bfloat op bfloat and bfloat op
// int give bfloat (rounded once per operation); bfloat op float gives
// float; bfloat2/3/4 are metal::vec<bfloat, N> and compute the same way.
TEST(MslStdlib, BfloatConversionArithmeticAndVectors) {
  KernelHarness h = Compile(R"(
#include <metal_stdlib>
using namespace metal;
static_assert(is_same_v<vec<bfloat, 4>, bfloat4> && is_same_v<vec<bfloat, 2>, bfloat2>, "vec");
static_assert(sizeof(bfloat3) == 8 && alignof(bfloat4) == 8, "bfloatN layout");
kernel void bf(device const float* in [[buffer(0)]],
               device ushort* conv [[buffer(1)]],
               device bfloat* arith [[buffer(2)]],
               device float* mixed [[buffer(3)]],
               device bfloat4* v4 [[buffer(4)]],
               uint i [[thread_position_in_grid]]) {
  const float f = in[i];
  const bfloat b = bfloat(f);
  conv[i] = as_type<ushort>(b);
  const bfloat c = bfloat(in[(i + 1) % 8]);
  static_assert(is_same_v<decltype(b * c + b), bfloat>, "bfloat op bfloat");
  static_assert(is_same_v<decltype(b * 3), bfloat>, "bfloat op int");
  static_assert(is_same_v<decltype(b * 0.1f), float>, "bfloat op float");
  const bfloat p = b * c + b;  // two bfloat operations, each rounded
  const bfloat q = b * 3;
  const float r = b * 0.1f;
  arith[2 * i] = p;
  arith[2 * i + 1] = q;
  mixed[i] = r;
  vec<bfloat, 4> v = v4[i];
  vec<bfloat, 4> w = {b, c, bfloat(2), bfloat(-0.5f)};
  v4[i] = v * w + bfloat(1);
})",
                            "bf");
  ASSERT_TRUE(h.status().ok()) << h.status().error().message;
  const float one = 1.0f;
  const std::vector<float> in = {
      std::bit_cast<float>(0x3f808000u),  // 1 + 2^-8: a tie, to even (down)
      std::bit_cast<float>(0x3f818000u),  // 1 + 3*2^-8: a tie, to even (up)
      std::bit_cast<float>(0x3f808008u),  // just above the tie: up
      -2.5f,
      std::bit_cast<float>(0x7f7fc99eu),  // 3.4e38: rounds to infinity
      std::bit_cast<float>(0x7f800001u),  // a NaN
      1e-40f * one,                       // a subnormal
      3.0f};
  const std::vector<uint16_t> expected_bits = {0x3f80, 0x3f82, 0x3f81, 0xc020,
                                               0x7f80, 0x7fc0, 0x0001, 0x4040};
  std::vector<uint16_t> v4_in(8 * 4);
  for (size_t k = 0; k < v4_in.size(); ++k) {
    v4_in[k] = BfloatBits(0.25f * static_cast<float>(k) - 3.0f);
  }
  h.SetBuffer(0, in);
  h.SetBuffer(1, std::vector<uint16_t>(8));
  h.SetBuffer(2, std::vector<uint16_t>(16));
  h.SetBuffer(3, std::vector<float>(8));
  h.SetBuffer(4, v4_in);
  ASSERT_TRUE(Runs(h, {8}, {8}));
  const std::vector<uint16_t> conv = h.Read<uint16_t>(1);
  const std::vector<uint16_t> arith = h.Read<uint16_t>(2);
  const std::vector<float> mixed = h.Read<float>(3);
  const std::vector<uint16_t> v4 = h.Read<uint16_t>(4);
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(conv[i], expected_bits[i]) << i;
    const float b = BfloatValue(expected_bits[i]);
    const float c = BfloatValue(expected_bits[(i + 1) % 8]);
    const float p = RoundToBfloat(RoundToBfloat(b * c) + b);
    const float q = RoundToBfloat(b * 3.0f);
    const float r = b * 0.1f;
    if (std::isnan(p)) {
      EXPECT_TRUE(std::isnan(BfloatValue(arith[2 * i]))) << i;
    } else {
      EXPECT_EQ(arith[2 * i], BfloatBits(p)) << i;
    }
    if (std::isnan(q)) {
      EXPECT_TRUE(std::isnan(BfloatValue(arith[2 * i + 1]))) << i;
    } else {
      EXPECT_EQ(arith[2 * i + 1], BfloatBits(q)) << i;
    }
    if (std::isnan(r)) {
      EXPECT_TRUE(std::isnan(mixed[i])) << i;
    } else {
      EXPECT_EQ(mixed[i], r) << i;
    }
    const float w[4] = {b, c, 2.0f, -0.5f};
    for (size_t k = 0; k < 4; ++k) {
      const float v = BfloatValue(v4_in[4 * i + k]);
      const float want = RoundToBfloat(RoundToBfloat(v * w[k]) + 1.0f);
      const float got = BfloatValue(v4[4 * i + k]);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << i << "," << k;
      } else {
        EXPECT_EQ(got, want) << i << "," << k;
      }
    }
  }
}

// Apple's library has no bfloat math or SIMD-group overloads; MLX writes
// them in namespace metal (and fast::, precise::) on top of the __metal_*
// functions with a fast-math flag. Code written that way must compile and
// run here; without them, a bfloat argument goes to the float overload.
TEST(MslStdlib, BfloatOverloadsWrittenTheMlxWay) {
  KernelHarness h = Compile(R"(
#include <metal_stdlib>
using namespace metal;
namespace metal {
METAL_FUNC bfloat exp(bfloat x) {
  return static_cast<bfloat>(__metal_exp(static_cast<float>(x), __METAL_MAYBE_FAST_MATH__));
}
METAL_FUNC bfloat max(bfloat x, bfloat y) {
  return static_cast<bfloat>(
      __metal_fmax(static_cast<float>(x), static_cast<float>(y), __METAL_MAYBE_FAST_MATH__));
}
METAL_FUNC bfloat fma(bfloat x, bfloat y, bfloat z) {
  return static_cast<bfloat>(
      __metal_fma(static_cast<float>(x), static_cast<float>(y), static_cast<float>(z)));
}
METAL_FUNC bfloat frexp(bfloat x, thread int& e) {
  return static_cast<bfloat>(__metal_frexp(static_cast<float>(x), &e));
}
METAL_FUNC bfloat simd_sum(bfloat x) {
  return static_cast<bfloat>(__metal_simd_sum(static_cast<float>(x)));
}
METAL_FUNC bfloat simd_shuffle_xor(bfloat x, ushort mask) {
  return as_type<bfloat>(__metal_simd_shuffle_xor(as_type<ushort>(x), mask));
}
namespace fast {
METAL_FUNC bfloat exp(bfloat x) {
  return static_cast<bfloat>(__metal_exp(static_cast<float>(x), __METAL_FAST_MATH__));
}
}  // namespace fast
namespace precise {
METAL_FUNC bfloat exp(bfloat x) {
  return static_cast<bfloat>(__metal_exp(static_cast<float>(x), __METAL_PRECISE_MATH__));
}
}  // namespace precise
}  // namespace metal
kernel void mlx_style(device const bfloat* in [[buffer(0)]],
                      device bfloat* out [[buffer(1)]],
                      device int* exps [[buffer(2)]],
                      device float* widened [[buffer(3)]],
                      uint i [[thread_position_in_grid]]) {
  const bfloat x = in[i];
  static_assert(is_same_v<decltype(metal::exp(x)), bfloat>, "the user's overload");
  static_assert(is_same_v<decltype(metal::sqrt(x)), float> &&
                is_same_v<decltype(metal::abs(x)), float>, "no library overload");
  int e;
  out[6 * i] = metal::max(metal::exp(x), bfloat(1.5f));
  out[6 * i + 1] = fast::exp(x) - precise::exp(x);
  out[6 * i + 2] = metal::fma(x, x, bfloat(1));
  out[6 * i + 3] = metal::frexp(x, e);
  out[6 * i + 4] = simd_sum(x);
  out[6 * i + 5] = simd_shuffle_xor(x, 1);
  exps[i] = e;
  widened[i] = metal::sqrt(metal::abs(x));
})",
                            "mlx_style");
  ASSERT_TRUE(h.status().ok()) << h.status().error().message;
  const uint32_t n = 32;
  std::vector<uint16_t> in(n);
  for (uint32_t i = 0; i < n; ++i) {
    in[i] = BfloatBits(0.125f * static_cast<float>(i) - 1.0f);
  }
  h.SetBuffer(0, in);
  h.SetBuffer(1, std::vector<uint16_t>(6 * n));
  h.SetBuffer(2, std::vector<int32_t>(n));
  h.SetBuffer(3, std::vector<float>(n));
  ASSERT_TRUE(Runs(h, {n}, {n}));
  const std::vector<uint16_t> out = h.Read<uint16_t>(1);
  const std::vector<int32_t> exps = h.Read<int32_t>(2);
  const std::vector<float> widened = h.Read<float>(3);
  float sum = 0.0f;
  for (uint32_t i = 0; i < n; ++i) sum += BfloatValue(in[i]);  // exact
  for (uint32_t i = 0; i < n; ++i) {
    const float x = BfloatValue(in[i]);
    // exp within a bfloat ulp of the correctly rounded value.
    const float want_exp = std::max(std::exp(x), 1.5f);
    EXPECT_NEAR(BfloatValue(out[6 * i]), want_exp, want_exp * 0x1p-7f) << i;
    EXPECT_NEAR(BfloatValue(out[6 * i + 1]), 0.0f, 0x1p-6f) << i;
    EXPECT_EQ(out[6 * i + 2], BfloatBits(std::fma(x, x, 1.0f))) << i;
    int e = 0;
    const float m = std::frexp(x, &e);
    EXPECT_EQ(BfloatValue(out[6 * i + 3]), m) << i;
    EXPECT_EQ(exps[i], e) << i;
    EXPECT_EQ(out[6 * i + 4], BfloatBits(sum)) << i;
    EXPECT_EQ(out[6 * i + 5], in[i ^ 1u]) << i;
    EXPECT_NEAR(widened[i], std::sqrt(std::fabs(x)),
                1e-6f * std::max(1.0f, std::fabs(x)))
        << i;
  }
}

// simd_shuffle_xor takes every type Metal lists (here float, half, int,
// uint, float4): a butterfly reduction leaves the SIMD group's sum in
// every lane.
TEST(MslStdlib, SimdShuffleXorButterflyOnEveryType) {
  const std::string source = R"(
#include <metal_stdlib>
using namespace metal;
template <typename T>
T butterfly(T v) {
  for (ushort m = 16; m > 0; m >>= 1) v += simd_shuffle_xor(v, m);
  return v;
}
kernel void bf_float(device float* x [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  x[i] = butterfly(x[i]);
}
kernel void bf_half(device half* x [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  x[i] = butterfly(x[i]);
}
kernel void bf_int(device int* x [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  x[i] = butterfly(x[i]);
}
kernel void bf_uint(device uint* x [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  x[i] = butterfly(x[i]);
}
kernel void bf_float4(device float4* x [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  x[i] = butterfly(x[i]);
})";
  constexpr uint32_t kThreads = 128;  // four SIMD groups
  auto group_sums = [](const std::vector<double>& v, size_t width) {
    std::vector<double> sums(v.size());
    for (size_t g = 0; g < v.size(); g += 32 * width) {
      for (size_t c = 0; c < width; ++c) {
        double s = 0;
        for (size_t l = 0; l < 32; ++l) s += v[g + l * width + c];
        for (size_t l = 0; l < 32; ++l) sums[g + l * width + c] = s;
      }
    }
    return sums;
  };
  {
    KernelHarness h = Compile(source, "bf_float");
    std::vector<float> x(kThreads);
    std::vector<double> ref(kThreads);
    for (uint32_t i = 0; i < kThreads; ++i)
      ref[i] = x[i] = 0.5f * float(i % 37) - 7.0f;
    h.SetBuffer(0, x);
    ASSERT_TRUE(Runs(h, {kThreads}, {kThreads}));
    const auto out = h.Read<float>(0);
    const auto want = group_sums(ref, 1);
    for (uint32_t i = 0; i < kThreads; ++i) EXPECT_EQ(out[i], want[i]) << i;
  }
  {
    KernelHarness h = Compile(source, "bf_half");
    std::vector<uint16_t> x(kThreads);
    std::vector<double> ref(kThreads);
    for (uint32_t i = 0; i < kThreads; ++i) {
      ref[i] = float(i % 9) - 4.0f;
      x[i] = HalfBitsOfExact(float(ref[i]));
    }
    h.SetBuffer(0, x);
    ASSERT_TRUE(Runs(h, {kThreads}, {kThreads}));
    const auto out = h.Read<uint16_t>(0);
    const auto want = group_sums(ref, 1);
    for (uint32_t i = 0; i < kThreads; ++i)
      EXPECT_EQ(HalfValue(out[i]), want[i]) << i;
  }
  {
    KernelHarness h = Compile(source, "bf_int");
    std::vector<int32_t> x(kThreads);
    std::vector<double> ref(kThreads);
    for (uint32_t i = 0; i < kThreads; ++i)
      ref[i] = x[i] = int32_t(i * i % 101) - 50;
    h.SetBuffer(0, x);
    ASSERT_TRUE(Runs(h, {kThreads}, {kThreads}));
    const auto out = h.Read<int32_t>(0);
    const auto want = group_sums(ref, 1);
    for (uint32_t i = 0; i < kThreads; ++i) EXPECT_EQ(out[i], want[i]) << i;
  }
  {
    KernelHarness h = Compile(source, "bf_uint");
    std::vector<uint32_t> x(kThreads);
    std::vector<double> ref(kThreads);
    for (uint32_t i = 0; i < kThreads; ++i)
      ref[i] = x[i] = 100000u * (i % 5) + i;
    h.SetBuffer(0, x);
    ASSERT_TRUE(Runs(h, {kThreads}, {kThreads}));
    const auto out = h.Read<uint32_t>(0);
    const auto want = group_sums(ref, 1);
    for (uint32_t i = 0; i < kThreads; ++i) EXPECT_EQ(out[i], want[i]) << i;
  }
  {
    KernelHarness h = Compile(source, "bf_float4");
    std::vector<float> x(4 * kThreads);
    std::vector<double> ref(4 * kThreads);
    for (uint32_t i = 0; i < 4 * kThreads; ++i)
      ref[i] = x[i] = float(i % 13) * 0.25f;
    h.SetBuffer(0, x);
    ASSERT_TRUE(Runs(h, {kThreads}, {kThreads}));
    const auto out = h.Read<float>(0);
    const auto want = group_sums(ref, 4);
    for (uint32_t i = 0; i < 4 * kThreads; ++i) EXPECT_EQ(out[i], want[i]) << i;
  }
}

// Mixed argument types resolve as with Apple's compiler: the usual
// arithmetic conversions pick the common type.
TEST(MslStdlib, MixedTypeMinMaxClamp) {
  KernelHarness h = Compile(R"(
#include <metal_stdlib>
using namespace metal;
kernel void mixed(device const float* xs [[buffer(0)]],
                  device float* out [[buffer(1)]],
                  uint i [[thread_position_in_grid]]) {
  const float x = xs[i];
  const int k = int(i) - 3;
  const half hx = half(x);
  out[8 * i + 0] = fmin(1, x / 6 + 0.5);    // int, float
  out[8 * i + 1] = max(x, 0);               // float, int
  out[8 * i + 2] = clamp(x, 0.0, 1.0);      // float literals
  out[8 * i + 3] = clamp(x, 0, 1);          // float, int, int
  out[8 * i + 4] = float(min(k, 2u));       // int, uint: uint
  out[8 * i + 5] = max(hx, 0.25f);          // half, float: float
  out[8 * i + 6] = fmax(x, hx);             // float, half: float
  out[8 * i + 7] = float(clamp(k, -1, 2));  // int
})",
                            "mixed");
  const uint32_t n = 8;
  std::vector<float> xs(n);
  for (uint32_t i = 0; i < n; ++i) xs[i] = 1.5f * float(i) - 4.0f;
  h.SetBuffer(0, xs);
  h.SetBuffer(1, std::vector<float>(8 * n));
  ASSERT_TRUE(Runs(h, {n}, {n}));
  const auto out = h.Read<float>(1);
  for (uint32_t i = 0; i < n; ++i) {
    const float x = xs[i];  // also exact in half
    const int k = int(i) - 3;
    EXPECT_FLOAT_EQ(out[8 * i + 0], std::fmin(1.0f, x / 6 + 0.5f)) << i;
    EXPECT_EQ(out[8 * i + 1], std::fmax(x, 0.0f)) << i;
    EXPECT_EQ(out[8 * i + 2], std::fmin(std::fmax(x, 0.0f), 1.0f)) << i;
    EXPECT_EQ(out[8 * i + 3], std::fmin(std::fmax(x, 0.0f), 1.0f)) << i;
    EXPECT_EQ(out[8 * i + 4], float(std::min(uint32_t(k), 2u))) << i;
    EXPECT_EQ(out[8 * i + 5], std::fmax(x, 0.25f)) << i;
    EXPECT_EQ(out[8 * i + 6], x) << i;
    EXPECT_EQ(out[8 * i + 7], float(std::min(std::max(k, -1), 2))) << i;
  }
}

// Braced initializers: every element for the ext vectors (float4, int2);
// fewer for boolN and bfloatN, the rest zero as in Metal. (A shorter list
// for an ext vector, `float4 acc = {0.f}`, is rejected by clang's OpenCL
// mode before the shims are involved.)
TEST(MslStdlib, BraceInitializedVectors) {
  KernelHarness h = Compile(R"(
#include <metal_stdlib>
using namespace metal;
kernel void braces(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  float4 a = {1.0f, 2.0f, float(i), 4.0f};
  int2 b = {int(i), -3};
  bool4 m = {true, false, true};
  bfloat4 v = {bfloat(1.5f), bfloat(-2)};
  bool3 z;
  z = {false, true};
  out[12 * i + 0] = a.x + a.y + a.z + a.w;
  out[12 * i + 1] = float(b.x * b.y);
  for (int k = 0; k < 4; ++k) out[12 * i + 2 + k] = m[k] ? 1.0f : 0.0f;
  for (int k = 0; k < 4; ++k) out[12 * i + 6 + k] = float(v[k]);
  out[12 * i + 10] = z.x ? 1.0f : 0.0f;
  out[12 * i + 11] = float(z.y) + 2.0f * float(z.z);
})",
                            "braces");
  const uint32_t n = 4;
  h.SetBuffer(0, std::vector<float>(12 * n, -1.0f));
  ASSERT_TRUE(Runs(h, {n}, {n}));
  const auto out = h.Read<float>(0);
  for (uint32_t i = 0; i < n; ++i) {
    const float* o = &out[12 * i];
    EXPECT_EQ(o[0], 7.0f + float(i)) << i;
    EXPECT_EQ(o[1], -3.0f * float(i)) << i;
    EXPECT_EQ(o[2], 1.0f);
    EXPECT_EQ(o[3], 0.0f);
    EXPECT_EQ(o[4], 1.0f);
    EXPECT_EQ(o[5], 0.0f);  // not given: false
    EXPECT_EQ(o[6], 1.5f);
    EXPECT_EQ(o[7], -2.0f);
    EXPECT_EQ(o[8], 0.0f);  // not given: zero
    EXPECT_EQ(o[9], 0.0f);
    EXPECT_EQ(o[10], 0.0f);
    EXPECT_EQ(o[11], 1.0f);
  }
}

// metal::numeric_limits, usable in constant expressions (MLX's Limits<T>
// are `static constexpr constant` members), for the float types and the
// integers.
TEST(MslStdlib, NumericLimits) {
  KernelHarness h = Compile(R"(
#include <metal_stdlib>
using namespace metal;
template <typename T> struct Lim {
  static constexpr constant T max = numeric_limits<T>::max();
  static constexpr constant T lowest = numeric_limits<T>::lowest();
};
kernel void limits(device uint* u [[buffer(0)]], device float* f [[buffer(1)]],
                   uint i [[thread_position_in_grid]]) {
  static_assert(numeric_limits<bfloat>::digits == 8 && numeric_limits<half>::digits == 11, "");
  static_assert(numeric_limits<int>::is_signed && !numeric_limits<uint>::is_signed, "");
  u[0] = as_type<uint>(numeric_limits<float>::max());
  u[1] = as_type<uint>(numeric_limits<float>::min());
  u[2] = as_type<uint>(numeric_limits<float>::epsilon());
  u[3] = as_type<uint>(numeric_limits<float>::infinity());
  u[4] = as_type<ushort>(numeric_limits<half>::max());
  u[5] = as_type<ushort>(numeric_limits<half>::epsilon());
  u[6] = as_type<ushort>(Lim<bfloat>::max);
  u[7] = as_type<ushort>(Lim<bfloat>::lowest);
  u[8] = as_type<ushort>(numeric_limits<bfloat>::epsilon());
  u[9] = as_type<ushort>(-numeric_limits<bfloat>::infinity());
  u[10] = uint(numeric_limits<int>::max());
  u[11] = uint(numeric_limits<int>::min());
  u[12] = numeric_limits<uint>::max();
  u[13] = uint(numeric_limits<ushort>::max());
  u[14] = uint(int(numeric_limits<char>::min()));
  u[15] = uint(Lim<short>::lowest);
  f[0] = isnan(numeric_limits<float>::quiet_NaN()) ? 1.0f : 0.0f;
  f[1] = isnan(float(numeric_limits<bfloat>::quiet_NaN())) ? 1.0f : 0.0f;
})",
                            "limits");
  h.SetBuffer(0, std::vector<uint32_t>(16));
  h.SetBuffer(1, std::vector<float>(2));
  ASSERT_TRUE(Runs(h, {1}, {1}));
  const auto u = h.Read<uint32_t>(0);
  const auto f = h.Read<float>(1);
  EXPECT_EQ(u[0], std::bit_cast<uint32_t>(std::numeric_limits<float>::max()));
  EXPECT_EQ(u[1], std::bit_cast<uint32_t>(std::numeric_limits<float>::min()));
  EXPECT_EQ(u[2],
            std::bit_cast<uint32_t>(std::numeric_limits<float>::epsilon()));
  EXPECT_EQ(u[3], 0x7f800000u);
  EXPECT_EQ(u[4], 0x7bffu);  // 65504
  EXPECT_EQ(u[5], 0x1400u);  // 2^-10
  EXPECT_EQ(u[6], 0x7f7fu);  // largest finite bfloat
  EXPECT_EQ(u[7], 0xff7fu);
  EXPECT_EQ(u[8], 0x3c00u);  // 2^-7
  EXPECT_EQ(u[9], 0xff80u);  // -inf
  EXPECT_EQ(u[10], 0x7fffffffu);
  EXPECT_EQ(u[11], 0x80000000u);
  EXPECT_EQ(u[12], 0xffffffffu);
  EXPECT_EQ(u[13], 65535u);
  EXPECT_EQ(u[14], static_cast<uint32_t>(-128));
  EXPECT_EQ(u[15], static_cast<uint32_t>(-32768));
  EXPECT_EQ(f[0], 1.0f);
  EXPECT_EQ(f[1], 1.0f);
}

// atomic<float> (Metal 3's atomic_float) on device memory: every thread's
// fetch_add lands, and the old values returned are distinct partial sums.
TEST(MslStdlib, AtomicFloatFetchAdd) {
  KernelHarness h = Compile(R"(
#include <metal_stdlib>
using namespace metal;
kernel void accumulate(device const float* x [[buffer(0)]],
                       device atomic<float>* total [[buffer(1)]],
                       device float* old [[buffer(2)]],
                       uint i [[thread_position_in_grid]]) {
  old[i] = atomic_fetch_add_explicit(total, x[i], memory_order_relaxed);
})",
                            "accumulate");
  const uint32_t n = 300;
  std::vector<float> x(n);
  float sum = 0.0f;
  for (uint32_t i = 0; i < n; ++i) {
    x[i] = float(1 + i % 4);  // integers: every order gives the same sum
    sum += x[i];
  }
  h.SetBuffer(0, x);
  h.SetBuffer(1, std::vector<float>{0.5f});
  h.SetBuffer(2, std::vector<float>(n));
  ASSERT_TRUE(Runs(h, {n}, {64}));
  EXPECT_EQ(h.Read<float>(1)[0], 0.5f + sum);
  std::vector<float> old = h.Read<float>(2);
  std::sort(old.begin(), old.end());
  EXPECT_EQ(old.front(), 0.5f);
  for (uint32_t i = 1; i < n; ++i) EXPECT_LT(old[i - 1], old[i]) << i;
}

}  // namespace
}  // namespace mtlemu
