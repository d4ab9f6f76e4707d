// Triton kernels beside the same work written by hand in MSL, in one
// process: compile time of the Triton path (front end + lowering, then the
// MSL compiler; and from the disk cache), and emulated kernel time of the
// Triton kernel and of the hand-written MSL kernel, with their ratio.
// Kernels: vector add, row softmax, matmul, layer norm, at the sizes of
// ../shared/reference/ttir/README.md and at 100 times the work.
//
//   build/bench/mtlemu_triton_bench [--runs N]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "api/library.h"
#include "api/triton_launch.h"
#include "bench/bench_support.h"
#include "emu/device/command_buffer.h"

namespace {

using mtlemu::Buffer;
using mtlemu::Device;
using mtlemu::MTLSize;
using mtlemu::bench::BestOf;
using mtlemu::bench::Clock;
using mtlemu::bench::Must;
using mtlemu::bench::Seconds;
using mtlemu::triton::frontend::DType;
using mtlemu::triton::frontend::KernelArg;

const std::string kKernels =
    std::string(MTLEMU_SOURCE_DIR) + "/tests/compiler/triton/kernels/basics.py";

constexpr char kHandMsl[] = R"(
#include <metal_stdlib>
using namespace metal;

kernel void vadd(device const float* x [[buffer(0)]],
                 device const float* y [[buffer(1)]],
                 device float* out [[buffer(2)]],
                 constant uint& n [[buffer(3)]],
                 uint i [[thread_position_in_grid]]) {
  if (i < n) out[i] = x[i] + y[i];
}

// One threadgroup of 128 threads per row, as the Triton kernel's 4 warps.
kernel void softmax(device float* out [[buffer(0)]],
                    device const float* in [[buffer(1)]],
                    constant uint& stride [[buffer(2)]],
                    constant uint& n [[buffer(3)]],
                    uint row [[threadgroup_position_in_grid]],
                    uint tid [[thread_index_in_threadgroup]],
                    uint lane [[thread_index_in_simdgroup]],
                    uint sg [[simdgroup_index_in_threadgroup]]) {
  threadgroup float part[4];
  device const float* x = in + row * stride;
  float m = -INFINITY;
  for (uint c = tid; c < n; c += 128) m = max(m, x[c]);
  m = simd_max(m);
  if (lane == 0) part[sg] = m;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  m = max(max(part[0], part[1]), max(part[2], part[3]));
  threadgroup_barrier(mem_flags::mem_threadgroup);
  float s = 0.0f;
  for (uint c = tid; c < n; c += 128) s += exp(x[c] - m);
  s = simd_sum(s);
  if (lane == 0) part[sg] = s;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  s = part[0] + part[1] + part[2] + part[3];
  for (uint c = tid; c < n; c += 128) out[row * stride + c] = exp(x[c] - m) / s;
}

kernel void layernorm(device const float* x [[buffer(0)]],
                      device float* y [[buffer(1)]],
                      device const float* w [[buffer(2)]],
                      device const float* b [[buffer(3)]],
                      constant uint& stride [[buffer(4)]],
                      constant uint& n [[buffer(5)]],
                      constant float& eps [[buffer(6)]],
                      uint row [[threadgroup_position_in_grid]],
                      uint tid [[thread_index_in_threadgroup]],
                      uint lane [[thread_index_in_simdgroup]],
                      uint sg [[simdgroup_index_in_threadgroup]]) {
  threadgroup float part[4];
  device const float* xr = x + row * stride;
  float s = 0.0f;
  for (uint c = tid; c < n; c += 128) s += xr[c];
  s = simd_sum(s);
  if (lane == 0) part[sg] = s;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  const float mean = (part[0] + part[1] + part[2] + part[3]) / float(n);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  float v = 0.0f;
  for (uint c = tid; c < n; c += 128) v += (xr[c] - mean) * (xr[c] - mean);
  v = simd_sum(v);
  if (lane == 0) part[sg] = v;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  const float rstd = 1.0f / sqrt((part[0] + part[1] + part[2] + part[3]) / float(n) + eps);
  for (uint c = tid; c < n; c += 128) {
    y[row * stride + c] = (xr[c] - mean) * rstd * w[c] + b[c];
  }
}

// 32 x 32 of C per threadgroup of 4 SIMD groups, each 16 x 16 as 2 x 2
// simdgroup_matrix tiles; A and B tiles through threadgroup memory, zero
// padded at the edges.
struct Dims { uint M, N, K; };
kernel void matmul(device const float* A [[buffer(0)]],
                   device const float* B [[buffer(1)]],
                   device float* C [[buffer(2)]],
                   constant Dims& d [[buffer(3)]],
                   uint2 tg [[threadgroup_position_in_grid]],
                   uint tid [[thread_index_in_threadgroup]],
                   uint sg [[simdgroup_index_in_threadgroup]]) {
  threadgroup float As[32 * 32];
  threadgroup float Bs[32 * 32];
  simdgroup_float8x8 acc[2][2];
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) acc[i][j] = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
  const uint row0 = tg.y * 32, col0 = tg.x * 32;
  const uint sr = (sg / 2) * 16, sc = (sg % 2) * 16;
  for (uint k0 = 0; k0 < d.K; k0 += 32) {
    for (uint e = tid; e < 1024; e += 128) {
      const uint r = e / 32, c = e % 32;
      As[e] = (row0 + r < d.M && k0 + c < d.K) ? A[(row0 + r) * d.K + k0 + c] : 0.0f;
      Bs[e] = (k0 + r < d.K && col0 + c < d.N) ? B[(k0 + r) * d.N + col0 + c] : 0.0f;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint kk = 0; kk < 32; kk += 8) {
      simdgroup_float8x8 ma[2], mb[2];
      for (int i = 0; i < 2; ++i) simdgroup_load(ma[i], As + (sr + 8 * i) * 32 + kk, 32);
      for (int j = 0; j < 2; ++j) simdgroup_load(mb[j], Bs + kk * 32 + sc + 8 * j, 32);
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j)
          simdgroup_multiply_accumulate(acc[i][j], ma[i], mb[j], acc[i][j]);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) simdgroup_store(acc[i][j], As + (sr + 8 * i) * 32 + sc + 8 * j, 32);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  for (uint e = tid; e < 1024; e += 128) {
    const uint r = e / 32, c = e % 32;
    if (row0 + r < d.M && col0 + c < d.N) C[(row0 + r) * d.N + col0 + c] = As[e];
  }
}
)";

