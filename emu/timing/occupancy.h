// How many threadgroups of a kernel a GPU core holds at once, by the rule in
// ../shared/reference/apple-gpu.md: min(resident threads, register file /
// registers per thread, threadgroup memory per core / per threadgroup), in
// whole threadgroups. On M3 (Dynamic Caching) registers count by what the
// threads hold on average as they run (registers_in_use.h) and share one
// on-chip pool with threadgroup memory. A kernel that needs more registers
// than a thread has counts the maximum (Metal's compiler would spill the
// rest; the spills are not costed).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "emu/chips/chip_timing.h"

namespace mtlemu::emu {

struct Occupancy {
  uint32_t threadgroups_per_core = 1;
  uint32_t simd_groups_per_threadgroup = 1;
  std::string limiter;  // "threads", "registers", "threadgroup memory"
};

// `registers`: the kernel's 32-bit registers per thread, which M1 and M2
// allocate for a threadgroup's whole life. `registers_in_use`: what a
// thread holds on average as it runs, which M3 allocates; without it, M3
// too counts `registers`.
Occupancy ComputeOccupancy(
    const ChipTiming& chip, uint32_t registers,
    uint32_t threads_per_threadgroup, uint32_t threadgroup_memory,
    std::optional<double> registers_in_use = std::nullopt);

}  // namespace mtlemu::emu
