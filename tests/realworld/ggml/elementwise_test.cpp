// llama.cpp's Metal backend (ggml's src/ggml-metal/ggml-metal.metal):
// unary ops, and binary ops with broadcasting and fused chains.
// Each kernel runs as ggml's host dispatches it (ggml-metal-ops.cpp: the
// bytes struct at index 0, the buffers after it, the grid;
// ggml-metal-device.cpp: the pipeline's name and function constants),
// checked against a reference written here from what the operation means,
// in double. support.h says where ggml's snapshot comes from.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "isa/numeric.h"
#include "tests/realworld/ggml/support.h"

namespace mtlemu::ggml {
namespace {

using testing::KernelHarness;
using testing::RunsThreadgroups;

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

}  // namespace
}  // namespace mtlemu::ggml
