// One SIMD group's execution: its lane file, its reconvergence stack, and
// the loop that runs it until it exits, reaches a barrier or faults.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <vector>

#include "emu/exec/decoded_kernel.h"
#include "emu/exec/exec_context.h"
#include "emu/exec/simd_trace.h"

namespace mtlemu::emu {

// The classic post-dominator reconvergence stack (as in GPGPU-Sim): each
// entry runs `mask` from `pc` until it reaches `reconverge`; the entry below
// then continues with the union of the paths.
struct ReconvergenceEntry {
  uint32_t pc;
  uint32_t reconverge;  // kNoReconvergence for the bottom entry
  uint32_t mask;
};
inline constexpr uint32_t kNoReconvergence = 0xffffffffu;

enum class SimdGroupStatus : uint8_t { kReady, kAtBarrier, kDone, kFaulted };

struct SimdGroupStats {
  uint64_t instructions = 0;       // SIMD-group instructions issued
  uint64_t lane_instructions = 0;  // sum over instructions of active lanes
};

// Shared stop conditions of a dispatch.
struct StopSignal {
  std::chrono::steady_clock::time_point deadline;
  std::atomic<bool>* cancel = nullptr;  // set when the dispatch must stop
  // Set from outside (a host's Ctrl-C); may be null.
  const std::atomic<bool>* interrupt = nullptr;
  bool timed_out = false;    // set by RunSimdGroup on timeout
  bool interrupted = false;  // set by RunSimdGroup on an interrupt
  // Instructions until the next look at the clock and the flags. Kept
  // here, not per Run call: a loop through a barrier returns to its
  // threadgroup's runner every iteration, and would start the count over.
  uint64_t until_check = kCheckInterval;
  static constexpr uint64_t kCheckInterval = uint64_t{1} << 14;

  // Whether the dispatch must stop now (timeout, interrupt or
  // cancellation); sets timed_out or interrupted.
  bool ShouldStop();

  // Counts `n` instructions towards the next look (which leaves
  // until_check at 1 or more); true when that look says stop.
  bool Spend(uint64_t n) {
    if (until_check <= n) {
      until_check = kCheckInterval;
      return ShouldStop();
    }
    until_check -= n;
    return false;
  }

  // For compiled code that runs many pieces of `n` instructions each: how
  // many fit before the next look, at least 1 (after a look, where not even
  // one does); 0 when that look says stop. Took then counts what ran.
  uint64_t Fit(uint64_t n) {
    if (until_check <= n) {
      until_check = kCheckInterval;
      if (ShouldStop()) return 0;
    }
    return std::max<uint64_t>(1, (until_check - 1) / n);
  }
  void Took(uint64_t n) { until_check = until_check > n ? until_check - n : 1; }
};

class SimdGroup {
 public:
  // Prepares to run lanes `live_mask` from the first instruction; the lane
  // file must already hold uniforms, specials and immediates.
  void Start(uint32_t live_mask);

  // Runs until exit, a barrier, a fault (ctx.faulted) or the stop signal;
  // with `step`, also until it has taken a branch or reached an
  // instruction to wait before (yield_before; status kReady), so that
  // the SIMD groups of a threadgroup can take turns (interleaved order:
  // emu/dispatch/schedule.h). Stepping goes from branch to branch on
  // either executor: compiled code that would take a branch itself (a
  // loop round a run, an if-then) is called without it, or not at all.
  SimdGroupStatus Run(const DecodedKernel& kernel, ExecContext& ctx,
                      StopSignal& stop, SimdGroupStats& stats,
                      bool step = false);

  SimdGroupStatus status() const { return status_; }
  void ReleaseBarrier() { status_ = SimdGroupStatus::kReady; }
  uint32_t live_mask() const { return live_; }
  uint32_t pc() const { return stack_.empty() ? 0 : stack_.back().pc; }
  // The lanes active at the current instruction.
  uint32_t active_mask() const {
    return stack_.empty() ? 0 : stack_.back().mask & live_;
  }

  // The instruction the SIMD group ran last before its lanes exited: before
  // a barrier for a kernel that returns early, past it for one whose SIMD
  // group skipped the barrier (the simd check tells the two apart so).
  uint32_t finished_after() const { return finished_after_; }

  std::vector<uint32_t>& lane_file() { return lane_file_; }

  // Timed mode: records each issued instruction into `trace` (null: off).
  void set_trace(SimdGroupTrace* trace, const TraceGeometry& geometry) {
    trace_ = trace;
    geometry_ = geometry;
  }

 private:
  // The straight run [begin, end) under ctx.mask: its handlers back to
  // back. Returns the instruction that faulted (ctx.faulted), else `end`.
  static uint32_t RunHandlers(const DecodedInstruction* code, ExecContext& ctx,
                              uint32_t begin, uint32_t end);
  // The same in timed mode, each instruction recorded into trace_ as it
  // issues, under `mask`.
  uint32_t RunTraced(const DecodedInstruction* code, ExecContext& ctx,
                     uint32_t begin, uint32_t end, uint32_t mask);

  // A step's end at the branch `at`, which the next Run call starts after.
  SimdGroupStatus Stepped(uint32_t at) {
    stepped_ = true;
    stepped_at_ = at;
    return status_;
  }

  SimdGroupTrace* trace_ = nullptr;
  TraceGeometry geometry_;
  std::vector<uint32_t> lane_file_;
  std::vector<ReconvergenceEntry> stack_;
  uint32_t live_ = 0;  // lanes that exist and have not exited
  // The last execution mask whose lanes Run counted, and their count:
  // recounted only when the mask changes, and kept across the returns at
  // barriers (popcount is a library call on baseline x86-64).
  uint32_t counted_mask_ = 0;
  uint64_t counted_lanes_ = 0;
  uint32_t finished_after_ = 0;
  bool stepped_ = false;
  uint32_t stepped_at_ = 0;
  SimdGroupStatus status_ = SimdGroupStatus::kDone;
};

}  // namespace mtlemu::emu