std::vector<float> Random(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(gen);
  return v;
}

// One benchmark case: its buffers and scalars, the Triton launch and the
// hand-written MSL launch.
struct Case {
  std::string name, size;
  std::string triton_kernel;
  MTLSize triton_grid;
  std::vector<std::pair<std::string, std::vector<float>>> buffers;  // in order
  std::vector<std::pair<std::string, std::string>> scalars;         // by name
  std::string msl_kernel;
  MTLSize msl_groups, msl_threadgroup;
  std::vector<std::string> msl_buffers;         // buffer names, in order
  std::vector<std::vector<uint8_t>> msl_bytes;  // then setBytes, in order
};

template <class T>
std::vector<uint8_t> Bytes(std::initializer_list<T> values) {
  std::vector<uint8_t> out;
  for (T v : values) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    out.insert(out.end(), p, p + sizeof(T));
  }
  return out;
}

// Best emulated seconds of `runs` dispatches encoded by `encode`.
double BestRun(
    Device& device, int runs,
    const std::function<void(mtlemu::ComputeCommandEncoder&)>& encode) {
  double best = 1e30;
  for (int r = 0; r < runs; ++r) {
    auto queue = device.newCommandQueue();
    auto commands = queue->commandBuffer();
    auto encoder = commands->computeCommandEncoder();
    encode(*encoder);
    encoder->endEncoding();
    commands->commit();
    if (const auto* e = commands->error()) {
      std::fprintf(stderr, "bench: %s\n", e->message.c_str());
      std::exit(1);
    }
    best = std::min(best, commands->dispatches().at(0).seconds);
  }
  return best;
}

