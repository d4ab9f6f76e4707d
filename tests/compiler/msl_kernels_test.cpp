// MSL kernels compiled by mtlemu's compiler and run on the emulator, each
// checked against a C++ reference loop.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <set>
#include <sstream>
#include <vector>

#include "compiler/msl_compiler.h"
#include "isa/numeric.h"
#include "isa/printer.h"
#include "tests/support/kernel_harness.h"

namespace mtlemu {
namespace {

using testing::KernelHarness;
using testing::Runs;

KernelHarness Compile(const char* source, const char* kernel) {
  return KernelHarness(compiler::CompileMsl(source, "test.metal", {}, {kernel}),
                       kernel);
}

TEST(MslKernels, VectorAdd) {
  KernelHarness h = Compile(R"(
#include <metal_stdlib>
using namespace metal;
kernel void vector_add(device const float* a [[buffer(0)]],
                       device const float* b [[buffer(1)]],
                       device float* out [[buffer(2)]],
                       constant uint& n [[buffer(3)]],
                       uint id [[thread_position_in_grid]]) {
  if (id >= n) return;
  out[id] = a[id] + b[id];
})",
                            "vector_add");
  const uint32_t n = 1000;
  std::vector<float> a(n), b(n);
  for (uint32_t i = 0; i < n; ++i) {
    a[i] = 0.25f * static_cast<float>(i);
    b[i] = 3.0f - static_cast<float>(i % 7);
  }
  h.SetBuffer(0, a);
  h.SetBuffer(1, b);
  h.SetBuffer(2, std::vector<float>(n + 24, -1.0f));
  h.SetBytes(3, n);
  ASSERT_TRUE(Runs(h, {n + 24}, {256}));
  const std::vector<float> out = h.Read<float>(2);
  for (uint32_t i = 0; i < n + 24; ++i) {
    EXPECT_EQ(out[i], i < n ? a[i] + b[i] : -1.0f) << i;
  }
}

TEST(MslKernels, SaxpyWithAConstantStruct) {
  KernelHarness h = Compile(R"(
#include <metal_stdlib>
using namespace metal;
struct Params { float a; uint n; };
kernel void saxpy(device const float* x [[buffer(0)]],
                  device float* y [[buffer(1)]],
                  constant Params& p [[buffer(2)]],
                  uint id [[thread_position_in_grid]]) {
  if (id < p.n) y[id] = p.a * x[id] + y[id];
})",
                            "saxpy");
  const uint32_t n = 777;
  std::vector<float> x(n), y(n);
  for (uint32_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i) * 0.5f;
    y[i] = 1.0f + static_cast<float>(i % 3);
  }
  struct {
    float a;
    uint32_t n;
  } params{2.5f, n};
  h.SetBuffer(0, x);
  h.SetBuffer(1, y);
  h.SetBytes(2, params);
  ASSERT_TRUE(Runs(h, {n}, {64}));
  const std::vector<float> out = h.Read<float>(1);
  for (uint32_t i = 0; i < n; ++i) {
    EXPECT_FLOAT_EQ(out[i], std::fma(2.5f, x[i], y[i])) << i;
  }
}

TEST(MslKernels, DivergentLoop) {
  KernelHarness h = Compile(R"(
#include <metal_stdlib>
using namespace metal;
kernel void loops(device int* out [[buffer(0)]],
                  uint id [[thread_position_in_grid]]) {
  int acc = 0;
  for (uint k = 0; k < id % 13 + id / 4; ++k) {
    if (k % 3 == 0) continue;
    if (k > 10) break;
    acc += int(k);
  }
  out[id] = acc;
})",
                            "loops");
  const uint32_t n = 200;
  h.SetBuffer(0, std::vector<int32_t>(n));
  ASSERT_TRUE(Runs(h, {n}, {64}));
  const std::vector<int32_t> out = h.Read<int32_t>(0);
  for (uint32_t i = 0; i < n; ++i) {
    int32_t acc = 0;
    for (uint32_t k = 0; k < i % 13 + i / 4; ++k) {
      if (k % 3 == 0) continue;
      if (k > 10) break;
      acc += static_cast<int32_t>(k);
    }
    EXPECT_EQ(out[i], acc) << i;
  }
}

TEST(MslKernels, ThreadgroupReductionWithSimdSum) {
  KernelHarness h = Compile(R"(
#include <metal_stdlib>
using namespace metal;
kernel void reduce(device const int* in [[buffer(0)]],
                   device int* out [[buffer(1)]],
                   uint gid [[thread_position_in_grid]],
                   uint tid [[thread_index_in_threadgroup]],
                   uint lane [[thread_index_in_simdgroup]],
                   uint sg [[simdgroup_index_in_threadgroup]],
                   uint group [[threadgroup_position_in_grid]]) {
  threadgroup int partial[8];
  int s = simd_sum(in[gid]);
  if (lane == 0) partial[sg] = s;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (sg == 0) {
    int v = lane < 8 ? partial[lane] : 0;
    v = simd_sum(v);
    if (lane == 0) out[group] = v;
  }
})",
                            "reduce");
  const uint32_t groups = 16, n = groups * 256;
  std::vector<int32_t> in(n);
  for (uint32_t i = 0; i < n; ++i) in[i] = static_cast<int32_t>(i % 101) - 50;
  h.SetBuffer(0, in);
  h.SetBuffer(1, std::vector<int32_t>(groups));
  ASSERT_TRUE(Runs(h, {n}, {256}));
  const std::vector<int32_t> out = h.Read<int32_t>(1);
  for (uint32_t g = 0; g < groups; ++g) {
    EXPECT_EQ(out[g], std::accumulate(in.begin() + g * 256,
                                      in.begin() + (g + 1) * 256, 0))
        << g;
  }
}

TEST(MslKernels, HistogramWithAtomics) {
  KernelHarness h = Compile(R"(
#include <metal_stdlib>
using namespace metal;
kernel void histogram(device const uchar* data [[buffer(0)]],
                      device atomic_uint* bins [[buffer(1)]],
                      uint id [[thread_position_in_grid]]) {
  atomic_fetch_add_explicit(&bins[data[id] % 16], 1u, memory_order_relaxed);
})",
                            "histogram");
  const uint32_t n = 5000;
  std::vector<uint8_t> data(n);
  for (uint32_t i = 0; i < n; ++i) data[i] = static_cast<uint8_t>(i * 37 + 11);
  h.SetBuffer(0, data);
  h.SetBuffer(1, std::vector<uint32_t>(16));
  ASSERT_TRUE(Runs(h, {n}, {128}));
  std::vector<uint32_t> expected(16);
  for (uint8_t v : data) ++expected[v % 16];
  EXPECT_EQ(h.Read<uint32_t>(1), expected);
}

