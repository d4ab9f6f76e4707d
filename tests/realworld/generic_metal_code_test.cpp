// Generic Metal code as MLX's FFT, steel attention, reductions and scans
// write it, in small kernels written here, each run and checked against a
// C++ reference: templates that deduce T through vec<T, N> (for ext and
// class vectors alike), function-pointer aliases as template parameters,
// aliases of vectors used as constructors, scalars of greater rank with
// vectors (`0.5 * half2`), float literals in templates, pointer arithmetic
// with integral-constant objects, tail-recursive helpers, early returns
// before a barrier, and threadgroup memory beyond the device's (a kernel
// that compiles, a pipeline that fails).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "compiler/msl_compiler.h"
#include "isa/numeric.h"
#include "tests/support/kernel_harness.h"

namespace mtlemu {
namespace {

using testing::KernelHarness;
using testing::Runs;

KernelHarness Compile(const std::string& source, const char* kernel) {
  return KernelHarness(
      compiler::CompileMsl(source, "generic.metal", {}, {kernel}), kernel);
}

// MLX's FFT and steel attention: T deduced from vec<T, 2> parameters, from
// a partial specialization on vec<T, 2>, and through a member alias
// template (`dtype_frag_t<U>`), for float, half and bfloat vectors, mixed.
TEST(GenericMetalCode, TemplatesDeduceThroughVec) {
  KernelHarness h = Compile(R"(
#include <metal_stdlib>
using namespace metal;
template <typename T> struct Kind { static constexpr int value = 0; };
template <typename T> struct Kind<vec<T, 2>> { static constexpr int value = 1; };
template <typename T>
T sum2(thread vec<T, 2>* v) {
#pragma clang loop unroll(full)
  for (int i = 0; i < 1; ++i) {}
  return v->x + v->y;
}
template <int K> struct Frag {
  template <typename U> using frag_t = typename metal::vec<U, K>;
  template <typename A, typename B>
  static float dot(thread frag_t<A>& a, thread frag_t<B>& b) {
    return float(a.x) * float(b.x) + float(a.y) * float(b.y);
  }
};
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  float2 f = float2(i, 2);
  bfloat2 g = bfloat2(1.5f, 2.0f);
  half2 h = half2(3, 4);
  out[4 * i] = sum2(&f) + float(sum2(&g)) + float(sum2<half>(&h));
  out[4 * i + 1] = Kind<float2>::value + 10 * Kind<bfloat2>::value + 100 * Kind<float>::value;
  out[4 * i + 2] = Frag<2>::dot(f, g);
  out[4 * i + 3] = Frag<2>::dot(h, g);
}
)",
                            "k");
  h.SetBuffer(0, std::vector<float>(8, -1.0f));
  ASSERT_TRUE(Runs(h, {2}, {2}));
  const std::vector<float> out = h.Read<float>(0);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(out[4 * i], (i + 2.0f) + 3.5f + 7.0f) << i;
    EXPECT_EQ(out[4 * i + 1], 11.0f) << i;
    EXPECT_EQ(out[4 * i + 2], i * 1.5f + 4.0f) << i;
    EXPECT_EQ(out[4 * i + 3], 3 * 1.5f + 8.0f) << i;
  }
}

