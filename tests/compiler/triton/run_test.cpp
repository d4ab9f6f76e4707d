// Triton kernels end to end: the front end, the lowering to MSL, the MSL
// compiler and the emulator, checked against plain C++ references.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "api/triton_launch.h"
#include "emu/device/command_buffer.h"

namespace mtlemu::api {
namespace {

using triton::frontend::DType;
using triton::frontend::KernelArg;

const std::string kKernels =
    std::string(MTLEMU_TEST_DATA_DIR) + "/compiler/triton/kernels/basics.py";

KernelArg Ptr(const char* dtype) {
  KernelArg a;
  a.kind = KernelArg::Kind::kPointer;
  a.dtype = DType::FromName(dtype);
  return a;
}
KernelArg Int(int64_t v) {
  KernelArg a;
  a.kind = KernelArg::Kind::kInt;
  a.int_value = v;
  return a;
}

struct Launch {
  std::shared_ptr<Device> device = Device::Create("m1").value();
  std::map<std::string, TritonArgValue> values;
  std::vector<std::pair<std::string, KernelArg>> args;

  template <class T>
  std::shared_ptr<Buffer> Buffer(const std::string& name, const char* dtype,
                                 const std::vector<T>& data) {
    auto b = device->newBuffer(data.data(), data.size() * sizeof(T)).value();
    values[name].buffer = b;
    args.emplace_back(name, Ptr(dtype));
    return b;
  }
  void Scalar(const std::string& name, KernelArg a) {
    values[name].scalar = a;
    args.emplace_back(name, a);
  }
  // Compiles and runs; returns "" or the error.
  std::string Run(const std::string& kernel, MTLSize grid, int num_warps = 4) {
    TritonRequest r;
    r.file = ttir.empty() ? kKernels : "kernel.ttir";
    if (!ttir.empty()) r.source = ttir;
    r.kernel = kernel;
    r.args = args;
    r.num_warps = num_warps;
    Result<TritonLibrary> lib = newLibraryWithTriton(*device, r);
    if (!lib.ok()) return lib.error().message;
    msl = lib.value().kernel.msl;
    auto queue = device->newCommandQueue();
    auto commands = queue->commandBuffer();
    auto encoder = commands->computeCommandEncoder();
    Status s = EncodeTritonLaunch(*device, *encoder, lib.value(), grid, values);
    if (!s.ok()) return s.error().message;
    encoder->endEncoding();
    commands->commit();
    if (const CommandBufferError* e = commands->error()) return e->message;
    return "";
  }
  std::string msl;
  std::string ttir;  // the kernel as TTIR text, if set (else basics.py)
};

template <class T>
std::vector<T> Read(const std::shared_ptr<Buffer>& b) {
  std::vector<T> out(b->length() / sizeof(T));
  std::memcpy(out.data(), b->contents(), b->length());
  return out;
}

std::vector<float> Random(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(-2.0f, 2.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(gen);
  return v;
}

TEST(TritonRun, VectorAdd) {
  const int n = 98432;
  Launch l;
  std::vector<float> x = Random(n, 1), y = Random(n, 2);
  l.Buffer("x_ptr", "fp32", x);
  l.Buffer("y_ptr", "fp32", y);
  auto out = l.Buffer("output_ptr", "fp32", std::vector<float>(n, -1.0f));
  l.Scalar("n_elements", Int(n));
  l.Scalar("BLOCK_SIZE", Int(1024));
  const std::string err = l.Run("add_kernel", {97, 1, 1});
  ASSERT_EQ(err, "") << l.msl;
  std::vector<float> got = Read<float>(out);
  for (int i = 0; i < n; ++i) ASSERT_EQ(got[i], x[i] + y[i]) << i;
}

TEST(TritonRun, Softmax) {
  const int rows = 64, cols = 781;
  Launch l;
  std::vector<float> in = Random(rows * cols, 3);
  auto out = l.Buffer("out_ptr", "fp32", std::vector<float>(rows * cols, 0.0f));
  l.Buffer("in_ptr", "fp32", in);
  l.Scalar("in_row_stride", Int(cols));
  l.Scalar("out_row_stride", Int(cols));
  l.Scalar("n_cols", Int(cols));
  l.Scalar("BLOCK_SIZE", Int(1024));
  const std::string err = l.Run("softmax_kernel", {rows, 1, 1});
  ASSERT_EQ(err, "") << l.msl;
  std::vector<float> got = Read<float>(out);
  for (int r = 0; r < rows; ++r) {
    double m = -INFINITY, sum = 0;
    for (int c = 0; c < cols; ++c) m = std::max(m, double(in[r * cols + c]));
    for (int c = 0; c < cols; ++c) sum += std::exp(in[r * cols + c] - m);
    for (int c = 0; c < cols; ++c) {
      const double want = std::exp(in[r * cols + c] - m) / sum;
      ASSERT_NEAR(got[r * cols + c], want, 1e-6 + 1e-5 * want) << r << "," << c;
    }
  }
}

TEST(TritonRun, MatmulFp32) {
  const int M = 200, N = 136, K = 96;
  Launch l;
  std::vector<float> a = Random(M * K, 4), b = Random(K * N, 5);
  l.Buffer("a_ptr", "fp32", a);
  l.Buffer("b_ptr", "fp32", b);
  auto c = l.Buffer("c_ptr", "fp32", std::vector<float>(M * N, 0.0f));
  for (auto [name, v] :
       std::vector<std::pair<const char*, int>>{{"M", M},
                                                {"N", N},
                                                {"K", K},
                                                {"stride_am", K},
                                                {"stride_ak", 1},
                                                {"stride_bk", N},
                                                {"stride_bn", 1},
                                                {"stride_cm", N},
                                                {"stride_cn", 1},
                                                {"BLOCK_M", 32},
                                                {"BLOCK_N", 32},
                                                {"BLOCK_K", 32}}) {
    l.Scalar(name, Int(v));
  }
  const std::string err = l.Run("matmul_kernel", {7, 5, 1});
  ASSERT_EQ(err, "") << l.msl;
  if (getenv("DUMP_MSL")) std::cout << l.msl;
  std::vector<float> got = Read<float>(c);
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      double want = 0;
      for (int k = 0; k < K; ++k) want += double(a[i * K + k]) * b[k * N + j];
      ASSERT_NEAR(got[i * N + j], want, 1e-4 + 1e-5 * std::fabs(want))
          << i << "," << j;
    }
  }
}

// TTIR atomics that Triton's front end does not make but its IR allows:
// max, min and exch on fp16 and bf16 elements (compare-and-swap loops on
// the 32-bit word), and max/min on fp32 (a CAS loop in Triton's order:
// -0.0 < +0.0), with 32 lanes on 3 addresses.
std::string FloatRmwTtir(const std::string& kind, const std::string& t) {
  const std::string tp = "tensor<32x!tt.ptr<" + t + ">>";
  return "module {\n"
         "  tt.func public @k(%z: !tt.ptr<" +
         t + ">, %x: !tt.ptr<" + t +
         ">) {\n"
         "    %r = tt.make_range {end = 32 : i32, start = 0 : i32} : "
         "tensor<32xi32>\n"
         "    %c3 = arith.constant dense<3> : tensor<32xi32>\n"
         "    %k = arith.remsi %r, %c3 : tensor<32xi32>\n"
         "    %zs = tt.splat %z : !tt.ptr<" +
         t + "> -> " + tp +
         "\n"
         "    %zp = tt.addptr %zs, %k : " +
         tp +
         ", tensor<32xi32>\n"
         "    %xs = tt.splat %x : !tt.ptr<" +
         t + "> -> " + tp +
         "\n"
         "    %xp = tt.addptr %xs, %r : " +
         tp +
         ", tensor<32xi32>\n"
         "    %v = tt.load %xp : " +
         tp +
         "\n"
         "    %m = arith.constant dense<true> : tensor<32xi1>\n"
         "    %o = tt.atomic_rmw " +
         kind + ", acq_rel, gpu, %zp, %v, %m : (" + tp + ", tensor<32x" + t +
         ">, tensor<32xi1>) -> tensor<32x" + t +
         ">\n"
         "    tt.return\n"
         "  }\n"
         "}\n";
}

// Float bits <-> the 16-bit formats, for values they hold exactly.
uint16_t HalfBits(float f) {
  // Exact for the small values used here: sign, exponent, 10 bits.
  uint32_t b;
  std::memcpy(&b, &f, 4);
  const uint32_t sign = (b >> 16) & 0x8000u;
  if ((b & 0x7fffffffu) == 0) return static_cast<uint16_t>(sign);
  const int exp = static_cast<int>((b >> 23) & 0xff) - 127 + 15;
  return static_cast<uint16_t>(sign | (exp << 10) | ((b >> 13) & 0x3ffu));
}
uint16_t BfloatBits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return static_cast<uint16_t>(b >> 16);
}

