// The constructs of real-world Metal code (MLX's kernels above all) that the
// front end must take, in small kernels written here, each run and checked
// against a C++ reference: attributes made by macros, [[kernel]] templates
// with threadgroup arrays and [[host_name]] instantiations, buffers without
// an index, attributes without a space before them, _Pragma from macros,
// headers found through CompileOptions::include_directories. MLX itself is
// tested by mlx_test.cpp when a snapshot is given.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <vector>

#include "compiler/msl_compiler.h"
#include "isa/numeric.h"
#include "tests/support/kernel_harness.h"

namespace mtlemu {
namespace {

using testing::KernelHarness;
using testing::Runs;

KernelHarness Compile(const std::string& source, const char* kernel,
                      const msl::CompileOptions& options = {}) {
  return KernelHarness(
      compiler::CompileMsl(source, "constructs.metal", options, {kernel}),
      kernel);
}

// MLX's pattern: a [[kernel]] template, instantiated by a macro that writes
// `template [[host_name("...")]] [[kernel]] decltype(f<T>) f<T>;`, with a
// threadgroup array in its body; buffers without indices.
constexpr char kMacroInstantiated[] = R"(
#include <metal_stdlib>
using namespace metal;

#define instantiate_kernel(name, func, ...) \
  template [[host_name(name)]] [[kernel]] decltype(func<__VA_ARGS__>) func<__VA_ARGS__>;

template <typename T, int N>
[[kernel]] void block_sum(
    const device T* in,
    device T* out,
    constant uint& n,
    uint tid[[thread_position_in_threadgroup]],
    uint gid[[threadgroup_position_in_grid]]) {
  threadgroup T partial[N];
  const uint i = gid * N + tid;
  partial[tid] = i < n ? in[i] : T(0);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  for (uint s = N / 2; s > 0; s >>= 1) {
    if (tid < s) partial[tid] += partial[tid + s];
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  if (tid == 0) out[gid] = partial[0];
}

#define instantiate_block_sum(tname, type) \
  instantiate_kernel("block_sum_" #tname, block_sum, type, 64)

instantiate_block_sum(float32, float)
instantiate_block_sum(int32, int)
)";

TEST(MetalConstructs, MacroMadeHostNamesOnAKernelTemplateWithThreadgroupArray) {
  const uint32_t n = 1000, groups = (n + 63) / 64;
  {
    KernelHarness h = Compile(kMacroInstantiated, "block_sum_float32");
    std::vector<float> in(n);
    for (uint32_t i = 0; i < n; ++i) in[i] = 0.5f * static_cast<float>(i % 9);
    h.SetBuffer(0, in);
    h.SetBuffer(1, std::vector<float>(groups, -1.0f));
    h.SetBytes(2, n);
    ASSERT_TRUE(Runs(h, {groups * 64}, {64}));
    const std::vector<float> out = h.Read<float>(1);
    for (uint32_t g = 0; g < groups; ++g) {
      double expected = 0;
      for (uint32_t i = g * 64; i < std::min(n, g * 64 + 64); ++i) {
        expected += in[i];
      }
      EXPECT_EQ(out[g], static_cast<float>(expected)) << g;
    }
  }
  {
    KernelHarness h = Compile(kMacroInstantiated, "block_sum_int32");
    std::vector<int32_t> in(n);
    for (uint32_t i = 0; i < n; ++i) in[i] = static_cast<int32_t>(i) - 300;
    h.SetBuffer(0, in);
    h.SetBuffer(1, std::vector<int32_t>(groups, -1));
    h.SetBytes(2, n);
    ASSERT_TRUE(Runs(h, {groups * 64}, {64}));
    const std::vector<int32_t> out = h.Read<int32_t>(1);
    for (uint32_t g = 0; g < groups; ++g) {
      int32_t expected = 0;
      for (uint32_t i = g * 64; i < std::min(n, g * 64 + 64); ++i) {
        expected += in[i];
      }
      EXPECT_EQ(out[g], expected) << g;
    }
  }
}

// Metal gives buffers declared without an index the lowest free index, in
// the order they are declared: here a -> 0, n -> 2 (1 is taken), out -> 3.
TEST(MetalConstructs, BuffersWithoutAnIndexTakeTheLowestFreeOne) {
  const std::string source = R"(
#include <metal_stdlib>
using namespace metal;
kernel void mixed(device const float* a,
                  device const float* b [[buffer(1)]],
                  constant uint& n,
                  device float* out,
                  uint i [[thread_position_in_grid]]) {
  if (i < n) out[i] = a[i] * 10.0f + b[i];
}
)";
  const msl::FrontendResult front =
      msl::CompileMsl(source, "constructs.metal", {});
  ASSERT_TRUE(front.ok()) << isa::FormatDiagnostics(front.errors);
  ASSERT_EQ(front.kernels.size(), 1u);
  std::vector<int> indices;
  for (const msl::KernelParameter& p : front.kernels[0].parameters) {
    indices.push_back(p.index);
  }
  EXPECT_EQ(indices, (std::vector<int>{0, 1, 2, 3, -1}));

  KernelHarness h = Compile(source, "mixed");
  const uint32_t n = 100;
  std::vector<float> a(n), b(n);
  std::iota(a.begin(), a.end(), 0.0f);
  std::iota(b.begin(), b.end(), 1000.0f);
  h.SetBuffer(0, a);
  h.SetBuffer(1, b);
  h.SetBytes(2, n);
  h.SetBuffer(3, std::vector<float>(n + 28, -1.0f));
  ASSERT_TRUE(Runs(h, {n + 28}, {32}));
  const std::vector<float> out = h.Read<float>(3);
  for (uint32_t i = 0; i < n + 28; ++i) {
    EXPECT_EQ(out[i], i < n ? a[i] * 10.0f + b[i] : -1.0f) << i;
  }
}

// _Pragma("clang loop unroll(full)") from a macro (MLX's
// MLX_MTL_PRAGMA_UNROLL) lands on a line of its own; the loop still works.
TEST(MetalConstructs, PragmasFromMacros) {
  KernelHarness h = Compile(R"msl(
#include <metal_stdlib>
using namespace metal;
#define UNROLL _Pragma("clang loop unroll(full)")
kernel void powers(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  float x = 1.0f, acc = 0.0f;
  UNROLL for (int k = 0; k < 6; ++k) { acc += x; x *= float(i); }
  #pragma unroll
  for (int k = 0; k < 2; ++k) acc += 1.0f;
  out[i] = acc;
}
)msl",
                            "powers");
  h.SetBuffer(0, std::vector<float>(8, -1.0f));
  ASSERT_TRUE(Runs(h, {8}, {8}));
  const std::vector<float> out = h.Read<float>(0);
  for (int i = 0; i < 8; ++i) {
    float x = 1.0f, acc = 0.0f;
    for (int k = 0; k < 6; ++k) {
      acc += x;
      x *= static_cast<float>(i);
    }
    EXPECT_EQ(out[i], acc + 2.0f) << i;
  }
}

// Headers from an include folder (MLX includes
// "mlx/backend/metal/kernels/utils.h" with -I the snapshot's root), and the
// kernel and its source lines still name the user's files.
TEST(MetalConstructs, HeadersFromIncludeDirectories) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("mtlemu_constructs_" +
       std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  std::filesystem::create_directories(dir / "lib" / "ops");
  std::ofstream(dir / "lib" / "ops" / "axpy.h")
      << "#pragma once\n"
         "template <typename T>\n"
         "[[kernel]] void axpy(device T* y, const device T* x,\n"
         "                     constant T& a,\n"
         "                     uint i [[thread_position_in_grid]]) {\n"
         "  y[i] = a * x[i] + y[i];\n"
         "}\n";
  msl::CompileOptions options;
  options.include_directories.push_back(dir.string());
  const std::string source =
      "#include <metal_stdlib>\n"
      "using namespace metal;\n"
      "#include \"lib/ops/axpy.h\"\n"
      "template [[host_name(\"axpy_f32\")]] [[kernel]] decltype(axpy<float>) "
      "axpy<float>;\n";
  Result<isa::Module> module =
      compiler::CompileMsl(source, "constructs.metal", options, {"axpy_f32"});
  ASSERT_TRUE(module.ok()) << module.error().message;
  const isa::Module& m = module.value();
  ASSERT_EQ(m.kernels.size(), 1u);
  // The body's instructions are on line 6 of the header.
  bool header_line = false;
  for (const isa::Instruction& ins : m.kernels[0].code) {
    if (ins.location.line == 6 && ins.location.file > 0 &&
        m.files[ins.location.file].ends_with("lib/ops/axpy.h")) {
      header_line = true;
    }
  }
  EXPECT_TRUE(header_line);

  KernelHarness h(std::move(module), "axpy_f32");
  h.SetBuffer(0, std::vector<float>{1, 2, 3, 4});
  h.SetBuffer(1, std::vector<float>{10, 20, 30, 40});
  h.SetBytes(2, 0.5f);
  ASSERT_TRUE(Runs(h, {4}, {4}));
  EXPECT_EQ(h.Read<float>(0), (std::vector<float>{6, 12, 18, 24}));
  std::filesystem::remove_all(dir);
}

// Errors in a header and in a macro's expansion quote the user's own lines:
// the header's, and the macro's definition as a note.
TEST(MetalConstructs, DiagnosticsQuoteHeadersAndMacros) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "mtlemu_constructs_diag";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "bad.h") << "// a header\n"
                                  "#define DEFINE_F(T) T f(T x) { return x + "
                                  "undeclared_name; }\n"
                                  "inline float g(float x) { return x * "
                                  "missing; }\n";
  msl::CompileOptions options;
  options.include_directories.push_back(dir.string());
  const msl::FrontendResult r = msl::CompileMsl(
      "#include \"bad.h\"\n\nDEFINE_F(float)\n", "user.metal", options);
  ASSERT_FALSE(r.ok());
  const std::string text = isa::FormatDiagnostics(r.errors);
  EXPECT_NE(text.find("user.metal:3:1: error: use of undeclared identifier "
                      "'undeclared_name'"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("bad.h:2:"), std::string::npos) << text;
  EXPECT_NE(text.find("note: in this macro's expansion"), std::string::npos)
      << text;
  EXPECT_NE(text.find("bad.h:3:38: error: use of undeclared identifier "
                      "'missing'"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("inline float g(float x) { return x * missing; }"),
            std::string::npos)
      << text;
  std::filesystem::remove_all(dir);
}

// A missing header is an error at the #include, naming the header.
TEST(MetalConstructs, MissingHeaderIsAnErrorAtTheInclude) {
  const msl::FrontendResult r = msl::CompileMsl(
      "// first\n#include \"no/such/header.h\"\n", "user.metal", {});
  ASSERT_FALSE(r.ok());
  const std::string text = isa::FormatDiagnostics(r.errors);
  EXPECT_NE(text.find("user.metal:2:10: error: 'no/such/header.h' file not "
                      "found"),
            std::string::npos)
      << text;
}

// Address-space qualifiers on constructors and member functions (MLX's
// complex_t has `thread`, `device`, `threadgroup` and `constant` overloads;
// its os_log fallback only a `constant` one), and `constant char*`
// parameters that take string literals.
TEST(MetalConstructs, AddressSpaceQualifiedMembersAndStringParameters) {
  KernelHarness h = Compile(R"(
#include <metal_stdlib>
using namespace metal;
struct pair_t {
  float a, b;
  constexpr pair_t(float x, float y) thread : a(x), b(y) {}
  constexpr pair_t(float x, float y) device : a(x), b(y) {}
  constexpr pair_t(float x, float y) threadgroup : a(x), b(y) {}
  constexpr pair_t(float x, float y) constant : a(x), b(y) {}
  float sum() const thread { return a + b; }
  float sum() const device { return a + b + 100.0f; }
  float sum() const constant { return a + b + 100.0f; }
};
struct tag_t {
  int n;
  constexpr tag_t(constant char* s, int k) constant : n(k) {}
  int length(constant char* s) const constant { int i = 0; while (s[i]) ++i; return i + n; }
};
constant tag_t kTag("mlx", 3);
constant pair_t kPair(1.0f, 2.0f);
pair_t make(float x) { return {x, 2.0f * x}; }
kernel void k(device float* out [[buffer(0)]], device pair_t* p [[buffer(1)]],
              uint i [[thread_position_in_grid]]) {
  pair_t local = make(float(i));
  out[i] = local.sum() + p[i].sum() + kPair.sum() + float(kTag.length("abcde"));
}
)",
                            "k");
  std::vector<float> pairs(16);
  for (int i = 0; i < 16; ++i) pairs[i] = static_cast<float>(i);
  h.SetBuffer(0, std::vector<float>(8, 0.0f));
  h.SetBuffer(1, pairs);
  ASSERT_TRUE(Runs(h, {8}, {8}));
  const std::vector<float> out = h.Read<float>(0);
  for (int i = 0; i < 8; ++i) {
    // The device overload for p[i] and the constant one for kPair (which
    // give the same, as in MLX's code: mtlemu's constant memory is
    // read-only device memory, so a `constant` object takes the device
    // overload where both exist).
    const float expected = 3.0f * i + (pairs[2 * i] + pairs[2 * i + 1] + 100) +
                           (3.0f + 100.0f) + (5 + 3);
    EXPECT_EQ(out[i], expected) << i;
  }
}

