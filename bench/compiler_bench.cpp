// MSL compiler speed, and MSL-compiled kernels beside the same kernels
// written by hand in ISA text, in the same process. Not a test.
//
//   mtlemu_compiler_bench
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "bench/bench_support.h"
#include "bench/large_msl_file.h"
#include "compiler/module_cache.h"
#include "compiler/msl_compiler.h"
#include "emu/device/command_buffer.h"
#include "emu/device/compute_command_encoder.h"
#include "emu/device/device.h"

namespace {

using mtlemu::bench::BestOf;
using mtlemu::bench::Clock;
using mtlemu::bench::Must;
using mtlemu::bench::Seconds;

std::string ReadFile(const char* path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

constexpr char kVectorAddMsl[] = R"(
#include <metal_stdlib>
using namespace metal;
kernel void vector_add(device const float* a [[buffer(0)]],
                       device const float* b [[buffer(1)]],
                       device float* out [[buffer(2)]],
                       uint id [[thread_position_in_grid]]) {
  out[id] = a[id] + b[id];
}
)";

// A tiled matrix multiply in MSL, the same algorithm as the hand-written
// examples/matmul_tiled.s (16 x 16 tiles of A and B in threadgroup memory,
// zero padding, one fma per k in order).
constexpr char kMatmulMsl[] = R"(
#include <metal_stdlib>
using namespace metal;
struct Dims { uint M, N, K; };
kernel void matmul_tiled(device const float* A [[buffer(0)]],
                         device const float* B [[buffer(1)]],
                         device float* C [[buffer(2)]],
                         constant Dims& d [[buffer(3)]],
                         uint2 t [[thread_position_in_threadgroup]],
                         uint2 g [[threadgroup_position_in_grid]]) {
  threadgroup float As[16][16];
  threadgroup float Bs[16][16];
  const uint row = g.y * 16 + t.y, col = g.x * 16 + t.x;
  float acc = 0.0f;
  for (uint k0 = 0; k0 < d.K; k0 += 16) {
    const uint ak = k0 + t.x, bk = k0 + t.y;
    As[t.y][t.x] = row < d.M && ak < d.K ? A[row * d.K + ak] : 0.0f;
    Bs[t.y][t.x] = bk < d.K && col < d.N ? B[bk * d.N + col] : 0.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint k = 0; k < 16; ++k) acc = fma(As[t.y][k], Bs[k][t.x], acc);
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  if (row < d.M && col < d.N) C[row * d.N + col] = acc;
}
)";

double RunVectorAdd(mtlemu::Device& device, mtlemu::isa::Module module,
                    uint64_t n) {
  auto library = Must(device.newLibraryWithModule(std::move(module)));
  auto function = Must(library->newFunction("vector_add"));
  auto pipeline = Must(device.newComputePipelineState(function));
  std::vector<std::shared_ptr<mtlemu::Buffer>> buffers;
  for (int i = 0; i < 3; ++i) buffers.push_back(Must(device.newBuffer(n * 4)));
  double best = 1e30;
  for (int r = 0; r < 3; ++r) {
    auto commands = device.newCommandQueue()->commandBuffer();
    auto encoder = commands->computeCommandEncoder();
    encoder->setComputePipelineState(pipeline);
    for (int i = 0; i < 3; ++i) (void)encoder->setBuffer(buffers[i], 0, i);
    (void)encoder->dispatchThreads({n, 1, 1}, {256, 1, 1});
    commands->commit();
    best = std::min(best, commands->dispatches()[0].seconds);
  }
  return best;
}

double RunMatmul(mtlemu::Device& device, mtlemu::isa::Module module, uint32_t n,
                 std::vector<float>* c_out) {
  auto library = Must(device.newLibraryWithModule(std::move(module)));
  auto pipeline = Must(device.newComputePipelineState(
      Must(library->newFunction("matmul_tiled"))));
  std::vector<float> a(n * n), b(n * n);
  for (uint32_t i = 0; i < n * n; ++i) {
    a[i] = static_cast<float>(i % 17) * 0.125f - 1.0f;
    b[i] = static_cast<float>(i % 13) * 0.25f - 1.5f;
  }
  auto ab = Must(device.newBuffer(a.data(), n * n * 4));
  auto bb = Must(device.newBuffer(b.data(), n * n * 4));
  auto cb = Must(device.newBuffer(n * n * 4));
  const uint32_t dims[3] = {n, n, n};
  double best = 1e30;
  for (int r = 0; r < 3; ++r) {
    auto commands = device.newCommandQueue()->commandBuffer();
    auto encoder = commands->computeCommandEncoder();
    encoder->setComputePipelineState(pipeline);
    (void)encoder->setBuffer(ab, 0, 0);
    (void)encoder->setBuffer(bb, 0, 1);
    (void)encoder->setBuffer(cb, 0, 2);
    (void)encoder->setBytes(dims, sizeof dims, 3);
    (void)encoder->dispatchThreads({n, n, 1}, {16, 16, 1});
    commands->commit();
    best = std::min(best, commands->dispatches()[0].seconds);
  }
  const float* c = static_cast<const float*>(cb->contents());
  c_out->assign(c, c + n * n);
  return best;
}

