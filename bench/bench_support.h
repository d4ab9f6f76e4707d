// Pieces the benchmarks share: the hand-written vector add kernel,
// Must(), which ends a benchmark on an error (benchmarks are programs,
// not library code), and host timing.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

#include "common/result.h"
#include "tests/support/test_kernels.h"

namespace mtlemu::bench {

using testing::kVectorAddIsa;

template <class T>
T Must(Result<T> r) {
  if (!r.ok()) {
    std::fprintf(stderr, "bench: %s\n", r.error().message.c_str());
    std::exit(1);
  }
  return std::move(r).value();
}

using Clock = std::chrono::steady_clock;

inline double Seconds(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The shortest host time of `runs` calls of f(), in seconds.
template <class F>
double BestOf(int runs, F&& f) {
  double best = 1e30;
  for (int i = 0; i < runs; ++i) {
    const auto start = Clock::now();
    f();
    best = std::min(best, Seconds(start));
  }
  return best;
}

// The MLX snapshot a benchmark reads (github.com/ml-explore/mlx): argv[1],
// else $MTLEMU_MLX_DIR; empty, after printing `usage`, when neither is set.
inline std::string MlxDir(int argc, char** argv, const char* usage) {
  const char* env = std::getenv("MTLEMU_MLX_DIR");
  std::string root = argc > 1 ? argv[1] : env != nullptr ? env : "";
  if (root.empty()) {
    std::fprintf(stderr,
                 "usage: %s (or set MTLEMU_MLX_DIR): a snapshot of "
                 "github.com/ml-explore/mlx\n",
                 usage);
  }
  return root;
}

}  // namespace mtlemu::bench