// A braced list as a function argument converts to a vector parameter (and
// picks that overload over a scalar one, as MLX's elem_to_loc relies on),
// to a struct, or to a scalar; statement expressions and lambdas are left
// alone.
TEST(MetalConstructs, BracedListsAsArguments) {
  KernelHarness h = Compile(R"(
#include <metal_stdlib>
using namespace metal;
struct pair_t { int a; int b; };
template <typename T> T loc(T elem, int k) { return elem * T(k); }
template <typename T> T loc(uint3 elem, int k) { return T(elem.x + 10 * elem.y + 100 * elem.z) * T(k); }
int first(pair_t p) { return p.a - p.b; }
float dot2(float2 a, float2 b) { return dot(a, b); }
kernel void k(device int* out [[buffer(0)]], device float* f [[buffer(1)]],
              uint3 i [[thread_position_in_grid]]) {
  const uint n = i.x;
  auto twice = [](int x) { return 2 * x; };
  out[n] = loc<int>({2 * i.x, 1u, 3u}, 2) + loc<int>(int(n), 1000) +
           first({7, int(n)}) + twice(({ int t = 1; t; }));
  f[n] = dot2({float(n), 1.0f}, {2.0f, 0.5f});
}
)",
                            "k");
  h.SetBuffer(0, std::vector<int32_t>(8, 0));
  h.SetBuffer(1, std::vector<float>(8, 0.0f));
  ASSERT_TRUE(Runs(h, {8}, {8}));
  const std::vector<int32_t> out = h.Read<int32_t>(0);
  const std::vector<float> f = h.Read<float>(1);
  for (int n = 0; n < 8; ++n) {
    EXPECT_EQ(out[n], (2 * n + 10 + 300) * 2 + n * 1000 + (7 - n) + 2) << n;
    EXPECT_EQ(f[n], 2.0f * n + 0.5f) << n;
  }
}