// The same product in plain C++, one thread, k in order.
double NativeMatmul(uint32_t n, std::vector<float>* c) {
  std::vector<float> a(n * n), b(n * n);
  for (uint32_t i = 0; i < n * n; ++i) {
    a[i] = static_cast<float>(i % 17) * 0.125f - 1.0f;
    b[i] = static_cast<float>(i % 13) * 0.25f - 1.5f;
  }
  c->assign(n * n, 0.0f);
  return BestOf(3, [&] {
    for (uint32_t r = 0; r < n; ++r) {
      for (uint32_t col = 0; col < n; ++col) {
        float acc = 0.0f;
        for (uint32_t k = 0; k < n; ++k) {
          acc = std::fma(a[r * n + k], b[k * n + col], acc);
        }
        (*c)[r * n + col] = acc;
      }
    }
  });
}

}  // namespace

int main() {
  using mtlemu::compiler::CompileMsl;
  // --- compile time --------------------------------------------------------
  auto start = Clock::now();
  Must(CompileMsl(kVectorAddMsl, "va.metal", {}));
  const double cold = Seconds(start);
  const double warm =
      BestOf(5, [] { Must(CompileMsl(kVectorAddMsl, "va.metal", {})); });
  const double front = BestOf(
      5, [] { (void)mtlemu::msl::CompileMsl(kVectorAddMsl, "va.metal", {}); });
  const double matmul_compile =
      BestOf(5, [] { Must(CompileMsl(kMatmulMsl, "mm.metal", {})); });

  // From the disk cache, in-process: the key (preprocessing the source,
  // hashing it, the options and the compiler binary) plus reading and
  // decoding the module.
  const std::string dir =
      std::filesystem::temp_directory_path() / "mtlemu_bench_cache";
  std::filesystem::remove_all(dir);
  const mtlemu::compiler::ModuleCache cache(dir);
  const auto key_of = [] {
    return mtlemu::compiler::ModuleCache::Key(
        mtlemu::msl::Preprocess(kVectorAddMsl, "va.metal", {}), {}, {});
  };
  cache.Store(key_of(), Must(CompileMsl(kVectorAddMsl, "va.metal", {})));
  const double cached = BestOf(20, [&] {
    if (!cache.Load(key_of())) std::exit(1);
  });
  std::filesystem::remove_all(dir);

  const std::string big = mtlemu::bench::LargeMslFile();
  size_t instantiations = 0, plain = 0;
  for (size_t at = 0; (at = big.find("[[host_name(", at)) != std::string::npos;
       ++at) {
    ++instantiations;
  }
  for (size_t at = 0;
       (at = big.find("kernel void plain", at)) != std::string::npos; ++at) {
    ++plain;
  }
  start = Clock::now();
  Must(CompileMsl(big, "big.metal", {}, {"reduce256_Add_float"}));
  const double big_s = Seconds(start);

  std::printf("MSL compile, in-process (best of 5 unless said):\n");
  std::printf(
      "  small kernel (vector add): first %.1f ms, then %.1f ms "
      "(front end %.1f ms)\n",
      cold * 1e3, warm * 1e3, front * 1e3);
  std::printf("  tiled matmul kernel: %.1f ms\n", matmul_compile * 1e3);
  std::printf("  small kernel from the disk cache (key + load): %.2f ms\n",
              cached * 1e3);
  std::printf(
      "  %zu KB file, %zu [[host_name]] instantiations + %zu plain "
      "kernels, one lowered: %.2f s\n",
      big.size() / 1024, instantiations, plain, big_s);

  // --- emulated speed ------------------------------------------------------
  auto device = Must(mtlemu::Device::Create("m1"));
  const uint64_t n = 1 << 22;
  const double msl =
      RunVectorAdd(*device, Must(CompileMsl(kVectorAddMsl, "va.metal", {})), n);
  auto library =
      Must(device->newLibraryWithISA(mtlemu::bench::kVectorAddIsa, "va.s"));
  const double hand = RunVectorAdd(*device, *library->module(), n);
  std::vector<float> a(n, 1.5f), b(n, 2.25f), out(n);
  const double native = BestOf(3, [&] {
    for (uint64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
  });
  std::printf(
      "vector add, %llu floats: MSL %.4f s, hand-written ISA %.4f s "
      "(MSL/ISA %.2fx), native loop %.4f s (MSL/native %.1fx)\n",
      static_cast<unsigned long long>(n), msl, hand, msl / hand, native,
      msl / native);

  const uint32_t m = 256;
  std::vector<float> c_msl, c_isa, c_native;
  const double mm_msl = RunMatmul(
      *device, Must(CompileMsl(kMatmulMsl, "mm.metal", {})), m, &c_msl);
  auto mm_library = Must(device->newLibraryWithISA(
      ReadFile(MTLEMU_SOURCE_DIR "/examples/matmul_tiled.s"),
      "matmul_tiled.s"));
  const double mm_isa = RunMatmul(*device, *mm_library->module(), m, &c_isa);
  const double mm_native = NativeMatmul(m, &c_native);
  std::printf(
      "tiled matmul %ux%ux%u: MSL %.4f s, hand-written ISA %.4f s (MSL/ISA "
      "%.2fx), native loop %.4f s (MSL/native %.1fx), results %s\n",
      m, m, m, mm_msl, mm_isa, mm_msl / mm_isa, mm_native, mm_msl / mm_native,
      c_msl == c_isa && c_msl == c_native ? "identical" : "DIFFER");
  return 0;
}
