// MLX's Metal kernels (github.com/ml-explore/mlx, mlx/backend/metal/kernels)
// through mtlemu: every .metal file compiles, and kernels run with the
// dispatch MLX's host code uses (mlx/backend/metal/*.cpp: kernel names,
// buffer indices, grid and threadgroup sizes), each checked against a C++
// reference written from what the operation means.
//
// MLX's code is not part of this project: the tests read a snapshot from
// the folder that MTLEMU_MLX_DIR names (the environment variable, else the
// CMake option of that name), and skip, saying so, without one. `bash
// scripts/realworld.sh DIR` runs them.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "compiler/msl_compiler.h"
#include "isa/numeric.h"
#include "tests/support/kernel_harness.h"

namespace mtlemu {
namespace {

using testing::KernelHarness;
using testing::Runs;
using testing::RunsThreadgroups;

std::optional<std::filesystem::path> MlxDir() {
  const char* env = std::getenv("MTLEMU_MLX_DIR");
  std::string dir = env != nullptr ? env : MTLEMU_MLX_DIR_DEFAULT;
  if (dir.empty()) return std::nullopt;
  return std::filesystem::path(dir);
}

std::filesystem::path KernelsDir() {
  return *MlxDir() / "mlx" / "backend" / "metal" / "kernels";
}

#define REQUIRE_MLX()                                                     \
  do {                                                                    \
    if (!MlxDir()) {                                                      \
      GTEST_SKIP() << "MTLEMU_MLX_DIR is not set: give it a snapshot of " \
                      "github.com/ml-explore/mlx to run MLX's kernels";   \
    }                                                                     \
    if (!std::filesystem::is_directory(KernelsDir())) {                   \
      FAIL() << "MTLEMU_MLX_DIR=" << MlxDir()->string()                   \
             << " has no mlx/backend/metal/kernels folder";               \
    }                                                                     \
  } while (0)

std::string ReadText(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

msl::CompileOptions MlxOptions() {
  msl::CompileOptions options;
  options.include_directories.push_back(MlxDir()->string());
  return options;
}

// One kernel of an MLX file, compiled as MLX's build does (-I the root),
// with function constants as MLX's get_kernel(name, hash_name, func_consts)
// specializes it: "NAME" or "INDEX" -> the value.
KernelHarness MlxKernel(
    const std::string& file, const std::string& kernel,
    const std::vector<std::pair<std::string, std::string>>& constants = {}) {
  const std::filesystem::path path = KernelsDir() / file;
  msl::CompileOptions options = MlxOptions();
  options.function_constants = constants;
  return KernelHarness(
      compiler::CompileMsl(ReadText(path), path.string(), options, {kernel}),
      kernel);
}

// --- every file compiles
// ------------------------------------------------------

TEST(MlxFiles, EveryMetalFileCompiles) {
  REQUIRE_MLX();
  std::vector<std::filesystem::path> files;
  for (const auto& e :
       std::filesystem::recursive_directory_iterator(KernelsDir())) {
    if (e.path().extension() == ".metal") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  ASSERT_FALSE(files.empty());
  int compiled = 0, refused = 0;
  for (const std::filesystem::path& path : files) {
    const std::string name =
        std::filesystem::relative(path, KernelsDir()).string();
    const auto start = std::chrono::steady_clock::now();
    Result<isa::Module> module =
        compiler::CompileMsl(ReadText(path), path.string(), MlxOptions());
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (name.find("_nax") != std::string::npos) {
      // Metal 4 tensor operations: one error naming the feature.
      ASSERT_FALSE(module.ok()) << name;
      const std::string& message = module.error().message;
      EXPECT_NE(message.find("not supported by mtlemu"), std::string::npos)
          << name << ": " << message;
      size_t errors = 0;
      for (size_t at = message.find("error:"); at != std::string::npos;
           at = message.find("error:", at + 1)) {
        ++errors;
      }
      EXPECT_EQ(errors, 1u) << name << ": " << message;
      ++refused;
      std::printf("%-50s refused: Metal 4 tensor operations (%.2f s)\n",
                  name.c_str(), seconds);
      continue;
    }
    EXPECT_TRUE(module.ok()) << name << ":\n"
                             << module.error().message.substr(0, 4000);
    if (module.ok()) {
      ++compiled;
      std::printf("%-50s %4zu kernels  %.2f s\n", name.c_str(),
                  module.value().kernels.size(), seconds);
    }
  }
  std::printf("%d of %zu files compiled, %d refused with one error\n", compiled,
              files.size(), refused);
}

// --- kernels with MLX's dispatch ---------------------------------------------

// arange.metal: Arange::eval_gpu (primitives.cpp): start at buffer 0, step
// at 1, out at 2, one thread per element.
TEST(MlxKernels, Arange) {
  REQUIRE_MLX();
  const uint32_t n = 1000;
  {
    KernelHarness h = MlxKernel("arange.metal", "arangefloat32");
    h.SetBytes(0, -2.5f);
    h.SetBytes(1, 0.25f);
    h.SetBuffer(2, std::vector<float>(n, -1.0f));
    ASSERT_TRUE(Runs(h, {n}, {1024}));
    const std::vector<float> out = h.Read<float>(2);
    for (uint32_t i = 0; i < n; ++i) {
      EXPECT_EQ(out[i], -2.5f + static_cast<float>(i) * 0.25f) << i;
    }
  }
  {
    KernelHarness h = MlxKernel("arange.metal", "arangeint32");
    h.SetBytes(0, int32_t{7});
    h.SetBytes(1, int32_t{-3});
    h.SetBuffer(2, std::vector<int32_t>(n, 0));
    ASSERT_TRUE(Runs(h, {n}, {1024}));
    const std::vector<int32_t> out = h.Read<int32_t>(2);
    for (uint32_t i = 0; i < n; ++i) {
      EXPECT_EQ(out[i], 7 - 3 * static_cast<int32_t>(i)) << i;
    }
  }
}

std::vector<float> Ramp(size_t n, float scale, float offset) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    v[i] = offset + scale * static_cast<float>((i * 37) % 101);
  }
  return v;
}

// unary.metal, contiguous: unary_op_gpu_inplace (unary.cpp) with one element
// per thread ("v_"): in 0, out 1, the size as an int at 2.
TEST(MlxKernels, UnaryContiguous) {
  REQUIRE_MLX();
  const uint32_t n = 777;
  const std::vector<float> in = Ramp(n, 0.05f, -2.5f);
  struct Case {
    const char* op;
    double (*reference)(double);
    double tolerance;
  };
  for (const Case& c :
       {Case{"Abs", [](double x) { return std::fabs(x); }, 0},
        Case{"Exp", [](double x) { return std::exp(x); }, 1e-6},
        Case{"Sigmoid", [](double x) { return 1 / (1 + std::exp(-x)); },
             1e-6}}) {
    const std::string kernel = std::string("v_") + c.op + "float32float32";
    KernelHarness h = MlxKernel("unary.metal", kernel);
    h.SetBuffer(0, in);
    h.SetBuffer(1, std::vector<float>(n, -1.0f));
    h.SetBytes(2, static_cast<int32_t>(n));
    ASSERT_TRUE(Runs(h, {n}, {1024})) << kernel;
    const std::vector<float> out = h.Read<float>(1);
    for (uint32_t i = 0; i < n; ++i) {
      const double expected = c.reference(in[i]);
      EXPECT_NEAR(out[i], expected, c.tolerance * std::fabs(expected) + 1e-7)
          << kernel << " at " << i;
    }
  }
}

// unary.metal, strided ("gn1_"): a transposed 2-D view; shape at 2, strides
// (int64) at 3, ndim at 4; grid (dim0, dim1, rest).
TEST(MlxKernels, UnaryStrided) {
  REQUIRE_MLX();
  const int rows = 37, cols = 53;  // the view is cols x rows of a rows x cols
  const std::vector<float> in = Ramp(rows * cols, -0.5f, 10.0f);
  KernelHarness h = MlxKernel("unary.metal", "gn1_Negativefloat32float32");
  h.SetBuffer(0, in);
  h.SetBuffer(1, std::vector<float>(rows * cols, 0.0f));
  const std::vector<int32_t> shape = {cols, rows};
  const std::vector<int64_t> strides = {1, cols};
  h.SetVectorBytes(2, shape);
  h.SetVectorBytes(3, strides);
  h.SetBuffer(4, std::vector<int32_t>{2});
  ASSERT_TRUE(
      Runs(h, {static_cast<uint32_t>(rows), static_cast<uint32_t>(cols), 1},
           {32, 32, 1}));
  const std::vector<float> out = h.Read<float>(1);
  for (int r = 0; r < cols; ++r) {
    for (int c = 0; c < rows; ++c) {
      EXPECT_EQ(out[r * rows + c], -in[c * cols + r]) << r << "," << c;
    }
  }
}

// binary.metal: binary_op_gpu_inplace (binary.cpp). "vv_" (both
// contiguous), "sv_" (a scalar and a vector), and "g2_" with broadcasting
// (a row vector against a matrix): a 0, b 1, out 2, then the size or the
// strides.
TEST(MlxKernels, BinaryContiguousScalarAndBroadcast) {
  REQUIRE_MLX();
  const uint32_t n = 1000;
  const std::vector<float> a = Ramp(n, 0.5f, -3.0f), b = Ramp(n, -0.25f, 1.0f);
  {
    KernelHarness h = MlxKernel("binary.metal", "vv_Addfloat32");
    h.SetBuffer(0, a);
    h.SetBuffer(1, b);
    h.SetBuffer(2, std::vector<float>(n, 0.0f));
    h.SetBytes(3, static_cast<int32_t>(n));
    ASSERT_TRUE(Runs(h, {n}, {1024}));
    const std::vector<float> out = h.Read<float>(2);
    for (uint32_t i = 0; i < n; ++i) EXPECT_EQ(out[i], a[i] + b[i]) << i;
  }
  {
    KernelHarness h = MlxKernel("binary.metal", "sv_Multiplyfloat32");
    h.SetBuffer(0, std::vector<float>{-1.5f});
    h.SetBuffer(1, b);
    h.SetBuffer(2, std::vector<float>(n, 0.0f));
    h.SetBytes(3, static_cast<int32_t>(n));
    ASSERT_TRUE(Runs(h, {n}, {1024}));
    const std::vector<float> out = h.Read<float>(2);
    for (uint32_t i = 0; i < n; ++i) EXPECT_EQ(out[i], -1.5f * b[i]) << i;
  }
  {
    // out[r][c] = m[r][c] - row[c]: row broadcast along r (stride 0).
    const int rows = 19, cols = 45;
    const std::vector<float> m = Ramp(rows * cols, 0.125f, 0.0f);
    const std::vector<float> row = Ramp(cols, 1.0f, -7.0f);
    KernelHarness h = MlxKernel("binary.metal", "g2_Subtractfloat32");
    h.SetBuffer(0, m);
    h.SetBuffer(1, row);
    h.SetBuffer(2, std::vector<float>(rows * cols, 0.0f));
    const std::vector<int64_t> strides_a = {cols, 1}, strides_b = {0, 1};
    h.SetVectorBytes(3, strides_a);
    h.SetVectorBytes(4, strides_b);
    ASSERT_TRUE(
        Runs(h, {static_cast<uint32_t>(cols), static_cast<uint32_t>(rows), 1},
             {32, 16, 1}));
    const std::vector<float> out = h.Read<float>(2);
    for (int r = 0; r < rows; ++r) {
      for (int c = 0; c < cols; ++c) {
        EXPECT_EQ(out[r * cols + c], m[r * cols + c] - row[c]) << r << "," << c;
      }
    }
  }
}

// copy.metal: copy_gpu_inplace (copy.cpp), general copy of a 3-D view
// ("g3_copy", float32 to float16): in 0, out 1, the input's strides at 3;
// grid (dim0, dim1, rest). The view permutes a 4 x 5 x 6 array's axes to
// 6 x 4 x 5; values are multiples of 1/4, exact in half.
TEST(MlxKernels, CopyPermutedViewToHalf) {
  REQUIRE_MLX();
  const int a = 4, b = 5, c = 6;
  std::vector<float> in(a * b * c);
  for (size_t i = 0; i < in.size(); ++i) {
    in[i] = 0.25f * static_cast<float>(i) - 20.0f;
  }
  KernelHarness h = MlxKernel("copy.metal", "g3_copyfloat32float16");
  h.SetBuffer(0, in);
  h.SetBuffer(1, std::vector<uint16_t>(in.size(), 0));
  // out[k][i][j] = in[i][j][k]: out shape (c, a, b), strides into in.
  const std::vector<int64_t> strides = {1, b * c, c};
  h.SetVectorBytes(3, strides);
  ASSERT_TRUE(Runs(h,
                   {static_cast<uint32_t>(b), static_cast<uint32_t>(a),
                    static_cast<uint32_t>(c)},
                   {8, 4, 2}));
  const std::vector<uint16_t> out = h.Read<uint16_t>(1);
  for (int k = 0; k < c; ++k) {
    for (int i = 0; i < a; ++i) {
      for (int j = 0; j < b; ++j) {
        EXPECT_EQ(isa::HalfBitsToFloat(out[(k * a + i) * b + j]),
                  in[(i * b + j) * c + k])
            << k << "," << i << "," << j;
      }
    }
  }
}

// softmax.metal: Softmax::eval_gpu (softmax.cpp), one threadgroup per row
// ("block_softmax_"): in 0, out 1, axis_size at 2; threadgroup 32 *
// ceil(ceil(axis / 4) / 32) threads.
TEST(MlxKernels, SoftmaxRows) {
  REQUIRE_MLX();
  const int rows = 7, axis = 301;
  std::vector<float> in(rows * axis);
  for (int i = 0; i < rows * axis; ++i) {
    in[i] = std::sin(0.37f * static_cast<float>(i)) * 6.0f;
  }
  KernelHarness h = MlxKernel("softmax.metal", "block_softmax_float32");
  h.SetBuffer(0, in);
  h.SetBuffer(1, std::vector<float>(in.size(), -1.0f));
  h.SetBytes(2, int32_t{axis});
  const uint32_t group = 32 * (((axis + 3) / 4 + 31) / 32);
  ASSERT_TRUE(Runs(h, {rows * group}, {group}));
  const std::vector<float> out = h.Read<float>(1);
  for (int r = 0; r < rows; ++r) {
    double max = -1e300, sum = 0;
    for (int i = 0; i < axis; ++i)
      max = std::max(max, double(in[r * axis + i]));
    for (int i = 0; i < axis; ++i) sum += std::exp(in[r * axis + i] - max);
    for (int i = 0; i < axis; ++i) {
      const double expected = std::exp(in[r * axis + i] - max) / sum;
      EXPECT_NEAR(out[r * axis + i], expected, 1e-6 + 1e-5 * expected)
          << r << "," << i;
    }
  }
}

// rms_norm.metal: RMSNorm::eval_gpu (normalization.cpp), "rms" one row per
// threadgroup: x 0, w 1, out 2, eps 3, axis_size 4, w_stride 5.
TEST(MlxKernels, RmsNorm) {
  REQUIRE_MLX();
  const uint32_t rows = 5, axis = 200;
  std::vector<float> x(rows * axis), w(axis);
  for (uint32_t i = 0; i < rows * axis; ++i) {
    x[i] = std::cos(0.11f * static_cast<float>(i)) * (1.0f + i % 3);
  }
  for (uint32_t i = 0; i < axis; ++i) w[i] = 0.5f + 0.01f * i;
  const float eps = 1e-5f;
  KernelHarness h = MlxKernel("rms_norm.metal", "rmsfloat32");
  h.SetBuffer(0, x);
  h.SetBuffer(1, w);
  h.SetBuffer(2, std::vector<float>(x.size(), 0.0f));
  h.SetBytes(3, eps);
  h.SetBytes(4, axis);
  h.SetBytes(5, uint32_t{1});
  const uint32_t group = 32 * (((axis + 3) / 4 + 31) / 32);
  ASSERT_TRUE(Runs(h, {rows * group}, {group}));
  const std::vector<float> out = h.Read<float>(2);
  for (uint32_t r = 0; r < rows; ++r) {
    double ss = 0;
    for (uint32_t i = 0; i < axis; ++i)
      ss += double(x[r * axis + i]) * x[r * axis + i];
    const double scale = 1.0 / std::sqrt(ss / axis + eps);
    for (uint32_t i = 0; i < axis; ++i) {
      const double expected = x[r * axis + i] * scale * w[i];
      EXPECT_NEAR(out[r * axis + i], expected, 1e-5 * (1 + std::fabs(expected)))
          << r << "," << i;
    }
  }
}

// --- more kernels with MLX's dispatch ----------------------------------------

// MLX's get_block_dims (utils.cpp): a threadgroup of up to 2^10 threads,
// handing out one power of two at a time to dim0, dim1, dim2 in turn while
// the dimension still has at least twice the threads it has been given.
MTLSize BlockDims(uint64_t dim0, uint64_t dim1, uint64_t dim2) {
  const uint64_t dims[3] = {dim0, dim1, dim2};
  int pows[3] = {0, 0, 0};
  int sum = 0;
  while (true) {
    const int before = sum;
    for (int d = 0; d < 3; ++d) {
      if (dims[d] >= (uint64_t{1} << (pows[d] + 1))) {
        ++pows[d];
        ++sum;
      }
      if (sum == 10) break;
    }
    if (sum == before || sum == 10) break;
  }
  return {uint64_t{1} << pows[0], uint64_t{1} << pows[1],
          uint64_t{1} << pows[2]};
}

TEST(MlxKernels, BlockDimsAsMlxChoosesThem) {
  const MTLSize a = BlockDims(45, 17, 3);
  EXPECT_EQ(a.width * 1000000 + a.height * 1000 + a.depth, 32016002u);
  const MTLSize b = BlockDims(6, 5, 2);
  EXPECT_EQ(b.width * 1000000 + b.height * 1000 + b.depth, 4004002u);
  const MTLSize c = BlockDims(3, 4, 1);
  EXPECT_EQ(c.width * 1000000 + c.height * 1000 + c.depth, 2004001u);
}

// ternary.metal, contiguous: ternary_op_gpu_inplace (ternary.cpp). All three
// inputs row contiguous and fewer than 2^16 elements: "v_" with one element
// per thread; condition 0 (bool), b 1, c 2, out 3, the size as an int at 4;
// threadgroup min(1024, n). Select copies, so the check is exact.
TEST(MlxKernels, TernarySelectContiguous) {
  REQUIRE_MLX();
  const uint32_t n = 1000;
  std::vector<uint8_t> cond(n);
  for (uint32_t i = 0; i < n; ++i) cond[i] = (i * 7) % 3 == 0;
  const std::vector<float> b = Ramp(n, 0.5f, -3.0f), c = Ramp(n, -0.25f, 9.0f);
  KernelHarness h = MlxKernel("ternary.metal", "v_Selectfloat32");
  h.SetBuffer(0, cond);
  h.SetBuffer(1, b);
  h.SetBuffer(2, c);
  h.SetBuffer(3, std::vector<float>(n, -1.0f));
  h.SetBytes(4, static_cast<int32_t>(n));
  ASSERT_TRUE(Runs(h, {n}, {std::min<uint32_t>(n, 1024)}));
  const std::vector<float> out = h.Read<float>(3);
  for (uint32_t i = 0; i < n; ++i) {
    EXPECT_EQ(out[i], cond[i] ? b[i] : c[i]) << i;
  }
}

// ternary.metal, general: a broadcast condition, a transposed b broadcast
// along the batch and a contiguous c. No two dimensions collapse, so 3-D
// takes "g3_" (strides as int64 at 4, 5, 6, the shape in the grid) and 4-D
// "gn2_" (shape 4, strides 5, 6, 7, ndim 8; two elements per thread along
// dim0); threadgroup get_block_dims(dim0, dim1, rest).
TEST(MlxKernels, TernarySelectGeneralBroadcast) {
  REQUIRE_MLX();
  {
    const int B = 3, R = 17, C = 45;
    // cond: (B, 1, C) broadcast along R; b: (R, C) stored as (C, R), the
    // same for every batch; c: (B, R, C) contiguous.
    std::vector<uint8_t> cond(B * C);
    for (int i = 0; i < B * C; ++i) cond[i] = (i % 5) < 2;
    const std::vector<float> b = Ramp(C * R, 0.75f, -20.0f);
    const std::vector<float> c = Ramp(B * R * C, -0.5f, 4.0f);
    KernelHarness h = MlxKernel("ternary.metal", "g3_Selectfloat32");
    h.SetBuffer(0, cond);
    h.SetBuffer(1, b);
    h.SetBuffer(2, c);
    h.SetBuffer(3, std::vector<float>(B * R * C, -1.0f));
    const std::vector<int64_t> sa = {C, 0, 1}, sb = {0, 1, R},
                               sc = {R * C, C, 1};
    h.SetVectorBytes(4, sa);
    h.SetVectorBytes(5, sb);
    h.SetVectorBytes(6, sc);
    ASSERT_TRUE(Runs(h, {C, R, B}, BlockDims(C, R, B)));
    const std::vector<float> out = h.Read<float>(3);
    for (int z = 0; z < B; ++z) {
      for (int y = 0; y < R; ++y) {
        for (int x = 0; x < C; ++x) {
          const float expected =
              cond[z * C + x] ? b[x * R + y] : c[(z * R + y) * C + x];
          EXPECT_EQ(out[(z * R + y) * C + x], expected)
              << z << "," << y << "," << x;
        }
      }
    }
  }
  {
    const int shape[4] = {2, 3, 4, 37};
    const int total = 2 * 3 * 4 * 37;
    // cond: (2, 1, 4, 37); b: contiguous; c: (3, 37) broadcast along 0, 2.
    std::vector<uint8_t> cond(2 * 4 * 37);
    for (size_t i = 0; i < cond.size(); ++i) cond[i] = (i * 11) % 7 < 3;
    const std::vector<float> b = Ramp(total, 0.125f, 1.0f);
    const std::vector<float> c = Ramp(3 * 37, -2.0f, 50.0f);
    KernelHarness h = MlxKernel("ternary.metal", "gn2_Selectfloat32");
    h.SetBuffer(0, cond);
    h.SetBuffer(1, b);
    h.SetBuffer(2, c);
    h.SetBuffer(3, std::vector<float>(total, -1.0f));
    const std::vector<int32_t> shape_v(shape, shape + 4);
    const std::vector<int64_t> sa = {4 * 37, 0, 37, 1},
                               sb = {3 * 4 * 37, 4 * 37, 37, 1},
                               sc = {0, 37, 0, 1};
    h.SetVectorBytes(4, shape_v);
    h.SetVectorBytes(5, sa);
    h.SetVectorBytes(6, sb);
    h.SetVectorBytes(7, sc);
    h.SetBytes(8, int32_t{4});
    const uint32_t dim0 = (37 + 1) / 2, dim1 = 4, rest = 2 * 3;
    ASSERT_TRUE(Runs(h, {dim0, dim1, rest}, BlockDims(dim0, dim1, rest)));
    const std::vector<float> out = h.Read<float>(3);
    for (int i0 = 0; i0 < 2; ++i0) {
      for (int i1 = 0; i1 < 3; ++i1) {
        for (int i2 = 0; i2 < 4; ++i2) {
          for (int i3 = 0; i3 < 37; ++i3) {
            const int o = ((i0 * 3 + i1) * 4 + i2) * 37 + i3;
            const float expected =
                cond[(i0 * 4 + i2) * 37 + i3] ? b[o] : c[i1 * 37 + i3];
            EXPECT_EQ(out[o], expected)
                << i0 << "," << i1 << "," << i2 << "," << i3;
          }
        }
      }
    }
  }
}

// binary_two.metal: DivMod through binary_op_gpu_inplace (binary.cpp) with
// two outputs: a 0, b 1, quotient 2, remainder 3, the size as an int at 4;
// "vv_" for two contiguous inputs under 2^16 elements, threadgroup
// min(1024, n). Python's semantics: the quotient floors, the remainder
// takes the divisor's sign.
TEST(MlxKernels, BinaryTwoDivMod) {
  REQUIRE_MLX();
  const uint32_t n = 999;
  {
    std::vector<int32_t> a(n), b(n);
    for (uint32_t i = 0; i < n; ++i) {
      a[i] = static_cast<int32_t>((i * 7919) % 2001) - 1000;
      b[i] = static_cast<int32_t>((i * 31) % 41) - 20;
      if (b[i] == 0) b[i] = 7;
    }
    KernelHarness h = MlxKernel("binary_two.metal", "vv_DivModint32");
    h.SetBuffer(0, a);
    h.SetBuffer(1, b);
    h.SetBuffer(2, std::vector<int32_t>(n, 12345));
    h.SetBuffer(3, std::vector<int32_t>(n, 12345));
    h.SetBytes(4, static_cast<int32_t>(n));
    ASSERT_TRUE(Runs(h, {n}, {std::min<uint32_t>(n, 1024)}));
    const std::vector<int32_t> q = h.Read<int32_t>(2), r = h.Read<int32_t>(3);
    for (uint32_t i = 0; i < n; ++i) {
      const int64_t fq = static_cast<int64_t>(
          std::floor(static_cast<double>(a[i]) / static_cast<double>(b[i])));
      EXPECT_EQ(q[i], fq) << a[i] << " // " << b[i];
      EXPECT_EQ(r[i], a[i] - fq * b[i]) << a[i] << " % " << b[i];
    }
  }
  {
    // a = b * (k + f) with f in [0.1, 0.9]: the quotient is never within a
    // few ulp of an integer, so a division that is not correctly rounded
    // (fast math) still floors to k. fmod is exact, so the remainder is
    // checked exactly against fmod, plus b when the signs differ.
    std::vector<float> a(n), b(n);
    for (uint32_t i = 0; i < n; ++i) {
      b[i] = 0.25f * static_cast<float>(static_cast<int>(i % 29) - 14);
      if (b[i] == 0) b[i] = 1.75f;
      const int k = static_cast<int>((i * 13) % 41) - 20;
      const float f = 0.1f + 0.1f * static_cast<float>(i % 9);
      a[i] = b[i] * (static_cast<float>(k) + f);
    }
    KernelHarness h = MlxKernel("binary_two.metal", "vv_DivModfloat32");
    h.SetBuffer(0, a);
    h.SetBuffer(1, b);
    h.SetBuffer(2, std::vector<float>(n, 0.0f));
    h.SetBuffer(3, std::vector<float>(n, 0.0f));
    h.SetBytes(4, static_cast<int32_t>(n));
    ASSERT_TRUE(Runs(h, {n}, {std::min<uint32_t>(n, 1024)}));
    const std::vector<float> q = h.Read<float>(2), r = h.Read<float>(3);
    for (uint32_t i = 0; i < n; ++i) {
      const double fq = std::floor(static_cast<double>(a[i]) / b[i]);
      float fr = std::fmod(a[i], b[i]);
      if (fr != 0 && ((fr < 0) != (b[i] < 0))) fr += b[i];
      EXPECT_EQ(q[i], fq) << a[i] << " // " << b[i];
      EXPECT_EQ(r[i], fr) << a[i] << " % " << b[i];
    }
  }
}

// arg_reduce.metal: ArgReduce::eval_gpu (primitives.cpp) along the last
// axis of a (3, 5, 301) array: the shape and strides without the axis at 2,
// 3 (input) and 4 (output), ndim (size_t) 5, axis stride (int64) 6, axis
// size (size_t) 7; threadgroup ceil(axis / 4) rounded up to 32 threads, grid
// (threadgroup, rows, 1). Ties go to the first index, as NumPy's do.
TEST(MlxKernels, ArgMaxArgMinLastAxis) {
  REQUIRE_MLX();
  const int B = 3, R = 5, axis = 301;
  std::vector<float> in(B * R * axis);
  for (size_t i = 0; i < in.size(); ++i) {
    // Few distinct values: every row has ties for its maximum and minimum.
    in[i] = static_cast<float>(((i * 7919) % 97) % 23) - 11.0f;
  }
  // One row whose extremes sit in the tail that is not a multiple of 4.
  for (int i = 0; i < axis; ++i) in[(1 * R + 2) * axis + i] = 0.5f;
  in[(1 * R + 2) * axis + 299] = 100.0f;
  in[(1 * R + 2) * axis + 300] = -100.0f;
  const uint32_t group = ((axis + 3) / 4 + 31) / 32 * 32;
  for (const char* op : {"argmax_float32", "argmin_float32"}) {
    const bool is_max = std::string(op).rfind("argmax", 0) == 0;
    KernelHarness h = MlxKernel("arg_reduce.metal", op);
    h.SetBuffer(0, in);
    h.SetBuffer(1, std::vector<uint32_t>(B * R, 0xFFFFFFFFu));
    const std::vector<int32_t> shape = {B, R};
    const std::vector<int64_t> in_strides = {R * axis, axis},
                               out_strides = {R, 1};
    h.SetVectorBytes(2, shape);
    h.SetVectorBytes(3, in_strides);
    h.SetVectorBytes(4, out_strides);
    h.SetBytes(5, uint64_t{2});
    h.SetBytes(6, int64_t{1});
    h.SetBytes(7, uint64_t{axis});
    ASSERT_TRUE(Runs(h, {group, B * R, 1}, {group, 1, 1})) << op;
    const std::vector<uint32_t> out = h.Read<uint32_t>(1);
    for (int row = 0; row < B * R; ++row) {
      const float* x = &in[row * axis];
      const ptrdiff_t expected = (is_max ? std::max_element(x, x + axis)
                                         : std::min_element(x, x + axis)) -
                                 x;
      EXPECT_EQ(out[row], static_cast<uint32_t>(expected))
          << op << " row " << row;
    }
  }
}

// logsumexp.metal: LogSumExp::eval_gpu (logsumexp.cpp): in 0, out 1,
// axis_size (int) 2; up to 4096 "block_" with 32 * ceil(ceil(axis / 4) / 32)
// threads per row, above it "looped_" with the pipeline's maximum.
// Tolerance: float sums of fast::exp terms (a few ulp each) then a float
// log: 2e-6 relative to the result's size, with room to spare.
TEST(MlxKernels, LogSumExpRows) {
  REQUIRE_MLX();
  struct Case {
    const char* kernel;
    int rows, axis;
  };
  for (const Case& c : {Case{"block_logsumexp_float32", 6, 301},
                        Case{"looped_logsumexp_float32", 3, 5003}}) {
    std::vector<float> in(c.rows * c.axis);
    for (size_t i = 0; i < in.size(); ++i) {
      in[i] = std::sin(0.37f * static_cast<float>(i)) * 8.0f +
              static_cast<float>(i / c.axis);
    }
    KernelHarness h = MlxKernel("logsumexp.metal", c.kernel);
    ASSERT_TRUE(h.status().ok()) << h.status().error().message;
    h.SetBuffer(0, in);
    h.SetBuffer(1, std::vector<float>(c.rows, -1.0f));
    h.SetBytes(2, int32_t{c.axis});
    const uint32_t group = c.axis <= 4096
                               ? 32 * (((c.axis + 3) / 4 + 31) / 32)
                               : h.pipeline().maxTotalThreadsPerThreadgroup();
    ASSERT_TRUE(Runs(h, {c.rows * group}, {group})) << c.kernel;
    const std::vector<float> out = h.Read<float>(1);
    for (int r = 0; r < c.rows; ++r) {
      double max = -1e300, sum = 0;
      for (int i = 0; i < c.axis; ++i) {
        max = std::max(max, double(in[r * c.axis + i]));
      }
      for (int i = 0; i < c.axis; ++i)
        sum += std::exp(in[r * c.axis + i] - max);
      const double expected = max + std::log(sum);
      EXPECT_NEAR(out[r], expected, 2e-6 * (1 + std::fabs(expected)))
          << c.kernel << " row " << r;
    }
  }
}

// layer_norm.metal: LayerNorm::eval_gpu (normalization.cpp) up to 6656
// elements a row: "layer_norm" + type, x 0, w 1, b 2, out 3, eps (float) 4,
// axis_size 5, w_stride 6, b_stride 7 (uint32; 0 for a scalar weight or
// bias); 32 * ceil(ceil(axis / 8) / 32) threads per row. Tolerance: float
// sums for the mean and variance, rsqrt precise: 1e-5 relative.
void CheckLayerNorm(uint32_t rows, uint32_t axis, bool vector_affine) {
  std::vector<float> x(rows * axis);
  for (uint32_t i = 0; i < x.size(); ++i) {
    x[i] = std::cos(0.13f * static_cast<float>(i)) * (1.0f + i % 3) +
           0.5f * static_cast<float>(i / axis);
  }
  // w and b per element, else scalars (stride 0).
  std::vector<float> w(vector_affine ? axis : 1), b(vector_affine ? axis : 1);
  for (size_t i = 0; i < w.size(); ++i) {
    w[i] = 0.5f + 0.01f * static_cast<float>(i);
    b[i] = -0.25f + 0.002f * static_cast<float>(i);
  }
  const float eps = 1e-5f;
  KernelHarness h = MlxKernel("layer_norm.metal", "layer_normfloat32");
  h.SetBuffer(0, x);
  h.SetBuffer(1, w);
  h.SetBuffer(2, b);
  h.SetBuffer(3, std::vector<float>(x.size(), 0.0f));
  h.SetBytes(4, eps);
  h.SetBytes(5, axis);
  h.SetBytes(6, uint32_t{vector_affine ? 1u : 0u});
  h.SetBytes(7, uint32_t{vector_affine ? 1u : 0u});
  const uint32_t group = 32 * (((axis + 7) / 8 + 31) / 32);
  ASSERT_TRUE(Runs(h, {rows * group}, {group})) << axis;
  const std::vector<float> out = h.Read<float>(3);
  for (uint32_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (uint32_t i = 0; i < axis; ++i) mean += x[r * axis + i];
    mean /= axis;
    for (uint32_t i = 0; i < axis; ++i) {
      var += (x[r * axis + i] - mean) * (x[r * axis + i] - mean);
    }
    const double scale = 1.0 / std::sqrt(var / axis + eps);
    for (uint32_t i = 0; i < axis; ++i) {
      const size_t k = vector_affine ? i : 0;
      const double expected = (x[r * axis + i] - mean) * scale * w[k] + b[k];
      EXPECT_NEAR(out[r * axis + i], expected, 1e-5 * (1 + std::fabs(expected)))
          << axis << ": " << r << "," << i;
    }
  }
}

// Row lengths whose last thread still has elements to read (ceil(axis / 8)
// is the threadgroup's size or one less): 251 (32 threads, the last reads
// 3) and 509 (64 threads, the last reads 5).
TEST(MlxKernels, LayerNormWithWeightAndBias) {
  REQUIRE_MLX();
  CheckLayerNorm(4, 251, false);
  CheckLayerNorm(3, 509, true);
}

// DISABLED: a row of 300 gives 64 threads for ceil(300 / 8) = 38 of work.
// layer_norm_single_row then runs `for (int i = n; i < N_READS; i++)
// thread_x[i] = mean;` with n = axis_size - lid * 8 < 0 for lid >= 38, a
// write below its 8-float thread array (undefined in MSL, yet MLX runs it
// on every row shorter than 8 * (threads - 1) on Apple's GPUs). mtlemu faults:
// "layer_norm.metal:101:19: out-of-bounds access in kernel 'layer_normfloat32'
// thread_position_in_grid (38, 0, 0) ... write of 4 bytes at thread address
// 0xfffffff0, thread memory (32 bytes per thread)".
TEST(MlxKernels, DISABLED_LayerNormIdleThreadsPastTheRow) {
  REQUIRE_MLX();
  CheckLayerNorm(5, 300, true);
  CheckLayerNorm(3, 200, false);
}

// rope.metal: RoPE::eval_gpu (rope.cpp) on a row-contiguous (B, heads, T, D)
// array with dims == D: "rope_float32" specialized by function constants
// forward (1), traditional (2), hs_transpose (3); in 0, out 1, the offset
// array (int) 2, scale 3, strides 4 and out strides 5 (3 x int64: T * D,
// D, 1), offset stride (int64; 0 for one offset, 1 for one per batch) 6,
// heads (int) 7, log2(base) (float) 10; grid (dims / 2, T, B * ceil(heads /
// 4)), threadgroup get_block_dims of it. One time step ("rope_single_")
// takes the offset at 2, the scale at 3 and one int64 stride at 4 on a
// (dims / 2, B * heads) grid.
// Reference: for the pair (x1, x2) at frequency index i (elements 2i, 2i + 1
// when traditional, else i, i + D / 2) and position p = offset + t,
// theta = scale * p * base^(-2i / D); out = (x1 cos - x2 sin, x1 sin +
// x2 cos). Tolerance: theta reaches ~14 rad and is formed in float (~2e-6
// absolute), fast::sin/cos add their own absolute error; 2e-5 absolute on
// values of magnitude <= 2.
TEST(MlxKernels, RoPE) {
  REQUIRE_MLX();
  const int B = 2, H = 3, T = 5, D = 12;
  const float base = 10000.0f;
  const float scale = 0.5f;
  auto reference = [&](const std::vector<float>& in, bool traditional,
                       const std::vector<int32_t>& offsets, int steps) {
    std::vector<double> out(in.size());
    for (int bh = 0; bh < B * H; ++bh) {
      const int offset = offsets.size() == 1 ? offsets[0] : offsets[bh / H];
      for (int t = 0; t < steps; ++t) {
        const double p = static_cast<double>(scale) * (offset + t);
        for (int i = 0; i < D / 2; ++i) {
          const double theta = p * std::pow(double(base), -2.0 * i / D);
          const int i1 = bh * steps * D + t * D + (traditional ? 2 * i : i);
          const int i2 = traditional ? i1 + 1 : i1 + D / 2;
          out[i1] = in[i1] * std::cos(theta) - in[i2] * std::sin(theta);
          out[i2] = in[i1] * std::sin(theta) + in[i2] * std::cos(theta);
        }
      }
    }
    return out;
  };
  const int64_t strides[3] = {T * D, D, 1};
  for (const bool traditional : {true, false}) {
    // One offset for all (traditional) or one per batch (not).
    const std::vector<int32_t> offsets =
        traditional ? std::vector<int32_t>{7} : std::vector<int32_t>{3, 23};
    std::vector<float> in(B * H * T * D);
    for (size_t i = 0; i < in.size(); ++i) {
      in[i] = std::sin(0.7f * static_cast<float>(i)) +
              0.25f * static_cast<float>(i % 5);
    }
    KernelHarness h = MlxKernel(
        "rope.metal", "rope_float32",
        {{"1", "true"}, {"2", traditional ? "true" : "false"}, {"3", "false"}});
    h.SetBuffer(0, in);
    h.SetBuffer(1, std::vector<float>(in.size(), 0.0f));
    h.SetBuffer(2, offsets);
    h.SetBytes(3, scale);
    h.SetBytesRaw(4, strides, sizeof(strides));
    h.SetBytesRaw(5, strides, sizeof(strides));
    h.SetBytes(6, int64_t{offsets.size() == 1 ? 0 : 1});
    h.SetBytes(7, int32_t{H});
    h.SetBytes(10, std::log2(base));
    const uint32_t dim0 = D / 2, dim1 = T, dim2 = B * ((H + 3) / 4);
    ASSERT_TRUE(Runs(h, {dim0, dim1, dim2}, BlockDims(dim0, dim1, dim2)));
    const std::vector<float> out = h.Read<float>(1);
    const std::vector<double> expected = reference(in, traditional, offsets, T);
    for (size_t i = 0; i < out.size(); ++i) {
      EXPECT_NEAR(out[i], expected[i], 2e-5)
          << (traditional ? "traditional " : "") << "at " << i;
    }
  }
  {
    // Inference: one time step, one offset.
    std::vector<float> in(B * H * D);
    for (size_t i = 0; i < in.size(); ++i) {
      in[i] = std::cos(1.3f * static_cast<float>(i));
    }
    KernelHarness h = MlxKernel("rope.metal", "rope_single_float32",
                                {{"forward", "true"},
                                 {"traditional", "false"},
                                 {"hs_transpose", "false"}});
    h.SetBuffer(0, in);
    h.SetBuffer(1, std::vector<float>(in.size(), 0.0f));
    h.SetBuffer(2, std::vector<int32_t>{19});
    h.SetBytes(3, scale);
    h.SetBytes(4, int64_t{D});
    h.SetBytes(10, std::log2(base));
    const uint32_t dim0 = D / 2, dim1 = B * H;
    ASSERT_TRUE(Runs(h, {dim0, dim1, 1}, BlockDims(dim0, dim1, 1)));
    const std::vector<float> out = h.Read<float>(1);
    const std::vector<double> expected = reference(in, false, {19}, 1);
    for (size_t i = 0; i < out.size(); ++i) {
      EXPECT_NEAR(out[i], expected[i], 2e-5) << "single at " << i;
    }
  }
}

// scaled_dot_product_attention.metal: sdpa_vector (scaled_dot_product_
// attention.cpp), the one-pass kernel for up to 8 queries: q (B, Hq, qL, D),
// k and v (B, Hkv, N, D) row contiguous; q 0, k 1, v 2, out 3, gqa_factor
// 4, N 5, k head and sequence strides 6, 7 and v's 8, 9 (size_t), scale
// (float) 10, a bool mask at 11 with its kv-sequence, query-sequence and
// head strides (int) at 13, 14, 15. Function constants has_mask (20),
// query_transposed (21), do_causal (22), bool_mask (23), float_mask (24),
// has_sinks (25); threadgroups (B * Hq, qL, 1) of 1024 threads.
// Tolerance: float dot products of 64 terms and an online softmax with
// fast::exp over at most 45 keys; outputs are convex combinations of values
// in [-1, 1]: 1e-5 absolute.
// The arguments its function constants switch off (bmask, fmask, the mask
// strides, sinks) are left unbound, as MLX leaves them: they are inactive.
TEST(MlxKernels, SdpaVector) {
  REQUIRE_MLX();
  const int B = 2, Hq = 4, Hkv = 2, qL = 3, N = 45, D = 64;
  const float scale = 0.125f;  // 1 / sqrt(D)
  std::vector<float> q(B * Hq * qL * D), k(B * Hkv * N * D), v(B * Hkv * N * D);
  for (size_t i = 0; i < q.size(); ++i) {
    q[i] = std::sin(0.31f * static_cast<float>(i));
  }
  for (size_t i = 0; i < k.size(); ++i) {
    k[i] = std::cos(0.17f * static_cast<float>(i) + 0.5f);
    v[i] = std::sin(0.05f * static_cast<float>(i) * static_cast<float>(i % 7));
  }
  std::vector<uint8_t> mask(B * Hq * qL * N);
  for (size_t i = 0; i < mask.size(); ++i) mask[i] = (i * 5) % 7 != 0;
  enum class Mode { kPlain, kCausal, kBoolMask };
  for (const Mode mode : {Mode::kPlain, Mode::kCausal, Mode::kBoolMask}) {
    const bool causal = mode == Mode::kCausal;
    const bool bool_mask = mode == Mode::kBoolMask;
    KernelHarness h = MlxKernel("scaled_dot_product_attention.metal",
                                "sdpa_vector_float_64_64",
                                {{"has_mask", bool_mask ? "true" : "false"},
                                 {"query_transposed", "false"},
                                 {"do_causal", causal ? "true" : "false"},
                                 {"bool_mask", bool_mask ? "true" : "false"},
                                 {"float_mask", "false"},
                                 {"has_sinks", "false"}});
    h.SetBuffer(0, q);
    h.SetBuffer(1, k);
    h.SetBuffer(2, v);
    h.SetBuffer(3, std::vector<float>(q.size(), -7.0f));
    h.SetBytes(4, int32_t{Hq / Hkv});
    h.SetBytes(5, int32_t{N});
    h.SetBytes(6, uint64_t{N * D});
    h.SetBytes(7, uint64_t{D});
    h.SetBytes(8, uint64_t{N * D});
    h.SetBytes(9, uint64_t{D});
    h.SetBytes(10, scale);
    if (bool_mask) {
      h.SetBuffer(11, mask);
      h.SetBytes(13, int32_t{1});
      h.SetBytes(14, int32_t{N});
      h.SetBytes(15, int32_t{qL * N});
    }
    ASSERT_TRUE(RunsThreadgroups(h, {B * Hq, qL, 1}, {1024, 1, 1}))
        << static_cast<int>(mode);
    const std::vector<float> out = h.Read<float>(3);
    for (int bh = 0; bh < B * Hq; ++bh) {
      const int kv = (bh / Hq) * Hkv + (bh % Hq) / (Hq / Hkv);
      for (int s = 0; s < qL; ++s) {
        std::vector<double> scores(N, -INFINITY);
        double max = -INFINITY;
        for (int j = 0; j < N; ++j) {
          // Causal: the queries are the last qL positions of the N keys.
          if (causal && j > N - qL + s) continue;
          if (bool_mask && !mask[(bh * qL + s) * N + j]) continue;
          double dot = 0;
          for (int d = 0; d < D; ++d) {
            dot += double(q[(bh * qL + s) * D + d]) * k[(kv * N + j) * D + d];
          }
          scores[j] = dot * scale;
          max = std::max(max, scores[j]);
        }
        double sum = 0;
        for (int j = 0; j < N; ++j) sum += std::exp(scores[j] - max);
        for (int d = 0; d < D; ++d) {
          double o = 0;
          for (int j = 0; j < N; ++j) {
            o += std::exp(scores[j] - max) * v[(kv * N + j) * D + d];
          }
          EXPECT_NEAR(out[(bh * qL + s) * D + d], o / sum, 1e-5)
              << "mode " << static_cast<int>(mode) << " head " << bh
              << " query " << s << " dim " << d;
        }
      }
    }
  }
}

// Threefry-2x32 with 20 rounds (Salmon et al., "Parallel random numbers: as
// easy as 1, 2, 3", SC 2011): rotations 13 15 26 6 17 29 16 24 in turn; the
// key schedule extends the key with k0 ^ k1 ^ 0x1BD11BDA and injects key
// word s % 3 and (s + 1) % 3 plus s after every fourth round s.
std::array<uint32_t, 2> Threefry2x32(std::array<uint32_t, 2> key,
                                     std::array<uint32_t, 2> counter) {
  static constexpr int kRotations[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  const uint32_t ks[3] = {key[0], key[1], key[0] ^ key[1] ^ 0x1BD11BDAu};
  uint32_t x0 = counter[0] + ks[0], x1 = counter[1] + ks[1];
  for (int round = 0; round < 20; ++round) {
    const int r = kRotations[round % 8];
    x0 += x1;
    x1 = (x1 << r) | (x1 >> (32 - r));
    x1 ^= x0;
    if (round % 4 == 3) {
      const uint32_t s = static_cast<uint32_t>(round / 4 + 1);
      x0 += ks[s % 3];
      x1 += ks[(s + 1) % 3] + s;
    }
  }
  return {x0, x1};
}

// The bits random_bits gives one key (as JAX's threefry_random_bits, which
// MLX follows): W = ceil(bytes / 4) counters 0 .. W - 1, padded with a 0 to
// an even count, hashed in pairs (i, i + W') with W' = ceil(W / 2), the
// first words of the pairs then the second, little-endian, cut to `bytes`.
std::vector<uint8_t> RandomBitsForKey(std::array<uint32_t, 2> key,
                                      size_t bytes) {
  const size_t words = (bytes + 3) / 4, half = (words + 1) / 2;
  std::vector<uint32_t> counters(2 * half, 0);
  for (size_t i = 0; i < words; ++i) counters[i] = static_cast<uint32_t>(i);
  std::vector<uint32_t> out(2 * half);
  for (size_t i = 0; i < half; ++i) {
    const std::array<uint32_t, 2> r =
        Threefry2x32(key, {counters[i], counters[i + half]});
    out[i] = r[0];
    out[i + half] = r[1];
  }
  std::vector<uint8_t> result(bytes);
  for (size_t i = 0; i < bytes; ++i) {
    result[i] = static_cast<uint8_t>(out[i / 4] >> (8 * (i % 4)));
  }
  return result;
}

// random.metal: RandomBits::eval_gpu (primitives.cpp): keys 0 (uint32
// pairs), out 1, odd (bool) 2, bytes_per_key (size_t) 3; "rbitsc" for
// row-contiguous keys, else "rbits" with ndim 4, the keys' shape 5 and
// strides 6; grid (keys, half + odd), threadgroup get_block_dims of it.
// Checked bit for bit against Threefry2x32 above, itself checked against
// the published known answers (Random123's kat_vectors, also in JAX's
// tests).
TEST(MlxKernels, RandomBitsThreefry) {
  REQUIRE_MLX();
  {
    const auto a = Threefry2x32({0, 0}, {0, 0});
    EXPECT_EQ(a[0], 0x6b200159u);
    EXPECT_EQ(a[1], 0x99ba4efeu);
    const auto b =
        Threefry2x32({0xffffffffu, 0xffffffffu}, {0xffffffffu, 0xffffffffu});
    EXPECT_EQ(b[0], 0x1cb996fcu);
    EXPECT_EQ(b[1], 0xbb002be7u);
    const auto c =
        Threefry2x32({0x13198a2eu, 0x03707344u}, {0x243f6a88u, 0x85a308d3u});
    EXPECT_EQ(c[0], 0xc4923a9cu);
    EXPECT_EQ(c[1], 0x483df7a0u);
  }
  const std::vector<std::array<uint32_t, 2>> keys = {
      {0, 42}, {0xdeadbeefu, 7}, {123456789u, 987654321u}};
  const uint32_t num_keys = static_cast<uint32_t>(keys.size());
  std::vector<uint32_t> key_data;
  for (const auto& key : keys)
    key_data.insert(key_data.end(), key.begin(), key.end());
  // (3, 7) uint32: 7 words, odd; (3, 10) uint8: 3 words, the last partial;
  // (3, 12) uint16: 6 words, even.
  for (const size_t bytes_per_key : {size_t{28}, size_t{10}, size_t{24}}) {
    const size_t out_per_key = (bytes_per_key + 3) / 4;
    const uint32_t half = static_cast<uint32_t>(out_per_key / 2);
    const bool odd = out_per_key % 2;
    KernelHarness h = MlxKernel("random.metal", "rbitsc");
    h.SetBuffer(0, key_data);
    h.SetBuffer(1, std::vector<uint8_t>(num_keys * bytes_per_key, 0xAB));
    h.SetBytes(2, odd);
    h.SetBytes(3, uint64_t{bytes_per_key});
    ASSERT_TRUE(
        Runs(h, {num_keys, half + odd, 1}, BlockDims(num_keys, half + odd, 1)))
        << bytes_per_key;
    const std::vector<uint8_t> out = h.Read<uint8_t>(1);
    for (uint32_t k = 0; k < num_keys; ++k) {
      const std::vector<uint8_t> expected =
          RandomBitsForKey(keys[k], bytes_per_key);
      for (size_t i = 0; i < bytes_per_key; ++i) {
        EXPECT_EQ(out[k * bytes_per_key + i], expected[i])
            << bytes_per_key << " bytes, key " << k << ", byte " << i;
      }
    }
  }
  {
    // Keys that are a transposed view: (3, 2) read from a (2, 3) array,
    // strides (1, 3); "rbits" with its shape and strides.
    std::vector<uint32_t> transposed(6);
    for (uint32_t k = 0; k < num_keys; ++k) {
      transposed[0 * 3 + k] = keys[k][0];
      transposed[1 * 3 + k] = keys[k][1];
    }
    const size_t bytes_per_key = 20;  // (3, 5) float32: 5 words, odd
    const uint32_t half = 2;
    KernelHarness h = MlxKernel("random.metal", "rbits");
    h.SetBuffer(0, transposed);
    h.SetBuffer(1, std::vector<uint8_t>(num_keys * bytes_per_key, 0xAB));
    h.SetBytes(2, true);
    h.SetBytes(3, uint64_t{bytes_per_key});
    h.SetBytes(4, int32_t{2});
    const std::vector<int32_t> shape = {3, 2};
    const std::vector<int64_t> strides = {1, 3};
    h.SetVectorBytes(5, shape);
    h.SetVectorBytes(6, strides);
    ASSERT_TRUE(
        Runs(h, {num_keys, half + 1, 1}, BlockDims(num_keys, half + 1, 1)));
    const std::vector<uint8_t> out = h.Read<uint8_t>(1);
    for (uint32_t k = 0; k < num_keys; ++k) {
      const std::vector<uint8_t> expected =
          RandomBitsForKey(keys[k], bytes_per_key);
      for (size_t i = 0; i < bytes_per_key; ++i) {
        EXPECT_EQ(out[k * bytes_per_key + i], expected[i])
            << "strided key " << k << ", byte " << i;
      }
    }
  }
}

// gemv_masked.metal: BlockMaskedMM::eval_gpu (matmul.cpp) routes M x K
// times K x 1 to gemv_masked. block_masked_mm's default block of 64 and a
// row-major matrix: sm 2, sn 16, tn 4, tm 4 (1 under 4 outputs), bm 2 (4
// from 512 outputs), bn 1; a bool output mask ((M / 64) x 1 blocks) and
// float operand masks (the matrix's (M / 64) x (K / 64), the vector's
// (K / 64) x 1) that scale the blocks they cover. mat 0, vec 1, out 3,
// K 4, M 5, ld 6, batch ndim 9, batch shape 10, vector and matrix batch
// strides 11, 12 (int64), masks 20, 21, 22, mask strides (int) 23: the out
// mask's (1, 1), the matrix mask's (1, K / 64), the vector mask's (1, 1),
// mask batch strides (int64) 24; threadgroups (ceil(M / 16), 1, batch) of
// (32, bn, bm). Tolerance: float sums of 200 products of values near 1,
// scaled by masks up to 2: 1e-5 relative.
TEST(MlxKernels, GemvMasked) {
  REQUIRE_MLX();
  const int M = 150, K = 200, bs = 64;
  const int Mb = (M + bs - 1) / bs, Kb = (K + bs - 1) / bs;
  std::vector<float> mat(M * K), vec(K);
  for (int i = 0; i < M * K; ++i) {
    mat[i] = std::sin(0.21f * static_cast<float>(i)) + 0.1f;
  }
  for (int i = 0; i < K; ++i) vec[i] = std::cos(0.4f * static_cast<float>(i));
  const std::vector<uint8_t> out_mask = {1, 0, 1};  // Mb = 3
  std::vector<float> mat_mask(Mb * Kb), vec_mask(Kb);
  for (int i = 0; i < Mb * Kb; ++i)
    mat_mask[i] = (i % 4 == 1) ? 0.0f : 0.5f * (1 + i % 3);
  for (int i = 0; i < Kb; ++i) vec_mask[i] = i == 2 ? 0.0f : 1.5f - 0.25f * i;
  const int bm = 2, bn = 1, sm = 2, tm = 4;
  KernelHarness h = MlxKernel(
      "gemv_masked.metal",
      "gemv_outmask_bool__opmask_float32_float32_bm2_bn1_sm2_sn16_tm4_tn4_nc0");
  h.SetBuffer(0, mat);
  h.SetBuffer(1, vec);
  h.SetBuffer(3, std::vector<float>(M, -7.0f));
  h.SetBytes(4, int32_t{K});
  h.SetBytes(5, int32_t{M});
  h.SetBytes(6, int32_t{K});
  h.SetBytes(9, int32_t{1});
  h.SetBytes(10, int32_t{1});
  h.SetBytes(11, int64_t{0});
  h.SetBytes(12, int64_t{0});
  h.SetBuffer(20, out_mask);
  h.SetBuffer(21, mat_mask);
  h.SetBuffer(22, vec_mask);
  const std::vector<int32_t> mask_strides = {1, 1, 1, Kb, 1, 1};
  h.SetVectorBytes(23, mask_strides);
  const std::vector<int64_t> mask_batch_strides = {0, 0, 0};
  h.SetVectorBytes(24, mask_batch_strides);
  const uint32_t per_group = bm * sm * tm;
  ASSERT_TRUE(RunsThreadgroups(h, {(M + per_group - 1) / per_group, 1, 1},
                               {32, bn, bm}));
  const std::vector<float> out = h.Read<float>(3);
  for (int i = 0; i < M; ++i) {
    double expected = 0;
    if (out_mask[i / bs]) {
      for (int j = 0; j < K; ++j) {
        expected += double(mat[i * K + j]) * vec[j] *
                    mat_mask[(i / bs) * Kb + j / bs] * vec_mask[j / bs];
      }
    }
    EXPECT_NEAR(out[i], expected, 1e-5 * (1 + std::fabs(expected))) << i;
  }
}

// gemv_masked.metal as above with operand masks only (block_masked_mm with
// mask_lhs and mask_rhs, no mask_out): "outmask_nomask", and MLX binds
// nothing at 20; the mask strides start with the matrix mask's.
// out_mask (20) stays unbound, as in MLX: the kernel never reads it.
TEST(MlxKernels, GemvMaskedOperandMasksOnly) {
  REQUIRE_MLX();
  const int M = 70, K = 130, bs = 64;
  const int Mb = (M + bs - 1) / bs, Kb = (K + bs - 1) / bs;
  std::vector<float> mat(M * K), vec(K);
  for (int i = 0; i < M * K; ++i) {
    mat[i] = std::cos(0.29f * static_cast<float>(i)) - 0.2f;
  }
  for (int i = 0; i < K; ++i) vec[i] = std::sin(0.3f * static_cast<float>(i));
  std::vector<float> mat_mask(Mb * Kb), vec_mask(Kb);
  for (int i = 0; i < Mb * Kb; ++i) mat_mask[i] = i == 4 ? 0.0f : 0.75f + i;
  for (int i = 0; i < Kb; ++i) vec_mask[i] = 2.0f - 0.5f * i;
  KernelHarness h = MlxKernel(
      "gemv_masked.metal",
      "gemv_outmask_nomask_opmask_float32_float32_bm2_bn1_sm2_sn16_tm4_tn4_"
      "nc0");
  h.SetBuffer(0, mat);
  h.SetBuffer(1, vec);
  h.SetBuffer(3, std::vector<float>(M, -7.0f));
  h.SetBytes(4, int32_t{K});
  h.SetBytes(5, int32_t{M});
  h.SetBytes(6, int32_t{K});
  h.SetBytes(9, int32_t{1});
  h.SetBytes(10, int32_t{1});
  h.SetBytes(11, int64_t{0});
  h.SetBytes(12, int64_t{0});
  h.SetBuffer(21, mat_mask);
  h.SetBuffer(22, vec_mask);
  const std::vector<int32_t> mask_strides = {1, Kb, 1, 1};
  h.SetVectorBytes(23, mask_strides);
  const std::vector<int64_t> mask_batch_strides = {0, 0};
  h.SetVectorBytes(24, mask_batch_strides);
  ASSERT_TRUE(RunsThreadgroups(h, {(M + 15) / 16, 1, 1}, {32, 1, 2}));
  const std::vector<float> out = h.Read<float>(3);
  for (int i = 0; i < M; ++i) {
    double expected = 0;
    for (int j = 0; j < K; ++j) {
      expected += double(mat[i * K + j]) * vec[j] *
                  mat_mask[(i / bs) * Kb + j / bs] * vec_mask[j / bs];
    }
    EXPECT_NEAR(out[i], expected, 1e-5 * (1 + std::fabs(expected))) << i;
  }
}

// gemv.metal: Matmul::eval_gpu (matmul.cpp) routes float32 (M x K) @ (K x 1)
// through gemv_axbpy<false>: a row-major matrix, out < 4096 and 64 < K <
// 16 * out: bm 4, bn 1, sm 1, sn 32, tm 4, tn 4, no axpby; mat 0, vec 1,
// out 3, K 4, M 5, ld 6, batch ndim 9, batch shape 10, vector and matrix
// batch strides 11, 12 (int64); nothing at 2, 7, 8, 13, 14 (the bias and
// axpby arguments); threadgroups (ceil(M / 16), 1, batch) of (32, 1, 4).
// Tolerance: float sums of 200 products of values near 1: 1e-5 relative.
// The GemvWide path widens half4 to float4 with vec<float, 4>(x); bias
// (2), alpha (7), beta (8) and the bias strides (13, 14) stay unbound, as
// in MLX without axpby.
TEST(MlxKernels, Gemv) {
  REQUIRE_MLX();
  const int M = 150, K = 200;
  std::vector<float> mat(M * K), vec(K);
  for (int i = 0; i < M * K; ++i) {
    mat[i] = std::sin(0.23f * static_cast<float>(i)) + 0.05f;
  }
  for (int i = 0; i < K; ++i) vec[i] = std::cos(0.41f * static_cast<float>(i));
  KernelHarness h = MlxKernel(
      "gemv.metal", "gemv_float32_bm4_bn1_sm1_sn32_tm4_tn4_nc0_axpby0");
  h.SetBuffer(0, mat);
  h.SetBuffer(1, vec);
  h.SetBuffer(3, std::vector<float>(M, -7.0f));
  h.SetBytes(4, int32_t{K});
  h.SetBytes(5, int32_t{M});
  h.SetBytes(6, int32_t{K});
  h.SetBytes(9, int32_t{1});
  h.SetBytes(10, int32_t{1});
  h.SetBytes(11, int64_t{0});
  h.SetBytes(12, int64_t{0});
  ASSERT_TRUE(RunsThreadgroups(h, {(M + 15) / 16, 1, 1}, {32, 1, 4}));
  const std::vector<float> out = h.Read<float>(3);
  for (int i = 0; i < M; ++i) {
    double expected = 0;
    for (int j = 0; j < K; ++j) expected += double(mat[i * K + j]) * vec[j];
    EXPECT_NEAR(out[i], expected, 1e-5 * (1 + std::fabs(expected))) << i;
  }
}

// steel/gemm/kernels/steel_gemm_fused.metal: Matmul::eval_gpu (matmul.cpp)
// on row-contiguous 2-D operands (or a transposed view, which
// check_transpose passes as is with transpose_a/b and the view's column
// stride as lda/ldb) goes, past the gemv routes (min(M, N) == 1; the wide
// gemv only for M < 16) and the split-K one (K >= max(M, N) and K >= 128),
// to steel_matmul_regular_axpby<false>: "steel_gemm_fused_{n|t}{n|t}_
// {dtype}_{dtype}_bm_bn_bk_wm_wn" with the tile GEMM_TPARAM_MACRO picks for
// the architecture's last letter, 'g' on M1, M2 and M3 (applegpu_g13g,
// g14g, g15g: the "small device" row): nt 64/32/32/2/2, else half
// 64/64/16/1/2, else float 64/64/16/2/2. Function constants by index:
// has_batch (10) false (collapse_batches gives batch_shape {1} for 2-D
// operands), use_out_source (100) and do_axpby (110) false (no C),
// align_M/N/K (200, 201, 202) = M % bm, N % bn, K % bk == 0. A 0, B 1, D 3,
// GEMMParams at 4 (swizzle_log 0, gemm_k_iterations_aligned K / bk,
// batch_ndim 1, batch strides 0 / 0 / M * N); nothing at 2, 5, 6, 7;
// threadgroups (ceil(N / bn), ceil(M / bm), 1) of (32, wn, wm).

// GEMMParams (steel/gemm/params.h) as the host lays it out: 8 ints, 3
// int64, 3 ints, padded to 8 bytes.
struct SteelGemmParams {
  int32_t M, N, K, lda, ldb, ldd, tiles_n, tiles_m;
  int64_t batch_stride_a, batch_stride_b, batch_stride_d;
  int32_t swizzle_log, gemm_k_iterations_aligned, batch_ndim;
};
static_assert(sizeof(SteelGemmParams) == 72);

struct SteelTile {
  int bm, bn, bk, wm, wn;
};

// GEMM_TPARAM_MACRO's small-device ('g') branch, for float32 and float16.
SteelTile SteelTileSmallDevice(bool is_float32, bool transpose_a,
                               bool transpose_b) {
  if (!transpose_a && transpose_b) return {64, 32, 32, 2, 2};
  if (!is_float32) return {64, 64, 16, 1, 2};
  return {64, 64, 16, 2, 2};
}

struct SteelGemmCase {
  int M, N, K;
  bool transpose_a, transpose_b;
};

// Runs D = A B through steel_gemm_fused with MLX's dispatch; T is float or
// uint16_t (half bits). A is M x K (stored K x M when transpose_a), B is
// K x N (stored N x K when transpose_b), D is M x N row-major.
template <class T>
::testing::AssertionResult RunSteelGemm(const SteelGemmCase& c,
                                        const std::vector<T>& a,
                                        const std::vector<T>& b,
                                        std::vector<T>& d,
                                        std::string& kernel) {
  const bool is_float32 = std::is_same_v<T, float>;
  const char* dtype = is_float32 ? "float32" : "float16";
  const SteelTile t =
      SteelTileSmallDevice(is_float32, c.transpose_a, c.transpose_b);
  kernel = std::string("steel_gemm_fused_") + (c.transpose_a ? 't' : 'n') +
           (c.transpose_b ? 't' : 'n') + "_" + dtype + "_" + dtype + "_bm" +
           std::to_string(t.bm) + "_bn" + std::to_string(t.bn) + "_bk" +
           std::to_string(t.bk) + "_wm" + std::to_string(t.wm) + "_wn" +
           std::to_string(t.wn);
  auto flag = [](bool b) { return std::string(b ? "true" : "false"); };
  KernelHarness h =
      MlxKernel("steel/gemm/kernels/steel_gemm_fused.metal", kernel,
                {{"10", "false"},
                 {"100", "false"},
                 {"110", "false"},
                 {"200", flag(c.M % t.bm == 0)},
                 {"201", flag(c.N % t.bn == 0)},
                 {"202", flag(c.K % t.bk == 0)}});
  const int tiles_n = (c.N + t.bn - 1) / t.bn;
  const int tiles_m = (c.M + t.bm - 1) / t.bm;
  const SteelGemmParams params{c.M,
                               c.N,
                               c.K,
                               c.transpose_a ? c.M : c.K,
                               c.transpose_b ? c.K : c.N,
                               c.N,
                               tiles_n,
                               tiles_m,
                               0,
                               0,
                               int64_t{c.M} * c.N,
                               0,
                               c.K / t.bk,
                               1};
  h.SetBuffer(0, a);
  h.SetBuffer(1, b);
  h.SetBuffer(3, d);
  h.SetBytes(4, params);
  const ::testing::AssertionResult ran = RunsThreadgroups(
      h, {static_cast<uint64_t>(tiles_n), static_cast<uint64_t>(tiles_m), 1},
      {32, static_cast<uint64_t>(t.wn), static_cast<uint64_t>(t.wm)});
  if (ran) d = h.Read<T>(3);
  return ran;
}

// The exact product, in double, with the operands' storage orders.
std::vector<double> ReferenceGemm(const SteelGemmCase& c,
                                  const std::vector<double>& a,
                                  const std::vector<double>& b,
                                  std::vector<double>* abs_sum) {
  std::vector<double> d(size_t(c.M) * c.N);
  if (abs_sum != nullptr) abs_sum->assign(d.size(), 0);
  for (int i = 0; i < c.M; ++i) {
    for (int j = 0; j < c.N; ++j) {
      double sum = 0, abs = 0;
      for (int k = 0; k < c.K; ++k) {
        const double x =
            c.transpose_a ? a[size_t(k) * c.M + i] : a[size_t(i) * c.K + k];
        const double y =
            c.transpose_b ? b[size_t(j) * c.K + k] : b[size_t(k) * c.N + j];
        sum += x * y;
        abs += std::fabs(x * y);
      }
      d[size_t(i) * c.N + j] = sum;
      if (abs_sum != nullptr) (*abs_sum)[size_t(i) * c.N + j] = abs;
    }
  }
  return d;
}

// float32, M, N, K not multiples of the tile (align_M/N/K false): nn and tn
// (A transposed) with 64/64/16/2/2, nt (B transposed) with 64/32/32/2/2;
// and 128 x 64 x 64 nn, every align_* true. Tolerance: the kernel sums K
// float products (AccumType float) in some order; for any order the error
// is at most gamma_K * sum |a b| with gamma_K = K u / (1 - K u), u = 2^-24,
// and K * 2^-23 covers it for these K. The reference is exact in double
// (float products are exact in double; the sums of <= 64 of them lose
// < 2^-45 relative).
TEST(MlxKernels, SteelGemmFloat32) {
  REQUIRE_MLX();
  for (const SteelGemmCase& c : {SteelGemmCase{100, 72, 50, false, false},
                                 SteelGemmCase{100, 72, 50, true, false},
                                 SteelGemmCase{100, 72, 50, false, true},
                                 SteelGemmCase{128, 64, 64, false, false}}) {
    std::vector<float> a(size_t(c.M) * c.K), b(size_t(c.K) * c.N);
    for (size_t i = 0; i < a.size(); ++i) {
      a[i] = std::sin(0.37f * static_cast<float>(i)) + 0.125f;
    }
    for (size_t i = 0; i < b.size(); ++i) {
      b[i] = std::cos(0.23f * static_cast<float>(i) + 0.5f);
    }
    std::vector<float> d(size_t(c.M) * c.N, -7.0f);
    std::string kernel;
    ASSERT_TRUE(RunSteelGemm(c, a, b, d, kernel)) << kernel;
    std::vector<double> abs_sum;
    const std::vector<double> expected =
        ReferenceGemm(c, std::vector<double>(a.begin(), a.end()),
                      std::vector<double>(b.begin(), b.end()), &abs_sum);
    int bad = 0;
    for (size_t i = 0; i < d.size() && bad < 10; ++i) {
      const double tolerance = c.K * std::ldexp(1.0, -23) * abs_sum[i];
      if (std::fabs(d[i] - expected[i]) > tolerance) ++bad;
      EXPECT_NEAR(d[i], expected[i], tolerance)
          << kernel << " M=" << c.M << " N=" << c.N << " K=" << c.K << " at ("
          << i / c.N << ", " << i % c.N << ")";
    }
  }
}

// float16 (half in and out, float accumulation) with M = 64, N = 96, K =
// 40: nn with 64/64/16/1/2 (align_M only) and nt (B transposed) with
// 64/32/32/2/2 (align_M and align_N). The inputs are multiples of 1/8 in
// [-2, 2], exact in half (the test checks that the half bits decode to
// them), so every product is a multiple of 1/64 of magnitude <= 4 and
// every partial sum a multiple of 1/64 below 40 * 4 = 160: exact in float
// whatever the order. The one rounding is the float -> half store (round
// to nearest): |out - exact| <= 2^-11 |exact|, and exact when the sum fits
// in 11 significant bits.
TEST(MlxKernels, SteelGemmFloat16) {
  REQUIRE_MLX();
  for (const SteelGemmCase& c : {SteelGemmCase{64, 96, 40, false, false},
                                 SteelGemmCase{64, 96, 40, false, true}}) {
    auto halves = [](size_t n, int mul, int add) {
      std::vector<uint16_t> bits(n);
      std::vector<double> values(n);
      for (size_t i = 0; i < n; ++i) {
        values[i] =
            static_cast<double>(static_cast<int>((i * mul + add) % 33) - 16) /
            8;
        bits[i] = isa::FloatToHalfBits(static_cast<float>(values[i]));
      }
      return std::make_pair(bits, values);
    };
    const auto [a, a_values] = halves(size_t(c.M) * c.K, 7, 3);
    const auto [b, b_values] = halves(size_t(c.K) * c.N, 11, 5);
    for (size_t i = 0; i < a.size(); ++i) {
      ASSERT_EQ(isa::HalfBitsToFloat(a[i]), a_values[i]) << i;
    }
    for (size_t i = 0; i < b.size(); ++i) {
      ASSERT_EQ(isa::HalfBitsToFloat(b[i]), b_values[i]) << i;
    }
    // -7 in half: the sentinel an unwritten element keeps.
    std::vector<uint16_t> d(size_t(c.M) * c.N, 0xc700);
    std::string kernel;
    ASSERT_TRUE(RunSteelGemm(c, a, b, d, kernel)) << kernel;
    const std::vector<double> expected =
        ReferenceGemm(c, a_values, b_values, nullptr);
    int bad = 0;
    for (size_t i = 0; i < d.size() && bad < 10; ++i) {
      const double out = isa::HalfBitsToFloat(d[i]);
      const double tolerance = std::ldexp(std::fabs(expected[i]), -11);
      if (std::fabs(out - expected[i]) > tolerance) ++bad;
      EXPECT_NEAR(out, expected[i], tolerance)
          << kernel << " M=" << c.M << " N=" << c.N << " K=" << c.K << " at ("
          << i / c.N << ", " << i % c.N << ")";
    }
  }
}

// sort.metal: Sort::eval_gpu and ArgSort::eval_gpu (sort.cpp) go through
// gpu_merge_sort: tn 4 and bn the power of two from 32 to 512 that fits
// ceil(n / 4) (256 at most for 8-byte types); a row that fits bn * tn
// takes single_block_sort. Rows of a row-contiguous 2-D array give the
// contiguous kernel, "c_block_sort_{in}_{out}_bn_tn" (sort) or
// "carg_block_sort_{in}_uint32_bn_tn" (argsort): in 0, out 1, the sorted
// axis' size 2, its input and output strides 3, 4 (1), the row strides 5,
// 6 (the smallest stride of the other axes: n); threadgroups (1, rows, 1)
// of (bn, 1, 1).
int SortBlockThreads(int n) {
  const int potential_bn = (n + 3) / 4;
  if (potential_bn > 256) return 512;
  if (potential_bn > 128) return 256;
  if (potential_bn > 64) return 128;
  if (potential_bn > 32) return 64;
  return 32;
}

// LessThan (sort.h): NaN sorts after every number. Both the thread sort
// (odd-even transposition, swapping only when the later element is less)
// and the merges (the partition and merge_step take B's element only when
// it is less than A's) keep equal elements in their order, and the
// padding past the row (NaN) comes after the row's own NaNs: the merge
// sort is stable, so std::stable_sort with the same order is the
// reference for both outputs. Rows of 300 (bn 128) and 1000 (bn 256)
// elements; the values repeat (ties), 0.0 and -0.0 tie (told apart by
// their bits in the sorted values), and the last row has NaNs.
TEST(MlxKernels, SortAndArgsort) {
  REQUIRE_MLX();
  const auto less = [](float a, float b) {
    const bool an = std::isnan(a), bn = std::isnan(b);
    if (an || bn) return !an && bn;
    return a < b;
  };
  const auto bits = [](float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof(u));
    return u;
  };
  for (const int n : {300, 1000}) {
    const int rows = 3, bn = SortBlockThreads(n);
    ASSERT_LE(n, bn * 4);
    std::vector<float> in(size_t(rows) * n);
    for (int i = 0; i < rows * n; ++i) {
      const int v = (i * 37 + i / 7) % 23 - 11;
      in[i] = v == 0 ? (i % 2 ? -0.0f : 0.0f) : 0.5f * static_cast<float>(v);
    }
    for (int i = 0; i < n; i += 97) in[(rows - 1) * n + i] = NAN;
    const std::string size = "_bn" + std::to_string(bn) + "_tn4";
    for (const bool arg : {false, true}) {
      const std::string kernel = arg ? "carg_block_sort_float32_uint32" + size
                                     : "c_block_sort_float32_float32" + size;
      KernelHarness h = MlxKernel("sort.metal", kernel);
      h.SetBuffer(0, in);
      if (arg) {
        h.SetBuffer(1, std::vector<uint32_t>(in.size(), 0xffffffffu));
      } else {
        h.SetBuffer(1, std::vector<float>(in.size(), -7.0f));
      }
      h.SetBytes(2, int32_t{n});
      h.SetBytes(3, int32_t{1});
      h.SetBytes(4, int32_t{1});
      h.SetBytes(5, int32_t{n});
      h.SetBytes(6, int32_t{n});
      ASSERT_TRUE(RunsThreadgroups(h, {1, static_cast<uint64_t>(rows), 1},
                                   {static_cast<uint64_t>(bn), 1, 1}))
          << kernel;
      const std::vector<uint32_t> out_idx =
          arg ? h.Read<uint32_t>(1) : std::vector<uint32_t>();
      const std::vector<float> out_val =
          arg ? std::vector<float>() : h.Read<float>(1);
      for (int r = 0; r < rows; ++r) {
        const float* row = in.data() + size_t(r) * n;
        std::vector<uint32_t> order(n);
        std::iota(order.begin(), order.end(), 0u);
        std::stable_sort(
            order.begin(), order.end(),
            [&](uint32_t a, uint32_t b) { return less(row[a], row[b]); });
        int bad = 0;
        for (int i = 0; i < n && bad < 10; ++i) {
          if (arg) {
            const uint32_t got = out_idx[size_t(r) * n + i];
            if (got != order[i]) ++bad;
            EXPECT_EQ(got, order[i]) << kernel << " row " << r << " at " << i;
          } else {
            const float got = out_val[size_t(r) * n + i];
            if (bits(got) != bits(row[order[i]])) ++bad;
            EXPECT_EQ(bits(got), bits(row[order[i]]))
                << kernel << " row " << r << " at " << i << ": " << got
                << " for " << row[order[i]];
          }
        }
      }
    }
  }
}

// quantized.metal, affine mode: QuantizedMatmul::eval_gpu (quantized.cpp)
// with transposed weights (w is N x K, y = W x) and one vector (M = 1)
// goes through dispatch_qmv: not qmv_quad (K is neither 64 nor 128), not
// qmv_wide (M < 2), so qmv, the fast kernel when N % 8 == 0 and K % 512
// == 0 (qmv_fast_k_alignment for 4 bits: 8 * 2 * 32):
// "affine_qmv{_fast}_float_gs_64_b_4_batch_0". w 0, scales 1, biases 2, x
// 3, y 4, K 5, N 6; nothing from 7 (not batched); threadgroups (M,
// ceil(N / 8), 1) of (32, 2, 1).

// MLX's affine quantization (affine_quantize in quantized.h), for 4 bits:
// per group of group_size values along a row, w_min and w_max (w_max
// starts at 0), scale = max((w_max - w_min) / 15, 1e-7), signed and
// snapped so that the edge of larger magnitude is q0 * scale exactly with
// bias = that edge (or bias 0 when q0 rounds to 0); q = min(round((w -
// bias) / scale), 15), in float. Each uint32 holds 8 values, value i in
// bits 4i..4i+3; scales and biases are N x (K / group_size).
struct AffineQuantized4 {
  std::vector<uint32_t> w;
  std::vector<float> scales, biases;
  std::vector<double> dequantized;  // scale * q + bias, N x K
};

AffineQuantized4 AffineQuantize4(const std::vector<float>& w, int n, int k,
                                 int group_size) {
  AffineQuantized4 out;
  out.w.assign(size_t(n) * k / 8, 0);
  out.dequantized.assign(size_t(n) * k, 0);
  const float n_bins = 15.0f, eps = 1e-7f;
  for (int r = 0; r < n; ++r) {
    for (int g = 0; g < k / group_size; ++g) {
      const float* v = w.data() + size_t(r) * k + size_t(g) * group_size;
      float w_min = std::numeric_limits<float>::max(), w_max = 0;
      for (int i = 0; i < group_size; ++i) {
        w_min = std::min(w_min, v[i]);
        w_max = std::max(w_max, v[i]);
      }
      float scale = std::max((w_max - w_min) / n_bins, eps);
      const bool side = std::fabs(w_min) > std::fabs(w_max);
      scale = side ? scale : -scale;
      const float edge = side ? w_min : w_max;
      const float q0 = std::round(edge / scale);
      const bool at_zero = q0 == 0.0f;
      scale = at_zero ? scale : edge / q0;
      const float bias = at_zero ? 0 : edge;
      out.scales.push_back(scale);
      out.biases.push_back(bias);
      for (int i = 0; i < group_size; ++i) {
        // MLX converts min(round(.), 15) to uint8 as is; the clamp at 0
        // only keeps a -0.4 from being undefined in C++.
        const uint32_t q = static_cast<uint32_t>(
            std::clamp(std::round((v[i] - bias) / scale), 0.0f, n_bins));
        const size_t at = size_t(r) * k + size_t(g) * group_size + i;
        out.w[at / 8] |= q << (4 * (at % 8));
        out.dequantized[at] = double(scale) * q + bias;
      }
    }
  }
  return out;
}

// Cases: N 48, K 1024 (qmv_fast); N 21, K 320 (qmv, the last tile of 8
// rows moved back, K past the last 256-value block handled by the "safe"
// loads); N 5, K 192 (qmv with fewer rows than one tile). Tolerance: the
// kernel sums in float (per lane, then simd_sum); K * 2^-23 times the sum
// of |scale q x| + |bias x| bounds it.
TEST(MlxKernels, AffineQuantizedMatVec) {
  REQUIRE_MLX();
  const int group_size = 64;
  struct Case {
    int N, K;
  };
  for (const Case& c : {Case{48, 1024}, Case{21, 320}, Case{5, 192}}) {
    std::vector<float> w(size_t(c.N) * c.K), x(c.K);
    for (size_t i = 0; i < w.size(); ++i) {
      w[i] = std::sin(0.37f * static_cast<float>(i)) * (1.0f + (i / 64) % 3) +
             0.1f * static_cast<float>((i / 64) % 5) - 0.2f;
    }
    for (int i = 0; i < c.K; ++i) {
      x[i] = std::cos(0.23f * static_cast<float>(i) + 0.5f);
    }
    const AffineQuantized4 q = AffineQuantize4(w, c.N, c.K, group_size);
    // Rounding q0 can shrink |scale| by up to 1/16 (|q0| >= 7.5 - 0.5), so
    // the far edge may land at q = 16 and clamp to 15: MLX's own
    // quantization is off by up to one step there, half a step elsewhere.
    for (size_t i = 0; i < w.size(); ++i) {
      const double scale = q.scales[i / group_size];
      ASSERT_LE(std::fabs(q.dequantized[i] - w[i]),
                std::fabs(scale) * (1 + 1e-5) + 1e-6)
          << "quantization at " << i;
    }
    const bool fast = c.N % 8 == 0 && c.K % 512 == 0;
    const std::string kernel = std::string("affine_qmv") +
                               (fast ? "_fast" : "") + "_float_gs_64_b_4" +
                               "_batch_0";
    KernelHarness h = MlxKernel("quantized.metal", kernel);
    h.SetBuffer(0, q.w);
    h.SetBuffer(1, q.scales);
    h.SetBuffer(2, q.biases);
    h.SetBuffer(3, x);
    h.SetBuffer(4, std::vector<float>(c.N, -7.0f));
    h.SetBytes(5, int32_t{c.K});
    h.SetBytes(6, int32_t{c.N});
    ASSERT_TRUE(RunsThreadgroups(
        h, {1, static_cast<uint64_t>((c.N + 7) / 8), 1}, {32, 2, 1}))
        << kernel;
    const std::vector<float> y = h.Read<float>(4);
    for (int r = 0; r < c.N; ++r) {
      double expected = 0, abs = 0;
      for (int j = 0; j < c.K; ++j) {
        const size_t at = size_t(r) * c.K + j;
        const double bias = q.biases[at / group_size];
        expected += q.dequantized[at] * x[j];
        abs += std::fabs((q.dequantized[at] - bias) * x[j]) +
               std::fabs(bias * x[j]);
      }
      EXPECT_NEAR(y[r], expected, c.K * std::ldexp(abs, -23))
          << kernel << " N=" << c.N << " K=" << c.K << " row " << r;
    }
  }
}

// --- reductions and scans ----------------------------------------------------

// Several kernels of one MLX file from one compile, with fast math off as
// MLX builds them: the front end, most of the time for reduce.metal, runs
// once; MlxKernelOf makes each kernel's harness from the module.
Result<isa::Module> MlxModule(const std::string& file,
                              const std::vector<std::string>& kernels) {
  const std::filesystem::path path = KernelsDir() / file;
  msl::CompileOptions options = MlxOptions();
  options.fast_math = false;  // MLX's kernels/CMakeLists.txt: -fno-fast-math
  return compiler::CompileMsl(ReadText(path), path.string(), options, kernels);
}

KernelHarness MlxKernelOf(const Result<isa::Module>& module,
                          const std::string& kernel) {
  return KernelHarness(module, kernel);
}

// Multiples of 1/16 in [-4, 4]: every sum of up to 2^18 of them, in any
// order, is a multiple of 1/16 of magnitude at most 2^20, exact in float
// (2^24 sixteenths), so MLX's float sums compare exactly with the double
// reference whatever order its threads add in.
std::vector<float> Sixteenths(size_t n, size_t salt) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    const int k = static_cast<int>((i * 37 + i / 7 + salt * 11) % 129) - 64;
    v[i] = static_cast<float>(k) / 16;
  }
  return v;
}

