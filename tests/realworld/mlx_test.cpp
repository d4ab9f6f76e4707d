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

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/msl_compiler.h"
#include "isa/numeric.h"
#include "tests/support/kernel_harness.h"

namespace mtlemu {
namespace {

using testing::KernelHarness;
using testing::Runs;

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

// One kernel of an MLX file, compiled as MLX's build does (-I the root).
KernelHarness MlxKernel(const std::string& file, const std::string& kernel) {
  const std::filesystem::path path = KernelsDir() / file;
  return KernelHarness(compiler::CompileMsl(ReadText(path), path.string(),
                                            MlxOptions(), {kernel}),
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
      EXPECT_EQ(std::count(message.begin(), message.end(), '\n'), 2)
          << name << ": " << message;
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
  h.SetBytesRaw(2, shape.data(), shape.size() * sizeof(int32_t));
  h.SetBytesRaw(3, strides.data(), strides.size() * sizeof(int64_t));
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
    h.SetBytesRaw(3, strides_a.data(), strides_a.size() * sizeof(int64_t));
    h.SetBytesRaw(4, strides_b.data(), strides_b.size() * sizeof(int64_t));
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
  h.SetBytesRaw(3, strides.data(), strides.size() * sizeof(int64_t));
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

}  // namespace
}  // namespace mtlemu