// MLX's FFT: `RadixFunc<T> radix_func` (an alias of a function pointer
// type) as a template parameter given `radix2<T>`, a template that deduces
// through vec<T, 2>; `complex_T(x, -y)` with `using complex_T = vec<T, 2>`.
TEST(GenericMetalCode, FunctionPointerAliasesAndVecAliasConstructors) {
  KernelHarness h = Compile(R"(
#include <metal_stdlib>
using namespace metal;
template <typename T>
using RadixFunc = void (*)(thread vec<T, 2>*, thread vec<T, 2>*);
template <typename T>
void radix2(thread vec<T, 2>* x, thread vec<T, 2>* y) {
  y[0] = x[0] + x[1];
  y[1] = x[0] - x[1];
}
template <typename T, RadixFunc<T> radix_func>
void butterfly(thread vec<T, 2>* x, thread vec<T, 2>* y) { radix_func(x, y); }
template <typename T> struct Conj {
  using complex_T = vec<T, 2>;
  complex_T operator()(complex_T c) const { return complex_T(c.x, -c.y); }
};
kernel void k(device float2* io [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  float2 x[2] = {io[2 * i], io[2 * i + 1]};
  float2 y[2];
  butterfly<float, radix2<float>>(x, y);
  io[2 * i] = Conj<float>{}(y[0]);
  io[2 * i + 1] = y[1];
}
)",
                            "k");
  const std::vector<float> in = {1, 2, 3, 5, -1, 0.5f, 4, -2};
  h.SetBuffer(0, in);
  ASSERT_TRUE(Runs(h, {2}, {2}));
  const std::vector<float> out = h.Read<float>(0);
  for (int i = 0; i < 2; ++i) {
    const float* a = &in[4 * i];
    EXPECT_EQ(out[4 * i], a[0] + a[2]);
    EXPECT_EQ(out[4 * i + 1], -(a[1] + a[3]));
    EXPECT_EQ(out[4 * i + 2], a[0] - a[2]);
    EXPECT_EQ(out[4 * i + 3], a[1] - a[3]);
  }
}

// Metal converts a scalar to a vector's element type ("the usual arithmetic
// conversion"), where C++ for OpenCL refuses a float with half vectors;
// the grouping of the user's expression stays. An unsuffixed literal is a
// float, also in a template.
TEST(GenericMetalCode, ScalarsOfGreaterRankWithVectors) {
  KernelHarness h = Compile(R"(
#include <metal_stdlib>
using namespace metal;
template <typename T> vec<T, 2> halve(vec<T, 2> a) { return 0.5 * a; }
kernel void k(device half* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  half2 v = half2(i, 1);
  float s = 3.0;
  half2 z = v * s - s * v.yx + 0.25;
  z *= 2.0;
  z += s;
  out[2 * i] = halve<half>(v).x + (0.5 * v).x + z.x;
  out[2 * i + 1] = z.y;
}
)",
                            "k");
  h.SetBuffer(0, std::vector<uint16_t>(4, 0));
  ASSERT_TRUE(Runs(h, {2}, {2}));
  const std::vector<uint16_t> out = h.Read<uint16_t>(0);
  for (int i = 0; i < 2; ++i) {
    // v = (i, 1): z = ((i, 1) * 3 - 3 * (1, i) + 0.25) * 2 + 3.
    const float zx = (i * 3.0f - 3.0f + 0.25f) * 2 + 3;
    const float zy = (3.0f - 3.0f * i + 0.25f) * 2 + 3;
    EXPECT_EQ(isa::HalfBitsToFloat(out[2 * i]), 0.5f * i + 0.5f * i + zx) << i;
    EXPECT_EQ(isa::HalfBitsToFloat(out[2 * i + 1]), zy) << i;
  }
}

// MLX's steel attention: `src += str_y` with `str_y` an Int<1>{}, an object
// whose conversion to int is a `thread` method.
TEST(GenericMetalCode, PointerArithmeticWithIntegralConstantObjects) {
  KernelHarness h = Compile(R"(
#include <metal_stdlib>
using namespace metal;
template <typename T, T v> struct constant_of {
  static constexpr constant T value = v;
  constexpr operator T() const thread noexcept { return value; }
};
template <typename P, typename S> float walk(P p, S step) {
  float total = 0;
  for (int k = 0; k < 3; ++k) { total += *p; p += step; }
  p -= step;
  return total + 100 * *p;
}
kernel void k(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
              uint i [[thread_position_in_grid]]) {
  out[i] = walk(in + i, constant_of<int, 2>{});
}
)",
                            "k");
  std::vector<float> in(12);
  for (int k = 0; k < 12; ++k) in[k] = static_cast<float>(k * k);
  h.SetBuffer(0, in);
  h.SetBuffer(1, std::vector<float>(4, 0.0f));
  ASSERT_TRUE(Runs(h, {4}, {4}));
  const std::vector<float> out = h.Read<float>(1);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(out[i], in[i] + in[i + 2] + in[i + 4] + 100 * in[i + 4]) << i;
  }
}