// Threadgroup arrays declared in a block of a kernel template (MLX's sort)
// and with an initializer (MLX's layer norm); short braced lists of a
// vector fill the rest with zeros (MLX's random).
TEST(MetalConstructs, ThreadgroupArraysInBlocksAndShortVectorLists) {
  KernelHarness h = Compile(R"(
#include <metal_stdlib>
using namespace metal;
template <bool REVERSE>
[[kernel]] void k(device uint* out, uint i [[thread_position_in_threadgroup]]) {
  threadgroup uint total[1] = {0};
  if (i == 0) total[0] = 0;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (REVERSE) {
    threadgroup uint t[32];
    t[i] = i;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    threadgroup uint* tp = (threadgroup uint*)t;  // keeps its initializer
    uint4 v = {tp[31 - i], 5u, 7u};
    float4 acc = {1.5f};
    out[i] = v.x + v.y + v.z + v.w + uint(acc.x + acc.y + acc.w);
  }
}
template [[host_name("k_rev")]] [[kernel]] decltype(k<true>) k<true>;
)",
                            "k_rev");
  h.SetBuffer(0, std::vector<uint32_t>(32, 0));
  ASSERT_TRUE(Runs(h, {32}, {32}));
  const std::vector<uint32_t> out = h.Read<uint32_t>(0);
  for (uint32_t i = 0; i < 32; ++i) {
    EXPECT_EQ(out[i], (31 - i) + 5 + 7 + 0 + 1) << i;
  }
}

// A threadgroup array declared in a `case` of a switch, and one in a loop's
// body: the `break`s and `continue`s after them still belong to the switch
// and the loop (one project's whole reduction file failed on it).
TEST(MetalConstructs, ThreadgroupArraysInSwitchCasesAndLoops) {
  constexpr char kSource[] = R"(
#include <metal_stdlib>
using namespace metal;
kernel void k(device uint* out [[buffer(0)]], constant uint& mode [[buffer(1)]],
              uint i [[thread_position_in_threadgroup]]) {
  switch (mode) {
    case 0:
      out[i] = 1;
      break;
    case 1:
      threadgroup uint t[64];
      t[i] = i;
      threadgroup_barrier(mem_flags::mem_threadgroup);
      out[i] = t[63 - i];
      break;
    default:
      out[i] = 2;
      break;
  }
  for (uint round = 0; round < 4; ++round) {
    threadgroup uint s[64];
    s[i] = round;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (round == 1) continue;
    out[i] += s[(i + 1) % 64];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (round == 2) break;
  }
}
)";
  for (uint32_t mode : {0u, 1u, 7u}) {
    KernelHarness h = Compile(kSource, "k");
    h.SetBuffer(0, std::vector<uint32_t>(64, 0));
    h.SetBytes(1, mode);
    ASSERT_TRUE(Runs(h, {64}, {64}));
    const std::vector<uint32_t> out = h.Read<uint32_t>(0);
    for (uint32_t i = 0; i < 64; ++i) {
      const uint32_t first = mode == 0 ? 1 : mode == 1 ? 63 - i : 2;
      EXPECT_EQ(out[i], first + 0 + 2) << mode << " " << i;  // rounds 0, 2
    }
  }
}