TEST(MslKernels, SixtyFourBitAtomics) {
  // atomic_ulong and atomic_long (mtlemu's extension of MSL): sums that
  // carry past bit 32, signed and unsigned min and max, and a threadgroup
  // counter, against the same folds on the host.
  KernelHarness h = Compile(R"(
#include <metal_stdlib>
using namespace metal;
kernel void wide(device const ulong* in [[buffer(0)]],
                 device atomic_ulong* u [[buffer(1)]],
                 device atomic_long* s [[buffer(2)]],
                 uint id [[thread_position_in_grid]],
                 uint tid [[thread_index_in_threadgroup]]) {
  threadgroup atomic_ulong count;
  if (tid == 0) atomic_store_explicit(&count, 0ul, memory_order_relaxed);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  const ulong v = in[id];
  atomic_fetch_add_explicit(&u[0], v, memory_order_relaxed);
  atomic_fetch_max_explicit(&u[1], v, memory_order_relaxed);
  atomic_fetch_min_explicit(&u[2], v, memory_order_relaxed);
  atomic_fetch_xor_explicit(&u[3], v, memory_order_relaxed);
  atomic_fetch_max_explicit(&s[0], long(v), memory_order_relaxed);
  atomic_fetch_min_explicit(&s[1], long(v), memory_order_relaxed);
  atomic_fetch_add_explicit(&count, 1ul << 32, memory_order_relaxed);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (tid == 0) {
    atomic_fetch_add_explicit(&u[4], atomic_load_explicit(&count, memory_order_relaxed),
                              memory_order_relaxed);
  }
})",
                            "wide");
  const uint32_t n = 4096;
  std::vector<uint64_t> in(n);
  uint64_t x = 0x9e3779b97f4a7c15u;
  for (uint64_t& v : in) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    v = x;
  }
  h.SetBuffer(0, in);
  h.SetBuffer(1, std::vector<uint64_t>{0, 0, ~uint64_t{0}, 0, 0});
  h.SetBuffer(2, std::vector<int64_t>{INT64_MIN, INT64_MAX});
  ASSERT_TRUE(Runs(h, {n}, {256}));
  uint64_t sum = 0, umax = 0, umin = ~uint64_t{0}, x_or = 0;
  int64_t smax = INT64_MIN, smin = INT64_MAX;
  for (uint64_t v : in) {
    sum += v;
    umax = std::max(umax, v);
    umin = std::min(umin, v);
    x_or ^= v;
    smax = std::max(smax, static_cast<int64_t>(v));
    smin = std::min(smin, static_cast<int64_t>(v));
  }
  EXPECT_EQ(h.Read<uint64_t>(1),
            (std::vector<uint64_t>{sum, umax, umin, x_or, uint64_t{n} << 32}));
  EXPECT_EQ(h.Read<int64_t>(2), (std::vector<int64_t>{smax, smin}));
}

TEST(MslKernels, CompileErrorsNameTheLine) {
  Result<isa::Module> m = compiler::CompileMsl(
      "kernel void k(device float* a [[buffer(0)]]) {\n  a[0] = oops;\n}\n",
      "bad.metal", {});
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().message.find("bad.metal:2:10: error:"), std::string::npos)
      << m.error().message;
}

TEST(MslKernels, ProgramScopeConstantTable) {
  KernelHarness h = Compile(R"(
#include <metal_stdlib>
using namespace metal;
struct Entry { float scale; int offset; };
constant float kTable[8] = {1, 2, 3, 5, 8, 13, 21, 34};
constant Entry kEntries[2] = {{0.5f, 3}, {-2.0f, -7}};
kernel void lookup(device float* out [[buffer(0)]],
                   uint id [[thread_position_in_grid]]) {
  const Entry e = kEntries[id & 1];
  out[id] = kTable[id % 8] * e.scale + float(e.offset);
})",
                            "lookup");
  const uint32_t n = 100;
  h.SetBuffer(0, std::vector<float>(n));
  ASSERT_TRUE(Runs(h, {n}, {32}));
  const float table[8] = {1, 2, 3, 5, 8, 13, 21, 34};
  const std::vector<float> out = h.Read<float>(0);
  for (uint32_t i = 0; i < n; ++i) {
    const float scale = (i & 1) ? -2.0f : 0.5f;
    const float offset = (i & 1) ? -7.0f : 3.0f;
    EXPECT_EQ(out[i], table[i % 8] * scale + offset) << i;
  }
}

// MTLFunctionConstantValues: each set of values specializes the kernel;
// unset constants are undefined (is_function_constant_defined is false).
TEST(MslKernels, FunctionConstantsSpecializeTheKernel) {
  constexpr char kSource[] = R"(
#include <metal_stdlib>
using namespace metal;
constant bool has_bias [[function_constant(0)]];
constant float scale [[function_constant(1)]];
constant int extra [[function_constant(2)]];
kernel void affine(device float* out [[buffer(0)]],
                   uint id [[thread_position_in_grid]]) {
  float v = float(id) * (is_function_constant_defined(scale) ? scale : 1.0f);
  if (has_bias) v += 100.0f;
  if (is_function_constant_defined(extra)) v += float(extra);
  out[id] = v;
})";
  struct Case {
    std::vector<std::pair<std::string, std::string>> constants;
    float scale, bias, extra;
  };
  const Case cases[] = {
      {{}, 1.0f, 0.0f, 0.0f},
      {{{"scale", "2.5"}, {"0", "true"}}, 2.5f, 100.0f, 0.0f},
      {{{"2", "-7"}, {"has_bias", "false"}}, 1.0f, 0.0f, -7.0f},
  };
  for (const Case& c : cases) {
    msl::CompileOptions options;
    options.function_constants = c.constants;
    KernelHarness h(
        compiler::CompileMsl(kSource, "fc.metal", options, {"affine"}),
        "affine");
    h.SetBuffer(0, std::vector<float>(64));
    ASSERT_TRUE(Runs(h, {64}, {64}));
    const std::vector<float> out = h.Read<float>(0);
    for (int i = 0; i < 64; ++i) {
      EXPECT_EQ(out[i], static_cast<float>(i) * c.scale + c.bias + c.extra)
          << i << " with " << c.constants.size() << " constants";
    }
  }
}