void Run(const Case& c, int runs,
         const std::shared_ptr<mtlemu::Library>& hand) {
  auto device = Must(Device::Create("m1"));
  std::map<std::string, std::shared_ptr<Buffer>> buffers;
  std::map<std::string, mtlemu::api::TritonArgValue> values;
  mtlemu::api::TritonRequest r;
  r.file = kKernels;
  r.kernel = c.triton_kernel;
  for (const auto& [name, data] : c.buffers) {
    buffers[name] = Must(device->newBuffer(data.data(), data.size() * 4));
    values[name].buffer = buffers[name];
    KernelArg a;
    a.kind = KernelArg::Kind::kPointer;
    a.dtype = DType::F32();
    r.args.emplace_back(name, a);
  }
  for (const auto& [name, text] : c.scalars) {
    values[name].scalar = KernelArg::FromText(text);
    r.args.emplace_back(name, values[name].scalar);
  }
  // Compile times: front end + lowering; the whole chain without a cache;
  // the whole chain from the disk cache.
  // Each is the best of `runs` compiles.
  const double front =
      BestOf(runs, [&] { Must(mtlemu::api::CompileTriton(r)); });
  ::setenv("MTLEMU_CACHE_DIR", "off", 1);
  const double full = BestOf(
      runs, [&] { Must(mtlemu::api::newLibraryWithTriton(*device, r)); });
  const std::string dir =
      (std::filesystem::temp_directory_path() / "mtlemu_triton_bench_cache")
          .string();
  std::filesystem::remove_all(dir);
  ::setenv("MTLEMU_CACHE_DIR", dir.c_str(), 1);
  mtlemu::api::TritonLibrary lib =
      Must(mtlemu::api::newLibraryWithTriton(*device, r));
  const double cached = BestOf(
      runs, [&] { lib = Must(mtlemu::api::newLibraryWithTriton(*device, r)); });
  std::filesystem::remove_all(dir);

  const double triton =
      BestRun(*device, runs, [&](mtlemu::ComputeCommandEncoder& e) {
        if (auto s = mtlemu::api::EncodeTritonLaunch(*device, e, lib,
                                                     c.triton_grid, values);
            !s.ok()) {
          std::fprintf(stderr, "bench: %s\n", s.error().message.c_str());
          std::exit(1);
        }
      });
  auto fn = Must(hand->newFunction(c.msl_kernel));
  auto pipeline = Must(device->newComputePipelineState(fn));
  const double msl =
      BestRun(*device, runs, [&](mtlemu::ComputeCommandEncoder& e) {
        e.setComputePipelineState(pipeline);
        int index = 0;
        for (const std::string& b : c.msl_buffers) {
          if (!e.setBuffer(buffers.at(b), 0, index++).ok()) std::exit(1);
        }
        for (const auto& bytes : c.msl_bytes) {
          if (!e.setBytes(bytes.data(), bytes.size(), index++).ok())
            std::exit(1);
        }
        if (!e.dispatchThreadgroups(c.msl_groups, c.msl_threadgroup).ok())
          std::exit(1);
      });
  std::printf(
      "| %-10s | %-15s | %6.1f | %6.1f | %5.2f | %9.3f | %9.3f | %5.2f |\n",
      c.name.c_str(), c.size.c_str(), front * 1e3, full * 1e3, cached * 1e3,
      triton * 1e3, msl * 1e3, triton / msl);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 3;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--runs") runs = std::atoi(argv[i + 1]);
  }
  auto device = Must(Device::Create("m1"));
  ::setenv("MTLEMU_CACHE_DIR", "off", 1);
  auto hand = Must(
      mtlemu::api::newLibraryWithSource(*device, kHandMsl, {}, "hand.metal"));

  std::vector<Case> cases;
  for (int scale : {1, 100}) {
    const uint32_t n = 98432u * scale;
    cases.push_back(
        Case{"vector add",
             std::to_string(n),
             "add_kernel",
             {(n + 1023) / 1024, 1, 1},
             {{"x_ptr", Random(n, 1)},
              {"y_ptr", Random(n, 2)},
              {"output_ptr", std::vector<float>(n)}},
             {{"n_elements", std::to_string(n)}, {"BLOCK_SIZE", "1024"}},
             "vadd",
             {(n + 255) / 256, 1, 1},
             {256, 1, 1},
             {"x_ptr", "y_ptr", "output_ptr"},
             {Bytes<uint32_t>({n})}});
    const uint32_t rows = 64u * scale, cols = 781;
    cases.push_back(Case{"softmax",
                         std::to_string(rows) + "x" + std::to_string(cols),
                         "softmax_kernel",
                         {rows, 1, 1},
                         {{"out_ptr", std::vector<float>(rows * cols)},
                          {"in_ptr", Random(rows * cols, 3)}},
                         {{"in_row_stride", "781"},
                          {"out_row_stride", "781"},
                          {"n_cols", "781"},
                          {"BLOCK_SIZE", "1024"}},
                         "softmax",
                         {rows, 1, 1},
                         {128, 1, 1},
                         {"out_ptr", "in_ptr"},
                         {Bytes<uint32_t>({cols}), Bytes<uint32_t>({cols})}});
    const uint32_t M = 200u * (scale == 1 ? 1 : 10),
                   N = 136u * (scale == 1 ? 1 : 10), K = 96;
    cases.push_back(Case{
        "matmul",
        std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K),
        "matmul_kernel",
        {(M + 31) / 32, (N + 31) / 32, 1},
        {{"a_ptr", Random(M * K, 4)},
         {"b_ptr", Random(K * N, 5)},
         {"c_ptr", std::vector<float>(M * N)}},
        {{"M", std::to_string(M)},
         {"N", std::to_string(N)},
         {"K", std::to_string(K)},
         {"stride_am", std::to_string(K)},
         {"stride_ak", "1"},
         {"stride_bk", std::to_string(N)},
         {"stride_bn", "1"},
         {"stride_cm", std::to_string(N)},
         {"stride_cn", "1"},
         {"BLOCK_M", "32"},
         {"BLOCK_N", "32"},
         {"BLOCK_K", "32"}},
        "matmul",
        {(N + 31) / 32, (M + 31) / 32, 1},
        {128, 1, 1},
        {"a_ptr", "b_ptr", "c_ptr"},
        {Bytes<uint32_t>({M, N, K})}});
    const uint32_t lrows = 48u * scale, lcols = 500;
    cases.push_back(Case{"layer norm",
                         std::to_string(lrows) + "x" + std::to_string(lcols),
                         "layernorm_kernel",
                         {lrows, 1, 1},
                         {{"x_ptr", Random(lrows * lcols, 6)},
                          {"y_ptr", std::vector<float>(lrows * lcols)},
                          {"w_ptr", Random(lcols, 7)},
                          {"b_ptr", Random(lcols, 8)}},
                         {{"stride", "500"},
                          {"N", "500"},
                          {"eps", "1e-5"},
                          {"BLOCK_SIZE", "512"}},
                         "layernorm",
                         {lrows, 1, 1},
                         {128, 1, 1},
                         {"x_ptr", "y_ptr", "w_ptr", "b_ptr"},
                         {Bytes<uint32_t>({lcols}), Bytes<uint32_t>({lcols}),
                          Bytes<float>({1e-5f})}});
  }
  std::printf(
      "Triton kernels (tests/compiler/triton/kernels/basics.py) beside "
      "hand-written "
      "MSL, emulated M1, best of %d\n\n",
      runs);
  std::printf(
      "| kernel     | size            | front+lower ms | compile ms | cached "
      "ms | "
      "Triton ms | MSL ms | Triton/MSL |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  for (const Case& c : cases) Run(c, runs, hand);
  return 0;
}
