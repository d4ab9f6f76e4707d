// What limited a dispatch, and why in one sentence: the busiest memory
// path or the execution units when near their peak, else too few SIMD
// groups, else latency. It reads the same figures as the report's Xcode
// counters (xcode_counters.h), so the two agree.
#pragma once

#include <cstdint>
#include <string>

#include "emu/timing/xcode_counters.h"

namespace mtlemu::emu {

// A path in use for this share of a dispatch is near its peak: an average
// over a dispatch includes its ramp-up and its tail, so a saturated path
// rarely shows 100%. An assumption (Apple publishes no threshold).
inline constexpr double kNearPeak = 0.6;
// The execution units' throughput limits when FP32 runs at this share of
// the chip's peak, or a busy pipe holds this share of scheduler cycles
// (below kNearPeak: issue slots are free, but the pipes are not).
// Assumptions.
inline constexpr double kF32Busy = 0.5;
inline constexpr double kPipeBusy = 0.3;
// Fewer SIMD groups than this share of what a core holds cannot hide
// latency. An assumption.
inline constexpr double kLowOccupancy = 0.25;

struct LimiterInputs {
  // The utilizations, occupancy and limiters in percent: the memory paths,
  // ALU and FP32 use, and achieved occupancy are read from here alone.
  XcodeCounters counters;
  // Fractions of scheduler cycles over the dispatch.
  double issue = 0;        // that issued
  double pipe_stalls = 0;  // held by a busy pipe
  // The SIMD groups a core may hold by the limit and by the hardware, what
  // limits it, and the dispatch against the chip's threadgroup slots.
  double simd_groups_per_core = 0;
  double hardware_simd_groups_per_core = 0;
  std::string occupancy_limiter;
  uint64_t threadgroups = 0;
  uint32_t threadgroups_per_core = 0;
  uint32_t cores = 0;
  // Schedulers waited on memory at least as long as on ALU results.
  bool memory_waits_dominate = false;
};

struct Limiter {
  // "memory bandwidth", "threadgroup memory", "cache bandwidth", "ALU",
  // "occupancy" or "latency".
  std::string name;
  std::string verdict;
};

Limiter FindLimiter(const LimiterInputs& in);

}  // namespace mtlemu::emu
