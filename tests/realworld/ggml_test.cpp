// llama.cpp's Metal backend (ggml's src/ggml-metal/ggml-metal.metal, shared
// by llama.cpp and whisper.cpp) through mtlemu: the whole file compiles
// with the macros its host passes, and kernels run as the host dispatches
// them (ggml-metal-ops.cpp: the bytes struct at index 0, the buffers after
// it, the grid; ggml-metal-device.cpp: the pipeline's name and function
// constants), each checked against a reference written here from what the
// operation means, in double.
//
// ggml's code is not part of this project: the tests read a snapshot from
// the folder MTLEMU_GGML_DIR names (a checkout of github.com/ggml-org/ggml,
// or of llama.cpp, whose ggml/ folder is the same), else the CMake option
// of that name, and skip, saying so, without one. `bash
// scripts/realworld.sh` runs them.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "compiler/msl_compiler.h"
#include "isa/numeric.h"
#include "tests/support/kernel_harness.h"

namespace mtlemu {
namespace {

using testing::KernelHarness;
using testing::RunsThreadgroups;
namespace fs = std::filesystem;

// The folder with ggml-metal.metal and the one with ggml-common.h: ggml's
// layout (src/ggml-metal) or llama.cpp's (ggml/src/ggml-metal).
struct GgmlPaths {
  fs::path metal_dir;
  fs::path src_dir;
};

std::optional<std::string> GgmlRoot() {
  const char* env = std::getenv("MTLEMU_GGML_DIR");
  std::string dir = env != nullptr ? env : MTLEMU_GGML_DIR_DEFAULT;
  if (dir.empty()) return std::nullopt;
  return dir;
}

std::optional<GgmlPaths> FindGgml(const fs::path& root) {
  for (const fs::path& src : {root / "src", root / "ggml" / "src"}) {
    if (fs::is_regular_file(src / "ggml-metal" / "ggml-metal.metal") &&
        fs::is_regular_file(src / "ggml-common.h")) {
      return GgmlPaths{src / "ggml-metal", src};
    }
  }
  return std::nullopt;
}

#define REQUIRE_GGML()                                                      \
  do {                                                                      \
    if (!GgmlRoot()) {                                                      \
      GTEST_SKIP() << "MTLEMU_GGML_DIR is not set: give it a snapshot of "  \
                      "github.com/ggml-org/ggml (or llama.cpp) to run its " \
                      "Metal kernels";                                      \
    }                                                                       \
    if (!FindGgml(*GgmlRoot())) {                                           \
      FAIL() << "MTLEMU_GGML_DIR=" << *GgmlRoot()                           \
             << " has no src/ggml-metal/ggml-metal.metal with "             \
                "src/ggml-common.h (nor ggml/src/...)";                     \
    }                                                                       \
  } while (0)

std::string ReadText(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

const std::string& Source() {
  static const std::string text =
      ReadText(FindGgml(*GgmlRoot())->metal_dir / "ggml-metal.metal");
  return text;
}

// What ggml_metal_library_init (ggml-metal-device.m) passes: the folders
// of its two headers, and GGML_METAL_HAS_BF16 where the device has bfloat.
msl::CompileOptions GgmlOptions(bool bf16 = false) {
  const GgmlPaths paths = *FindGgml(*GgmlRoot());
  msl::CompileOptions options;
  options.include_directories = {paths.metal_dir.string(),
                                 paths.src_dir.string()};
  if (bf16) options.macros.emplace_back("GGML_METAL_HAS_BF16", "1");
  return options;
}

// One kernel by its [[host_name]], with the function constants that
// ggml_metal_library_compile_pipeline gives it ("INDEX" -> value).
KernelHarness GgmlKernel(
    const std::string& name,
    const std::vector<std::pair<std::string, std::string>>& constants = {}) {
  msl::CompileOptions options = GgmlOptions();
  options.function_constants = constants;
  return KernelHarness(
      compiler::CompileMsl(Source(), "ggml-metal.metal", options, {name}),
      name);
}

// A contiguous ggml tensor's shape: ne[0] innermost, nb[i] in bytes.
struct Shape {
  int64_t ne[4];
  uint64_t nb[4];
  int64_t elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
  int64_t rows() const { return ne[1] * ne[2] * ne[3]; }
};
Shape Contiguous(uint64_t type_size, int64_t ne0, int64_t ne1 = 1,
                 int64_t ne2 = 1, int64_t ne3 = 1) {
  Shape s{{ne0, ne1, ne2, ne3}, {type_size, 0, 0, 0}};
  for (int i = 1; i < 4; ++i) s.nb[i] = s.nb[i - 1] * s.ne[i - 1];
  return s;
}

std::vector<float> Random(size_t n, uint32_t seed, float lo = -2.0f,
                          float hi = 2.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

std::vector<uint16_t> ToHalf(const std::vector<float>& v) {
  std::vector<uint16_t> h(v.size());
  for (size_t i = 0; i < v.size(); ++i) h[i] = isa::FloatToHalfBits(v[i]);
  return h;
}
std::vector<float> FromHalf(const std::vector<uint16_t>& h) {
  std::vector<float> v(h.size());
  for (size_t i = 0; i < h.size(); ++i) v[i] = isa::HalfBitsToFloat(h[i]);
  return v;
}

// |got - want| <= atol + rtol * |want| for every element; one message for
// the first few that are not.
::testing::AssertionResult Near(const std::vector<float>& got,
                                const std::vector<double>& want, double rtol,
                                double atol) {
  if (got.size() < want.size()) {
    return ::testing::AssertionFailure()
           << got.size() << " values, " << want.size() << " expected";
  }
  int bad = 0;
  std::ostringstream why;
  for (size_t i = 0; i < want.size(); ++i) {
    const double d = std::fabs(got[i] - want[i]);
    if (!(d <= atol + rtol * std::fabs(want[i]))) {
      if (bad++ < 5) {
        why << "\n  [" << i << "] " << got[i] << ", expected " << want[i];
      }
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << bad << " of " << want.size() << " differ:" << why.str();
}

// --- the whole file ---------------------------------------------------------

TEST(GgmlMetal, WholeFileCompiles) {
  REQUIRE_GGML();
  const auto start = std::chrono::steady_clock::now();
  Result<isa::Module> module =
      compiler::CompileMsl(Source(), "ggml-metal.metal", GgmlOptions());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  ASSERT_TRUE(module.ok()) << module.error().message.substr(0, 4000);
  EXPECT_GT(module.value().kernels.size(), 500u);
  std::printf("ggml-metal.metal: %zu kernels in %.2f s\n",
              module.value().kernels.size(), seconds);
}

// --- unary ops: kernel_unary_impl -------------------------------------------
// ggml_metal_library_get_pipeline_unary: FC_UNARY + 0 the op's number,
// FC_UNARY + 1 whether the tensor is contiguous and small (one thread per
// element, one threadgroup of one each); ggml_metal_op_unary: the kargs at
// 0, src0 at 1, dst at 2; ne00 and ne0 in float4s for the _4 kernels; else
// ceil(ne00 / nth) * ne01 x ne02 x ne03 threadgroups of nth = min(256,
// ne00) threads.

struct GgmlKargsUnary {
  int32_t ne00, ne01, ne02, ne03;
  uint64_t nb00, nb01, nb02, nb03;
  int32_t ne0, ne1, ne2, ne3;
  uint64_t nb0, nb1, nb2, nb3;
  float slope, scale, bias, val, min, max;
};

struct UnaryOp {
  const char* name;
  int number;  // OP_UNARY_NUM_* (ggml-metal-impl.h)
  std::function<double(double)> f;
  double lo = -2.0, hi = 2.0;  // the inputs' range
};

constexpr double kSqrt2OverPi = 0.79788456080286535587989211986876;
constexpr double kGeluCoefA = 0.044715;

const std::vector<UnaryOp>& UnaryOps() {
  static const std::vector<UnaryOp> ops = {
      {"scale", 10, [](double x) { return 1.5 * x + 0.25; }},
      {"clamp", 12, [](double x) { return std::clamp(x, -0.5, 0.75); }},
      {"sqr", 13, [](double x) { return x * x; }},
      {"sqrt", 14, [](double x) { return std::sqrt(x); }, 0.0, 4.0},
      {"sin", 15, [](double x) { return std::sin(x); }},
      {"cos", 16, [](double x) { return std::cos(x); }},
      {"log", 17, [](double x) { return std::log(x); }, 0.1, 4.0},
      {"leaky_relu", 18, [](double x) { return x > 0 ? x : 0.1 * x; }},
      {"tanh", 100, [](double x) { return std::tanh(x); }},
      {"relu", 101, [](double x) { return std::max(0.0, x); }},
      {"sigmoid", 102, [](double x) { return 1 / (1 + std::exp(-x)); }},
      {"gelu", 103,
       [](double x) {
         return 0.5 * x *
                (1 + std::tanh(kSqrt2OverPi * x * (1 + kGeluCoefA * x * x)));
       }},
      {"silu", 106, [](double x) { return x / (1 + std::exp(-x)); }},
      {"neg", 108, [](double x) { return -x; }},
      {"abs", 109, [](double x) { return std::fabs(x); }},
      {"exp", 114, [](double x) { return std::exp(x); }},
      {"floor", 117, [](double x) { return std::floor(x); }},
  };
  return ops;
}

// One unary op on a [ne0, ne1, ne2] tensor through `kernel` (f32, f32_4 or
// f16), as the host would.
void RunUnary(const std::string& kernel, const UnaryOp& op, int64_t ne0,
              int64_t ne1, int64_t ne2) {
  SCOPED_TRACE(kernel + " " + op.name);
  const bool c4 = kernel.ends_with("_4");
  const bool half = kernel.find("f16") != std::string::npos;
  const uint64_t size = half ? 2 : 4;
  const Shape s = Contiguous(size, ne0, ne1, ne2);
  const bool cnt = s.elements() < 32768;
  KernelHarness h = GgmlKernel(kernel, {{"1200", std::to_string(op.number)},
                                        {"1201", cnt ? "true" : "false"}});
  ASSERT_TRUE(h.status().ok()) << h.status().error().message;
  std::vector<float> x = Random(s.elements(), 11, op.lo, op.hi);
  if (half) x = FromHalf(ToHalf(x));
  GgmlKargsUnary args{};
  args.ne00 = args.ne0 = static_cast<int32_t>(c4 ? ne0 / 4 : ne0);
  args.ne01 = args.ne1 = static_cast<int32_t>(ne1);
  args.ne02 = args.ne2 = static_cast<int32_t>(ne2);
  args.ne03 = args.ne3 = 1;
  args.nb00 = args.nb0 = s.nb[0];
  args.nb01 = args.nb1 = s.nb[1];
  args.nb02 = args.nb2 = s.nb[2];
  args.nb03 = args.nb3 = s.nb[3];
  args.slope = 0.1f;  // GGML_OP_LEAKY_RELU's op_params[0]
  args.scale = 1.5f;  // GGML_OP_SCALE's
  args.bias = 0.25f;
  args.min = -0.5f;  // GGML_OP_CLAMP's
  args.max = 0.75f;
  h.SetBytes(0, args);
  if (half) {
    h.SetBuffer(1, ToHalf(x));
    h.SetBuffer(2, std::vector<uint16_t>(s.elements(), 0));
  } else {
    h.SetBuffer(1, x);
    h.SetBuffer(2, std::vector<float>(s.elements(), 0));
  }
  if (cnt) {
    const int64_t n = c4 ? s.elements() / 4 : s.elements();
    ASSERT_TRUE(
        RunsThreadgroups(h, {static_cast<uint64_t>(n), 1, 1}, {1, 1, 1}));
  } else {
    const int64_t nth = std::min<int64_t>(256, args.ne00);
    const int64_t nk0 = (args.ne00 + nth - 1) / nth;
    ASSERT_TRUE(RunsThreadgroups(
        h, {static_cast<uint64_t>(nk0 * ne1), static_cast<uint64_t>(ne2), 1},
        {static_cast<uint64_t>(nth), 1, 1}));
  }
  const std::vector<float> got =
      half ? FromHalf(h.Read<uint16_t>(2)) : h.Read<float>(2);
  std::vector<double> want(x.size());
  for (size_t i = 0; i < x.size(); ++i) want[i] = op.f(x[i]);
  // Fast math (the host leaves it on): a few ulp of float; half's rounding.
  EXPECT_TRUE(Near(got, want, half ? 2e-3 : 2e-5, half ? 2e-3 : 2e-6));
}

TEST(GgmlMetal, UnaryOpsF32) {
  REQUIRE_GGML();
  for (const UnaryOp& op : UnaryOps())
    RunUnary("kernel_unary_f32_f32", op, 37, 5, 3);
}

TEST(GgmlMetal, UnaryOpsF32x4LargeTensorsByRow) {
  REQUIRE_GGML();
  // 300 x 40 x 3 = 36,000 elements: not `cnt`, one row per threadgroup.
  for (const UnaryOp& op : UnaryOps()) {
    RunUnary("kernel_unary_f32_f32_4", op, 300, 40, 3);
  }
}

TEST(GgmlMetal, UnaryOpsF16) {
  REQUIRE_GGML();
  for (const UnaryOp& op : UnaryOps()) {
    if (std::string(op.name) == "exp") continue;  // beyond half's precision
    RunUnary("kernel_unary_f16_f16", op, 64, 6, 1);
  }
}

// --- binary ops with broadcasting: kernel_bin_fuse_impl
// ----------------------- ggml_metal_library_get_pipeline_bin: FC_BIN + 0 the
// op (add, sub, mul, div), + 1 how many ops are fused, + 2 `rb` (both
// contiguous, src1 one row, under 65,536 elements: one thread per element), + 3
// `cb` (src1's rows are shorter: it repeats along them); ggml_metal_op_bin:
// kargs at 0, src0, src1, dst at 1, 2, 3; o1[j] the fused src1s' offsets in
// src1's buffer; rb: ne0 x rows threadgroups of one thread, else ne01 x ne02 x
// ne03 threadgroups of the least power of two nth with 2 nth >= ne0 (at
// most 256).

struct GgmlKargsBin {
  int32_t ne00, ne01, ne02, ne03;
  uint64_t nb00, nb01, nb02, nb03;
  int32_t ne10, ne11, ne12, ne13;
  uint64_t nb10, nb11, nb12, nb13;
  int32_t ne0, ne1, ne2, ne3;
  uint64_t nb0, nb1, nb2, nb3;
  uint64_t offs;
  uint64_t o1[8];
};

double BinOp(int op, double a, double b) {
  switch (op) {
    case 0:
      return a + b;
    case 1:
      return a - b;
    case 2:
      return a * b;
    default:
      return a / b;
  }
}

// dst = src0 OP src1 (src1 broadcast to src0's shape by repeating it), or
// with `fuse` > 1 src0 OP src1[0] OP src1[1] ... (ggml's fused adds).
void RunBin(const std::string& kernel, int op, Shape a, Shape b, int fuse = 1) {
  SCOPED_TRACE(kernel + " op " + std::to_string(op) + " fuse " +
               std::to_string(fuse) + " src1 " + std::to_string(b.ne[0]) + "x" +
               std::to_string(b.ne[1]) + "x" + std::to_string(b.ne[2]));
  const bool c4 = kernel.ends_with("_4");
  const bool half = kernel.find("f16") != std::string::npos;
  const bool rb = b.rows() == 1 && a.elements() < 65536;
  const bool cb = a.ne[0] != b.ne[0];
  KernelHarness h = GgmlKernel(kernel, {{"1300", std::to_string(op)},
                                        {"1301", std::to_string(fuse)},
                                        {"1302", rb ? "true" : "false"},
                                        {"1303", cb ? "true" : "false"}});
  ASSERT_TRUE(h.status().ok()) << h.status().error().message;
  std::vector<float> x = Random(a.elements(), 3);
  // Divisors away from zero.
  std::vector<float> y = Random(b.elements() * fuse, 5, 0.5f, 2.0f);
  if (half) {
    x = FromHalf(ToHalf(x));
    y = FromHalf(ToHalf(y));
  }
  GgmlKargsBin args{};
  const int div = c4 ? 4 : 1;
  args.ne00 = static_cast<int32_t>(a.ne[0] / div);
  args.ne01 = static_cast<int32_t>(a.ne[1]);
  args.ne02 = static_cast<int32_t>(a.ne[2]);
  args.ne03 = static_cast<int32_t>(a.ne[3]);
  args.ne10 = static_cast<int32_t>(b.ne[0] / div);
  args.ne11 = static_cast<int32_t>(b.ne[1]);
  args.ne12 = static_cast<int32_t>(b.ne[2]);
  args.ne13 = static_cast<int32_t>(b.ne[3]);
  args.ne0 = args.ne00;
  args.ne1 = args.ne01;
  args.ne2 = args.ne02;
  args.ne3 = args.ne03;
  for (int i = 0; i < 4; ++i) {
    (&args.nb00)[i] = a.nb[i];
    (&args.nb10)[i] = b.nb[i];
    (&args.nb0)[i] = a.nb[i];
  }
  for (int j = 0; j < fuse; ++j) {
    args.o1[j] = static_cast<uint64_t>(j) * b.elements() * b.nb[0];
  }
  h.SetBytes(0, args);
  if (half) {
    h.SetBuffer(1, ToHalf(x));
    h.SetBuffer(2, ToHalf(y));
    h.SetBuffer(3, std::vector<uint16_t>(a.elements(), 0));
  } else {
    h.SetBuffer(1, x);
    h.SetBuffer(2, y);
    h.SetBuffer(3, std::vector<float>(a.elements(), 0));
  }
  if (rb) {
    ASSERT_TRUE(RunsThreadgroups(
        h,
        {static_cast<uint64_t>(args.ne0), static_cast<uint64_t>(a.rows()), 1},
        {1, 1, 1}));
  } else {
    uint64_t nth = 1;
    while (2 * nth < static_cast<uint64_t>(args.ne0) && nth < 256) nth *= 2;
    ASSERT_TRUE(RunsThreadgroups(
        h,
        {static_cast<uint64_t>(a.ne[1]), static_cast<uint64_t>(a.ne[2]),
         static_cast<uint64_t>(a.ne[3])},
        {nth, 1, 1}));
  }
  const std::vector<float> got =
      half ? FromHalf(h.Read<uint16_t>(3)) : h.Read<float>(3);
  std::vector<double> want(x.size());
  for (int64_t i3 = 0; i3 < a.ne[3]; ++i3) {
    for (int64_t i2 = 0; i2 < a.ne[2]; ++i2) {
      for (int64_t i1 = 0; i1 < a.ne[1]; ++i1) {
        for (int64_t i0 = 0; i0 < a.ne[0]; ++i0) {
          const int64_t i = ((i3 * a.ne[2] + i2) * a.ne[1] + i1) * a.ne[0] + i0;
          const int64_t k =
              (((i3 % b.ne[3]) * b.ne[2] + i2 % b.ne[2]) * b.ne[1] +
               i1 % b.ne[1]) *
                  b.ne[0] +
              i0 % b.ne[0];
          double r = x[i];
          for (int j = 0; j < fuse; ++j) {
            r = BinOp(op, r, y[j * b.elements() + k]);
            // A fused chain in half rounds after each op, as the kernel's
            // T0 accumulator does.
            if (half) r = isa::HalfBitsToFloat(isa::FloatToHalfBits(r));
          }
          want[i] = r;
        }
      }
    }
  }
  EXPECT_TRUE(Near(got, want, half ? 1e-3 : 1e-6, half ? 1e-3 : 1e-6));
}

TEST(GgmlMetal, BinaryOpsWithBroadcasting) {
  REQUIRE_GGML();
  for (int op = 0; op < 4; ++op) {
    // Same shapes; src1 repeated along rows and planes; one row of src1
    // (rb); src1 rows shorter than src0's (cb).
    RunBin("kernel_bin_fuse_f32_f32_f32", op, Contiguous(4, 70, 6, 3),
           Contiguous(4, 70, 6, 3));
    RunBin("kernel_bin_fuse_f32_f32_f32", op, Contiguous(4, 70, 6, 3),
           Contiguous(4, 70, 3, 1));
    RunBin("kernel_bin_fuse_f32_f32_f32", op, Contiguous(4, 70, 6, 3),
           Contiguous(4, 70));
    RunBin("kernel_bin_fuse_f32_f32_f32", op, Contiguous(4, 72, 6, 3),
           Contiguous(4, 8, 6, 3));
    RunBin("kernel_bin_fuse_f32_f32_f32_4", op, Contiguous(4, 64, 5, 2),
           Contiguous(4, 64, 1, 2));
    RunBin("kernel_bin_fuse_f16_f16_f16", op, Contiguous(2, 40, 4, 2),
           Contiguous(2, 40, 4, 1));
    RunBin("kernel_bin_fuse_f16_f16_f16_4", op, Contiguous(2, 48, 3),
           Contiguous(2, 48));
  }
}

TEST(GgmlMetal, FusedAdds) {
  REQUIRE_GGML();
  // ggml_metal_op_bin fuses a chain of adds of same-layout src1s in one
  // buffer (n_fuse up to 8): rows and whole-tensor forms.
  RunBin("kernel_bin_fuse_f32_f32_f32", 0, Contiguous(4, 96, 4, 2),
         Contiguous(4, 96, 4, 2), 3);
  RunBin("kernel_bin_fuse_f32_f32_f32_4", 0, Contiguous(4, 128, 3),
         Contiguous(4, 128), 4);
}

// --- softmax with mask and ALiBi: kernel_soft_max, kernel_soft_max_4 ---------
// ggml_metal_library_get_pipeline_soft_max: kernel_soft_max_{f32,f16}
// after the mask's type, _4 where ne00 % 4 == 0, 32 floats of threadgroup
// memory; ggml_metal_op_soft_max: kargs at 0, src0 at 1, the mask at 2 and
// the sinks at 3 (src0 itself where there is none: the kernel tests for
// that), dst at 4; ne01 x ne02 x ne03 threadgroups of nth threads, 32
// doubled while nth < ne00 (/4) and nth * rows < 256; m0, m1 and
// n_head_log2 from max_bias as the host computes them.

struct GgmlKargsSoftMax {
  int32_t ne00, ne01, ne02;
  uint64_t nb01, nb02, nb03;
  int32_t ne11, ne12, ne13;
  uint64_t nb11, nb12, nb13;
  uint64_t nb1, nb2, nb3;
  float scale, max_bias, m0, m1;
  int32_t n_head_log2;
};

// softmax(x * scale + slope(head) * mask) over each row of [ne00, ne01,
// ne02]; the mask [ne00, ne01] (f32 or f16, or none) is the same for every
// head.
void RunSoftMax(int64_t ne00, int64_t ne01, int64_t ne02, const char* mask,
                float scale, float max_bias) {
  SCOPED_TRACE("soft_max ne00 " + std::to_string(ne00) + " mask " + mask +
               " max_bias " + std::to_string(max_bias));
  const bool c4 = ne00 % 4 == 0;
  const bool half_mask = std::string(mask) == "f16";
  const bool has_mask = std::string(mask) != "none";
  const std::string kernel = std::string("kernel_soft_max_") +
                             (half_mask ? "f16" : "f32") + (c4 ? "_4" : "");
  KernelHarness h = GgmlKernel(kernel);
  ASSERT_TRUE(h.status().ok()) << h.status().error().message;
  const Shape s = Contiguous(4, ne00, ne01, ne02);
  const Shape m = Contiguous(half_mask ? 2 : 4, ne00, ne01);
  std::vector<float> x = Random(s.elements(), 21, -4.0f, 4.0f);
  std::vector<float> mk = Random(m.elements(), 22, -2.0f, 0.0f);
  if (half_mask) mk = FromHalf(ToHalf(mk));
  const uint32_t n_head = static_cast<uint32_t>(ne02);
  const int32_t n_head_log2 =
      1u << static_cast<uint32_t>(std::floor(std::log2(float(n_head))));
  GgmlKargsSoftMax args{};
  args.ne00 = static_cast<int32_t>(ne00);
  args.ne01 = static_cast<int32_t>(ne01);
  args.ne02 = static_cast<int32_t>(ne02);
  args.nb01 = s.nb[1];
  args.nb02 = s.nb[2];
  args.nb03 = s.nb[3];
  args.ne11 = static_cast<int32_t>(m.ne[1]);
  args.ne12 = static_cast<int32_t>(m.ne[2]);
  args.ne13 = static_cast<int32_t>(m.ne[3]);
  args.nb11 = m.nb[1];
  args.nb12 = m.nb[2];
  args.nb13 = m.nb[3];
  args.nb1 = s.nb[1];
  args.nb2 = s.nb[2];
  args.nb3 = s.nb[3];
  args.scale = scale;
  args.max_bias = max_bias;
  args.m0 = std::pow(2.0f, -max_bias / n_head_log2);
  args.m1 = std::pow(2.0f, -(max_bias / 2.0f) / n_head_log2);
  args.n_head_log2 = n_head_log2;
  h.SetBytes(0, args);
  h.SetBuffer(1, x);
  // No mask, no sinks: src0's own buffer, as the host binds it.
  if (has_mask && half_mask) {
    h.SetBuffer(2, ToHalf(mk));
  } else if (has_mask) {
    h.SetBuffer(2, mk);
  } else {
    h.SetSameBuffer(2, 1);
  }
  h.SetSameBuffer(3, 1);
  h.SetBuffer(4, std::vector<float>(s.elements(), 0));
  ASSERT_TRUE(h.SetThreadgroupMemoryLength(32 * sizeof(float), 0).ok());
  uint64_t nth = 32;
  const int64_t per_thread = c4 ? ne00 / 4 : ne00;
  while (static_cast<int64_t>(nth) < per_thread &&
         nth * static_cast<uint64_t>(ne01 * ne02) < 256) {
    nth *= 2;
  }
  ASSERT_TRUE(RunsThreadgroups(
      h, {static_cast<uint64_t>(ne01), static_cast<uint64_t>(ne02), 1},
      {nth, 1, 1}));
  const std::vector<float> got = h.Read<float>(4);
  std::vector<double> want(x.size());
  for (int64_t i2 = 0; i2 < ne02; ++i2) {
    double slope = 1.0;
    if (max_bias > 0) {
      const double base = i2 < n_head_log2 ? args.m0 : args.m1;
      const int e = i2 < n_head_log2 ? i2 + 1 : 2 * (i2 - n_head_log2) + 1;
      slope = std::pow(base, e);
    }
    for (int64_t i1 = 0; i1 < ne01; ++i1) {
      const int64_t row = (i2 * ne01 + i1) * ne00;
      double max = -INFINITY;
      std::vector<double> v(ne00);
      for (int64_t i0 = 0; i0 < ne00; ++i0) {
        v[i0] = double(x[row + i0]) * scale +
                (has_mask ? slope * mk[i1 * ne00 + i0] : 0.0);
        max = std::max(max, v[i0]);
      }
      double sum = 0;
      for (double& e : v) sum += (e = std::exp(e - max));
      for (int64_t i0 = 0; i0 < ne00; ++i0) want[row + i0] = v[i0] / sum;
    }
  }
  EXPECT_TRUE(Near(got, want, 1e-5, 1e-7));
}

TEST(GgmlMetal, SoftMaxWithMasksAndAlibi) {
  REQUIRE_GGML();
  RunSoftMax(100, 3, 4, "none", 0.7f, 0.0f);
  RunSoftMax(100, 3, 4, "f32", 0.7f, 0.0f);
  RunSoftMax(128, 3, 4, "f32", 0.125f, 8.0f);  // ALiBi, 4 heads
  RunSoftMax(96, 2, 6, "f16", 1.0f, 8.0f);     // 6 heads: m0 and m1
  RunSoftMax(1000, 2, 1, "f16", 0.5f, 0.0f);   // more than a SIMD group
}

// --- norm and rms_norm, with the fused mul and add: kernel_*norm_fuse_impl --
// ggml_metal_library_get_pipeline_norm: kernel_{norm,rms_norm}{,_mul,
// _mul_add}_f32{,_4} (_4 where ne00 % 4 == 0), 32 floats of threadgroup
// memory; ggml_metal_op_norm: kargs at 0 (ne00_t: ne00 in float4s where
// it divides), src0 at 1, the fused mul's and add's src1 at 2 and 3 (src0
// where not fused), dst at 4; ne01 x ne02 x ne03 threadgroups of nth: 32
// doubled while below ne00_t, at most the pipeline's maximum, rounded to
// the SIMD groups ne00_t needs.

struct GgmlKargsNorm {
  int32_t ne00, ne00_t;
  uint64_t nb1, nb2, nb3;
  float eps;
  int32_t nef1[3], nef2[3], nef3[3];
  uint64_t nbf1[3], nbf2[3], nbf3[3];
};

// y = norm(x) [* w [+ b]] over rows of [ne00, ne01, ne02]; w and b are one
// row each (broadcast over rows: nef1 = 1).
void RunNorm(bool rms, int fuse, int64_t ne00, int64_t ne01, int64_t ne02) {
  const bool c4 = ne00 % 4 == 0;
  const std::string kernel =
      std::string(rms ? "kernel_rms_norm" : "kernel_norm") +
      (fuse == 2   ? "_mul"
       : fuse == 3 ? "_mul_add"
                   : "") +
      "_f32" + (c4 ? "_4" : "");
  SCOPED_TRACE(kernel + " ne00 " + std::to_string(ne00));
  KernelHarness h = GgmlKernel(kernel);
  ASSERT_TRUE(h.status().ok()) << h.status().error().message;
  const Shape s = Contiguous(4, ne00, ne01, ne02);
  const std::vector<float> x = Random(s.elements(), 31, -3.0f, 3.0f);
  const std::vector<float> w = Random(ne00, 32, 0.5f, 1.5f);
  const std::vector<float> b = Random(ne00, 33);
  GgmlKargsNorm args{};
  args.ne00 = static_cast<int32_t>(ne00);
  args.ne00_t = static_cast<int32_t>(c4 ? ne00 / 4 : ne00);
  args.nb1 = s.nb[1];
  args.nb2 = s.nb[2];
  args.nb3 = s.nb[3];
  args.eps = 1e-5f;
  args.nef1[0] = static_cast<int32_t>(ne01);
  args.nef2[0] = static_cast<int32_t>(ne02);
  args.nef3[0] = 1;
  args.nbf1[0] = s.nb[1];
  args.nbf2[0] = s.nb[2];
  args.nbf3[0] = s.nb[3];
  for (int j = 1; j < 3; ++j) {  // the fused operands: one row each
    args.nef1[j] = args.nef2[j] = args.nef3[j] = 1;
    args.nbf1[j] = args.nbf2[j] = args.nbf3[j] = ne00 * 4;
  }
  h.SetBytes(0, args);
  h.SetBuffer(1, x);
  if (fuse >= 2) {
    h.SetBuffer(2, w);
  } else {
    h.SetSameBuffer(2, 1);
  }
  if (fuse == 3) {
    h.SetBuffer(3, b);
  } else {
    h.SetSameBuffer(3, 1);
  }
  h.SetBuffer(4, std::vector<float>(s.elements(), 0));
  ASSERT_TRUE(h.SetThreadgroupMemoryLength(32 * sizeof(float), 0).ok());
  const uint64_t max_threads = h.pipeline().maxTotalThreadsPerThreadgroup();
  uint64_t nth = 32;
  while (nth < static_cast<uint64_t>(args.ne00_t) && nth < max_threads) {
    nth *= 2;
  }
  nth = std::min<uint64_t>(nth, max_threads);
  nth = std::min<uint64_t>(nth, (args.ne00_t + 31) / 32 * 32);
  ASSERT_TRUE(RunsThreadgroups(
      h, {static_cast<uint64_t>(ne01), static_cast<uint64_t>(ne02), 1},
      {nth, 1, 1}));
  const std::vector<float> got = h.Read<float>(4);
  std::vector<double> want(x.size());
  for (int64_t r = 0; r < ne01 * ne02; ++r) {
    const float* row = &x[r * ne00];
    double mean = 0;
    if (!rms) {
      for (int64_t i = 0; i < ne00; ++i) mean += row[i];
      mean /= ne00;
    }
    double var = 0;
    for (int64_t i = 0; i < ne00; ++i) var += (row[i] - mean) * (row[i] - mean);
    var /= ne00;
    const double scale = 1 / std::sqrt(var + 1e-5);
    for (int64_t i = 0; i < ne00; ++i) {
      double y = (row[i] - mean) * scale;
      if (fuse >= 2) y *= w[i];
      if (fuse == 3) y += b[i];
      want[r * ne00 + i] = y;
    }
  }
  EXPECT_TRUE(Near(got, want, 1e-5, 1e-5));
}

TEST(GgmlMetal, NormsWithFusedMulAndAdd) {
  REQUIRE_GGML();
  for (const bool rms : {false, true}) {
    for (int fuse = 1; fuse <= 3; ++fuse) {
      RunNorm(rms, fuse, 100, 3, 2);   // scalar kernel, 4 SIMD groups
      RunNorm(rms, fuse, 4096, 2, 1);  // _4, 1024 float4s: 32 SIMD groups
    }
  }
}

// --- quantized blocks (ggml-common.h), and get_rows of every kind ----------
// A block of 32 values: q4_0 {half d; uint8 qs[16]}: (nibble - 8) * d, the
// low nibbles the first 16 values, the high ones the next 16; q4_1 {half
// d, m; qs[16]}: nibble * d + m; q5_0 {half d; uint8 qh[4]; qs[16]}: the
// fifth bit of value j is bit j of qh, (q - 16) * d; q5_1 {d, m, qh, qs}:
// q * d + m; q8_0 {half d; int8 qs[32]}: q * d.

struct BlockType {
  const char* name;
  size_t bytes;  // per block of 32, or per element for f32/f16
  bool quantized;
};

const std::vector<BlockType>& BlockTypes() {
  static const std::vector<BlockType> types = {
      {"f32", 4, false},  {"f16", 2, false},  {"q4_0", 18, true},
      {"q4_1", 20, true}, {"q5_0", 22, true}, {"q5_1", 24, true},
      {"q8_0", 34, true}};
  return types;
}

// Random rows of `ne00` values of `type` (bytes) and what they mean.
struct Encoded {
  std::vector<uint8_t> bytes;
  std::vector<float> values;
};

Encoded RandomRows(const BlockType& type, int64_t ne00, int64_t rows,
                   uint32_t seed) {
  std::mt19937 rng(seed);
  Encoded e;
  if (!type.quantized) {
    e.values = Random(ne00 * rows, seed);
    if (type.bytes == 2) {
      e.values = FromHalf(ToHalf(e.values));
      const std::vector<uint16_t> h = ToHalf(e.values);
      e.bytes.resize(h.size() * 2);
      std::memcpy(e.bytes.data(), h.data(), e.bytes.size());
    } else {
      e.bytes.resize(e.values.size() * 4);
      std::memcpy(e.bytes.data(), e.values.data(), e.bytes.size());
    }
    return e;
  }
  const std::string name = type.name;
  std::uniform_real_distribution<float> scale(0.01f, 0.1f);
  const int64_t blocks = ne00 / 32 * rows;
  e.bytes.resize(blocks * type.bytes);
  e.values.resize(blocks * 32);
  for (int64_t b = 0; b < blocks; ++b) {
    uint8_t* p = &e.bytes[b * type.bytes];
    float* v = &e.values[b * 32];
    for (size_t k = 0; k < type.bytes; ++k) p[k] = static_cast<uint8_t>(rng());
    const uint16_t dh = isa::FloatToHalfBits(scale(rng));
    std::memcpy(p, &dh, 2);
    const float d = isa::HalfBitsToFloat(dh);
    float m = 0;
    size_t at = 2;
    if (name == "q4_1" || name == "q5_1") {
      const uint16_t mh = isa::FloatToHalfBits(-scale(rng) * 8);
      std::memcpy(p + 2, &mh, 2);
      m = isa::HalfBitsToFloat(mh);
      at = 4;
    }
    if (name == "q8_0") {
      for (int j = 0; j < 32; ++j) v[j] = static_cast<int8_t>(p[2 + j]) * d;
      continue;
    }
    uint32_t qh = 0;
    if (name == "q5_0" || name == "q5_1") {
      std::memcpy(&qh, p + at, 4);
      at += 4;
    }
    const uint8_t* qs = p + at;
    for (int j = 0; j < 16; ++j) {
      int lo = qs[j] & 0xF, hi = qs[j] >> 4;
      if (name == "q5_0" || name == "q5_1") {
        lo |= ((qh >> j) & 1) << 4;
        hi |= ((qh >> (j + 16)) & 1) << 4;
      }
      if (name == "q4_0") {
        v[j] = (lo - 8) * d;
        v[j + 16] = (hi - 8) * d;
      } else if (name == "q5_0") {
        v[j] = (lo - 16) * d;
        v[j + 16] = (hi - 16) * d;
      } else {
        v[j] = lo * d + m;
        v[j + 16] = hi * d + m;
      }
    }
  }
  return e;
}

// ggml_metal_library_get_pipeline_get_rows: kernel_get_rows_TYPE;
// ggml_metal_op_get_rows: kargs at 0 (ne00t: ne00 / 16 for quantized
// types, whose threads dequantize 16 values each), src0 at 1, the int32
// row numbers at 2, dst (f32) at 3; nw0 * ne10 x ne11 x ne12 threadgroups
// of nth = min(ne00t, the pipeline's maximum), nw0 = ceil(ne00t / nth).
struct GgmlKargsGetRows {
  int32_t ne00t, ne00;
  uint64_t nb01, nb02, nb03;
  int32_t ne10;
  uint64_t nb10, nb11, nb12;
  uint64_t nb1, nb2, nb3;
};

TEST(GgmlMetal, GetRowsOfEveryKind) {
  REQUIRE_GGML();
  constexpr int64_t ne00 = 256, ne01 = 9, ne10 = 5;
  const std::vector<int32_t> ids = {3, 0, 8, 3, 5};
  for (const BlockType& type : BlockTypes()) {
    SCOPED_TRACE(type.name);
    KernelHarness h = GgmlKernel(std::string("kernel_get_rows_") + type.name);
    ASSERT_TRUE(h.status().ok()) << h.status().error().message;
    const Encoded src = RandomRows(type, ne00, ne01, 41);
    const uint64_t row_bytes =
        type.quantized ? ne00 / 32 * type.bytes : ne00 * type.bytes;
    GgmlKargsGetRows args{};
    args.ne00t = static_cast<int32_t>(type.quantized ? ne00 / 16 : ne00);
    args.ne00 = static_cast<int32_t>(ne00);
    args.nb01 = row_bytes;
    args.nb02 = args.nb03 = row_bytes * ne01;
    args.ne10 = static_cast<int32_t>(ne10);
    args.nb10 = 4;
    args.nb11 = args.nb12 = 4 * ne10;
    args.nb1 = ne00 * 4;
    args.nb2 = args.nb3 = ne00 * 4 * ne10;
    h.SetBytes(0, args);
    h.SetBuffer(1, src.bytes);
    h.SetBuffer(2, ids);
    h.SetBuffer(3, std::vector<float>(ne00 * ne10, -1));
    const uint64_t nth = std::min<uint64_t>(
        args.ne00t, h.pipeline().maxTotalThreadsPerThreadgroup());
    const uint64_t nw0 = (args.ne00t + nth - 1) / nth;
    ASSERT_TRUE(RunsThreadgroups(h, {nw0 * ne10, 1, 1}, {nth, 1, 1}));
    std::vector<double> want(ne00 * ne10);
    for (int64_t r = 0; r < ne10; ++r) {
      for (int64_t i = 0; i < ne00; ++i) {
        want[r * ne00 + i] = src.values[ids[r] * ne00 + i];
      }
    }
    // Dequantization multiplies in half in places: a half's rounding of
    // the largest value.
    EXPECT_TRUE(Near(h.Read<float>(3), want, 1e-3, 2e-3));
  }
}

// --- matrix x vector: kernel_mul_mv_* --------------------------------------
// ggml_metal_library_get_pipeline_mul_mv: for f32/f16 src0, _short (ne00
// < 32: 1 SIMD group, 32 rows each), else nsg = min(4, ceil(ne00 / 128))
// SIMD groups of 2 rows, _4 where ne00 % 4 == 0, 64 floats of threadgroup
// memory; q4_0 .. q5_1: N_SG 2 SIMD groups of N_R0 4 rows; q8_0: 4 of 2,
// 64 floats. Function constants FC_MUL_MV + 0 nsg, + 2 ne12, + 3 r2, + 4
// r3. ggml_metal_op_mul_mat (its mul_mv branch): kargs at 0, src0, src1
// (f32), dst at 1, 2, 3; ceil(ne01 / nr0) (f32, f16, q8_0) or ceil(ne01 /
// (nr0 nsg)) (the others) x ne11 x ne12 ne13 threadgroups of 32 x nsg.

struct GgmlKargsMulMv {
  int32_t ne00, ne01, ne02;
  uint64_t nb00, nb01, nb02, nb03;
  int32_t ne10, ne11, ne12;
  uint64_t nb10, nb11, nb12, nb13;
  int32_t ne0, ne1, nr0;
  int16_t r2, r3;
};

// dst[i1][i0] = sum over k of src0[i0][k] * src1[i1][k]: ne01 rows of
// `type` times ne11 vectors of ne00 floats.
void RunMulMv(const BlockType& type, int64_t ne00, int64_t ne01, int64_t ne11) {
  const std::string t = type.name;
  int nsg, nr0;
  uint64_t smem = 0;
  std::string suffix;
  if (!type.quantized) {
    if (ne00 < 32) {
      nsg = 1;
      nr0 = 32;
      suffix = "_short";
    } else {
      nsg = static_cast<int>(std::min<int64_t>(4, (ne00 + 127) / 128));
      nr0 = 2;
      smem = 32 * sizeof(float) * nr0;
      suffix = ne00 % 4 == 0 ? "_4" : "";
    }
  } else if (t == "q8_0") {
    nsg = 4;
    nr0 = 2;
    smem = 32 * sizeof(float) * nr0;
  } else {
    nsg = 2;
    nr0 = 4;
  }
  const std::string kernel = "kernel_mul_mv_" + t + "_f32" + suffix;
  SCOPED_TRACE(kernel + " ne00 " + std::to_string(ne00));
  KernelHarness h = GgmlKernel(
      kernel,
      {{"600", std::to_string(nsg)}, {"602", "1"}, {"603", "1"}, {"604", "1"}});
  ASSERT_TRUE(h.status().ok()) << h.status().error().message;
  const Encoded a = RandomRows(type, ne00, ne01, 51);
  const std::vector<float> x = Random(ne00 * ne11, 52);
  GgmlKargsMulMv args{};
  args.ne00 = static_cast<int32_t>(ne00);
  args.ne01 = static_cast<int32_t>(ne01);
  args.ne02 = 1;
  args.nb00 = type.quantized ? type.bytes : type.bytes;
  args.nb01 = type.quantized ? ne00 / 32 * type.bytes : ne00 * type.bytes;
  args.nb02 = args.nb03 = args.nb01 * ne01;
  args.ne10 = static_cast<int32_t>(ne00);
  args.ne11 = static_cast<int32_t>(ne11);
  args.ne12 = 1;
  args.nb10 = 4;
  args.nb11 = 4 * ne00;
  args.nb12 = args.nb13 = 4 * ne00 * ne11;
  args.ne0 = static_cast<int32_t>(ne01);
  args.ne1 = static_cast<int32_t>(ne11);
  args.nr0 = nr0;
  args.r2 = args.r3 = 1;
  h.SetBytes(0, args);
  // The last threadgroup reads whole groups of rows, past ne01: in
  // llama.cpp the tensor lies inside a larger MTLBuffer (ggml's allocator),
  // so the rows after it are there; here they are padding.
  std::vector<uint8_t> padded = a.bytes;
  padded.resize(padded.size() + args.nb01 * nr0 * nsg, 0);
  h.SetBuffer(1, padded);
  h.SetBuffer(2, x);
  h.SetBuffer(3, std::vector<float>(ne01 * ne11, -1));
  // The host sets it, 0 included.
  ASSERT_TRUE(h.SetThreadgroupMemoryLength(smem, 0).ok());
  const bool by_rows = !type.quantized || t == "q8_0";
  const uint64_t rows_per_group = by_rows ? nr0 : nr0 * nsg;
  ASSERT_TRUE(RunsThreadgroups(h,
                               {(ne01 + rows_per_group - 1) / rows_per_group,
                                static_cast<uint64_t>(ne11), 1},
                               {32, static_cast<uint64_t>(nsg), 1}));
  std::vector<double> want(ne01 * ne11);
  double scale = 0;
  for (int64_t i1 = 0; i1 < ne11; ++i1) {
    for (int64_t i0 = 0; i0 < ne01; ++i0) {
      double sum = 0, size = 0;
      for (int64_t k = 0; k < ne00; ++k) {
        sum += double(a.values[i0 * ne00 + k]) * x[i1 * ne00 + k];
        size += std::fabs(double(a.values[i0 * ne00 + k]) * x[i1 * ne00 + k]);
      }
      want[i1 * ne01 + i0] = sum;
      scale = std::max(scale, size);
    }
  }
  // Sums of ne00 products in float (f16 and the quantized kernels convert
  // src1 or partial sums to half in places): relative to the terms' size.
  const double rtol = type.bytes == 4 && !type.quantized ? 1e-5 : 2e-3;
  EXPECT_TRUE(Near(h.Read<float>(3), want, rtol, rtol * scale));
}

TEST(GgmlMetal, MatrixVectorProductsOfEveryKind) {
  REQUIRE_GGML();
  for (const BlockType& type : BlockTypes()) {
    RunMulMv(type, 512, 13, 3);
    if (!type.quantized) {
      RunMulMv(type, 100, 7, 2);  // not a multiple of 4
      RunMulMv(type, 20, 40, 2);  // _short
    }
  }
}

}  // namespace
}  // namespace mtlemu