constexpr char kReadsPastTheEnd[] = R"(#include <metal_stdlib>
using namespace metal;
kernel void oob(device const float* in [[buffer(0)]],
                device float* out [[buffer(1)]],
                uint id [[thread_position_in_grid]]) {
  out[id] = in[id + 8];
})";

// Threads 56 to 63 read in[64] to in[71]: zeros, and a finding at the line.
TEST(MslKernels, ReadsJustPastTheEndAreReportedAtTheMslLine) {
  KernelHarness h = Compile(kReadsPastTheEnd, "oob");
  h.SetBuffer(0, std::vector<float>(64, 1.0f));
  h.SetBuffer(1, std::vector<float>(64, -1.0f));
  ASSERT_TRUE(Runs(h, {64}, {64}));
  const std::vector<float> out = h.Read<float>(1);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(out[i], i < 56 ? 1.0f : 0.0f) << i;
  ASSERT_NE(h.report()->check, nullptr);
  ASSERT_EQ(h.report()->check->findings.size(), 1u);
  const std::string text =
      h.report()->check->findings[0].Describe(h.report()->check->kernel);
  EXPECT_NE(text.find("test.metal:6:"), std::string::npos) << text;
  EXPECT_NE(text.find("found 8 times"), std::string::npos) << text;
  EXPECT_NE(text.find("offset 256"), std::string::npos) << text;
}

TEST(MslKernels, OutOfBoundsReportNamesTheMslLine) {
  KernelHarness h = Compile(kReadsPastTheEnd, "oob");
  h.SetBuffer(0, std::vector<float>(64, 1.0f));
  h.SetBuffer(1, std::vector<float>(64));
  ASSERT_TRUE(h.status().ok()) << h.status().error().message;
  h.device().options().out_of_bounds = emu::OutOfBoundsPolicy::kFault;
  ASSERT_TRUE(h.DispatchThreads({64}, {64}).ok());
  ASSERT_NE(h.error(), nullptr);
  const std::string& message = h.error()->message;
  EXPECT_NE(message.find("test.metal:6:"), std::string::npos) << message;
  EXPECT_NE(message.find("buffer(0) 'in'"), std::string::npos) << message;
  EXPECT_NE(message.find("offset 256"), std::string::npos) << message;
}

// A file of helpers with no kernel (a project compiles it on its own):
// Metal's compiler makes an empty library of it, and so does mtlemu.
TEST(MslKernels, AFileWithoutKernelsIsAnEmptyLibrary) {
  Result<isa::Module> m = compiler::CompileMsl(R"(#include <metal_stdlib>
using namespace metal;
inline float twice(float x) { return 2.0f * x; }
constant float kHalf = 0.5f;
)",
                                               "helpers.metal", {});
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_TRUE(m.value().kernels.empty());
  // Asking it for a kernel names what it has.
  m = compiler::CompileMsl("inline float twice(float x) { return 2 * x; }\n",
                           "helpers.metal", {}, {"twice"});
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().message.find("no kernel named 'twice'"),
            std::string::npos)
      << m.error().message;
}

// __builtin_trap() under mtlemu (what a failed assert compiles to) stops the
// dispatch with a fault at its line; the stores before it are kept.
TEST(MslKernels, TrapIsAFaultAtItsLine) {
  KernelHarness h = Compile(R"(#include <metal_stdlib>
using namespace metal;
kernel void checked(device float* out [[buffer(0)]],
                    uint id [[thread_position_in_grid]]) {
  out[id] = float(id) * 2.0f;
  if (id == 37) __builtin_trap();
})",
                            "checked");
  h.SetBuffer(0, std::vector<float>(64, -1.0f));
  ASSERT_TRUE(h.status().ok()) << h.status().error().message;
  ASSERT_TRUE(h.DispatchThreads({64}, {64}).ok());
  ASSERT_NE(h.error(), nullptr);
  EXPECT_EQ(h.error()->fault.kind, emu::FaultKind::kTrap);
  EXPECT_EQ(h.error()->fault.lane, 5);  // thread 37: SIMD group 1, lane 5
  EXPECT_EQ(h.error()->fault.thread_position[0], 37u);
  const std::string& message = h.error()->message;
  EXPECT_NE(message.find("test.metal:6:"), std::string::npos) << message;
  EXPECT_NE(message.find("trap"), std::string::npos) << message;
  // Thread 37's SIMD group stored before it reached the trap.
  const std::vector<float> out = h.Read<float>(0);
  for (int i = 32; i < 64; ++i) EXPECT_EQ(out[i], 2.0f * i) << i;

  // Nobody traps: the kernel runs to the end.
  KernelHarness quiet = Compile(R"(#include <metal_stdlib>
using namespace metal;
kernel void checked(device float* out [[buffer(0)]],
                    uint id [[thread_position_in_grid]]) {
  out[id] = float(id) * 2.0f;
  if (id == 99) __builtin_trap();
})",
                                "checked");
  quiet.SetBuffer(0, std::vector<float>(64, -1.0f));
  ASSERT_TRUE(quiet.DispatchThreads({64}, {64}).ok());
  EXPECT_EQ(quiet.error(), nullptr);
}

// simdgroup_matrix values are <2 x float> vectors in the IR: register
// blocks through loads, multiply-accumulates, a loop-carried accumulator and
// the store.
constexpr const char* kSimdgroupMatmul = R"(
#include <metal_stdlib>
using namespace metal;
kernel void sgmm(device const float* A [[buffer(0)]],
                 device const float* B [[buffer(1)]],
                 device float* C [[buffer(2)]],
                 constant uint& n [[buffer(3)]],
                 uint2 tg [[threadgroup_position_in_grid]]) {
  simdgroup_float8x8 acc = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
  for (uint k = 0; k < n; k += 8) {
    simdgroup_float8x8 a, b;
    simdgroup_load(a, A, n, ulong2(k, tg.y * 8));
    simdgroup_load(b, B, n, ulong2(tg.x * 8, k));
    simdgroup_multiply_accumulate(acc, a, b, acc);
  }
  simdgroup_store(acc, C, n, ulong2(tg.x * 8, tg.y * 8));
})";

