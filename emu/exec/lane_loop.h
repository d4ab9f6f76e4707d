// Iteration over the active lanes of a SIMD group. The full-mask case is a
// plain counted loop so the compiler can vectorize the body.
#pragma once

#include <bit>
#include <cstdint>

#include "emu/exec/exec_context.h"

namespace mtlemu::emu {

template <typename F>
inline void ForEachActiveLane(uint32_t mask, F&& f) {
  if (mask == kAllLanes) {
    for (int lane = 0; lane < kLanes; ++lane) f(lane);
  } else {
    while (mask != 0) {
      f(std::countr_zero(mask));
      mask &= mask - 1;
    }
  }
}

}  // namespace mtlemu::emu
