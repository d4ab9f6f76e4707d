// Pieces the benchmarks share: the hand-written vector add kernel and
// Must(), which ends a benchmark on an error (benchmarks are programs,
// not library code).
#pragma once

#include <cstdio>
#include <cstdlib>
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

}  // namespace mtlemu::bench