// llama.cpp's dispatch kernels: a kernel template whose last parameter is
// a function pointer, given a function template (`dequantize_q8_0_t4`,
// whose `type4` is deduced from the pointer's type) or a plain function,
// named by `typedef decltype(k<...>) k_t;` and instantiated as `template
// [[host_name("...")]] kernel k_t k<...>;`; the pointer is handed on to
// another template.
TEST(MetalConstructs, FunctionTemplatesAsFunctionPointerTemplateArguments) {
  constexpr char kSource[] = R"(
#include <metal_stdlib>
using namespace metal;
struct block { float d; char qs[4]; };
template <typename type4>
void dequantize(device const block * xb, short il, thread type4 & reg) {
  reg = type4(xb->qs[0], xb->qs[1], xb->qs[2], xb->qs[3]) * xb->d + il;
}
void dequantize_f32(device const float4 * x, short il, thread float4 & reg) {
  reg = x[0] * 2.0f + il;
}
template <typename q_t, void (*deq)(device const q_t *, short, thread float4 &)>
float4 apply(device const char * src, short il) {
  float4 v;
  deq((device const q_t *) src, il, v);
  return v;
}
template <short r, typename q_t, void (*deq_t4)(device const q_t *, short, thread float4 &)>
kernel void kernel_disp(device const char * src, device float4 * dst,
                        uint tid [[thread_position_in_grid]]) {
  dst[tid] = apply<q_t, deq_t4>(src + tid * sizeof(q_t), short(tid)) * r;
}
typedef decltype(kernel_disp<2, block, dequantize>) disp_t;
template [[host_name("disp_q")]] kernel disp_t kernel_disp<2, block, dequantize>;
template [[host_name("disp_f32")]] kernel disp_t kernel_disp<3, float4, dequantize_f32>;
)";
  constexpr uint32_t n = 8;
  {
    KernelHarness h = Compile(kSource, "disp_q");
    std::vector<uint8_t> blocks(n * 8);
    for (uint32_t t = 0; t < n; ++t) {
      const float d = 0.5f * static_cast<float>(t + 1);
      std::memcpy(&blocks[t * 8], &d, 4);
      for (int j = 0; j < 4; ++j) {
        blocks[t * 8 + 4 + j] =
            static_cast<uint8_t>(static_cast<int8_t>(j - 2));
      }
    }
    h.SetBuffer(0, blocks);
    h.SetBuffer(1, std::vector<float>(4 * n, 0));
    ASSERT_TRUE(Runs(h, {n}, {n}));
    const std::vector<float> out = h.Read<float>(1);
    for (uint32_t t = 0; t < n; ++t) {
      for (int j = 0; j < 4; ++j) {
        const float d = 0.5f * static_cast<float>(t + 1);
        EXPECT_EQ(out[4 * t + j], ((j - 2) * d + t) * 2) << t << " " << j;
      }
    }
  }
  {
    KernelHarness h = Compile(kSource, "disp_f32");
    std::vector<float> in(4 * n);
    std::iota(in.begin(), in.end(), 1.0f);
    h.SetBuffer(0, in);
    h.SetBuffer(1, std::vector<float>(4 * n, 0));
    ASSERT_TRUE(Runs(h, {n}, {n}));
    const std::vector<float> out = h.Read<float>(1);
    for (uint32_t i = 0; i < 4 * n; ++i) {
      EXPECT_EQ(out[i], (in[i] * 2 + i / 4) * 3) << i;
    }
  }
}

// Conversions between vector types written as casts, which Metal converts
// element by element: `(half4) m[1]` of a float4x4's column, `(T4) x` and
// `T2(x)` in a template, `static_cast<float4>(h)`, `(half4)(expr)`; and a
// conditional between a vector and a scalar (`p ? s*p[i] : 0.0f`, whose
// scalar way becomes the vector), with the pointer null in some threads.
TEST(MetalConstructs, VectorConversionsByCastAndMixedConditionals) {
  KernelHarness h = Compile(R"(
#include <metal_stdlib>
using namespace metal;
template <typename T4, typename T2>
kernel void k(device const half4 * a, device const float4 * b,
              device float4 * out, device half4 * out_h,
              constant float & slope, uint i [[thread_position_in_grid]]) {
  float4x4 m = float4x4(b[i], b[i] * 2.0f, b[i], b[i]);
  half4 h = (half4) m[1];
  T4 x = (T4) a[i] + T4(a[i]) * 0.5f;
  T2 y = T2(a[i].zw);
  device const half4 * p = i % 2 ? a : nullptr;
  out[i] = x + float4(y, y) + static_cast<float4>(h) +
           (float4)((p ? slope*p[i] : 0.0f));
  out_h[i] = (half4)(b[i] * 0.25f) + h;
}
template [[host_name("k")]] kernel void k<float4, float2>(
    device const half4 *, device const float4 *, device float4 *,
    device half4 *, constant float &, uint);
)",
                            "k");
  constexpr uint32_t n = 8;
  // Halves of small integers and quarters: every value exact in half.
  std::vector<uint16_t> a(4 * n);
  std::vector<float> af(4 * n), b(4 * n);
  for (uint32_t j = 0; j < 4 * n; ++j) {
    af[j] = 0.5f * static_cast<float>(j % 11);
    a[j] = isa::FloatToHalfBits(af[j]);
    b[j] = static_cast<float>(j % 7);
  }
  h.SetBuffer(0, a);
  h.SetBuffer(1, b);
  h.SetBuffer(2, std::vector<float>(4 * n, 0));
  h.SetBuffer(3, std::vector<uint16_t>(4 * n, 0));
  h.SetBytes(4, 3.0f);
  ASSERT_TRUE(Runs(h, {n}, {n}));
  const std::vector<float> out = h.Read<float>(2);
  const std::vector<uint16_t> out_h = h.Read<uint16_t>(3);
  for (uint32_t i = 0; i < n; ++i) {
    for (uint32_t c = 0; c < 4; ++c) {
      const uint32_t j = 4 * i + c;
      const float y = af[4 * i + 2 + c % 2];
      const float masked = i % 2 ? 3.0f * af[j] : 0.0f;
      EXPECT_EQ(out[j], af[j] * 1.5f + y + 2 * b[j] + masked) << j;
      EXPECT_EQ(isa::HalfBitsToFloat(out_h[j]), b[j] * 0.25f + 2 * b[j]) << j;
    }
  }
}

