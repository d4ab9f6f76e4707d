#include "emu/timing/occupancy.h"

#include <algorithm>
#include <limits>

namespace mtlemu::emu {

Occupancy ComputeOccupancy(const ChipTiming& chip, uint32_t registers,
                           uint32_t threads_per_threadgroup,
                           uint32_t threadgroup_memory,
                           std::optional<double> registers_in_use) {
  Occupancy o;
  const uint32_t sgs =
      std::max<uint32_t>(1, (threads_per_threadgroup + 31) / 32);
  o.simd_groups_per_threadgroup = sgs;
  // Registers are allocated for whole SIMD groups.
  const uint64_t threads = uint64_t{sgs} * 32;
  constexpr uint64_t kUnlimited = std::numeric_limits<uint32_t>::max();
  const uint64_t by_threads = chip.max_threads_per_core / threads;
  // Beyond the hardware's registers Metal's compiler spills: the kernel
  // holds the maximum.
  const uint32_t held =
      std::clamp<uint32_t>(registers, 1, chip.max_registers_per_thread);
  double register_bytes = held * 4.0 * threads;
  uint64_t by_registers = kUnlimited;
  uint64_t by_memory = kUnlimited;
  if (chip.dynamic_caching) {
    // One pool for both, registers by their use.
    if (registers_in_use) {
      register_bytes =
          std::clamp(*registers_in_use, 1.0, static_cast<double>(held)) * 4.0 *
          threads;
    }
    const double pool =
        chip.register_file_bytes + chip.threadgroup_memory_per_core;
    by_registers =
        static_cast<uint64_t>(pool / (register_bytes + threadgroup_memory));
  } else {
    by_registers =
        static_cast<uint64_t>(chip.register_file_bytes / register_bytes);
    if (threadgroup_memory > 0) {
      by_memory = chip.threadgroup_memory_per_core / threadgroup_memory;
    }
  }
  uint64_t best = by_threads;
  o.limiter = "threads";
  if (by_registers < best) {
    best = by_registers;
    o.limiter = chip.dynamic_caching && threadgroup_memory > 0
                    ? "registers and threadgroup memory"
                    : "registers";
  }
  if (by_memory < best) {
    best = by_memory;
    o.limiter = "threadgroup memory";
  }
  // A threadgroup Metal accepts always runs, one at a time if need be.
  o.threadgroups_per_core = static_cast<uint32_t>(std::max<uint64_t>(best, 1));
  return o;
}

}  // namespace mtlemu::emu
