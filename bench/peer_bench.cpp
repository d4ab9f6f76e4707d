// mtlemu beside its natural peer, PoCL (Debian's pocl-opencl-icd, through
// the OpenCL ICD loader): the same four kernels (peer_kernels.h), in MSL on
// mtlemu and in OpenCL C on PoCL, then three Triton kernels of mtlemu's
// tests (tests/compiler/triton/kernels/basics.py) and two of MLX's (from
// the snapshot MTLEMU_MLX_DIR names) on mtlemu beside OpenCL C doing the
// same work (peer_cases.h). Prints kernel time against kernel
// time (mtlemu's DispatchReport::seconds, PoCL's profiling events), best of
// N, with the ratio, and whether the two wrote the same bits, or the same
// result within the case's tolerance (the exit code is 1 where they did
// not; CTest runs it small as bench_peer_pocl). For the vector add, NumPy's
// time for the same add (run by /usr/bin/python3 from here) is the memory
// bandwidth of the machine.
//
//   build/bench/mtlemu_peer_bench [--runs N] [--threads N] [--only NAME]
//                                 [--scale F] [--timed] [--skip-interpreter]
//                                 [--schedule S]
//
// --threads sets mtlemu's host threads and PoCL's (POCL_MAX_PTHREAD_COUNT);
// --scale multiplies every size (0.25 for a quick look); --timed runs mtlemu
// in timed mode (M1, the default executor) as a further column. mtlemu runs
// twice: on the interpreter, and on the JIT execution path (emu/jit/);
// --skip-interpreter leaves the first out (for profiling the JIT path; the
// timed column is then to the JIT's time). --schedule sets the order of
// the SIMD groups (emu/dispatch/schedule.h: interleaved, the default,
// sequential or random:SEED). Not a test: nothing asserts.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "api/library.h"
#include "api/triton_launch.h"
#include "bench/bench_support.h"
#include "bench/peer_cases.h"
#include "bench/peer_kernels.h"
#include "emu/device/command_buffer.h"
#include "emu/device/compute_command_encoder.h"
#include "emu/device/device.h"