// Casts between vectors of one size: clang would reinterpret the bits,
// Metal converts each element (`(float4) i` of an int4 is 0, 1, 2, 3), and
// a comparison's true becomes 1 (llama.cpp's leaky ReLU: `TC(x > 0)*x`).
// as_type keeps the bits.
TEST(MetalConstructs, SameSizeVectorCastsConvertAndComparisonsGiveOne) {
  KernelHarness h = Compile(R"(
#include <metal_stdlib>
using namespace metal;
template <typename TC>
TC leaky(TC x) { return TC(x > 0)*x + TC(x <= 0)*(x * 0.5f); }
kernel void k(device const int4 * a, device const float4 * b,
              device float4 * out, device uint4 * bits,
              uint i [[thread_position_in_grid]]) {
  out[3*i] = (float4) a[i];
  out[3*i+1] = leaky<float4>(b[i] - 2.0f);
  out[3*i+2] = float4(b[i] > 1.0f) + (float4)(a[i] == 2);
  bits[i] = as_type<uint4>(b[i]);
}
)",
                            "k");
  constexpr uint32_t n = 2;
  std::vector<int32_t> a(4 * n);
  std::vector<float> b(4 * n);
  std::iota(a.begin(), a.end(), 0);
  std::iota(b.begin(), b.end(), 0.0f);
  h.SetBuffer(0, a);
  h.SetBuffer(1, b);
  h.SetBuffer(2, std::vector<float>(12 * n, -1));
  h.SetBuffer(3, std::vector<uint32_t>(4 * n, 0));
  ASSERT_TRUE(Runs(h, {n}, {n}));
  const std::vector<float> out = h.Read<float>(2);
  const std::vector<uint32_t> bits = h.Read<uint32_t>(3);
  for (uint32_t i = 0; i < n; ++i) {
    for (uint32_t c = 0; c < 4; ++c) {
      const uint32_t j = 4 * i + c;
      const float x = b[j] - 2.0f;
      EXPECT_EQ(out[12 * i + c], static_cast<float>(a[j])) << j;
      EXPECT_EQ(out[12 * i + 4 + c], x > 0 ? x : 0.5f * x) << j;
      EXPECT_EQ(out[12 * i + 8 + c],
                (b[j] > 1.0f ? 1.0f : 0.0f) + (a[j] == 2 ? 1.0f : 0.0f))
          << j;
      uint32_t expected_bits;
      std::memcpy(&expected_bits, &b[j], 4);
      EXPECT_EQ(bits[j], expected_bits) << j;
    }
  }
}

// Braced lists shorter than their vector in every declarator of a
// declaration (`float4 a = {0.f}, b = {1.f};`), in an array's elements and
// with a template's vector type: the elements left out are zero.
TEST(MetalConstructs, ShortBracedListsInEveryDeclarator) {
  KernelHarness h = Compile(R"(
#include <metal_stdlib>
using namespace metal;
template <typename T4>
T4 pair_sum(float x) { T4 a = {x}, b = {x, 2.f}; return a + b; }
kernel void k(device float4 * out, device half4 * out_h,
              uint i [[thread_position_in_grid]]) {
  float4 acc1 = {0.f}, acc2 = {1.f};
  float4 rows[2] = {{3.f}, {4.f, 5.f}};
  out[i] = acc1 + acc2 + rows[0] + rows[1] + pair_sum<float4>(i);
  out_h[i] = pair_sum<half4>(1.5f);
}
)",
                            "k");
  constexpr uint32_t n = 4;
  h.SetBuffer(0, std::vector<float>(4 * n, -1));
  h.SetBuffer(1, std::vector<uint16_t>(4 * n, 0));
  ASSERT_TRUE(Runs(h, {n}, {n}));
  const std::vector<float> out = h.Read<float>(0);
  const std::vector<uint16_t> out_h = h.Read<uint16_t>(1);
  for (uint32_t i = 0; i < n; ++i) {
    const float expected[4] = {1 + 3 + 4 + 2.0f * i, 5 + 2, 0, 0};
    const float expected_h[4] = {3, 2, 0, 0};
    for (int c = 0; c < 4; ++c) {
      EXPECT_EQ(out[4 * i + c], expected[c]) << i << " " << c;
      EXPECT_EQ(isa::HalfBitsToFloat(out_h[4 * i + c]), expected_h[c]);
    }
  }
}

// What llama.cpp takes from Metal's headers and its own macros: MAXHALF,
// `#pragma unroll (MIN(...))` with the file's own MIN (the pragma's
// argument is expanded), make_filled_simdgroup_matrix<T, 8> without Rows.
TEST(MetalConstructs, LimitMacrosPragmaArgumentsAndFilledSimdgroupMatrices) {
  KernelHarness h = Compile(R"(
#include <metal_stdlib>
using namespace metal;
#define MIN(x, y) ((x) < (y) ? (x) : (y))
#define N 8
kernel void k(device float * out, uint i [[thread_index_in_simdgroup]]) {
  threadgroup float tile[64];
  simdgroup_float8x8 m = make_filled_simdgroup_matrix<float, 8>(2.5f);
  simdgroup_store(m, tile, 8);
  simdgroup_barrier(mem_flags::mem_threadgroup);
  float s = 0;
  #pragma unroll (MIN(N/2, 4*N))
  for (short j = 0; j < N; ++j) s += tile[(i + j) % 64];
  out[i] = s + (float) MAXHALF;
}
)",
                            "k");
  h.SetBuffer(0, std::vector<float>(32, 0));
  ASSERT_TRUE(Runs(h, {32}, {32}));
  const std::vector<float> out = h.Read<float>(0);
  for (uint32_t i = 0; i < 32; ++i) EXPECT_EQ(out[i], 8 * 2.5f + 65504.0f);
}

// Metal 4's tensor operations (MLX's _nax kernels) are not modelled: one
// error at the #include that names the feature, not a cascade.
TEST(MetalConstructs, UnsupportedFeatureIsOneErrorNamingIt) {
  const msl::FrontendResult r = msl::CompileMsl(
      "#include <metal_stdlib>\n"
      "#include <MetalPerformancePrimitives/MetalPerformancePrimitives.h>\n"
      "using namespace mpp::tensor_ops;\n"
      "kernel void k(device float* a) { matmul2d<> op; a[0] = op.x; }\n",
      "nax.metal", {});
  ASSERT_EQ(r.errors.size(), 1u) << isa::FormatDiagnostics(r.errors);
  const std::string text = r.errors[0].ToString();
  EXPECT_NE(text.find("nax.metal:2:10: error: "), std::string::npos) << text;
  EXPECT_NE(text.find("Metal 4 tensor operations"), std::string::npos) << text;
}