TEST(TritonRun, TtirFloatMaxMinExchangeOnEveryWidth) {
  // Address a gets the values of lists[a]; max starts from -0.0, min from
  // +0.0, so the order of the zeros decides addresses 0 and 1.
  const std::vector<std::vector<float>> lists = {
      {-0.0f, 0.0f, -2.0f, -0.25f}, {0.0f, -0.0f, 1.5f}, {4.0f, -2.0f, -0.0f}};
  std::vector<float> x(32);
  for (int i = 0; i < 32; ++i) {
    const auto& list = lists[i % 3];
    x[i] = list[(i / 3) % list.size()];
  }
  // Triton's order of floats: by value, -0.0 below +0.0.
  const auto below = [](float a, float b) {
    return a < b || (a == b && std::signbit(a) && !std::signbit(b));
  };
  for (const std::string kind : {"max", "min", "exch"}) {
    for (const std::string t : {"f16", "bf16", "f32"}) {
      if (kind == "exch" && t == "f32") continue;
      SCOPED_TRACE(kind + " " + t);
      const float init = kind == "max" ? -0.0f : kind == "min" ? 0.0f : 1.0f;
      std::vector<float> want(3, init);
      for (int i = 0; i < 32; ++i) {
        float& z = want[i % 3];
        if (kind == "max" && below(z, x[i])) z = x[i];
        if (kind == "min" && below(x[i], z)) z = x[i];
      }
      Launch l;
      l.ttir = FloatRmwTtir(kind, t);
      const auto bits = t == "f16" ? HalfBits : BfloatBits;
      std::shared_ptr<Buffer> z;
      if (t == "f32") {
        z = l.Buffer("z", "fp32", std::vector<float>(3, init));
        l.Buffer("x", "fp32", x);
      } else {
        std::vector<uint16_t> xb(32);
        for (int i = 0; i < 32; ++i) xb[i] = bits(x[i]);
        const char* dtype = t == "f16" ? "fp16" : "bf16";
        z = l.Buffer("z", dtype, std::vector<uint16_t>(3, bits(init)));
        l.Buffer("x", dtype, xb);
      }
      ASSERT_EQ(l.Run("k", {1, 1, 1}, 1), "") << l.msl;
      for (int a = 0; a < 3; ++a) {
        if (t == "f32") {
          const float got = Read<float>(z)[a];
          EXPECT_EQ(got, want[a]) << a;
          EXPECT_EQ(std::signbit(got), std::signbit(want[a])) << a;
          continue;
        }
        const uint16_t got = Read<uint16_t>(z)[a];
        if (kind == "exch") {
          // Some lane of the address stored last.
          bool found = false;
          for (int i = a; i < 32; i += 3) found |= got == bits(x[i]);
          EXPECT_TRUE(found) << a << ": " << got;
        } else {
          EXPECT_EQ(got, bits(want[a])) << a;
        }
      }
    }
  }
}

}  // namespace
}  // namespace mtlemu::api