TEST(MslKernels, SimdgroupMatrixMultiply) {
  KernelHarness h = Compile(kSimdgroupMatmul, "sgmm");
  const uint32_t n = 24;
  std::vector<float> a(n * n), b(n * n);
  for (uint32_t i = 0; i < n * n; ++i) {
    a[i] = static_cast<float>(static_cast<int>(i * 7 % 11) - 5);
    b[i] = static_cast<float>(static_cast<int>(i * 5 % 13) - 6) * 0.5f;
  }
  h.SetBuffer(0, a);
  h.SetBuffer(1, b);
  h.SetBuffer(2, std::vector<float>(n * n, -1.0f));
  h.SetBytes(3, n);
  ASSERT_TRUE(h.DispatchThreadgroups({n / 8, n / 8, 1}, {32, 1, 1}).ok());
  ASSERT_EQ(h.error(), nullptr);
  const std::vector<float> c = h.Read<float>(2);
  for (uint32_t r = 0; r < n; ++r) {
    for (uint32_t col = 0; col < n; ++col) {
      double want = 0;
      for (uint32_t k = 0; k < n; ++k)
        want += double(a[r * n + k]) * b[k * n + col];
      EXPECT_EQ(c[r * n + col], static_cast<float>(want)) << r << "," << col;
    }
  }
}

// Code written for Macs reads and writes simdgroup matrices through
// thread_elements(), with coordinates it computes itself; this kernel does
// it as MLX's GEMM does (steel/gemm/mma.h, BaseMMAFrag::get_coord). Tile
// (tg.x, tg.y) of C = A * B: A's tiles come in with simdgroup_load, B's are
// written element by element, and C is written element by element. D is
// C times the diagonal matrix 2I (the diagonal constructor), stored with
// simdgroup_store.
constexpr const char* kThreadElementsMatmul = R"(
#include <metal_stdlib>
using namespace metal;

// The (column, row) of this lane's first element; the second is one
// column to the right.
short2 fragment_coord(ushort lane) {
  const short qid = lane / 4;
  const short fm = (qid & 4) + ((lane / 2) % 4);
  const short fn = (qid & 2) * 2 + (lane % 2) * 2;
  return short2(fn, fm);
}

kernel void frag_gemm(device const float* A [[buffer(0)]],
                      device const float* B [[buffer(1)]],
                      device float* C [[buffer(2)]],
                      device float* D [[buffer(3)]],
                      constant uint& n [[buffer(4)]],
                      uint2 tg [[threadgroup_position_in_grid]],
                      ushort lane [[thread_index_in_simdgroup]]) {
  const short2 at = fragment_coord(lane);
  const uint row0 = tg.y * 8, col0 = tg.x * 8;
  simdgroup_float8x8 acc = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
  for (uint k = 0; k < n; k += 8) {
    simdgroup_float8x8 a, b;
    simdgroup_load(a, A, n, ulong2(k, row0));
    device const float* b_at = B + (k + at.y) * n + col0 + at.x;
    b.thread_elements()[0] = b_at[0];
    b.thread_elements()[1] = b_at[1];
    simdgroup_multiply_accumulate(acc, a, b, acc);
  }
  device float* c_at = C + (row0 + at.y) * n + col0 + at.x;
  c_at[0] = acc.thread_elements()[0];
  c_at[1] = acc.thread_elements()[1];
  simdgroup_float8x8 twice(2.0f), d;
  simdgroup_multiply(d, acc, twice);
  simdgroup_store(d, D, n, ulong2(col0, row0));
})";

TEST(MslKernels, ThreadElementsFollowApplesLayout) {
  KernelHarness h = Compile(kThreadElementsMatmul, "frag_gemm");
  const uint32_t n = 16;
  // Small integers: every product and partial sum is exact in float.
  std::vector<float> a(n * n), b(n * n);
  for (uint32_t i = 0; i < n * n; ++i) {
    a[i] = static_cast<float>(static_cast<int>(i * 7 % 11) - 5);
    b[i] = static_cast<float>(static_cast<int>(i * 5 % 13) - 6);
  }
  h.SetBuffer(0, a);
  h.SetBuffer(1, b);
  h.SetBuffer(2, std::vector<float>(n * n, -1.0f));
  h.SetBuffer(3, std::vector<float>(n * n, -1.0f));
  h.SetBytes(4, n);
  ASSERT_TRUE(h.status().ok()) << h.status().error().message;
  ASSERT_TRUE(h.DispatchThreadgroups({n / 8, n / 8, 1}, {32, 1, 1}).ok());
  ASSERT_EQ(h.error(), nullptr) << h.error()->message;
  const std::vector<float> c = h.Read<float>(2);
  const std::vector<float> d = h.Read<float>(3);
  for (uint32_t r = 0; r < n; ++r) {
    for (uint32_t col = 0; col < n; ++col) {
      float want = 0;
      for (uint32_t k = 0; k < n; ++k) want += a[r * n + k] * b[k * n + col];
      EXPECT_EQ(c[r * n + col], want) << "C " << r << "," << col;
      EXPECT_EQ(d[r * n + col], 2 * want) << "D " << r << "," << col;
    }
  }
}

// bfloat matrices move element by element in the shim (not through the
// ISA's simdgroup_load): their lanes must hold the same elements.
TEST(MslKernels, BfloatThreadElementsFollowApplesLayout) {
  KernelHarness h = Compile(R"(
#include <metal_stdlib>
using namespace metal;
kernel void bf_lanes(device const bfloat* m [[buffer(0)]],
                     device bfloat* out [[buffer(1)]],
                     device bfloat* out_transposed [[buffer(2)]],
                     ushort lane [[thread_index_in_simdgroup]]) {
  simdgroup_bfloat8x8 a, t;
  simdgroup_load(a, m);
  simdgroup_load(t, m, 8, ulong2(0, 0), true);
  out[2 * lane] = a.thread_elements()[0];
  out[2 * lane + 1] = a.thread_elements()[1];
  out_transposed[2 * lane] = t.thread_elements()[0];
  out_transposed[2 * lane + 1] = t.thread_elements()[1];
})",
                            "bf_lanes");
  // Element k of m is the bfloat of k (exact: k < 256).
  std::vector<uint16_t> m(64);
  for (int k = 0; k < 64; ++k) {
    m[k] = isa::FloatToBFloatBits(static_cast<float>(k));
  }
  h.SetBuffer(0, m);
  h.SetBuffer(1, std::vector<uint16_t>(64, 0xffff));
  h.SetBuffer(2, std::vector<uint16_t>(64, 0xffff));
  ASSERT_TRUE(Runs(h, {32}, {32}));
  const std::vector<uint16_t> out = h.Read<uint16_t>(1);
  const std::vector<uint16_t> out_t = h.Read<uint16_t>(2);
  for (int lane = 0; lane < 32; ++lane) {
    // MLX's coordinates, computed here independently of the shim.
    const int qid = lane / 4;
    const int row = (qid & 4) + (lane / 2) % 4;
    const int col = (qid & 2) * 2 + (lane % 2) * 2;
    for (int e = 0; e < 2; ++e) {
      EXPECT_EQ(out[2 * lane + e], m[row * 8 + col + e])
          << "lane " << lane << " element " << e;
      EXPECT_EQ(out_t[2 * lane + e], m[(col + e) * 8 + row])
          << "transposed, lane " << lane << " element " << e;
    }
  }
}