// Attributes on a helper's parameters (MLX's GEMV kernels repeat their
// kernel's [[buffer(n)]]s on a static member function) and on fields are
// ignored, as Metal ignores them.
TEST(MetalConstructs, AttributesOnHelperParametersAreIgnored) {
  KernelHarness h = Compile(R"(
#include <metal_stdlib>
using namespace metal;
struct Args { uint n [[id(0)]]; };
struct Helper {
  static METAL_FUNC void run(const device float* in [[buffer(0)]],
                             device float* out [[buffer(1)]],
                             uint i [[thread_position_in_grid]]) {
    out[i] = 2.0f * in[i];
  }
};
void free_helper(device float* out [[buffer(1)]], uint i) { out[i] += 1.0f; }
kernel void k(const device float* in [[buffer(0)]], device float* out [[buffer(1)]],
              constant Args& args [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  if (i >= args.n) return;
  Helper::run(in, out, i);
  free_helper(out, i);
}
)",
                            "k");
  h.SetBuffer(0, std::vector<float>{1, 2, 3, 4});
  h.SetBuffer(1, std::vector<float>(4, 0.0f));
  h.SetBytes(2, uint32_t{3});
  ASSERT_TRUE(Runs(h, {4}, {4}));
  EXPECT_EQ(h.Read<float>(1), (std::vector<float>{3, 5, 7, 0}));
}

// A constexpr static member table read through `constant T*` (MLX's
// Winograd transforms), and Apple's internal _disjunction (MLX's atomics).
TEST(MetalConstructs, StaticMemberTablesAndInternalTraits) {
  KernelHarness h = Compile(R"(
#include <metal_stdlib>
using namespace metal;
template <int R>
struct Transforms {
  static constexpr constant float table[R][R] = {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}};
};
template <typename T>
constexpr constant bool is_float_like = _disjunction<is_same<T, float>, is_same<T, half>>::value;
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  constant float* t = &Transforms<3>::table[0][0];
  out[i] = t[i] * (is_float_like<half> ? 2.0f : 1.0f) +
           (conjunction_v<is_same<int, int>, negation<is_same<int, uint>>> ? 0.5f : 0.0f);
}
)",
                            "k");
  h.SetBuffer(0, std::vector<float>(9, 0.0f));
  ASSERT_TRUE(Runs(h, {9}, {9}));
  const std::vector<float> out = h.Read<float>(0);
  for (int i = 0; i < 9; ++i) EXPECT_EQ(out[i], 2.0f * (i + 1) + 0.5f) << i;
}

// A buffer the kernel never reads need not be bound (Metal's inactive
// arguments; MLX leaves the buffers of arguments its function constants
// switch off unbound); one it reads still must be.
TEST(MetalConstructs, InactiveBuffersNeedNoBinding) {
  // With its index, and alone: then `bias` takes the lowest free one (1).
  for (const char* bias_attribute :
       {"[[buffer(1), function_constant(has_bias)]]",
        "[[function_constant(has_bias)]]"}) {
    SCOPED_TRACE(bias_attribute);
    const std::string source = std::string(R"(
#include <metal_stdlib>
using namespace metal;
constant bool has_bias [[function_constant(0)]];
kernel void k(device float* out [[buffer(0)]],
              const device float* bias )") +
                               bias_attribute + R"(,
              const device float* unused [[buffer(2)]],
              uint i [[thread_position_in_grid]]) {
  out[i] = float(i) + (has_bias ? bias[i] : 0.0f);
}
)";
    msl::CompileOptions off;
    off.function_constants.push_back({"has_bias", "false"});
    KernelHarness h = Compile(source, "k", off);
    h.SetBuffer(0, std::vector<float>(4, -1.0f));
    ASSERT_TRUE(Runs(h, {4}, {4}));
    EXPECT_EQ(h.Read<float>(0), (std::vector<float>{0, 1, 2, 3}));
    msl::CompileOptions on;
    on.function_constants.push_back({"has_bias", "true"});
    KernelHarness unbound = Compile(source, "k", on);
    unbound.SetBuffer(0, std::vector<float>(4, -1.0f));
    EXPECT_FALSE(Runs(unbound, {4}, {4}));  // bias is read and not bound
    KernelHarness bound = Compile(source, "k", on);
    bound.SetBuffer(0, std::vector<float>(4, -1.0f));
    bound.SetBuffer(1, std::vector<float>{10, 20, 30, 40});
    ASSERT_TRUE(Runs(bound, {4}, {4}));
    EXPECT_EQ(bound.Read<float>(0), (std::vector<float>{10, 21, 32, 43}));
  }
}

// Apple's stdlib internals that real code names: _numeric_limits_impl and
// __is_valid_simdgroup_type (in the enable_if of a user's own simd
// reduction).
TEST(MetalConstructs, AppleStdlibInternals) {
  KernelHarness h = Compile(R"(
#include <metal_stdlib>
using namespace metal;
template <typename T, typename = enable_if_t<__is_valid_simdgroup_type<T>::value>>
T lane_sum(T x) { return simd_sum(x); }
static_assert(__is_valid_simdgroup_type<half4>::value, "vectors");
static_assert(!__is_valid_simdgroup_type<bool>::value, "not bool");
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  out[i] = lane_sum(float(i)) + float(_numeric_limits_impl<half>::max());
}
)",
                            "k");
  h.SetBuffer(0, std::vector<float>(32));
  ASSERT_TRUE(Runs(h, {32}, {32}));
  EXPECT_EQ(h.Read<float>(0), std::vector<float>(32, 496.0f + 65504.0f));
}

// Overloads on `device` and `constant` alone (free functions, templates,
// members): one function here, as both are device memory; a redefinition
// that is not one stays an error.
TEST(MetalConstructs, DeviceAndConstantOverloadsAreOneFunction) {
  KernelHarness h = Compile(R"(
#include <metal_stdlib>
using namespace metal;
float load(device const float* p, int i) { return p[i]; }
float load(constant float* p, int i) { return p[i]; }
template <typename T> T twice(device const T* p, int i) { return 2 * p[i]; }
template <typename T> T twice(constant T* p, int i) { return 2 * p[i]; }
struct reader {
  float get(device const float* p) const { return p[0]; }
  float get(constant float* p) const { return p[0]; }
};
kernel void k(device const float* a [[buffer(0)]], constant float* b [[buffer(1)]],
              device float* out [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  reader r;
  out[i] = load(a, i) + load(b, i) + twice(a, i) + twice(b, i) + r.get(a) + 10 * r.get(b);
}
)",
                            "k");
  h.SetBuffer(0, std::vector<float>{1, 2, 3, 4});
  h.SetBuffer(1, std::vector<float>{10, 20, 30, 40});
  h.SetBuffer(2, std::vector<float>(4, 0));
  ASSERT_TRUE(Runs(h, {4}, {4}));
  std::vector<float> want(4);
  for (int i = 0; i < 4; ++i)
    want[i] = 3 * (i + 1) + 3 * 10 * (i + 1) + 1 + 100;
  EXPECT_EQ(h.Read<float>(2), want);
  KernelHarness twice = Compile(R"(
int f(int x) { return x; }
int f(int x) { return x + 1; }
kernel void k2(device int* out [[buffer(0)]]) { out[0] = f(1); }
)",
                                "k2");
  ASSERT_FALSE(twice.status().ok());
  EXPECT_NE(twice.status().error().message.find("redefinition of 'f'"),
            std::string::npos)
      << twice.status().error().message;
}

