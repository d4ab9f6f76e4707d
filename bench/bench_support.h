// Pieces the benchmarks share: the hand-written vector add kernel and
// Must(), which ends a benchmark on an error (benchmarks are programs,
// not library code).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <utility>

#include "common/result.h"

namespace mtlemu::bench {

// out[i] = a[i] + b[i], one thread per element, in ISA text.
inline constexpr char kVectorAddIsa[] = R"(
.kernel vector_add
.buffer 0 u0 device float a
.buffer 1 u2 device float b
.buffer 2 u4 device float out
    mov.u32 r0, %thread_position_in_grid.x
    ld.device.f32 r3, [u0 + r0*4]
    ld.device.f32 r4, [u2 + r0*4]
    add.f32 r5, r3, r4
    st.device.f32 [u4 + r0*4], r5
    exit
.end
)";

template <class T>
T Must(Result<T> r) {
  if (!r.ok()) {
    std::fprintf(stderr, "bench: %s\n", r.error().message.c_str());
    std::exit(1);
  }
  return std::move(r).value();
}

}  // namespace mtlemu::bench