// The loops of a compiled kernel: [first, latch) for every backward
// conditional branch (the latch).
std::vector<std::pair<uint32_t, uint32_t>> LoopsOf(const isa::Kernel& k) {
  std::vector<std::pair<uint32_t, uint32_t>> loops;
  for (uint32_t pc = 0; pc < k.code.size(); ++pc) {
    const isa::Instruction& branch = k.code[pc];
    if ((branch.op == isa::Opcode::kBranchNonZero ||
         branch.op == isa::Opcode::kBranchZero) &&
        branch.operands[1].label <= pc) {
      loops.emplace_back(branch.operands[1].label, pc);
    }
  }
  return loops;
}

// The loop of the matmul above as the back end emits it: the accumulator
// is updated in place (no copies for the loop's phi or for its value after
// the loop) and the size, in a constant buffer, is loaded once, before the
// loop.
TEST(MslKernels, LoopKeepsItsAccumulatorInPlaceAndLoadsConstantsOnce) {
  Result<isa::Module> m =
      compiler::CompileMsl(kSimdgroupMatmul, "test.metal", {}, {"sgmm"});
  ASSERT_TRUE(m.ok()) << m.error().message;
  const isa::Kernel& k = m.value().kernels[0];
  const auto loops = LoopsOf(k);
  ASSERT_EQ(loops.size(), 1u);
  for (const auto& [first, latch] : loops) {
    int loads = 0;
    for (uint32_t i = first; i < latch; ++i) {
      EXPECT_NE(k.code[i].op, isa::Opcode::kMov)
          << isa::PrintInstruction(k.code[i], k);
      loads += k.code[i].op == isa::Opcode::kLoad;
    }
    EXPECT_EQ(loads, 0);
  }
}

// A float4 access becomes four scalar accesses; they share the index
// register and differ only in displacement (0, 4, 8, 12), in device and in
// threadgroup memory alike.
TEST(MslKernels, Float4AccessIsOneVectorInstruction) {
  const char* source = R"(
#include <metal_stdlib>
using namespace metal;
kernel void k(device const float4* in [[buffer(0)]],
              device float4* out [[buffer(1)]],
              uint i [[thread_position_in_grid]],
              uint t [[thread_index_in_threadgroup]]) {
  threadgroup float4 tile[64];
  tile[t] = in[i];
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[i] = tile[63 - t] * 2.0f;
})";
  Result<isa::Module> m = compiler::CompileMsl(source, "test.metal", {}, {"k"});
  ASSERT_TRUE(m.ok()) << m.error().message;
  const isa::Kernel& k = m.value().kernels[0];
  // Each float4 access: one ld.v4 or st.v4, as Metal's compiler emits it.
  std::map<std::pair<int, int>, std::vector<int>> accesses;
  for (const isa::Instruction& inst : k.code) {
    if (inst.op == isa::Opcode::kLoad || inst.op == isa::Opcode::kStore) {
      accesses[{static_cast<int>(inst.op), static_cast<int>(inst.space)}]
          .push_back(inst.vector);
    }
  }
  ASSERT_EQ(accesses.size(), 4u);  // ld/st in device and threadgroup memory
  for (const auto& [what, vectors] : accesses) {
    EXPECT_EQ(vectors, std::vector<int>{4});
  }
  KernelHarness h = Compile(source, "k");
  const uint32_t n = 128;
  std::vector<float> in(4 * n);
  for (uint32_t e = 0; e < 4 * n; ++e) in[e] = static_cast<float>(e) * 0.25f;
  h.SetBuffer(0, in);
  h.SetBuffer(1, std::vector<float>(4 * n));
  ASSERT_TRUE(Runs(h, {n}, {64}));
  const std::vector<float> out = h.Read<float>(1);
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t from = i / 64 * 64 + 63 - i % 64;
    for (uint32_t c = 0; c < 4; ++c) {
      EXPECT_EQ(out[4 * i + c], 2.0f * in[4 * from + c]) << i << "," << c;
    }
  }
}