// `constant char*` spelled out is `constant T*` with T = char: explicit
// instantiations match their template, casts and kernels' buffers are
// device memory's; where a string literal may go (a parameter, even in a
// file of literals), it takes one.
TEST(MetalConstructs, ConstantCharPointersAsTemplatesAndLiteralsNeedThem) {
  for (const bool literals : {false, true}) {
    SCOPED_TRACE(literals ? "with string literals" : "without");
    const std::string tag = literals ? "tag.length(\"four\")" : "6";
    KernelHarness h = Compile(R"(
#include <metal_stdlib>
using namespace metal;
struct tag_t {
  int n;
  constexpr tag_t(constant char*, int k) constant : n(k) {}
  int length(constant char* s) const constant { int i = 0; while (s[i]) ++i; return i + n; }
};
)" + std::string(literals ? "constant tag_t tag(\"mlx\", 2);\n" : "") +
                                  R"(
template <typename T> T first(constant T* p, int i) { return p[i]; }
template char first<char>(constant char* p, int i);
template <typename T>
kernel void copy_bytes(constant T* src [[buffer(0)]], device int* out [[buffer(1)]],
                       uint i [[thread_position_in_grid]]) {
  constant char* bytes = (constant char*)src;
  out[i] = first(bytes, int(i)) + first<char>((constant char*)(src + 1), 0) + )" +
                                  tag + R"(;
}
template [[host_name("copy_char")]] kernel void copy_bytes<char>(constant char* src, device int* out, uint i);
)",
                              "copy_char");
    h.SetBuffer(0, std::vector<int8_t>{10, 20, 30, 40, 50, 60, 70, 80});
    h.SetBuffer(1, std::vector<int32_t>(4, 0));
    ASSERT_TRUE(Runs(h, {4}, {4}));
    // bytes[i] + src[1] + strlen("four") + 2.
    EXPECT_EQ(h.Read<int32_t>(1), (std::vector<int32_t>{36, 46, 56, 66}));
  }
}

// Casts that convert vectors, many to a statement of a template (llama.cpp's
// flash-attention `dot((float4) mk, (float4) sq4[i])`, its unary ops' `(T)
// (x * x)`, `s2_t(sm2[j])`): clang reports one such cast per statement of an
// instantiation, and every one of them still converts by value; a cast of
// a comparison in the same template still makes each true 1.
TEST(MetalConstructs, ManyVectorCastsInOneTemplateStatement) {
  KernelHarness h = Compile(R"(
#include <metal_stdlib>
using namespace metal;
template <typename T, typename T2>
kernel void k1(device float4* out [[buffer(0)]], device const T* x [[buffer(1)]],
               ushort i [[thread_position_in_grid]]) {
  const float s = dot((float4) x[0], float4(1)) + dot((float4) x[1], float4(1)) +
                  dot((float4) x[2], float4(1)) + dot((float4) x[3], float4(1)) +
                  dot((float4) x[4], float4(1));
  const float2 t = (float2) T2(x[0].xy) + float2(T2(x[1].zw));
  out[i] = (float4) (x[i] * x[i]) + s + t.x + t.y + (float4)(x[i] > T(2));
}
template [[host_name("kk")]] kernel void k1<half4, half2>(device float4*, device const half4*, ushort);
)",
                            "kk");
  std::vector<float> in(20);
  for (int i = 0; i < 20; ++i) in[i] = 0.5f * i;  // exact in half
  std::vector<uint16_t> bits(20);
  for (int i = 0; i < 20; ++i) bits[i] = isa::FloatToHalfBits(in[i]);
  h.SetBuffer(1, bits);
  h.SetBuffer(0, std::vector<float>(16, 0.0f));
  ASSERT_TRUE(Runs(h, {4}, {4}));
  float sum = 0;
  for (int i = 0; i < 20; ++i) sum += in[i];
  const float t = in[0] + in[6] + in[1] + in[7];
  std::vector<float> want(16);
  for (int i = 0; i < 16; ++i) {
    want[i] = in[i] * in[i] + sum + t + (in[i] > 2 ? 1.0f : 0.0f);
  }
  EXPECT_EQ(h.Read<float>(0), want);
}

