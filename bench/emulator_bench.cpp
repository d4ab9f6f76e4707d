// Emulator speed beside native C++ doing the same work, in the same run:
//   - ALU-bound: a dependent chain of fma per thread;
//   - memory-bound: vector add.
// Prints emulated lane-instructions per second (total and per host thread)
// and the time ratio emulated / native. Not a test: nothing here asserts.
//
//   mtlemu_bench [--threads N] [--size N] [--only alu|memory]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_support.h"
#include "emu/device/command_buffer.h"
#include "emu/device/compute_command_encoder.h"
#include "emu/device/device.h"

namespace {

using mtlemu::bench::BestOf;
using mtlemu::bench::Must;

constexpr int kFmaPerIteration = 16;
constexpr int kIterations = 64;
constexpr float kA = 0.999f, kB = 0.001f;

std::string FmaChainKernel() {
  std::string s =
      ".kernel fma_chain\n"
      ".buffer 0 u0 device float data\n"
      "    mov.u32 r0, %thread_position_in_grid.x\n"
      "    ld.device.f32 r1, [u0 + r0*4]\n"
      "    mov.u32 r2, 0\n"
      "loop:\n";
  for (int i = 0; i < kFmaPerIteration; ++i) {
    s += "    fma.f32 r1, r1, 0.999, 0.001\n";
  }
  s += "    add.u32 r2, r2, 1\n"
       "    lt.u32 r3, r2, " +
       std::to_string(kIterations) +
       "\n"
       "    bnz r3, loop, done\n"
       "done:\n"
       "    st.device.f32 [u0 + r0*4], r1\n"
       "    exit\n"
       ".end\n";
  return s;
}

struct Emulated {
  double seconds;
  uint64_t lane_instructions;
};

// Runs `kernel` over n threads with the given buffers, best of `repeats`.
Emulated RunKernel(mtlemu::Device& device, const std::string& text,
                   const std::vector<std::shared_ptr<mtlemu::Buffer>>& buffers,
                   uint64_t n, int repeats) {
  auto library = Must(device.newLibraryWithISA(text, "bench.s"));
  auto function = Must(library->newFunction(library->functionNames()[0]));
  auto pipeline = Must(device.newComputePipelineState(function));
  auto queue = device.newCommandQueue();
  Emulated best{1e30, 0};
  for (int r = 0; r < repeats; ++r) {
    auto commands = queue->commandBuffer();
    auto encoder = commands->computeCommandEncoder();
    encoder->setComputePipelineState(pipeline);
    for (size_t i = 0; i < buffers.size(); ++i) {
      (void)encoder->setBuffer(buffers[i], 0, static_cast<int>(i));
    }
    if (!encoder->dispatchThreads({n, 1, 1}, {256, 1, 1}).ok()) std::exit(1);
    commands->commit();
    if (commands->error()) {
      std::fprintf(stderr, "bench: %s\n", commands->error()->message.c_str());
      std::exit(1);
    }
    const mtlemu::DispatchReport& report = commands->dispatches()[0];
    if (report.seconds < best.seconds) {
      best = {report.seconds, report.lane_instructions};
    }
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 0;
  uint64_t n = 1 << 22;
  std::string only;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--threads") == 0)
      threads = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--size") == 0)
      n = std::strtoull(argv[i + 1], nullptr, 0);
    if (std::strcmp(argv[i], "--only") == 0) only = argv[i + 1];
  }
  auto device = Must(mtlemu::Device::Create("m1"));
  device->options().host_threads = threads;
  const int host_threads =
      threads > 0 ? threads
                  : static_cast<int>(std::thread::hardware_concurrency());
  const int repeats = 3;
  std::printf(
      "mtlemu bench: %llu threads per dispatch, %d host thread(s), "
      "best of %d\n\n",
      static_cast<unsigned long long>(n), host_threads, repeats);

  // ALU: fma chain.
  if (only.empty() || only == "alu") {
    const uint64_t m = n / 8;  // fewer threads: each does 1024 fma
    std::vector<float> init(m);
    for (uint64_t i = 0; i < m; ++i)
      init[i] = static_cast<float>(i % 97) * 0.01f;
    auto data = Must(device->newBuffer(init.data(), m * 4));
    const Emulated e = RunKernel(*device, FmaChainKernel(), {data}, m, repeats);
    std::vector<float> native(m);
    const double native_s = BestOf(repeats, [&] {
      native = init;
      for (uint64_t i = 0; i < m; ++i) {
        float x = native[i];
        for (int k = 0; k < kFmaPerIteration * kIterations; ++k)
          x = x * kA + kB;
        native[i] = x;
      }
    });
    const double rate = static_cast<double>(e.lane_instructions) / e.seconds;
    std::printf("fma chain (ALU-bound), %llu threads x %d fma\n",
                static_cast<unsigned long long>(m),
                kFmaPerIteration * kIterations);
    std::printf(
        "  emulated: %.3f s, %.3g lane-instructions/s (%.3g per host "
        "thread)\n",
        e.seconds, rate, rate / host_threads);
    std::printf(
        "  native C++ loop (1 thread): %.3f s; emulated/native time "
        "%.1fx\n\n",
        native_s, e.seconds / native_s);
  }
  // Memory: vector add.
  if (only.empty() || only == "memory") {
    std::vector<float> a(n), b(n);
    for (uint64_t i = 0; i < n; ++i) {
      a[i] = static_cast<float>(i);
      b[i] = 0.5f;
    }
    auto ba = Must(device->newBuffer(a.data(), n * 4));
    auto bb = Must(device->newBuffer(b.data(), n * 4));
    auto bo = Must(device->newBuffer(n * 4));
    const Emulated e = RunKernel(*device, mtlemu::bench::kVectorAddIsa,
                                 {ba, bb, bo}, n, repeats);
    std::vector<float> out(n);
    const double native_s = BestOf(repeats, [&] {
      for (uint64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
    });
    const double rate = static_cast<double>(e.lane_instructions) / e.seconds;
    std::printf("vector add (memory-bound), %llu floats\n",
                static_cast<unsigned long long>(n));
    std::printf("  emulated: %.4f s, %.3g lane-instructions/s, %.2f GB/s\n",
                e.seconds, rate, 12.0 * n / e.seconds / 1e9);
    std::printf(
        "  native C++ loop (1 thread): %.4f s, %.2f GB/s; "
        "emulated/native time %.1fx\n",
        native_s, 12.0 * n / native_s / 1e9, e.seconds / native_s);
  }
  return 0;
}