// Vectors of other widths and element types, a splat (one value in every
// element: not one block, so element stores), a packed_float3 and lanes
// that diverge: the values a plain loop computes.
TEST(MslKernels, VectorAccessesOfOtherShapes) {
  const char* source = R"(
#include <metal_stdlib>
using namespace metal;
kernel void k(device const half4* h [[buffer(0)]],
              device const uchar2* b [[buffer(1)]],
              device const packed_float3* p [[buffer(2)]],
              device half4* out_h [[buffer(3)]],
              device float4* splat [[buffer(4)]],
              device packed_float3* out_p [[buffer(5)]],
              uint i [[thread_position_in_grid]]) {
  const half4 v = h[i];
  const uchar2 c = b[i];
  out_h[i] = v.wzyx + half4(c.x, c.y, c.x, c.y);
  splat[i] = float4(float(c.x) * 0.5f);
  if (i % 3 != 0) out_p[i] = p[i] * float(c.y);
})";
  KernelHarness h = Compile(source, "k");
  const uint32_t n = 100;
  std::vector<uint16_t> halves(4 * n);
  std::vector<float> half_values(4 * n);
  for (uint32_t e = 0; e < 4 * n; ++e) {
    half_values[e] = static_cast<float>(e % 50);  // exact in half
    halves[e] = isa::FloatToHalfBits(half_values[e]);
  }
  std::vector<uint8_t> bytes(2 * n);
  for (uint32_t e = 0; e < 2 * n; ++e) bytes[e] = static_cast<uint8_t>(e % 7);
  std::vector<float> packed(3 * n);
  for (uint32_t e = 0; e < 3 * n; ++e) packed[e] = static_cast<float>(e) - 7.5f;
  h.SetBuffer(0, halves);
  h.SetBuffer(1, bytes);
  h.SetBuffer(2, packed);
  h.SetBuffer(3, std::vector<uint16_t>(4 * n));
  h.SetBuffer(4, std::vector<float>(4 * n));
  h.SetBuffer(5, std::vector<float>(3 * n, -1.0f));
  ASSERT_TRUE(Runs(h, {n}, {32}));
  const std::vector<uint16_t> out_h = h.Read<uint16_t>(3);
  const std::vector<float> splat = h.Read<float>(4);
  const std::vector<float> out_p = h.Read<float>(5);
  for (uint32_t i = 0; i < n; ++i) {
    const float cx = bytes[2 * i], cy = bytes[2 * i + 1];
    const float add[4] = {cx, cy, cx, cy};
    for (uint32_t e = 0; e < 4; ++e) {
      // Small integers: the sums are exact in half.
      EXPECT_EQ(isa::HalfBitsToFloat(out_h[4 * i + e]),
                half_values[4 * i + 3 - e] + add[e])
          << i << "," << e;
      EXPECT_EQ(splat[4 * i + e], cx * 0.5f) << i << "," << e;
    }
    for (uint32_t e = 0; e < 3; ++e) {
      const float want = i % 3 != 0 ? packed[3 * i + e] * cy : -1.0f;
      EXPECT_EQ(out_p[3 * i + e], want) << i << "," << e;
    }
  }
}

// Metal's fast math (the default) fuses a multiply into the add that uses
// it, also across statements, as Metal's compiler does: one rounding, the
// value std::fma gives. With fast math off, only a * b + c within one
// expression contracts (-ffp-contract=on); across statements there are two
// roundings.
TEST(MslKernels, FastMathFusesMultiplyAdd) {
  const char* source = R"(
#include <metal_stdlib>
using namespace metal;
kernel void k(device const float* a [[buffer(0)]], device float* out [[buffer(1)]],
              uint i [[thread_position_in_grid]]) {
  float p = a[0] * a[1];
  out[0] = p + a[2];
  out[1] = a[2] - p;
  out[2] = p - a[2];
})";
  const float x = 1.0f + std::ldexp(1.0f, -12);
  const std::vector<float> in = {x, x, -1.0f};
  for (bool fast : {true, false}) {
    msl::CompileOptions options;
    options.fast_math = fast;
    KernelHarness h(compiler::CompileMsl(source, "test.metal", options, {"k"}),
                    "k");
    h.SetBuffer(0, in);
    h.SetBuffer(1, std::vector<float>(3));
    ASSERT_TRUE(Runs(h, {1}, {1}));
    const std::vector<float> out = h.Read<float>(1);
    const float p = x * x;  // rounded
    if (fast) {
      EXPECT_EQ(out[0], std::fma(x, x, -1.0f));
      EXPECT_EQ(out[1], std::fma(-x, x, -1.0f));
      EXPECT_EQ(out[2], std::fma(x, x, 1.0f));
      EXPECT_NE(out[0], p - 1.0f);  // the values tell the two apart
    } else {
      EXPECT_EQ(out[0], p - 1.0f);
      EXPECT_EQ(out[1], -1.0f - p);
      EXPECT_EQ(out[2], p + 1.0f);
    }
  }
}

// A loop body's device loads issue together, each with the instructions
// computing its address raised ahead of it, before the arithmetic that
// waits for them.
TEST(MslKernels, LoopLoadsIssueBeforeTheirUses) {
  const char* source = R"(
#include <metal_stdlib>
using namespace metal;
kernel void k(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
              constant uint& n [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  float acc[4] = {0, 0, 0, 0};
  for (uint j = 0; j < n; ++j) {
    for (int r = 0; r < 4; ++r) acc[r] += in[j * 4 + r] * float(i + r);
  }
  for (int r = 0; r < 4; ++r) out[i * 4 + r] = acc[r];
})";
  Result<isa::Module> m = compiler::CompileMsl(source, "test.metal", {}, {"k"});
  ASSERT_TRUE(m.ok()) << m.error().message;
  const isa::Kernel& k = m.value().kernels[0];
  // The loop unrolled at run time and its remainder loop (one iteration
  // each): 4 loads per copy of the body.
  const auto loops = LoopsOf(k);
  ASSERT_EQ(loops.size(), 2u);
  for (const auto& [first, latch] : loops) {
    uint32_t last_load = 0, first_fma = latch, loads = 0;
    for (uint32_t i = first; i < latch; ++i) {
      if (k.code[i].op == isa::Opcode::kLoad) last_load = i, ++loads;
      if (k.code[i].op == isa::Opcode::kFma) first_fma = std::min(first_fma, i);
    }
    EXPECT_GT(loads, 0u);
    EXPECT_EQ(loads % 4, 0u);
    EXPECT_LT(last_load, first_fma) << isa::PrintKernel(k);
  }
  KernelHarness h = Compile(source, "k");
  const uint32_t threads = 64, n = 5;
  std::vector<float> in(4 * n);
  for (uint32_t e = 0; e < in.size(); ++e) in[e] = 0.5f * e - 3.0f;
  h.SetBuffer(0, in);
  h.SetBuffer(1, std::vector<float>(4 * threads));
  h.SetBytes(2, n);
  ASSERT_TRUE(Runs(h, {threads}, {32}));
  const std::vector<float> out = h.Read<float>(1);
  for (uint32_t i = 0; i < threads; ++i) {
    for (uint32_t r = 0; r < 4; ++r) {
      float acc = 0;
      for (uint32_t j = 0; j < n; ++j) {
        acc = std::fma(in[j * 4 + r], static_cast<float>(i + r), acc);
      }
      EXPECT_EQ(out[4 * i + r], acc) << i << "," << r;
    }
  }
}

