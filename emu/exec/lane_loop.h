// Iteration over the active lanes of a SIMD group. The full-mask case is a
// plain counted loop so the compiler can vectorize the body.
#pragma once

#include <bit>
#include <cstdint>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

// The lanes (bits) whose word in `values` (kLanes of them) is not zero:
// a branch's or a vote's condition, all lanes at once.
inline uint32_t NonZeroLanes(const uint32_t* values) {
#if defined(__SSE2__)
  const __m128i zero = _mm_setzero_si128();
  uint32_t zeros = 0;
  for (int i = 0; i < kLanes; i += 4) {
    const __m128i v =
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(values + i));
    zeros |= static_cast<uint32_t>(
                 _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(v, zero))))
             << i;
  }
  return ~zeros;
#else
  uint32_t bits = 0;
  for (int l = 0; l < kLanes; ++l) {
    bits |= static_cast<uint32_t>(values[l] != 0) << l;
  }
  return bits;
#endif
}

}  // namespace mtlemu::emu