// The sum or max over `axes` of a row-contiguous array of `shape`, in
// double; the output keeps the other axes in order.
std::vector<double> ReferenceReduce(const std::vector<float>& in,
                                    const std::vector<int>& shape,
                                    const std::vector<int>& axes, bool max) {
  const auto reduced = [&](int d) {
    return std::find(axes.begin(), axes.end(), d) != axes.end();
  };
  size_t out_size = 1;
  for (int d = 0; d < static_cast<int>(shape.size()); ++d) {
    if (!reduced(d)) out_size *= shape[d];
  }
  std::vector<double> out(out_size,
                          max ? -std::numeric_limits<double>::infinity() : 0.0);
  for (size_t i = 0; i < in.size(); ++i) {
    size_t rest = i, o = 0, o_scale = 1;
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      const size_t at = rest % shape[d];
      rest /= shape[d];
      if (reduced(d)) continue;
      o += at * o_scale;
      o_scale *= shape[d];
    }
    out[o] = max ? std::max(out[o], double(in[i])) : out[o] + in[i];
  }
  return out;
}

// RowReduceArgs::encode and ColReduceArgs::encode (reduce.cpp) from buffer
// 4 on: the kept axes' shape and strides (collapsed; for a column
// reduction without the axes inside the reduction stride) at 4 and 5,
// their count (int) at 6, the other reduced axes' shape and strides at 7
// and 8, their count at 9; an empty list goes as {0}.
void SetReduceShapes(KernelHarness& h, std::vector<int32_t> shape,
                     std::vector<int64_t> strides,
                     std::vector<int32_t> reduce_shape,
                     std::vector<int64_t> reduce_strides) {
  const int32_t ndim = static_cast<int32_t>(shape.size());
  const int32_t reduce_ndim = static_cast<int32_t>(reduce_shape.size());
  if (ndim == 0) {
    shape = {0};
    strides = {0};
  }
  if (reduce_ndim == 0) {
    reduce_shape = {0};
    reduce_strides = {0};
  }
  h.SetVectorBytes(4, shape);
  h.SetVectorBytes(5, strides);
  h.SetBytes(6, ndim);
  h.SetVectorBytes(7, reduce_shape);
  h.SetVectorBytes(8, reduce_strides);
  h.SetBytes(9, reduce_ndim);
}

