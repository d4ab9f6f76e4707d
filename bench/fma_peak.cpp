// The FP32 peak an MSL kernel reaches as compiled by mtlemu: four
// independent fma chains in a 512-iteration loop, dispatched to fill every
// core, timed on each chip's model. What the compiler does to the loop
// (unrolling, the loop counter, constants) decides how close it comes: the
// model issues one instruction per scheduler per clock, so every
// instruction that is not an fma costs a slot. The hand-unrolled ISA of
// timing_validation's "FP32 FMA peak" row is the ceiling. Not a test.
//
//   mtlemu_fma_peak [--isa]        also print the compiled kernel
//   mtlemu_fma_peak --module K.s   time this ISA text's fma_peak instead
//                                  (an older compiler's output, say)
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "bench/bench_support.h"
#include "compiler/msl_compiler.h"
#include "emu/chips/chip.h"
#include "emu/device/command_buffer.h"
#include "emu/device/compute_command_encoder.h"
#include "emu/device/device.h"
#include "isa/assembler.h"
#include "isa/printer.h"

namespace {

using mtlemu::bench::Must;

constexpr char kFmaPeakMsl[] = R"(
#include <metal_stdlib>
using namespace metal;
kernel void fma_peak(device float* out [[buffer(0)]],
                     uint id [[thread_position_in_grid]]) {
  float a = float(id), b = a + 1.0f, c = a + 2.0f, d = a + 3.0f;
  for (int i = 0; i < 512; ++i) {
    a = fma(a, 0.999f, 0.001f);
    b = fma(b, 0.999f, 0.001f);
    c = fma(c, 0.999f, 0.001f);
    d = fma(d, 0.999f, 0.001f);
  }
  out[id] = a + b + c + d;
}
)";

// Resident threads per core when registers do not limit them (M1..M3).
constexpr uint64_t kThreadsPerCore = 3072;
constexpr uint32_t kThreadgroup = 256;

mtlemu::emu::TimingReport Run(const std::string& chip,
                              const mtlemu::isa::Module& module) {
  auto device = Must(mtlemu::Device::Create(chip));
  device->options().timing = true;
  auto library = Must(device->newLibraryWithModule(module));
  auto pipeline = Must(
      device->newComputePipelineState(Must(library->newFunction("fma_peak"))));
  const uint64_t threads =
      static_cast<uint64_t>(mtlemu::FindChip(chip)->gpu_cores) *
      kThreadsPerCore;
  auto out = Must(device->newBuffer(threads * 4));
  auto commands = device->newCommandQueue()->commandBuffer();
  auto encoder = commands->computeCommandEncoder();
  encoder->setComputePipelineState(pipeline);
  (void)encoder->setBuffer(out, 0, 0);
  (void)encoder->dispatchThreads({threads, 1, 1}, {kThreadgroup, 1, 1});
  commands->commit();
  if (commands->error() != nullptr) {
    std::fprintf(stderr, "bench: %s\n", commands->error()->message.c_str());
    std::exit(1);
  }
  return *commands->dispatches()[0].timing;
}

mtlemu::isa::Module AssembleFile(const char* path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  mtlemu::isa::AssembleResult r = mtlemu::isa::Assemble(text.str(), path);
  if (!in || !r.ok()) {
    std::fprintf(stderr, "bench: cannot assemble %s\n", path);
    std::exit(1);
  }
  return std::move(r.module);
}

}  // namespace

int main(int argc, char** argv) {
  const bool given = argc > 2 && std::strcmp(argv[1], "--module") == 0;
  const mtlemu::isa::Module module =
      given ? AssembleFile(argv[2])
            : Must(mtlemu::compiler::CompileMsl(kFmaPeakMsl, "fma_peak.metal",
                                                {}));
  if (argc > 1 && std::strcmp(argv[1], "--isa") == 0) {
    std::printf("%s\n", mtlemu::isa::PrintModule(module).c_str());
  }
  std::printf("4 fma chains x 512 iterations, %llu threads per core, %s:\n",
              static_cast<unsigned long long>(kThreadsPerCore),
              given ? argv[2] : "MSL compiled by mtlemu");
  std::printf("| chip | achieved TFLOP/s | peak TFLOP/s | %% of peak |\n");
  std::printf("|---|---|---|---|\n");
  for (const char* chip : {"m1", "m2", "m3"}) {
    const mtlemu::emu::TimingReport r = Run(chip, module);
    std::printf("| %s | %.3f | %.3f | %.1f |\n", chip, r.achieved_tflops,
                r.peak_tflops, 100.0 * r.achieved_tflops / r.peak_tflops);
  }
  return 0;
}