// bfloat as llama.cpp's bf16 kernels use it: matrices of bfloat (its
// `typedef matrix<bfloat, 4, 4> bfloat4x4`), an integer splat into a
// bfloat4, casts between bfloat4 and the other vectors directly and
// through a template's type, conditionals between a bfloat and an integer
// (a bfloat) or a float (a float), bfloat times vectors, and a bfloat
// matrix converted to a float one.
TEST(MetalConstructs, BfloatMatricesSplatsCastsAndConditionals) {
  KernelHarness h = Compile(R"(
#include <metal_stdlib>
using namespace metal;
typedef matrix<bfloat, 2, 4> bfloat2x4;
template <typename type4>
type4 load4(device const bfloat4* p) { return (type4)(*p); }
template <typename T4, typename T>
T4 widen(T x0, T x1, T x2, T x3) { return (T4) float4(x0, x1, x2, x3); }
kernel void k(device float* out [[buffer(0)]], device const bfloat4* in [[buffer(1)]],
              threadgroup bfloat4* tg [[threadgroup(0)]], uint i [[thread_position_in_grid]]) {
  tg[i] = 0;
  bfloat4 z = 0;
  bfloat2x4 m(in[0], in[1]);
  half4 h = load4<half4>(in);
  float4 f = (float4) in[1];
  bfloat4 w = widen<bfloat4>(1.5f, 2.5f, 3.5f, 4.5f);
  const bfloat b = in[0][i];
  const bfloat c = i < 2 ? b : 0;
  float2x4 fm = float2x4(m);
  const float x = i % 2 ? b : f[i];  // bfloat with float: float
  const float4 v = b * float4(1, 2, 3, 4) + float4(half4(2) * b);
  out[i] = float(z[i]) + float(tg[i][i]) + float(m[1][i]) + float(h[i]) + f[i] +
           float(w[i]) + float(c) + 10 * fm[0][i] + 100 * (x + v[i]);
}
)",
                            "k");
  // in[0] = {1, 2, 3, 4}, in[1] = {-1, 0.5, 8, 16} as bfloat bits.
  h.SetBuffer(1, std::vector<uint16_t>{0x3F80, 0x4000, 0x4040, 0x4080, 0xBF80,
                                       0x3F00, 0x4100, 0x4180});
  h.SetBuffer(0, std::vector<float>(4, 0.0f));
  ASSERT_TRUE(h.SetThreadgroupMemoryLength(32, 0).ok());
  ASSERT_TRUE(Runs(h, {4}, {4}));
  const float in0[4] = {1, 2, 3, 4}, in1[4] = {-1, 0.5f, 8, 16};
  const float w[4] = {1.5f, 2.5f, 3.5f, 4.5f};
  std::vector<float> want(4);
  for (int i = 0; i < 4; ++i) {
    const float x = i % 2 ? in0[i] : in1[i];
    want[i] = in1[i] + in0[i] + in1[i] + w[i] + (i < 2 ? in0[i] : 0) +
              10 * in0[i] + 100 * (x + in0[i] * (i + 1) + 2 * in0[i]);
  }
  EXPECT_EQ(h.Read<float>(0), want);
}

// vec<T, N>(x) converts element by element (MLX's gemv widens half4 to
// float4 so), splats a scalar and concatenates, as MSL's vector
// constructors do; clang alone would bit-cast the vector.
TEST(MetalConstructs, VecConstructorsConvert) {
  KernelHarness h = Compile(R"(
#include <metal_stdlib>
using namespace metal;
template <typename T, typename U>
vec<T, 4> widen(vec<U, 4> x) { return vec<T, 4>(x); }
kernel void k(device float4* out [[buffer(0)]], device const half4* in [[buffer(1)]],
              uint i [[thread_position_in_grid]]) {
  out[i] = widen<float, half>(in[i]) + metal::vec<float, 4>(0.5f) +
           vec<float, 4>(float2(10, 20), 30, 40);
}
)",
                            "k");
  // 1.5, -2, 0.25, 3 as half bits.
  h.SetBuffer(1, std::vector<uint16_t>{0x3E00, 0xC000, 0x3400, 0x4200});
  h.SetBuffer(0, std::vector<float>(4, 0.0f));
  ASSERT_TRUE(Runs(h, {1}, {1}));
  EXPECT_EQ(h.Read<float>(0),
            (std::vector<float>{1.5f + 0.5f + 10, -2 + 0.5f + 20,
                                0.25f + 0.5f + 30, 3 + 0.5f + 40}));
}

// Patterns of MLX's reductions and scans: `short2 offset(a, b)` (direct
// initialization of a vector), a `thread` constructor of a partial
// specialization that builds a member, and `c ? input[i] : init` between a
// device and a thread value of one class.
TEST(MetalConstructs, ReductionIdioms) {
  KernelHarness h = Compile(R"(
#include <metal_stdlib>
using namespace metal;
struct cplx { float re, im; cplx(float r, float i) thread : re(r), im(i) {} cplx() = default; };
int add_one(thread const short& x) { return x + 1; }
template <int D, bool G = true>
struct Looper {
  int dim;
  Looper<D - 1, G> inner;
  Looper(int d) thread : dim(d), inner(d - 1) {}
  int depth() thread { return 1 + inner.depth(); }
};
template <bool G>
struct Looper<1, G> {
  int dim;
  Looper(int d) thread : dim(d) {}
  int depth() thread { return 1; }
};
kernel void k(const device cplx* in [[buffer(0)]], device float* out [[buffer(1)]],
              constant uint& n [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  short2 offset(i * 2, i + 1);
  const int shift = add_one(int(i) * 2);  // a temporary bound to thread const&
  Looper<3> looper(3);
  cplx init(100.0f, 0.0f);
  cplx v = (i < n) ? in[i] : init;
  out[i] = v.re + v.im + float(offset.x) + 10.0f * float(offset.y) +
           1000.0f * float(looper.depth()) + 10000.0f * float(shift);
}
)",
                            "k");
  std::vector<float> in = {1, 2, 3, 4, 5, 6};  // three (re, im) pairs
  h.SetBuffer(0, in);
  h.SetBuffer(1, std::vector<float>(4, 0.0f));
  h.SetBytes(2, uint32_t{3});
  ASSERT_TRUE(Runs(h, {4}, {4}));
  const std::vector<float> out = h.Read<float>(1);
  for (int i = 0; i < 4; ++i) {
    const float v = i < 3 ? in[2 * i] + in[2 * i + 1] : 100.0f;
    EXPECT_EQ(out[i],
              v + 2 * i + 10 * (i + 1) + 3000.0f + 10000.0f * (2 * i + 1))
        << i;
  }
}

// A compute kernel on textures: one error that names the feature, at the
// first texture parameter, not a cascade from its body.
TEST(MetalConstructs, TexturesAreOneErrorNamingThem) {
  const msl::FrontendResult r = msl::CompileMsl(R"(
#include <metal_stdlib>
using namespace metal;
kernel void blur(texture2d<float, access::read> in [[texture(0)]],
                 texture2d<float, access::write> out [[texture(1)]],
                 sampler s [[sampler(0)]],
                 uint2 gid [[thread_position_in_grid]]) {
  if (gid.x < in.get_width()) out.write(in.read(gid) * 0.5f, gid);
}
)",
                                                "tex.metal", {});
  ASSERT_EQ(r.errors.size(), 1u) << isa::FormatDiagnostics(r.errors);
  const std::string text = r.errors[0].ToString();
  EXPECT_NE(text.find("tex.metal:4:49: error: unsupported: textures and "
                      "samplers (parameter 'in' of kernel 'blur'"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace mtlemu