// reduce.metal over the last axis of a row-contiguous (R, N) array, or over
// axes 0 and 2 of a (P, R, N) array: Reduce::eval_gpu (reduce.cpp) with
// get_reduction_plan's ContiguousReduce (row_size N; P rows to add per
// output in the second case, reduce_shape {P}, reduce_strides {R * N}; the
// kept axis: shape {R}, strides {N}) goes through
// row_reduce_general_dispatch ({op} as "sumfloat32", "andbool_"):
//  - N <= 64: row_reduce_small, "row_reduce_small_1_reduce_{op}"
//    (get_kernel_reduce_ndim of 0 or 1 other reduced axes is 1). With <= 8
//    rows per output, a thread per output: threads get_2d_grid_dims(out) =
//    (R, 1, 1) in groups of min(R, 1024); else a simdgroup per output, each
//    lane adding every 32nd row: threads (32, R, 1) in groups of 32.
//  - no other reduced axis and R >= 32: row_reduce_simple,
//    "row_reduce_simple_{op}", 4 outputs (REDUCE_N_WRITES) per threadgroup,
//    the last group moved back to end at the last row: threads (t, ceil(R /
//    4), 1) in groups of t = threadgroup_size_from_row_size(N) (32 up to
//    512, 128 up to 1024, else ceil(N / 4) rounded up to 32, at most 1024);
//    N (size_t) at 2, R (size_t) at 3.
//  - else row_reduce_looped, "row_reduce_looped_1_reduce_{op}", a
//    threadgroup of t per output: threads (t, R, 1).
// in 0, out 1; small and looped take RowReduceArgs::encode: N (size_t) 2,
// the rows per output (size_t) 3, then SetReduceShapes.
std::vector<std::string> RowReduceKernels(const std::string& op) {
  return {"row_reduce_small_1_reduce_" + op, "row_reduce_simple_" + op,
          "row_reduce_looped_1_reduce_" + op};
}