// MLX's LoopedElemToLoc::next(n, ...): a helper that calls itself last
// (the ISA has no calls: it becomes a loop).
TEST(GenericMetalCode, TailRecursiveHelpers) {
  KernelHarness h = Compile(R"(
#include <metal_stdlib>
using namespace metal;
struct Counter {
  int index = 0;
  int wraps = 0;
  void advance(int n, int size) thread {
    index += n;
    if (index >= size) {
      const int extra = index - size;
      index = 0;
      ++wraps;
      if (extra > 0) advance(extra, size);
    }
  }
};
kernel void k(device int2* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  Counter c;
  c.advance(int(i) * 7, 5);
  out[i] = int2(c.index, c.wraps);
}
)",
                            "k");
  h.SetBuffer(0, std::vector<int32_t>(16, -1));
  ASSERT_TRUE(Runs(h, {8}, {8}));
  const std::vector<int32_t> out = h.Read<int32_t>(0);
  for (int i = 0; i < 8; ++i) {
    // The same steps in C++.
    int index = 0, wraps = 0, n = i * 7;
    while (true) {
      index += n;
      if (index < 5) break;
      n = index - 5;
      index = 0;
      ++wraps;
      if (n <= 0) break;
    }
    EXPECT_EQ(out[2 * i], index) << i;
    EXPECT_EQ(out[2 * i + 1], wraps) << i;
  }
}

// MLX's scans read `c ? input[i] : Op::init` with a class type: clang
// chooses between a device and a thread pointer. Only the side the
// condition picks is read (the other index is out of bounds).
TEST(GenericMetalCode, ConditionalBetweenDeviceAndThreadValues) {
  KernelHarness h = Compile(R"(
#include <metal_stdlib>
using namespace metal;
struct pair_t { float a; float b; };
struct Op { static constexpr constant pair_t init = {-1.0f, -2.0f}; };
kernel void k(device const pair_t* in [[buffer(0)]], device float* out [[buffer(1)]],
              constant uint& n [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  pair_t init = Op::init;
  for (int k = 0; k < 2; ++k) {
    const uint j = 2 * i + k;
    pair_t v = j < n ? in[j] : init;
    out[2 * j] = v.a;
    out[2 * j + 1] = v.b;
  }
}
)",
                            "k");
  const uint32_t n = 5;
  std::vector<float> in(2 * n);
  for (uint32_t k = 0; k < 2 * n; ++k) in[k] = 0.25f * k;
  h.SetBuffer(0, in);
  h.SetBuffer(1, std::vector<float>(16, 0.0f));
  h.SetBytes(2, n);
  ASSERT_TRUE(Runs(h, {4}, {4}));
  const std::vector<float> out = h.Read<float>(1);
  for (uint32_t j = 0; j < 8; ++j) {
    EXPECT_EQ(out[2 * j], j < n ? in[2 * j] : -1.0f) << j;
    EXPECT_EQ(out[2 * j + 1], j < n ? in[2 * j + 1] : -2.0f) << j;
  }
}

// MLX's col_reduce_small: threads past the last column `return` before a
// threadgroup barrier, and the code after it ends in a loop whose only
// exit is the kernel's. The barrier waits for the threads still running.
TEST(GenericMetalCode, EarlyReturnBeforeABarrier) {
  KernelHarness h = Compile(R"(
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], constant uint& n [[buffer(1)]],
              uint lid [[thread_position_in_threadgroup]]) {
  threadgroup float shared[64];
  if (lid >= n) {
    return;
  }
  shared[lid] = float(lid);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  for (uint i = 0; i < lid % 3; i++) {
    out[lid * 2 + i] = shared[n - 1 - lid];
  }
}
)",
                            "k");
  const uint32_t n = 40;
  h.SetBuffer(0, std::vector<float>(128, -1.0f));
  h.SetBytes(1, n);
  ASSERT_TRUE(Runs(h, {64}, {64}));
  const std::vector<float> out = h.Read<float>(0);
  std::vector<float> expected(128, -1.0f);
  for (uint32_t lid = 0; lid < n; ++lid) {
    for (uint32_t i = 0; i < lid % 3; ++i) {
      expected[lid * 2 + i] = static_cast<float>(n - 1 - lid);
    }
  }
  EXPECT_EQ(out, expected);
}

