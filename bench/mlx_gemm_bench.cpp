// MLX's steel GEMM (steel/gemm/kernels/steel_gemm_fused.metal of an MLX
// snapshot: MTLEMU_MLX_DIR or the first argument) compiled by mtlemu and
// timed on each base chip's model (M1, M2, M3) at float32 M = N = K = 1024
// (or the size given as the second argument), with the dispatch MLX's
// Matmul::eval_gpu makes for row-contiguous operands
// (mlx_steel_gemm.h). At 1024^3 the split-K route is not
// taken (64 x 64 tiles of 16 > 1024). Prints the model's time, 2 M N K /
// time, the chip's FP32 peak and the percent; checks a sample of the
// result against a double reference. Not a test.
//
//   mtlemu_mlx_gemm_bench [MLX_DIR] [SIZE]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "bench/bench_support.h"
#include "bench/mlx_steel_gemm.h"
#include "compiler/msl_compiler.h"
#include "emu/chips/chip.h"
#include "emu/device/command_buffer.h"
#include "emu/device/compute_command_encoder.h"
#include "emu/device/device.h"
#include "traces/timing_report.h"
#include "traces/timing_report_format.h"

namespace {

using mtlemu::bench::Must;
using namespace mtlemu::bench;  // mlx_steel_gemm.h

}  // namespace

int main(int argc, char** argv) {
  const std::string root =
      mtlemu::bench::MlxDir(argc, argv, "mtlemu_mlx_gemm_bench MLX_DIR [SIZE]");
  if (root.empty()) return 2;
  const int n = argc > 2 ? std::atoi(argv[2]) : 1024;
  const int M = n, N = n, K = n;
  const std::filesystem::path path = std::filesystem::path(root) /
                                     "mlx/backend/metal/kernels" /
                                     kSteelGemmFile;
  std::ifstream in(path);
  std::stringstream source;
  source << in.rdbuf();
  if (!in) {
    std::fprintf(stderr, "bench: cannot read %s\n", path.c_str());
    return 1;
  }
  mtlemu::msl::CompileOptions options;
  options.include_directories.push_back(root);
  options.function_constants = SteelGemmConstants(M, N, K);
  const auto compile_start = mtlemu::bench::Clock::now();
  const mtlemu::isa::Module module = Must(mtlemu::compiler::CompileMsl(
      source.str(), path.string(), options, {kSteelGemmKernel}));
  std::printf("%s: compiled in %.1f s\n", kSteelGemmKernel,
              mtlemu::bench::Seconds(compile_start));

  std::vector<float> a(size_t(M) * K), b(size_t(K) * N);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = std::sin(0.37f * static_cast<float>(i % 4099)) + 0.125f;
  }
  for (size_t i = 0; i < b.size(); ++i) {
    b[i] = std::cos(0.23f * static_cast<float>(i % 4093) + 0.5f);
  }
  const SteelGemmParams params = SteelGemmParamsFor(M, N, K);
  const int tiles_n = params.tiles_n, tiles_m = params.tiles_m;
  const double flops = 2.0 * M * N * K;

  std::printf("float32 %d x %d x %d, %d x %d threadgroups of (32, %d, %d):\n",
              M, N, K, tiles_n, tiles_m, kSteelWn, kSteelWm);
  std::printf(
      "| chip | model time (ms) | TFLOP/s (2MNK / time) | FP32 peak TFLOP/s "
      "| %% of peak | model's flops / 2MNK | limiter | occupancy | host s | "
      "max "
      "rel. error (256 samples) |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  for (const char* chip : {"m1", "m2", "m3"}) {
    auto device = Must(mtlemu::Device::Create(chip));
    device->options().timing = true;
    device->options().timeout = std::chrono::milliseconds(3'600'000);
    auto library = Must(device->newLibraryWithModule(module));
    auto pipeline = Must(device->newComputePipelineState(
        Must(library->newFunction(kSteelGemmKernel))));
    auto a_buffer = Must(device->newBuffer(a.data(), a.size() * 4));
    auto b_buffer = Must(device->newBuffer(b.data(), b.size() * 4));
    auto d_buffer = Must(device->newBuffer(size_t(M) * N * 4));
    auto commands = device->newCommandQueue()->commandBuffer();
    auto encoder = commands->computeCommandEncoder();
    encoder->setComputePipelineState(pipeline);
    (void)encoder->setBuffer(a_buffer, 0, 0);
    (void)encoder->setBuffer(b_buffer, 0, 1);
    (void)encoder->setBuffer(d_buffer, 0, 3);
    (void)encoder->setBytes(&params, sizeof(params), 4);
    const mtlemu::Status encoded = encoder->dispatchThreadgroups(
        {static_cast<uint64_t>(tiles_n), static_cast<uint64_t>(tiles_m), 1},
        {32, kSteelWn, kSteelWm});
    if (!encoded.ok()) {
      std::fprintf(stderr, "bench: %s\n", encoded.error().message.c_str());
      return 1;
    }
    const auto start = mtlemu::bench::Clock::now();
    commands->commit();
    const double host = mtlemu::bench::Seconds(start);
    if (commands->error() != nullptr) {
      std::fprintf(stderr, "bench: %s\n", commands->error()->message.c_str());
      return 1;
    }
    const mtlemu::emu::TimingReport& r = *commands->dispatches()[0].timing;
    // A sample of the result against a double reference.
    const float* d = static_cast<const float*>(d_buffer->contents());
    double worst = 0;
    for (int s = 0; s < 256; ++s) {
      const int i = (s * 397) % M, j = (s * 211 + 5) % N;
      double sum = 0, abs = 0;
      for (int k = 0; k < K; ++k) {
        const double p = double(a[size_t(i) * K + k]) * b[size_t(k) * N + j];
        sum += p;
        abs += std::fabs(p);
      }
      worst = std::max(worst, std::fabs(d[size_t(i) * N + j] - sum) / abs);
    }
    const double tflops = flops / (r.time_us * 1e-6) / 1e12;
    std::printf(
        "| %s | %.3f | %.3f | %.3f | %.1f | %.2f | %s | %.2f | %.1f | "
        "%.1e |\n",
        chip, r.time_us / 1000, tflops, r.peak_tflops,
        100 * tflops / r.peak_tflops, r.flops / flops, r.limiter.c_str(),
        r.occupancy, host, worst);
    if (std::getenv("MTLEMU_BENCH_REPORT") != nullptr) {
      std::printf("%s\n", mtlemu::traces::FormatReportText(r).c_str());
    }
    std::fflush(stdout);
  }
  return 0;
}