// Runs the path MLX takes for `shape` (2-D: axis 1; 3-D: axes 0 and 2);
// `kernel` says which.
template <class T, class U>
::testing::AssertionResult RunRowReduce(const Result<isa::Module>& module,
                                        const std::string& op,
                                        const std::vector<int>& shape,
                                        const std::vector<T>& in,
                                        std::vector<U>& out,
                                        std::string& kernel) {
  const bool outer = shape.size() == 3;
  const int P = outer ? shape[0] : 1, R = shape[shape.size() - 2],
            N = shape.back();
  const uint64_t rows = static_cast<uint64_t>(R);
  const uint64_t t =
      N <= 512    ? 32
      : N <= 1024 ? 128
                  : std::min<uint64_t>(1024, ((N + 3) / 4 + 31) / 32 * 32);
  const std::vector<std::string> kernels = RowReduceKernels(op);
  kernel = N <= 64 ? kernels[0] : !outer && R >= 32 ? kernels[1] : kernels[2];
  KernelHarness h = MlxKernelOf(module, kernel);
  h.SetBuffer(0, in);
  h.SetBuffer(1, std::vector<U>(R, U(7)));
  h.SetBytes(2, uint64_t(N));
  ::testing::AssertionResult ran = ::testing::AssertionFailure();
  if (kernel == kernels[1]) {
    h.SetBytes(3, rows);
    ran = Runs(h, {t, (rows + 3) / 4, 1}, {t, 1, 1});
  } else {
    h.SetBytes(3, uint64_t(P));
    if (outer) {
      SetReduceShapes(h, {R}, {N}, {P}, {int64_t{R} * N});
    } else {
      SetReduceShapes(h, {R}, {N}, {}, {});
    }
    if (kernel == kernels[2]) {
      ran = Runs(h, {t, rows, 1}, {t, 1, 1});
    } else if (P <= 8) {
      ran = Runs(h, {rows, 1, 1}, {std::min<uint64_t>(rows, 1024), 1, 1});
    } else {
      ran = Runs(h, {32, rows, 1}, {32, 1, 1});
    }
  }
  if (ran) out = h.Read<U>(1);
  return ran;
}