// Lanes leave a loop in different iterations; two values carried by the
// loop are used after it, and the bound comes from a constant buffer.
TEST(MslKernels, ValuesLeaveADivergentLoopPerLane) {
  KernelHarness h = Compile(R"(
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], constant uint& n [[buffer(1)]],
              uint i [[thread_position_in_grid]]) {
  float s = 0.0f, p = 1.0f;
  for (uint j = 0; j < n; ++j) {
    if (j * 7 % 19 == i % 19) break;
    s += float(j);
    p *= 0.5f;
  }
  out[i] = s + p;
})",
                            "k");
  const uint32_t threads = 96, n = 17;
  h.SetBuffer(0, std::vector<float>(threads, -1.0f));
  h.SetBytes(1, n);
  ASSERT_TRUE(Runs(h, {threads}, {32}));
  const std::vector<float> out = h.Read<float>(0);
  for (uint32_t i = 0; i < threads; ++i) {
    float s = 0.0f, p = 1.0f;
    for (uint32_t j = 0; j < n; ++j) {
      if (j * 7 % 19 == i % 19) break;
      s += static_cast<float>(j);
      p *= 0.5f;
    }
    EXPECT_EQ(out[i], s + p) << i;
  }
}

// as_type between half2 and uint, and uint2 and ulong: the bits move.
TEST(MslKernels, AsTypeBetweenVectorsAndScalars) {
  KernelHarness h = Compile(R"(
#include <metal_stdlib>
using namespace metal;
kernel void bits(device const float* x [[buffer(0)]],
                 device uint* out [[buffer(1)]],
                 uint i [[thread_position_in_grid]]) {
  const half2 hh = half2(x[i], -x[i] * 0.5f);
  out[4 * i] = as_type<uint>(hh);
  const uint2 parts = as_type<uint2>(ulong(i) * 0x100000001ul + 3);
  out[4 * i + 1] = parts.x ^ (parts.y << 8);
  const uchar4 bytes = as_type<uchar4>(as_type<uint>(x[i]));
  out[4 * i + 2] = uint(bytes.x) + 3 * uint(bytes.y) + 5 * uint(bytes.z) + 7 * uint(bytes.w);
  const half2 back = as_type<half2>(out[4 * i]);
  out[4 * i + 3] = as_type<uint>(float(back.y));
})",
                            "bits");
  const uint32_t n = 64;
  std::vector<float> x(n);
  for (uint32_t i = 0; i < n; ++i) x[i] = 0.375f * static_cast<float>(i) - 7.0f;
  h.SetBuffer(0, x);
  h.SetBuffer(1, std::vector<uint32_t>(4 * n));
  ASSERT_TRUE(Runs(h, {n}, {32}));
  const std::vector<uint32_t> out = h.Read<uint32_t>(1);
  for (uint32_t i = 0; i < n; ++i) {
    // These values are exact in half.
    const uint16_t lo = isa::FloatToHalfBits(x[i]);
    const uint16_t hi = isa::FloatToHalfBits(-x[i] * 0.5f);
    EXPECT_EQ(out[4 * i], (uint32_t(hi) << 16) | lo) << i;
    const uint64_t v = uint64_t(i) * 0x100000001ull + 3;
    EXPECT_EQ(out[4 * i + 1], uint32_t(v) ^ (uint32_t(v >> 32) << 8)) << i;
    uint32_t u;
    std::memcpy(&u, &x[i], 4);
    EXPECT_EQ(out[4 * i + 2], (u & 255) + 3 * ((u >> 8) & 255) +
                                  5 * ((u >> 16) & 255) + 7 * (u >> 24))
        << i;
    const float y = -x[i] * 0.5f;
    uint32_t yu;
    std::memcpy(&yu, &y, 4);
    EXPECT_EQ(out[4 * i + 3], yu) << i;
  }
}

// Kernel templates with threadgroup variables, instantiated under
// [[host_name]] as Metal code writes them: with the parameter list, and
// MLX's decltype spelling.
TEST(MslKernels, TemplatedKernelsWithHostNames) {
  const char* source = R"(
#include <metal_stdlib>
using namespace metal;
template <typename T, int N>
[[kernel]] void reverse_tile(device const T* in [[buffer(0)]],
                             device T* out [[buffer(1)]],
                             uint lid [[thread_position_in_threadgroup]],
                             uint gid [[thread_position_in_grid]]) {
  threadgroup T tile[N];
  tile[lid] = in[gid] * T(2);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[gid] = tile[N - 1 - lid];
}
template [[host_name("reverse_float")]] kernel void reverse_tile<float, 64>(
    device const float*, device float*, uint, uint);
#define instantiate(name, ...) \
  template [[host_name(name)]] [[kernel]] decltype(reverse_tile<__VA_ARGS__>) reverse_tile<__VA_ARGS__>;
instantiate("reverse_int", int, 32)
)";
  for (const char* name : {"reverse_float", "reverse_int"}) {
    KernelHarness h(compiler::CompileMsl(source, "test.metal", {}, {name}),
                    name);
    ASSERT_TRUE(h.status().ok()) << h.status().error().message;
    const bool is_float = std::string(name) == "reverse_float";
    const uint32_t group = is_float ? 64 : 32, n = 4 * group;
    std::vector<int32_t> ints(n);
    std::vector<float> floats(n);
    for (uint32_t i = 0; i < n; ++i) {
      ints[i] = static_cast<int32_t>(i * 3) - 100;
      floats[i] = 0.5f * static_cast<float>(ints[i]);
    }
    if (is_float) {
      h.SetBuffer(0, floats);
      h.SetBuffer(1, std::vector<float>(n));
    } else {
      h.SetBuffer(0, ints);
      h.SetBuffer(1, std::vector<int32_t>(n));
    }
    ASSERT_TRUE(Runs(h, {n}, {group}));
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t from = i / group * group + (group - 1 - i % group);
      if (is_float) {
        EXPECT_EQ(h.Read<float>(1)[i], 2.0f * floats[from]) << name << i;
      } else {
        EXPECT_EQ(h.Read<int32_t>(1)[i], 2 * ints[from]) << name << i;
      }
    }
  }
}

