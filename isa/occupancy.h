// Threads per threadgroup against registers per thread: the one rule that
// the compiler (the register budget of a kernel that must launch with n
// threads) and the device (a pipeline's maxTotalThreadsPerThreadgroup)
// share.
#pragma once

#include <algorithm>
#include <cstdint>

namespace mtlemu::isa {

// Register file bytes per core on Apple7/Apple8 (Mesa agx_occupancy.c
// table: 104 half-registers per thread still allow 1024 threads).
inline constexpr uint32_t kRegisterFileBytes = 1024 * 208;

// The most threads a threadgroup may have when each thread uses
// `registers` 32-bit registers (> 0): a multiple of 64, at least 64.
constexpr uint32_t MaxThreadsForRegisters(int registers) {
  const uint32_t by_registers =
      kRegisterFileBytes / (static_cast<uint32_t>(registers) * 4);
  return std::max<uint32_t>(64, by_registers / 64 * 64);
}

// The most 32-bit registers a thread may use so that a threadgroup of
// `threads` threads (> 0) fits: MaxThreadsForRegisters of it is at least
// `threads`.
constexpr int MaxRegistersForThreads(uint32_t threads) {
  const uint32_t rounded = (threads + 63) / 64 * 64;
  return static_cast<int>(kRegisterFileBytes / (4 * rounded));
}

static_assert(MaxThreadsForRegisters(MaxRegistersForThreads(1024)) >= 1024);
static_assert(MaxThreadsForRegisters(MaxRegistersForThreads(768)) >= 768);
static_assert(MaxThreadsForRegisters(MaxRegistersForThreads(96)) >= 96);

}  // namespace mtlemu::isa