void CheckRowReduceSum(const Result<isa::Module>& module,
                       const std::vector<int>& shape) {
  size_t total = 1;
  for (const int s : shape) total *= s;
  const std::vector<float> in = Sixteenths(total, shape.back());
  std::vector<float> out;
  std::string kernel;
  std::string what = " on";
  for (const int s : shape) what += " " + std::to_string(s);
  ASSERT_TRUE(RunRowReduce(module, "sumfloat32", shape, in, out, kernel))
      << kernel << what;
  const std::vector<double> expected = ReferenceReduce(
      in, shape,
      shape.size() == 3 ? std::vector<int>{0, 2} : std::vector<int>{1}, false);
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(out[i], expected[i]) << kernel << what << " at " << i;
  }
}

// Each path: 37 x 50 (small, a thread per row), 40 x 3 x 50 (small, a
// simdgroup adds 40 rows per output), 37 x 1000 (simple: 10 groups of
// 128, the last on rows 33-36), 5 x 3000 (looped, 768 threads, a partial
// last block), 6 x 4 x 300 (looped, 6 rows per output).
TEST(MlxKernels, RowReduceSum) {
  REQUIRE_MLX();
  const Result<isa::Module> module =
      MlxModule("reduce.metal", RowReduceKernels("sumfloat32"));
  ASSERT_TRUE(module.ok()) << module.error().message.substr(0, 4000);
  CheckRowReduceSum(module, {37, 50});
  CheckRowReduceSum(module, {40, 3, 50});
  CheckRowReduceSum(module, {37, 1000});
  CheckRowReduceSum(module, {5, 3000});
  CheckRowReduceSum(module, {6, 4, 300});
}

