// Compile time of a source of many kernels, in one part (one compile of
// the whole source: the reference) and in parts side by side on the
// host's cores (compiler/kernel_parts.h), 2 and 4, in this process; the
// modules must be equal. Then what a library of it costs: the front ends
// on the host's cores, and the back end of one kernel alone. By default
// llama.cpp's Metal backend: ggml's src/ggml-metal/ggml-metal.metal
// (MTLEMU_GGML_DIR or the first argument: a snapshot of
// github.com/ggml-org/ggml), every kernel, with the macros
// ggml_metal_library_init passes, bfloat off and on; or FILE.metal with
// -I DIR... (an MLX kernel file with -I MLX_DIR). The module cache is not
// used; the first compile of the process (which loads the precompiled
// shims) is a small kernel's. With MTLEMU_BENCH_DUMP=PREFIX, the first
// kernel that differs is written to PREFIX.one.s and PREFIX.parts.s.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_support.h"
#include "compiler/kernel_parts.h"
#include "compiler/msl/attribute_rewriter.h"
#include "compiler/msl_compiler.h"
#include "compiler/msl_front_ends.h"
#include "isa/printer.h"

namespace {

using mtlemu::bench::Clock;
using mtlemu::bench::Seconds;

constexpr char kSmallKernel[] = R"(#include <metal_stdlib>
using namespace metal;
kernel void k(device float* y [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  y[i] += 1.0f;
}
)";

// A file to compile and the options to compile it with.
struct Config {
  std::filesystem::path file;
  std::string label;
  mtlemu::msl::CompileOptions options;
};

std::vector<Config> Configs(int argc, char** argv) {
  const char* env = std::getenv("MTLEMU_GGML_DIR");
  const std::string first = argc > 1 ? argv[1] : env != nullptr ? env : "";
  std::vector<Config> out;
  if (first.size() > 6 && first.substr(first.size() - 6) == ".metal") {
    Config c{first, std::filesystem::path(first).filename().string(), {}};
    for (int i = 2; i + 1 < argc; i += 2) {
      if (std::string(argv[i]) == "-I") {
        c.options.include_directories.push_back(argv[i + 1]);
      }
    }
    out.push_back(std::move(c));
    return out;
  }
  if (first.empty()) return out;
  const std::filesystem::path metal =
      std::filesystem::path(first) / "src/ggml-metal";
  for (const bool bf16 : {false, true}) {
    Config c{
        metal / "ggml-metal.metal",
        bf16 ? "ggml-metal.metal with GGML_METAL_HAS_BF16" : "ggml-metal.metal",
        {}};
    c.options.include_directories = {
        metal.string(), (std::filesystem::path(first) / "src").string()};
    if (bf16) c.options.macros.emplace_back("GGML_METAL_HAS_BF16", "1");
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<Config> configs = Configs(argc, argv);
  if (configs.empty()) {
    std::fprintf(stderr,
                 "usage: mtlemu_parts_compile_bench [GGML_DIR | FILE.metal "
                 "[-I DIR]...] (or set MTLEMU_GGML_DIR): a snapshot of "
                 "github.com/ggml-org/ggml, or a file\n");
    return 2;
  }
  mtlemu::bench::Must(
      mtlemu::compiler::CompileMsl(kSmallKernel, "small.metal", {}));
  std::printf("host: %u hardware threads\n",
              std::thread::hardware_concurrency());
  for (const Config& config : configs) {
    std::ifstream in(config.file);
    if (!in) {
      std::fprintf(stderr, "bench: no %s\n", config.file.c_str());
      return 2;
    }
    std::stringstream text;
    text << in.rdbuf();
    const mtlemu::msl::CompileOptions& options = config.options;
    auto start = Clock::now();
    const mtlemu::msl::PreprocessedSource source =
        mtlemu::msl::Preprocess(text.str(), config.file.string(), options);
    const double preprocess = Seconds(start);
    start = Clock::now();
    const std::vector<std::string> in_order =
        mtlemu::msl::ExplicitInstantiations(source.text);
    const double scan = Seconds(start);
    start = Clock::now();
    mtlemu::compiler::CompiledMsl one =
        mtlemu::compiler::CompileMslInParts(source, options, {}, {in_order});
    const double whole = Seconds(start);
    const mtlemu::isa::Module a = mtlemu::bench::Must(std::move(one.module));
    std::printf(
        "%s: %zu kernels (%zu instantiations); "
        "preprocess %.2f s, scan %.3f s; one part %.2f s\n",
        config.label.c_str(), a.kernels.size(), in_order.size(), preprocess,
        scan, whole);
    for (const size_t n : {2, 4}) {
      const auto parts =
          mtlemu::compiler::PartitionInstantiations(in_order, {}, n);
      start = Clock::now();
      mtlemu::compiler::CompiledMsl split =
          mtlemu::compiler::CompileMslInParts(source, options, {}, parts);
      const double seconds = Seconds(start);
      const mtlemu::isa::Module b =
          mtlemu::bench::Must(std::move(split.module));
      std::printf("  %zu parts: %.2f s (%.2fx)%s\n", parts.size(), seconds,
                  whole / seconds, a == b ? "" : "; THE MODULES DIFFER");
      if (!(a == b)) {
        for (size_t i = 0; i < a.kernels.size() && i < b.kernels.size(); ++i) {
          if (a.kernels[i] == b.kernels[i]) continue;
          std::printf(
              "  first difference: kernel %zu, %s (%zu instructions) "
              "and %s (%zu)\n",
              i, a.kernels[i].name.c_str(), a.kernels[i].code.size(),
              b.kernels[i].name.c_str(), b.kernels[i].code.size());
          if (const char* dump = std::getenv("MTLEMU_BENCH_DUMP")) {
            mtlemu::isa::Module x{a.files, {a.kernels[i]}};
            mtlemu::isa::Module y{b.files, {b.kernels[i]}};
            std::ofstream(std::string(dump) + ".one.s")
                << mtlemu::isa::PrintModule(x);
            std::ofstream(std::string(dump) + ".parts.s")
                << mtlemu::isa::PrintModule(y);
          }
          break;
        }
        return 1;
      }
    }
    // What a library of the file costs (api/library.h): the front ends on
    // the host's cores, then each kernel's back end when asked for (every
    // 10th kernel here), its code the one-part module's.
    start = Clock::now();
    std::unique_ptr<mtlemu::compiler::MslFrontEnds> fronts =
        mtlemu::compiler::MslFrontEnds::Compile(source, options);
    const double front_ends = Seconds(start);
    if (!fronts->ok()) {
      std::fprintf(stderr, "bench: %s\n",
                   mtlemu::isa::FormatDiagnostics(fronts->errors()).c_str());
      return 1;
    }
    start = Clock::now();
    size_t lowered = 0;
    for (size_t i = 0; i < a.kernels.size(); i += 10, ++lowered) {
      const mtlemu::isa::Module m =
          mtlemu::bench::Must(fronts->Lower(a.kernels[i].name));
      if (!(m.kernels.at(0) == a.kernels[i])) {
        std::printf("  kernel %s alone differs\n", a.kernels[i].name.c_str());
        return 1;
      }
    }
    const double per_kernel = Seconds(start) / static_cast<double>(lowered);
    std::printf(
        "  a library: front ends in %zu parts %.2f s (%.2fx); then %.1f ms a "
        "kernel (%zu lowered alone, each the one part's)\n",
        fronts->parts(), front_ends, whole / front_ends, per_kernel * 1e3,
        lowered);
  }
  return 0;
}
