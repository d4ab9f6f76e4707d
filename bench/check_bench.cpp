// What the kernel checks cost: three MSL kernels (a vector add, a
// threadgroup reduction with barriers, a 16x16 threadgroup-tiled matmul)
// run unchecked and under each check, in the same process; prints each
// time (best of 3 by default, the dispatch's host time) and its ratio to the
// unchecked run. The aim: at most 3x the functional time.
//
//   build/bench/mtlemu_check_bench [--threads N] [--runs N] [--only TEXT]
//                                  [--check LIST]
//
// --only runs the kernels whose name contains TEXT; --check the given
// check lists alone (e.g. "race"), beside the unchecked run.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "api/library.h"
#include "bench/bench_support.h"
#include "bench/peer_kernels.h"
#include "emu/device/command_buffer.h"
#include "emu/device/compute_command_encoder.h"
#include "emu/device/device.h"

namespace mtlemu::bench {
namespace {

struct Case {
  const char* name;
  const char* kernel;
  std::vector<uint64_t> buffer_floats;  // sizes of buffers 0, 1, ...
  MTLSize grid, group;
  int n_bytes_index = -1;  // setBytes(n) at this index
  uint32_t n = 0;
};

void MustOk(const Status& s) {
  if (!s.ok()) {
    std::fprintf(stderr, "bench: %s\n", s.error().message.c_str());
    std::exit(1);
  }
}

double RunCase(Device& device, Library& library, const Case& c,
               const char* checks, int threads, size_t* findings) {
  device.options().checks =
      checks ? Must(emu::ParseCheckList(checks)) : emu::CheckOptions{};
  device.options().host_threads = threads;
  auto pipeline =
      Must(device.newComputePipelineState(Must(library.newFunction(c.kernel))));
  std::vector<std::shared_ptr<Buffer>> buffers;
  for (uint64_t floats : c.buffer_floats) {
    std::vector<float> v(floats);
    for (uint64_t i = 0; i < floats; ++i) v[i] = static_cast<float>(i % 7);
    buffers.push_back(Must(device.newBuffer(v.data(), floats * 4)));
  }
  double seconds = 0;
  auto commands = device.newCommandQueue()->commandBuffer();
  auto encoder = commands->computeCommandEncoder();
  encoder->setComputePipelineState(pipeline);
  for (size_t i = 0; i < buffers.size(); ++i) {
    MustOk(encoder->setBuffer(buffers[i], 0, static_cast<int>(i)));
  }
  if (c.n_bytes_index >= 0) {
    MustOk(encoder->setBytes(&c.n, sizeof c.n, c.n_bytes_index));
  }
  MustOk(encoder->dispatchThreads(c.grid, c.group));
  commands->commit();
  if (commands->error() != nullptr) {
    std::fprintf(stderr, "bench: %s\n", commands->error()->message.c_str());
    std::exit(1);
  }
  seconds = commands->dispatches()[0].seconds;
  *findings = commands->dispatches()[0].check
                  ? commands->dispatches()[0].check->findings.size()
                  : 0;
  return seconds;
}

int Main(int argc, char** argv) {
  int threads = 0;
  int runs = 3;
  const char* only = "";
  std::vector<const char*> checks = {nullptr, "race", "init", "simd", "all"};
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--threads") == 0 && has_value) {
      threads = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--runs") == 0 && has_value) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--only") == 0 && has_value) {
      only = argv[++i];
    } else if (std::strcmp(argv[i], "--check") == 0 && has_value) {
      checks = {nullptr, argv[++i]};
    } else {
      std::fprintf(stderr,
                   "usage: mtlemu_check_bench [--threads N] [--runs N] "
                   "[--only TEXT] [--check LIST]\n");
      return 2;
    }
  }
  // The kernels: vector_add, reduce and matmul of peer_kernels.h (the MSL
  // of the PoCL comparison).
  auto device = Must(Device::Create("m1"));
  auto library = Must(api::newLibraryWithSource(*device, kPeerMsl));
  constexpr uint32_t kN = 256;
  const Case cases[] = {
      {"vector add, 4M floats",
       "vector_add",
       {1 << 22, 1 << 22, 1 << 22},
       {1 << 22, 1, 1},
       {256, 1, 1}},
      {"threadgroup reduction, 4M floats",
       "reduce",
       {1 << 22, (1 << 22) / 256},
       {1 << 22, 1, 1},
       {256, 1, 1}},
      {"16x16 tiled matmul, 256^3",
       "matmul",
       {kN * kN, kN * kN, kN * kN},
       {kN, kN, 1},
       {16, 16, 1},
       3,
       kN},
  };
  std::printf("%-34s", "kernel (ms, ratio)");
  for (const char* check : checks) {
    std::printf(" %10s", check == nullptr ? "unchecked" : check);
  }
  std::printf("\n");
  for (const Case& c : cases) {
    if (std::strstr(c.name, only) == nullptr) continue;
    std::printf("%-34s", c.name);
    double base = 0;
    for (const char* check : checks) {
      // The dispatch's own time (DispatchReport::seconds), best of `runs`.
      size_t findings = 0;
      double best = 1e30;
      for (int i = 0; i < runs; ++i) {
        best = std::min(
            best, RunCase(*device, *library, c, check, threads, &findings));
      }
      if (check == nullptr) {
        base = best;
        std::printf(" %10.1f", best * 1e3);
      } else {
        std::printf(" %5.1f %4.2fx", best * 1e3, best / base);
      }
      if (findings) std::printf("(%zu findings!)", findings);
    }
    std::printf("\n");
  }
  return 0;
}

}  // namespace
}  // namespace mtlemu::bench

int main(int argc, char** argv) { return mtlemu::bench::Main(argc, argv); }
