// MSL compiler speed, and MSL-compiled kernels beside the same kernels
// written by hand in ISA text, in the same process. Not a test.
//
//   mtlemu_compiler_bench
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/bench_support.h"
#include "compiler/msl_compiler.h"
#include "emu/device/command_buffer.h"
#include "emu/device/compute_command_encoder.h"
#include "emu/device/device.h"

namespace {

using mtlemu::bench::Must;
using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
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

// A large file: `count` templated-style kernels, one of which is lowered.
std::string ManyKernels(int count) {
  std::string s = "#include <metal_stdlib>\nusing namespace metal;\n";
  for (int i = 0; i < count; ++i) {
    const std::string n = std::to_string(i);
    s += "kernel void k" + n +
         "(device float* a [[buffer(0)]], uint id [[thread_position_in_grid]])"
         " {\n  float x = a[id];\n  for (int j = 0; j < " +
         std::to_string(i % 7 + 1) + "; ++j) x = fma(x, 1.0001f, " + n +
         ".0f);\n  a[id] = sqrt(fabs(x)) + sin(x);\n}\n";
  }
  return s;
}

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

}  // namespace

int main() {
  auto start = Clock::now();
  Must(mtlemu::compiler::CompileMsl(kVectorAddMsl, "va.metal", {}));
  const double cold = Seconds(start);
  double warm = 1e30;
  for (int i = 0; i < 5; ++i) {
    start = Clock::now();
    Must(mtlemu::compiler::CompileMsl(kVectorAddMsl, "va.metal", {}));
    warm = std::min(warm, Seconds(start));
  }
  const std::string big = ManyKernels(400);
  start = Clock::now();
  Must(mtlemu::compiler::CompileMsl(big, "big.metal", {}, {"k123"}));
  const double big_s = Seconds(start);
  std::printf("MSL compile, in-process:\n");
  std::printf("  small kernel: first %.1f ms, then %.1f ms (best of 5)\n",
              cold * 1e3, warm * 1e3);
  std::printf("  %zu KB file, 400 kernels, one lowered: %.1f ms\n",
              big.size() / 1024, big_s * 1e3);

  auto device = Must(mtlemu::Device::Create("m1"));
  const uint64_t n = 1 << 22;
  const double msl = RunVectorAdd(
      *device,
      Must(mtlemu::compiler::CompileMsl(kVectorAddMsl, "va.metal", {})), n);
  auto library =
      Must(device->newLibraryWithISA(mtlemu::bench::kVectorAddIsa, "va.s"));
  const double hand = RunVectorAdd(*device, library->module(), n);
  std::printf(
      "vector add, %llu floats: MSL %.4f s, hand-written ISA %.4f s, "
      "ratio %.2fx\n",
      static_cast<unsigned long long>(n), msl, hand, msl / hand);
  return 0;
}