// The same with work before the return: the returning lanes finish when
// they reach the kernel's exit, where they wait for nobody.
TEST(GenericMetalCode, EarlyReturnWithWorkBeforeABarrier) {
  KernelHarness h = Compile(R"(
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], constant uint& n [[buffer(1)]],
              uint lid [[thread_position_in_threadgroup]]) {
  threadgroup float shared[64];
  if (lid >= n) {
    out[lid] = -2.0f;
    return;
  }
  shared[lid] = float(lid);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[lid] = shared[n - 1 - lid];
}
)",
                            "k");
  const uint32_t n = 40;
  h.SetBuffer(0, std::vector<float>(64, -1.0f));
  h.SetBytes(1, n);
  ASSERT_TRUE(Runs(h, {64}, {64}));
  const std::vector<float> out = h.Read<float>(0);
  for (uint32_t lid = 0; lid < 64; ++lid) {
    EXPECT_EQ(out[lid], lid < n ? static_cast<float>(n - 1 - lid) : -2.0f)
        << lid;
  }
}

// `if (l < 40) threadgroup_barrier(...);` before code all lanes run: some
// lanes of a SIMD group skip a barrier the others wait at. Metal leaves it
// undefined; mtlemu reports it at the barrier's line.
TEST(GenericMetalCode, BarrierSkippedBySomeLanesIsReported) {
  KernelHarness h = Compile(R"(
#include <metal_stdlib>
using namespace metal;
kernel void k(device uint* out [[buffer(0)]], uint l [[thread_position_in_threadgroup]]) {
  if (l < 40) threadgroup_barrier(mem_flags::mem_threadgroup);
  out[l] = l;
}
)",
                            "k");
  h.SetBuffer(0, std::vector<uint32_t>(64, 0));
  ASSERT_TRUE(h.DispatchThreads({64, 1, 1}, {64, 1, 1}).ok());
  ASSERT_NE(h.error(), nullptr);
  EXPECT_EQ(h.error()->fault.kind, emu::FaultKind::kDivergentBarrier);
  EXPECT_NE(h.error()->message.find("generic.metal:5:"), std::string::npos)
      << h.error()->message;
}

// MLX's files make thousands of kernels by explicit instantiation; with
// kernels asked for, only theirs are made (reduce.metal: 11 s to 0.4 s for
// one). An instantiation that would not compile is then no error unless it
// is asked for, and the names of the others are still known.
TEST(GenericMetalCode, OnlyTheInstantiationsAskedForAreMade) {
  constexpr char kSource[] = R"(
#include <metal_stdlib>
using namespace metal;
#define instantiate_kernel(name, func, ...) \
  template [[host_name(name)]] [[kernel]] decltype(func<__VA_ARGS__>) func<__VA_ARGS__>;
template <typename T>
[[kernel]] void fill(device T* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  static_assert(sizeof(T) != 3, "no 3-byte elements");
  out[i] = T(i * 3);
}
struct three { uchar a, b, c; three(uint) {} };
#define inst(tname, type) instantiate_kernel("fill_" #tname, fill, type)
inst(float32, float)
inst(int32, int)
inst(three, three)
)";
  KernelHarness h = Compile(kSource, "fill_int32");
  h.SetBuffer(0, std::vector<int32_t>(8, -1));
  ASSERT_TRUE(Runs(h, {8}, {8}));
  EXPECT_EQ(h.Read<int32_t>(0),
            (std::vector<int32_t>{0, 3, 6, 9, 12, 15, 18, 21}));

  const Result<isa::Module> bad =
      compiler::CompileMsl(kSource, "generic.metal", {}, {"fill_three"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("no 3-byte elements"), std::string::npos)
      << bad.error().message;
  const Result<isa::Module> none =
      compiler::CompileMsl(kSource, "generic.metal", {}, {"fill_half"});
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find(
                "(it has: fill_float32, fill_int32, fill_three)"),
            std::string::npos)
      << none.error().message;
}

