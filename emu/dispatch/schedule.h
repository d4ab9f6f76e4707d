// The order in which the SIMD groups of a threadgroup run between barriers
// (EmulatorOptions::schedule, `mtlemu run --schedule`). Metal defines none;
// a kernel whose result depends on it has a race. On Apple's GPUs the SIMD
// groups of a threadgroup advance together, their instructions interleaved
// as the core's schedulers issue them, so that code which reads what other
// SIMD groups wrote and then overwrites it without a barrier between (a
// race, but one hardware order hides: mlx-lm's kl_forward) gives the
// answer the race-free order gives.
//
// - kInterleaved (the default): the SIMD groups take turns from branch to
//   branch (SimdGroup::Run's `step`), and before each threadgroup read
//   that follows a write with no branch between, in index order, where the
//   kernel has such threadgroup reads and writes in one barrier interval
//   (DecodedKernel::unordered_accesses); other kernels run as kSequential,
//   which gives them the same results, faster.
// - kSequential: each SIMD group runs to its barrier (or exit) before the
//   next starts, the fastest order.
// - kRandom: at every branch a SIMD group chosen at random among those
//   ready runs on, seeded by `seed` and the threadgroup's index, so a run
//   repeats exactly on any number of host threads. Every kernel.
//
// The order check (--check order) runs a dispatch twice, in the order the
// schedule gives and in the other one (sequential or interleaved), and
// reports the bytes that differ.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace mtlemu::emu {

enum class SimdgroupOrder : uint8_t { kInterleaved, kSequential, kRandom };

struct Schedule {
  SimdgroupOrder order = SimdgroupOrder::kInterleaved;
  uint64_t seed = 0;  // kRandom
  // Interleave every kernel, not only those with unordered threadgroup
  // accesses (the order check's second run).
  bool every_kernel = false;
};

// Whether the SIMD groups of a kernel take turns at branches under
// `schedule`, given whether it has unordered threadgroup accesses.
inline bool Interleaves(const Schedule& schedule, bool unordered_accesses) {
  return schedule.order == SimdgroupOrder::kRandom ||
         (schedule.order == SimdgroupOrder::kInterleaved &&
          (schedule.every_kernel || unordered_accesses));
}

// "interleaved", "sequential", "random" or "random:SEED".
Result<Schedule> ParseSchedule(std::string_view text);
std::string ScheduleText(const Schedule& schedule);

}  // namespace mtlemu::emu