// DISABLED: rows of N > 1024 take ceil(N / 4) threads rounded up to 32, up
// to 1024 (from N > 3968), and MLX never asks the pipeline's maximum, so
// the kernels must fit 1024 threads (<= 52 registers). row_reduce_simple's
// loop (4 rows x 4 reads) is unrolled 4 times at run time; with its loads
// sunk to their uses (kFullOccupancyRegisters) it still needs 59 registers,
// 16 of its row pointers being live at once: mtlemu gives it 448 threads
// ("threadgroup size 1024x1x1 ... exceeds the pipeline's
// maxTotalThreadsPerThreadgroup (448)"). Apple's compiler unrolls less or
// spills to stay at 1024; mtlemu spills only beyond 128 registers.
TEST(MlxKernels, DISABLED_RowReduceSumThreadgroupsOf1024) {
  REQUIRE_MLX();
  const Result<isa::Module> module =
      MlxModule("reduce.metal", RowReduceKernels("sumfloat32"));
  ASSERT_TRUE(module.ok()) << module.error().message.substr(0, 4000);
  CheckRowReduceSum(module, {32, 5000});
  CheckRowReduceSum(module, {5, 5000});
}

// reduce.metal over axis 0 of a row-contiguous (R, C) array: Reduce::
// eval_gpu with get_reduction_plan's ContiguousStridedReduce
// (reduction_size R, reduction_stride C, no other reduced axis, no kept
// axis outside the stride) goes through strided_reduce_general_dispatch:
//  - R < 32: strided_reduce_small, "col_reduce_small_1_reduce_{op}":
//    threadgroups (ceil(ceil(C / 4) / x), 1, 1) of (x, y, 1), x = min(ceil(C
//    / 4), 32), y = min(8, the pipeline's maximum / x, R).
//  - C < 32 and R >= 1024: strided_reduce_longcolumn,
//    "col_reduce_longcolumn_1_reduce_{op}" into 32 partial rows
//    (outer_blocks; 128 from R >= 32768): threadgroups (1, 1, 32) of (C,
//    min(32, ceil(R / 32)), 1), the output size C (size_t) at 11.
//  - R > 256 and C / 32 < 1024: strided_reduce_2pass,
//    "col_reduce_2pass_1_32_32_reduce_{op}" into 32 partial rows: threads
//    (256 ceil(C / 32), 32, 1) in groups of 256, out.size() /
//    reduction_stride = 1 (size_t) at 11.
//  - else strided_reduce_looped, "col_reduce_looped_1_32_32_reduce_{op}":
//    threads (256 ceil(C / 32), 1, 1) in groups of 256.
// The two-pass ones end with col_reduce_looped over the (32, C)
// intermediate (ColReduceArgs(intermediate): reduction_size 32, stride C,
// reduce_shape {32}, reduce_strides {C}), threads (256 ceil(C / 32), 1, 1)
// in groups of 256. in 0, out 1, ColReduceArgs::encode: reduction_size
// (size_t) 2, reduction_stride (int64) 3, SetReduceShapes (no kept axis;
// reduce_shape {R}, reduce_strides {C}), non_col_reductions (size_t) 10.
std::vector<std::string> ColReduceKernels(const std::string& op) {
  return {"col_reduce_small_1_reduce_" + op,
          "col_reduce_looped_1_32_32_reduce_" + op,
          "col_reduce_2pass_1_32_32_reduce_" + op,
          "col_reduce_longcolumn_1_reduce_" + op};
}