namespace mtlemu::bench {
namespace {

[[noreturn]] void Fail(const std::string& message) {
  std::fprintf(stderr, "peer_bench: %s\n", message.c_str());
  std::exit(1);
}

// --- mtlemu ----------------------------------------------------------------

struct Result {
  double seconds = 1e30;  // best of the runs
  std::vector<float> output;
};

// The Triton kernel of `c`, compiled with the device's options now.
api::TritonLibrary CompileTriton(Device& device, const PeerCase& c) {
  api::TritonRequest request;
  request.file = std::string(MTLEMU_SOURCE_DIR) +
                 "/tests/compiler/triton/kernels/basics.py";
  request.kernel = c.triton.kernel;
  for (const std::string& name : c.triton.buffers) {
    triton::frontend::KernelArg pointer;
    pointer.kind = triton::frontend::KernelArg::Kind::kPointer;
    pointer.dtype = triton::frontend::DType::F32();
    request.args.emplace_back(name, pointer);
  }
  for (const auto& [name, text] : c.triton.scalars) {
    request.args.emplace_back(name,
                              triton::frontend::KernelArg::FromText(text));
  }
  return Must(api::newLibraryWithTriton(device, request));
}

// The MLX kernel of `c` from the snapshot at `root`.
std::shared_ptr<ComputePipelineState> CompileMlx(Device& device,
                                                 const PeerCase& c,
                                                 const std::string& root) {
  const std::filesystem::path path =
      std::filesystem::path(root) / "mlx/backend/metal/kernels" / c.mlx.file;
  std::ifstream in(path);
  std::stringstream source;
  source << in.rdbuf();
  if (!in) Fail("cannot read " + path.string());
  msl::CompileOptions options;
  options.include_directories.push_back(root);
  options.function_constants = c.mlx.constants;
  auto library = Must(api::newLibraryWithSource(device, source.str(), options,
                                                path.string(), {c.mlx.kernel}));
  return Must(
      device.newComputePipelineState(Must(library->newFunction(c.mlx.kernel))));
}

// Encodes `c` on `encoder` over `buffers`: its Triton launch where it has
// one (`triton`), else its MLX kernel or kPeerMsl's (`pipeline`).
void Encode(Device& device, ComputeCommandEncoder& encoder, const PeerCase& c,
            const std::vector<std::shared_ptr<Buffer>>& buffers,
            const std::shared_ptr<ComputePipelineState>& pipeline,
            const api::TritonLibrary& triton) {
  if (c.triton.kernel != nullptr) {
    std::map<std::string, api::TritonArgValue> args;
    for (size_t i = 0; i < buffers.size(); ++i) {
      args[c.triton.buffers[i]].buffer = buffers[i];
    }
    for (const auto& [name, text] : c.triton.scalars) {
      args[name].scalar = triton::frontend::KernelArg::FromText(text);
    }
    const MTLSize grid{c.triton.grid[0], c.triton.grid[1], c.triton.grid[2]};
    if (Status s = api::EncodeTritonLaunch(device, encoder, triton, grid, args);
        !s.ok()) {
      Fail(c.name + ": " + s.error().message);
    }
    return;
  }
  encoder.setComputePipelineState(pipeline);
  const bool mlx = c.mlx.kernel != nullptr;
  const std::vector<std::vector<uint8_t>>& values =
      mlx ? c.mlx.values : c.values;
  size_t slot = 0;  // the next argument: its index is `slot`, or MLX's
  const auto next = [&] {
    const size_t i = slot++;
    return mlx ? c.mlx.indices.at(i) : static_cast<int>(i);
  };
  for (const auto& buffer : buffers) {
    if (!encoder.setBuffer(buffer, 0, next()).ok()) Fail("setBuffer");
  }
  for (const std::vector<uint8_t>& value : values) {
    if (!encoder.setBytes(value.data(), value.size(), next()).ok()) {
      Fail("setBytes");
    }
  }
  Status dispatched;
  if (!mlx) {
    dispatched = encoder.dispatchThreads({c.grid[0], c.grid[1], 1},
                                         {c.group[0], c.group[1], 1});
  } else {
    const MTLSize grid{c.mlx.grid[0], c.mlx.grid[1], c.mlx.grid[2]};
    const MTLSize group{c.mlx.group[0], c.mlx.group[1], c.mlx.group[2]};
    dispatched = c.mlx.threadgroups ? encoder.dispatchThreadgroups(grid, group)
                                    : encoder.dispatchThreads(grid, group);
  }
  if (!dispatched.ok()) Fail(c.name + ": " + dispatched.error().message);
}

Result RunMtlemu(Device& device, Library& library, const PeerCase& c,
                 int runs) {
  std::shared_ptr<ComputePipelineState> pipeline;
  api::TritonLibrary triton;
  if (c.triton.kernel != nullptr) {
    triton = CompileTriton(device, c);
  } else if (c.mlx.kernel != nullptr) {
    pipeline = CompileMlx(device, c, std::getenv("MTLEMU_MLX_DIR"));
  } else {
    auto function = Must(library.newFunction(c.kernel));
    pipeline = Must(device.newComputePipelineState(function));
  }
  Result result;
  for (int run = 0; run < runs; ++run) {
    std::vector<std::shared_ptr<Buffer>> buffers;
    for (const std::vector<float>& b : c.buffers) {
      buffers.push_back(Must(device.newBuffer(b.data(), b.size() * 4)));
    }
    auto commands = device.newCommandQueue()->commandBuffer();
    auto encoder = commands->computeCommandEncoder();
    Encode(device, *encoder, c, buffers, pipeline, triton);
    commands->commit();
    if (commands->error() != nullptr) {
      Fail(c.name + ": " + commands->error()->message);
    }
    result.seconds =
        std::min(result.seconds, commands->dispatches()[0].seconds);
    if (run == 0) {
      const auto* out =
          static_cast<const float*>(buffers[c.output]->contents());
      result.output.assign(out, out + c.buffers[c.output].size());
    }
  }
  return result;
}

// --- PoCL, in its own process (pocl_runner.cpp) ------------------------------

// The folder of this program, where mtlemu_pocl_runner is built beside it.
std::string ProgramFolder() {
  std::error_code error;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::string(".") : self.parent_path().string();
}

// Runs case `index` of PeerCases(scale), `c`, on PoCL through
// mtlemu_pocl_runner; the device's name goes to `device`.
Result RunPocl(size_t index, const PeerCase& c, double scale, int runs,
               std::string& device) {
  const std::string out = std::filesystem::temp_directory_path() /
                          ("mtlemu_peer_" + std::to_string(getpid()) + ".f32");
  const std::string command = "'" + ProgramFolder() + "/mtlemu_pocl_runner' " +
                              std::to_string(index) + " " +
                              std::to_string(scale) + " " +
                              std::to_string(runs) + " '" + out + "'";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) Fail("cannot run " + command);
  Result result;
  char name[256] = {};
  const bool read =
      std::fscanf(pipe, "%lf %255[^\n]", &result.seconds, name) == 2;
  if (pclose(pipe) != 0 || !read) Fail("PoCL's run failed: " + command);
  device = name;
  result.output.resize(c.buffers[c.output].size());
  FILE* f = std::fopen(out.c_str(), "rb");
  const bool complete =
      f != nullptr && std::fread(result.output.data(), 4, result.output.size(),
                                 f) == result.output.size();
  if (f != nullptr) std::fclose(f);
  std::filesystem::remove(out);
  if (!complete) Fail("PoCL's output " + out + " is incomplete");
  return result;
}

// Whether `a` is `b` within `tolerance` (PeerCase::tolerance: 0, the same
// bits), and in `said` how: "same bits", or how many differ and by how much.
bool Compare(const std::vector<float>& a, const std::vector<float>& b,
             double tolerance, std::string& said) {
  size_t differ = 0;
  double worst = 0, worst_relative = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    uint32_t x, y;
    std::memcpy(&x, &a[i], 4);
    std::memcpy(&y, &b[i], 4);
    if (x == y) continue;
    ++differ;
    const double d = std::fabs(double{a[i]} - double{b[i]});
    worst = std::max(worst, d);
    const double larger =
        std::max(std::fabs(double{a[i]}), std::fabs(double{b[i]}));
    // NaN against a number, or a difference where one is 0: no ratio.
    worst_relative =
        std::max(worst_relative, larger > 0 && d == d ? d / larger : 1e30);
  }
  char text[128];
  if (differ == 0) {
    said = "same bits";
  } else if (tolerance > 0) {
    std::snprintf(text, sizeof text,
                  "%zu of %zu differ, by %.2g relative at most (allowed %.0e)",
                  differ, a.size(), worst_relative, tolerance);
    said = text;
  } else {
    std::snprintf(text, sizeof text, "%zu differ (max %.3g)", differ, worst);
    said = text;
  }
  return differ == 0 || worst_relative <= tolerance;
}

