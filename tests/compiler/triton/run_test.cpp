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
    r.file = kKernels;
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

}  // namespace
}  // namespace mtlemu::api