void SetColReduceArgs(KernelHarness& h, uint64_t size, int64_t stride) {
  h.SetBytes(2, size);
  h.SetBytes(3, stride);
  SetReduceShapes(h, {}, {}, {static_cast<int32_t>(size)}, {stride});
  h.SetBytes(10, uint64_t{1});
}

// Runs the path MLX takes for R x C (both passes where it takes two; the
// intermediate has the output's type, so the second pass is `op` again);
// `kernel` says which.
template <class T, class U>
::testing::AssertionResult RunColReduce(const Result<isa::Module>& module,
                                        const std::string& op, int R, int C,
                                        const std::vector<T>& in,
                                        std::vector<U>& out,
                                        std::string& kernel) {
  const std::vector<std::string> kernels = ColReduceKernels(op);
  const uint64_t column_blocks = (C + 31) / 32;
  const bool small = R < 32, longcolumn = !small && C < 32 && R >= 1024;
  const bool two_pass = !small && !longcolumn && R > 256 && C / 32 < 1024;
  kernel = small        ? kernels[0]
           : longcolumn ? kernels[3]
           : two_pass   ? kernels[2]
                        : kernels[1];
  KernelHarness h = MlxKernelOf(module, kernel);
  h.SetBuffer(0, in);
  SetColReduceArgs(h, R, C);
  if (small || !(longcolumn || two_pass)) {
    h.SetBuffer(1, std::vector<U>(C, U(7)));
    ::testing::AssertionResult ran = ::testing::AssertionFailure();
    if (small) {
      const uint64_t blocks = (C + 3) / 4;
      const uint64_t x = std::min<uint64_t>(blocks, 32);
      const uint64_t y = std::min<uint64_t>(
          8, std::min<uint64_t>(
                 h.pipeline().maxTotalThreadsPerThreadgroup() / x, R));
      ran = RunsThreadgroups(h, {(blocks + x - 1) / x, 1, 1}, {x, y, 1});
    } else {
      ran = Runs(h, {256 * column_blocks, 1, 1}, {256, 1, 1});
    }
    if (ran) out = h.Read<U>(1);
    return ran;
  }
  const int outer_blocks = 32;
  h.SetBuffer(1, std::vector<U>(size_t(outer_blocks) * C, U(7)));
  ::testing::AssertionResult ran = ::testing::AssertionFailure();
  if (longcolumn) {
    h.SetBytes(11, uint64_t(C));
    const uint64_t y =
        std::min<uint64_t>(32, (R + outer_blocks - 1) / outer_blocks);
    ran = RunsThreadgroups(h, {1, 1, uint64_t{outer_blocks}},
                           {uint64_t(C), y, 1});
  } else {
    h.SetBytes(11, uint64_t{1});
    ran = Runs(h, {256 * column_blocks, outer_blocks, 1}, {256, 1, 1});
  }
  if (!ran) return ran;
  KernelHarness second = MlxKernelOf(module, kernels[1]);
  second.SetBuffer(0, h.Read<U>(1));
  second.SetBuffer(1, std::vector<U>(C, U(7)));
  SetColReduceArgs(second, outer_blocks, C);
  ran = Runs(second, {256 * column_blocks, 1, 1}, {256, 1, 1});
  if (ran) out = second.Read<U>(1);
  return ran;
}

void CheckColReduce(const Result<isa::Module>& module, int R, int C, bool max) {
  // The max sees one NaN (in column 5), which wins.
  std::vector<float> in;
  if (max) {
    in.resize(size_t(R) * C);
    for (size_t i = 0; i < in.size(); ++i) {
      in[i] = std::sin(0.37f * static_cast<float>(i)) * 100.0f;
    }
    in[size_t(R / 2) * C + 5] = NAN;
  } else {
    in = Sixteenths(size_t(R) * C, C);
  }
  std::vector<float> out;
  std::string kernel;
  ASSERT_TRUE(RunColReduce(module, max ? "maxfloat32" : "sumfloat32", R, C, in,
                           out, kernel))
      << kernel << " on " << R << " x " << C;
  const std::vector<double> expected = ReferenceReduce(in, {R, C}, {0}, max);
  for (int c = 0; c < C; ++c) {
    if (max && c == 5) {
      EXPECT_TRUE(std::isnan(out[c])) << kernel << " on " << R << " x " << C
                                      << " at " << c << ": " << out[c];
    } else {
      EXPECT_EQ(out[c], expected[c])
          << kernel << " on " << R << " x " << C << " at " << c;
    }
  }
}