// Lanes that break out of a loop in different iterations meet after it,
// even when the loop can also return (the kernel's exit would be the plain
// post-dominator): the SIMD function sees all of them.
TEST(MslKernels, LanesMeetAfterALoopWithBreakAndReturn) {
  KernelHarness h = Compile(R"(
#include <metal_stdlib>
using namespace metal;
kernel void k(device uint* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  uint n = 0;
  while (true) {
    if (n == i % 32) break;
    if (n == 20 && i >= 64) { out[i] = 1000; return; }
    ++n;
  }
  out[i] = simd_max(n) + 100 * simd_sum(1u);
})",
                            "k");
  h.SetBuffer(0, std::vector<uint32_t>(96));
  ASSERT_TRUE(Runs(h, {96}, {32}));
  const std::vector<uint32_t> out = h.Read<uint32_t>(0);
  for (uint32_t i = 0; i < 96; ++i) {
    // SIMD groups 0 and 1: every lane breaks; group 2: lanes 0..20 break
    // (the largest n is 20), lanes 21..31 return.
    const uint32_t want =
        i < 64 ? 31 + 100 * 32 : (i % 32 <= 20 ? 20 + 100 * 21 : 1000);
    EXPECT_EQ(out[i], want) << i;
  }
}

// Kernels in namespaces and extern "C" blocks, templated or not, are found
// and lowered under their Metal names.
TEST(MslKernels, KernelsInNamespaces) {
  const char* source = R"(
#include <metal_stdlib>
using namespace metal;
namespace mine {
kernel void k1(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]],
               uint l [[thread_position_in_threadgroup]]) {
  threadgroup float t[32];
  t[l] = float(i);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  o[i] = t[31 - l];
}
template <typename T>
kernel void k2(device T* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  o[i] = T(2) * T(i);
}
template [[host_name("k2_int")]] kernel void k2<int>(device int*, uint);
}  // namespace mine
extern "C" {
kernel void k3(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  o[i] = 3.0f;
}
}
)";
  Result<isa::Module> m = compiler::CompileMsl(source, "ns.metal", {});
  ASSERT_TRUE(m.ok()) << m.error().message;
  std::set<std::string> names;
  for (const auto& k : m.value().kernels) names.insert(k.name);
  EXPECT_EQ(names, (std::set<std::string>{"k1", "k2_int", "k3"}));
  KernelHarness h(compiler::CompileMsl(source, "ns.metal", {}, {"k1"}), "k1");
  h.SetBuffer(0, std::vector<float>(64));
  ASSERT_TRUE(Runs(h, {64}, {32}));
  const std::vector<float> out = h.Read<float>(0);
  for (uint32_t i = 0; i < 64; ++i) {
    EXPECT_EQ(out[i], static_cast<float>(i / 32 * 32 + 31 - i % 32)) << i;
  }
}

// Every kernel of the shim corpus either compiles to a verified module or
// is refused with an error that names what is unsupported: never a crash,
// never a silent wrong kernel.
TEST(MslKernels, CorpusCompilesOrSaysWhatIsUnsupported) {
  int compiled = 0, refused = 0;
  for (const auto& entry : std::filesystem::directory_iterator(
           MTLEMU_SOURCE_DIR "/compiler/msl/shim_check")) {
    if (entry.path().extension() != ".metal") continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    const Result<isa::Module> m =
        compiler::CompileMsl(text.str(), entry.path().string(), {});
    if (m.ok()) {
      ++compiled;
    } else {
      ++refused;
      const std::string& e = m.error().message;
      EXPECT_TRUE(e.find("unsupported") != std::string::npos ||
                  e.find("error:") != std::string::npos)
          << entry.path() << ": " << e;
      EXPECT_EQ(e.find("internal compiler error"), std::string::npos)
          << entry.path() << ": " << e;
    }
  }
  EXPECT_EQ(refused, 0);
  RecordProperty("compiled", compiled);
  RecordProperty("refused", refused);
}

}  // namespace
}  // namespace mtlemu

namespace mtlemu {
namespace {

// A file of several kernels (MLX compiles hundreds per file): each kernel's
// static threadgroup memory is its own arrays', not the file's.
TEST(MslKernels, StaticThreadgroupMemoryIsEachKernelsOwn) {
  Result<isa::Module> m = compiler::CompileMsl(R"(
#include <metal_stdlib>
using namespace metal;
template <int N>
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_threadgroup]]) {
  threadgroup float t[N];
  t[i] = float(i);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[i] = t[N - 1 - i];
}
template [[host_name("k_small")]] kernel void k<64>(device float*, uint);
template [[host_name("k_big")]] kernel void k<6000>(device float*, uint);
kernel void none(device float* out [[buffer(0)]]) { out[0] = 1.0f; }
)",
                                               "several.metal", {});
  ASSERT_TRUE(m.ok()) << m.error().message;
  std::map<std::string, uint32_t> memory;
  for (const isa::Kernel& k : m.value().kernels) {
    memory[k.name] = k.static_threadgroup_memory;
  }
  EXPECT_EQ(memory["k_small"], 64u * 4);
  EXPECT_EQ(memory["k_big"], 6000u * 4);
  EXPECT_EQ(memory["none"], 0u);
}

// Likewise each kernel's constant data holds the program-scope constant
// tables it reads, not every table of the file.
TEST(MslKernels, ConstantDataIsEachKernelsOwn) {
  Result<isa::Module> m = compiler::CompileMsl(R"(
#include <metal_stdlib>
using namespace metal;
constant float small_table[4] = {1, 2, 3, 4};
constant float big_table[1000] = {5, 6, 7};
kernel void reads_small(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  out[i] = small_table[i % 4];
}
kernel void reads_big(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  out[i] = big_table[i % 1000];
}
kernel void reads_none(device float* out [[buffer(0)]]) { out[0] = 1.0f; }
)",
                                               "tables.metal", {});
  ASSERT_TRUE(m.ok()) << m.error().message;
  std::map<std::string, std::vector<uint8_t>> data;
  for (const isa::Kernel& k : m.value().kernels) data[k.name] = k.constant_data;
  ASSERT_EQ(data["reads_small"].size(), 4u * 4);
  float first[4];
  std::memcpy(first, data["reads_small"].data(), sizeof(first));
  EXPECT_EQ(first[0], 1.0f);
  EXPECT_EQ(first[3], 4.0f);
  ASSERT_EQ(data["reads_big"].size(), 1000u * 4);
  float big[2];
  std::memcpy(big, data["reads_big"].data(), sizeof(big));
  EXPECT_EQ(big[0], 5.0f);
  EXPECT_EQ(big[1], 6.0f);
  EXPECT_TRUE(data["reads_none"].empty());
}

}  // namespace
}  // namespace mtlemu
