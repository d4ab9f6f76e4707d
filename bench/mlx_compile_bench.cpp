// Compile time of real-world Metal: every .metal file of an MLX snapshot
// (MTLEMU_MLX_DIR or the first argument: github.com/ml-explore/mlx), each
// compiled twice in this process: with one kernel lowered (the first the
// file declares: what `mtlemu run -k` and newLibraryWithSource with one
// name cost) and with every kernel lowered (a whole metallib's worth).
// Before them, a 10-line kernel compiled cold (the first compile of the
// process, which loads the precompiled shims) and warm. The module cache is
// not used. Files the compiler refuses are listed with their first error.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "bench/bench_support.h"
#include "compiler/msl_compiler.h"

namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

constexpr char kSmallKernel[] = R"(#include <metal_stdlib>
using namespace metal;
kernel void saxpy(device const float* x [[buffer(0)]],
                  device float* y [[buffer(1)]],
                  constant float& a [[buffer(2)]],
                  constant uint& n [[buffer(3)]],
                  uint i [[thread_position_in_grid]]) {
  if (i >= n) return;
  y[i] = a * x[i] + y[i];
}
)";

std::string FirstLine(const std::string& text) {
  return text.substr(0, std::min(text.find('\n'), size_t{160}));
}

}  // namespace

int main(int argc, char** argv) {
  const std::string root =
      mtlemu::bench::MlxDir(argc, argv, "mtlemu_mlx_compile_bench MLX_DIR");
  if (root.empty()) return 2;
  const std::filesystem::path kernels =
      std::filesystem::path(root) / "mlx/backend/metal/kernels";

  auto start = Clock::now();
  if (!mtlemu::compiler::CompileMsl(kSmallKernel, "saxpy.metal", {}).ok())
    return 1;
  const double cold = Since(start);
  start = Clock::now();
  if (!mtlemu::compiler::CompileMsl(kSmallKernel, "saxpy.metal", {}).ok())
    return 1;
  std::printf("10-line kernel: %.1f ms cold, %.1f ms warm\n\n", cold * 1e3,
              Since(start) * 1e3);

  mtlemu::msl::CompileOptions options;
  options.include_directories.push_back(root);
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(kernels)) {
    if (e.path().extension() == ".metal") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  std::printf("%-44s %8s %10s %8s %10s\n", "file", "kernels", "one (s)",
              "all (s)", "per kernel");
  double largest_one = 0;
  std::string largest;
  for (const std::filesystem::path& path : files) {
    const std::string name = std::filesystem::relative(path, kernels).string();
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    const std::string source = text.str();
    // The kernels the file declares (front end only), the first of them.
    const mtlemu::msl::FrontendResult front = mtlemu::msl::CompileMsl(
        std::string_view(source), path.string(), options);
    if (!front.ok()) {
      std::printf("%-44s refused: %s\n", name.c_str(),
                  FirstLine(front.errors.front().ToString()).c_str());
      continue;
    }
    start = Clock::now();
    const auto one = mtlemu::compiler::CompileMsl(
        source, path.string(), options, {front.kernels[0].name});
    const double one_s = Since(start);
    start = Clock::now();
    const auto all =
        mtlemu::compiler::CompileMsl(source, path.string(), options);
    const double all_s = Since(start);
    if (!one.ok() || !all.ok()) {
      std::printf("%-44s refused: %s\n", name.c_str(),
                  FirstLine((one.ok() ? all : one).error().message).c_str());
      continue;
    }
    const size_t n = all.value().kernels.size();
    std::printf("%-44s %8zu %10.2f %8.1f %8.1f ms\n", name.c_str(), n, one_s,
                all_s, all_s / static_cast<double>(n) * 1e3);
    if (one_s > largest_one) {
      largest_one = one_s;
      largest = name;
    }
  }
  std::printf("\nslowest with one kernel: %s, %.2f s\n", largest.c_str(),
              largest_one);
  return 0;
}