// Each path, sum and max: 20 x 99 (small: one group of 25 x 8, the last
// column block partial), 250 x 77 (looped: 3 column blocks, the last of
// 13), 1000 x 37 (two passes: 2pass, then looped), 2000 x 20 (two passes:
// longcolumn, then looped).
TEST(MlxKernels, ColReduceSumAndMax) {
  REQUIRE_MLX();
  std::vector<std::string> kernels = ColReduceKernels("sumfloat32");
  for (const std::string& k : ColReduceKernels("maxfloat32")) {
    kernels.push_back(k);
  }
  const Result<isa::Module> module = MlxModule("reduce.metal", kernels);
  ASSERT_TRUE(module.ok()) << module.error().message.substr(0, 4000);
  for (const bool max : {false, true}) {
    CheckColReduce(module, 20, 99, max);
    CheckColReduce(module, 250, 77, max);
    CheckColReduce(module, 1000, 37, max);
    CheckColReduce(module, 2000, 20, max);
  }
}

// With more than 32 column blocks of 4 (C > 128) not a multiple of 32 of
// them, col_reduce_small's last threadgroup has threads past the last
// column, which `return` before the threadgroup_barrier that the others
// reach when lsize.y > 1: MLX relies on finished threads not counting at a
// barrier, as on Apple's GPUs.
TEST(MlxKernels, ColReduceSmallThreadsPastTheLastColumn) {
  REQUIRE_MLX();
  const Result<isa::Module> module =
      MlxModule("reduce.metal", ColReduceKernels("sumfloat32"));
  ASSERT_TRUE(module.ok()) << module.error().message.substr(0, 4000);
  CheckColReduce(module, 20, 300, false);
}

// all (Reduce::And) over the last axis and any (Reduce::Or) over axis 0 of
// bool arrays (remap_reduce_types: bool in, bool out: "andbool_",
// "orbool_"), and an int32 sum over the last axis ("sumint32", int32
// accumulation), with the dispatch above: 37 x 1000 (row_reduce_simple),
// 5 x 40 (row_reduce_small), 250 x 77 (col_reduce_looped), 1000 x 37
// (col_reduce_2pass, then looped). A few rows (columns) are all true, a
// few have a single false (true) near their end. The int32 values reach
// +-10^6 and the row sums ~10^8, past float's 2^24: int32 accumulation
// gets them exactly.
TEST(MlxKernels, ReduceAllAnyAndInt32Sum) {
  REQUIRE_MLX();
  std::vector<std::string> kernels = RowReduceKernels("andbool_");
  for (const std::string& k : RowReduceKernels("sumint32")) {
    kernels.push_back(k);
  }
  for (const std::string& k : ColReduceKernels("orbool_")) {
    kernels.push_back(k);
  }
  const Result<isa::Module> module = MlxModule("reduce.metal", kernels);
  ASSERT_TRUE(module.ok()) << module.error().message.substr(0, 4000);
  for (const std::vector<int>& shape :
       {std::vector<int>{37, 1000}, std::vector<int>{5, 40}}) {
    const int R = shape[0], N = shape[1];
    // all: row r is true but for r % 3 == 1 (one false at r % N from the
    // end) and r % 3 == 2 (many falses).
    std::vector<uint8_t> in(size_t(R) * N, 1);
    for (int r = 0; r < R; ++r) {
      if (r % 3 == 1) in[size_t(r) * N + N - 1 - r % N] = 0;
      if (r % 3 == 2) {
        for (int i = r % 7; i < N; i += 7) in[size_t(r) * N + i] = 0;
      }
    }
    std::vector<uint8_t> out;
    std::string kernel;
    ASSERT_TRUE(RunRowReduce(module, "andbool_", shape, in, out, kernel))
        << kernel;
    for (int r = 0; r < R; ++r) {
      EXPECT_EQ(out[r], r % 3 == 0 ? 1 : 0) << kernel << " row " << r;
    }
    std::vector<int32_t> in_i(size_t(R) * N);
    for (size_t i = 0; i < in_i.size(); ++i) {
      in_i[i] = static_cast<int32_t>((i * 7919) % 2000001) - 900000;
    }
    std::vector<int32_t> out_i;
    ASSERT_TRUE(RunRowReduce(module, "sumint32", shape, in_i, out_i, kernel))
        << kernel;
    for (int r = 0; r < R; ++r) {
      int64_t expected = 0;
      for (int i = 0; i < N; ++i) expected += in_i[size_t(r) * N + i];
      EXPECT_EQ(out_i[r], expected) << kernel << " row " << r;
    }
  }
  for (const auto& [R, C] : {std::pair{250, 77}, std::pair{1000, 37}}) {
    // any: column c is false but for c % 3 == 1 (one true at row R - 1 - c)
    // and c % 3 == 2 (many trues).
    std::vector<uint8_t> in(size_t(R) * C, 0);
    for (int c = 0; c < C; ++c) {
      if (c % 3 == 1) in[size_t(R - 1 - c) * C + c] = 1;
      if (c % 3 == 2) {
        for (int r = c % 5; r < R; r += 5) in[size_t(r) * C + c] = 1;
      }
    }
    std::vector<uint8_t> out;
    std::string kernel;
    ASSERT_TRUE(RunColReduce(module, "orbool_", R, C, in, out, kernel))
        << kernel;
    for (int c = 0; c < C; ++c) {
      EXPECT_EQ(out[c], c % 3 == 0 ? 0 : 1) << kernel << " column " << c;
    }
  }
}

// scan.metal: Scan::eval_gpu -> scan_gpu_inplace (scan.cpp).
// "{contig|strided}_scan_[reverse_]{inclusive|exclusive}_{op}_{in}_{out}";
// in 0, out 1, the scanned axis' size (size_t) at 2.
//  - Contiguous along the axis: threads (t, rows, 1) in groups of t (rows
//    = get_2d_grid_dims(shape, strides, divisor = axis size)), t = 32
//    ceil(n / 128) up to n = 4096, 32 ceil((n / 2) / 128) up to 8192, else
//    the pipeline's maximum, and at most that maximum (4 reads a thread
//    for 4-byte types): one block of 4 t per iteration, the prefix carried
//    to the next.
//  - Strided: the axis' stride (size_t) at 3, stride_blocks = ceil(stride /
//    32) (size_t) at 4; threads (256, outer * stride_blocks, 1) in groups of
//    256 (8 simdgroups, each scanning 4 columns of a 32 x 32 tile).
enum class ScanOp { kSum, kMax, kLogAddExp };

// The scan of each length-n line of `in` laid out (outer, n, inner), in
// double: element (o, i, k) at (o * n + i) * inner + k.
std::vector<double> ReferenceScan(const std::vector<double>& in, int outer,
                                  int n, int inner, ScanOp op, bool reverse,
                                  bool inclusive, double init) {
  std::vector<double> out(in.size());
  for (int o = 0; o < outer; ++o) {
    for (int k = 0; k < inner; ++k) {
      double acc = init;
      for (int step = 0; step < n; ++step) {
        const int i = reverse ? n - 1 - step : step;
        const size_t at = (size_t(o) * n + i) * inner + k;
        if (!inclusive) out[at] = acc;
        const double x = in[at];
        switch (op) {
          case ScanOp::kSum:
            acc += x;
            break;
          case ScanOp::kMax:
            acc = std::max(acc, x);
            break;
          case ScanOp::kLogAddExp: {
            const double hi = std::max(acc, x), lo = std::min(acc, x);
            acc = lo == -INFINITY ? hi : hi + std::log1p(std::exp(lo - hi));
            break;
          }
        }
        if (inclusive) out[at] = acc;
      }
    }
  }
  return out;
}

uint64_t ContigScanThreads(uint64_t n, uint64_t max) {
  uint64_t t = max;
  if (n <= 4 * 1024) {
    t = (n + 127) / 128 * 32;
  } else if (n <= 4 * 2048) {
    t = (n / 2 + 127) / 128 * 32;
  }
  return std::min(t, max);
}

// Runs a contiguous scan of `rows` rows of n (T float or int32_t).
template <class T>
::testing::AssertionResult RunContigScan(const Result<isa::Module>& module,
                                         const std::string& kernel,
                                         const std::vector<T>& in, int rows,
                                         int n, std::vector<T>& out) {
  KernelHarness h = MlxKernelOf(module, kernel);
  h.SetBuffer(0, in);
  h.SetBuffer(1, std::vector<T>(in.size(), T(-7)));
  h.SetBytes(2, uint64_t(n));
  const uint64_t t =
      ContigScanThreads(n, h.pipeline().maxTotalThreadsPerThreadgroup());
  const ::testing::AssertionResult ran =
      Runs(h, {t, uint64_t(rows), 1}, {t, 1, 1});
  if (ran) out = h.Read<T>(1);
  return ran;
}

// Rows of 300 (96 threads: one block, longer than the row), 5000 (640
// threads: 2 blocks) and 10000 (the pipeline's maximum, 1024 here: 3
// blocks).
// float32 cumsum, inclusive and reverse exclusive, on multiples of 1/16
// (every partial sum exact: checked exactly); int32 cummax, inclusive;
// float32 logaddexp, inclusive, within 2e-5 (1 + |x|): each output goes
// through a few dozen float logaddexps (4 in a thread, two 32-lane scans
// and the prefix of up to 3 blocks), each within a few ulp, and an error
// passes through the next logaddexp at most unchanged.
// Rows of `n` that must equal the reference exactly; the first 10
// differences are reported, with `what`, by row and column.
template <class T>
void ExpectRowsEqual(const std::vector<T>& out,
                     const std::vector<double>& expected, int n,
                     const std::string& what) {
  int bad = 0;
  for (size_t i = 0; i < out.size() && bad < 10; ++i) {
    if (out[i] != expected[i]) ++bad;
    EXPECT_EQ(out[i], expected[i])
        << what << ": row " << i / n << ", " << i % n;
  }
}

TEST(MlxKernels, ScanContiguous) {
  REQUIRE_MLX();
  const std::string sum = "contig_scan_inclusive_sum_float32_float32",
                    rsum = "contig_scan_reverse_exclusive_sum_float32_float32",
                    max = "contig_scan_inclusive_max_int32_int32",
                    lae = "contig_scan_inclusive_logaddexp_float32_float32";
  const Result<isa::Module> module =
      MlxModule("scan.metal", {sum, rsum, max, lae});
  ASSERT_TRUE(module.ok()) << module.error().message.substr(0, 4000);
  for (const int n : {300, 5000, 10000}) {
    const int rows = 3;
    const std::string size =
        " on " + std::to_string(rows) + " x " + std::to_string(n);
    const std::vector<float> in = Sixteenths(size_t(rows) * n, n);
    const std::vector<double> in_d(in.begin(), in.end());
    for (const bool reverse : {false, true}) {
      const std::string& kernel = reverse ? rsum : sum;
      std::vector<float> out;
      ASSERT_TRUE(RunContigScan(module, kernel, in, rows, n, out))
          << kernel << size;
      ExpectRowsEqual(
          out,
          ReferenceScan(in_d, rows, n, 1, ScanOp::kSum, reverse, !reverse, 0.0),
          n, kernel + size);
    }
    {
      std::vector<int32_t> in_i(size_t(rows) * n);
      for (size_t i = 0; i < in_i.size(); ++i) {
        // Rising with noise: the running max changes every few elements.
        in_i[i] = static_cast<int32_t>(int64_t(i % n) * 200000 -
                                       int64_t((i * 7919) % 100003) * 10000);
      }
      std::vector<int32_t> out;
      ASSERT_TRUE(RunContigScan(module, max, in_i, rows, n, out))
          << max << size;
      ExpectRowsEqual(
          out,
          ReferenceScan(std::vector<double>(in_i.begin(), in_i.end()), rows, n,
                        1, ScanOp::kMax, false, true, -INFINITY),
          n, max + size);
    }
    {
      std::vector<float> in_f(size_t(rows) * n);
      for (size_t i = 0; i < in_f.size(); ++i) {
        in_f[i] = std::sin(0.37f * static_cast<float>(i)) * 5.0f;
      }
      std::vector<float> out;
      ASSERT_TRUE(RunContigScan(module, lae, in_f, rows, n, out))
          << lae << size;
      const std::vector<double> expected =
          ReferenceScan(std::vector<double>(in_f.begin(), in_f.end()), rows, n,
                        1, ScanOp::kLogAddExp, false, true, -INFINITY);
      int bad = 0;
      for (size_t i = 0; i < out.size() && bad < 10; ++i) {
        const double tolerance = 2e-5 * (1 + std::fabs(expected[i]));
        if (!(std::fabs(out[i] - expected[i]) <= tolerance)) ++bad;
        EXPECT_NEAR(out[i], expected[i], tolerance)
            << lae << size << ": row " << i / n << ", " << i % n;
      }
    }
  }
}

// A float32 cumsum over axis 1 of a row-contiguous (3, 100, 77) array
// (stride 77: "strided_scan_"), exclusive and reverse inclusive:
// get_2d_grid_dims(shape, strides, divisor 100 * 77) = (3, 1, 1), times
// stride_blocks 3: threads (256, 9, 1) in groups of 256. 100 rows take 4
// tiles of 32; the last column block has 13 columns. Multiples of 1/16:
// checked exactly.
TEST(MlxKernels, ScanStrided) {
  REQUIRE_MLX();
  const std::string exclusive = "strided_scan_exclusive_sum_float32_float32",
                    reverse =
                        "strided_scan_reverse_inclusive_sum_float32_float32";
  const Result<isa::Module> module =
      MlxModule("scan.metal", {exclusive, reverse});
  ASSERT_TRUE(module.ok()) << module.error().message.substr(0, 4000);
  const int B = 3, n = 100, C = 77;
  const uint64_t stride_blocks = (C + 31) / 32;
  const std::vector<float> in = Sixteenths(size_t(B) * n * C, 5);
  for (const bool is_reverse : {false, true}) {
    const std::string& kernel = is_reverse ? reverse : exclusive;
    KernelHarness h = MlxKernelOf(module, kernel);
    h.SetBuffer(0, in);
    h.SetBuffer(1, std::vector<float>(in.size(), -7.0f));
    h.SetBytes(2, uint64_t{n});
    h.SetBytes(3, uint64_t{C});
    h.SetBytes(4, stride_blocks);
    ASSERT_TRUE(Runs(h, {256, B * stride_blocks, 1}, {256, 1, 1})) << kernel;
    const std::vector<float> out = h.Read<float>(1);
    const std::vector<double> expected =
        ReferenceScan(std::vector<double>(in.begin(), in.end()), B, n, C,
                      ScanOp::kSum, is_reverse, is_reverse, 0.0);
    int bad = 0;
    for (size_t i = 0; i < out.size() && bad < 10; ++i) {
      if (out[i] != expected[i]) ++bad;
      EXPECT_EQ(out[i], expected[i]) << kernel << " at (" << i / (n * C) << ", "
                                     << i / C % n << ", " << i % C << ")";
    }
  }
}

}  // namespace
}  // namespace mtlemu