// MLX's per_thread_row_reduce: 4 running sums of 4 reads each per
// iteration, a loop unrolled 4 times. With its 64 loads raised for latency
// it needs ~107 registers (448 threads); Apple's compiler keeps such
// kernels at 1024 threads, and MLX dispatches 1024 without asking.
TEST(GenericMetalCode, LoopsOfManyLoadsKeep1024Threads) {
  KernelHarness h = Compile(R"(
#include <metal_stdlib>
using namespace metal;
kernel void four_row_sums(const device float* in [[buffer(0)]],
                          device float* out [[buffer(1)]],
                          const constant uint& row [[buffer(2)]],
                          const constant int& blocks [[buffer(3)]],
                          uint lid [[thread_position_in_threadgroup]],
                          uint lsize [[threads_per_threadgroup]]) {
  const device float* p[4];
  p[0] = in + lid * 4;
  for (int i = 1; i < 4; i++) p[i] = p[i - 1] + row;
  float t[4] = {0, 0, 0, 0};
  for (int b = 0; b < blocks; b++) {
    for (int j = 0; j < 4; j++) {
      for (int i = 0; i < 4; i++) t[j] += p[j][i];
      p[j] += lsize * 4;
    }
  }
  for (int j = 0; j < 4; j++) out[lid * 4 + j] = t[j];
}
)",
                            "four_row_sums");
  ASSERT_TRUE(h.status().ok()) << h.status().error().message;
  EXPECT_EQ(h.pipeline().maxTotalThreadsPerThreadgroup(), 1024u);
  const uint32_t threads = 1024, blocks = 3, row = threads * 4 * blocks;
  std::vector<float> in(4 * row);
  for (size_t k = 0; k < in.size(); ++k) in[k] = static_cast<float>(k % 7);
  h.SetBuffer(0, in);
  h.SetBuffer(1, std::vector<float>(4 * threads, -1.0f));
  h.SetBytes(2, row);
  h.SetBytes(3, static_cast<int32_t>(blocks));
  ASSERT_TRUE(Runs(h, {threads}, {threads}));
  const std::vector<float> out = h.Read<float>(1);
  for (uint32_t lid = 0; lid < threads; ++lid) {
    for (uint32_t j = 0; j < 4; ++j) {
      float sum = 0;  // exact: small integers
      for (uint32_t b = 0; b < blocks; ++b) {
        for (uint32_t i = 0; i < 4; ++i) {
          sum += in[j * row + lid * 4 + b * threads * 4 + i];
        }
      }
      ASSERT_EQ(out[lid * 4 + j], sum) << lid << " " << j;
    }
  }
}

// MLX's float32 attention with 256-wide heads declares 53,760 bytes of
// threadgroup memory: Metal's compiler builds it, the pipeline fails.
TEST(GenericMetalCode, ThreadgroupMemoryBeyondTheDeviceCompilesButDoesNotRun) {
  KernelHarness h = Compile(R"(
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  threadgroup float big[13440];
  big[i] = float(i);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[i] = big[13439 - i];
}
)",
                            "k");
  ASSERT_FALSE(h.status().ok());
  EXPECT_NE(h.status().error().message.find(
                "kernel 'k' declares 53760 bytes of threadgroup memory, over "
                "maxThreadgroupMemoryLength (32768 bytes)"),
            std::string::npos)
      << h.status().error().message;
}

// A 4 GiB threadgroup array used to wrap to 0 bytes and fault at run time.
TEST(GenericMetalCode, HugeThreadgroupArrayIsACompileError) {
  const Result<isa::Module> module = compiler::CompileMsl(R"(
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  threadgroup float t[1073741824];
  t[i] = 1;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[i] = t[i + 1];
}
)",
                                                          "generic.metal", {});
  ASSERT_FALSE(module.ok());
  EXPECT_NE(module.error().message.find(
                "kernel 'k' declares more than 2147483648 bytes of "
                "threadgroup memory (a device has 32768: "
                "maxThreadgroupMemoryLength)"),
            std::string::npos)
      << module.error().message;
}

}  // namespace
}  // namespace mtlemu