// NumPy's time for c = a + b over `n` floats (best of `runs`), from
// /usr/bin/python3; negative when it cannot be run.
double NumpyAddSeconds(size_t n, int runs) {
  const std::string command =
      "/usr/bin/python3 -c \"import numpy as np, time\n"
      "n=" +
      std::to_string(n) +
      "\na=np.arange(n,dtype=np.float32); b=a.copy(); c=np.empty_like(a)\n"
      "best=1e30\n"
      "for _ in range(" +
      std::to_string(runs + 1) +
      "):\n"
      "  t=time.perf_counter(); np.add(a,b,out=c); "
      "best=min(best,time.perf_counter()-t)\n"
      "print(best)\" 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return -1;
  double seconds = -1;
  if (std::fscanf(pipe, "%lf", &seconds) != 1) seconds = -1;
  pclose(pipe);
  return seconds;
}

int Main(int argc, char** argv) {
  int runs = 3, threads = 0;
  double scale = 1;
  bool timed = false, skip_interpreter = false;
  std::string only;
  emu::Schedule schedule;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--runs" && has_value) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--threads" && has_value) {
      threads = std::atoi(argv[++i]);
    } else if (arg == "--only" && has_value) {
      only = argv[++i];
    } else if (arg == "--scale" && has_value) {
      scale = std::atof(argv[++i]);
    } else if (arg == "--timed") {
      timed = true;
    } else if (arg == "--skip-interpreter") {
      skip_interpreter = true;
    } else if (arg == "--schedule" && has_value &&
               emu::ParseSchedule(argv[i + 1]).ok()) {
      schedule = emu::ParseSchedule(argv[++i]).value();
    } else {
      std::fprintf(stderr,
                   "usage: %s [--runs N] [--threads N] [--only NAME] "
                   "[--scale F] [--timed] [--skip-interpreter] "
                   "[--schedule S]\n",
                   argv[0]);
      return 2;
    }
  }
  if (threads > 0) {
    // Before PoCL starts its threads.
    setenv("POCL_MAX_PTHREAD_COUNT", std::to_string(threads).c_str(), 1);
  }
  auto device = Must(Device::Create("m1"));
  device->options().host_threads = threads;
  device->options().schedule = schedule;
  auto library = Must(api::newLibraryWithSource(*device, kPeerMsl));

  std::string pocl_device;
  bool first = true, all_same = true;
  const std::vector<PeerCase> cases = PeerCases(scale);
  for (size_t index = 0; index < cases.size(); ++index) {
    const PeerCase& c = cases[index];
    if (!only.empty() && c.name.find(only) == std::string::npos &&
        only != c.kernel) {
      continue;
    }
    if (c.mlx.kernel != nullptr && std::getenv("MTLEMU_MLX_DIR") == nullptr) {
      std::printf(
          "| %s | %s | skipped: MTLEMU_MLX_DIR names no snapshot of "
          "github.com/ml-explore/mlx |\n",
          c.name.c_str(), c.work.c_str());
      continue;
    }
    const Result pocl = RunPocl(index, c, scale, runs, pocl_device);
    if (first) {
      std::printf("PoCL device: %s; mtlemu: functional mode%s; best of %d\n\n",
                  pocl_device.c_str(), timed ? " and timed (m1)" : "", runs);
      std::printf(
          "| kernel | work | PoCL ms | mtlemu ms | mtlemu / PoCL | JIT ms | "
          "JIT / PoCL |%s outputs |\n",
          timed ? " timed ms | timed / functional |" : "");
      std::printf("|---|---|---|---|---|---|---|%s---|\n",
                  timed ? "---|---|" : "");
      first = false;
    }
    device->options().timing = false;
    // The JIT execution path (emu/jit/): pipelines made now compile.
    device->options().executor = emu::Executor::kJit;
    const Result jit = RunMtlemu(*device, *library, c, runs);
    device->options().executor = emu::Executor::kInterpreter;
    const Result emu =
        skip_interpreter ? jit : RunMtlemu(*device, *library, c, runs);
    std::printf("| %s | %s | %.1f | %.1f | %.2fx | %.1f | %.2fx |",
                c.name.c_str(), c.work.c_str(), pocl.seconds * 1e3,
                emu.seconds * 1e3, emu.seconds / pocl.seconds,
                jit.seconds * 1e3, jit.seconds / pocl.seconds);
    if (timed) {
      // As a user runs it: the default executor, which compiles dispatches
      // this big (timed mode runs compiled code that touches no memory).
      device->options().timing = true;
      device->options().executor = emu::Executor::kAuto;
      const Result t = RunMtlemu(*device, *library, c, runs);
      device->options().timing = false;
      std::printf(" %.1f | %.1fx |", t.seconds * 1e3, t.seconds / emu.seconds);
    }
    std::string compared;
    bool same = Compare(emu.output, pocl.output, c.tolerance, compared);
    if (jit.output != emu.output) {
      // The two execution paths must agree bit for bit, whatever PoCL says.
      Compare(jit.output, emu.output, 0, compared);
      compared = "JIT against the interpreter: " + compared;
      same = false;
    }
    all_same &= same;
    std::printf(" %s |\n", compared.c_str());
    std::fflush(stdout);
    if (c.kernel == std::string("vector_add") && c.triton.kernel == nullptr &&
        c.mlx.kernel == nullptr) {
      const double numpy = NumpyAddSeconds(c.buffers[0].size(), runs);
      if (numpy > 0) {
        std::printf(
            "| vector add, NumPy | %s | | %.1f (NumPy) | mtlemu / "
            "NumPy %.2fx | | JIT / NumPy %.2fx |%s |\n",
            c.work.c_str(), numpy * 1e3, emu.seconds / numpy,
            jit.seconds / numpy, timed ? " | |" : "");
      }
    }
  }
  if (!all_same) {
    std::fprintf(stderr,
                 "peer_bench: mtlemu and PoCL wrote different results\n");
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace mtlemu::bench

int main(int argc, char** argv) { return mtlemu::bench::Main(argc, argv); }
