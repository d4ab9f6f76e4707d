// The SIMD groups of one scheduler of a core (core_model.h), in issue
// priority order, packed for the scans the scheduler makes in every cycle it
// may issue: when each may issue next as far as its operands go (never when
// done or at a barrier), the pipe it needs, and when each pipe is free.
// A pipe is an execution unit of the opcode table (isa::ExecUnit), or, on a
// chip that dual-issues FP32 (M3), kFp32Pipe: FP32 arithmetic then leaves
// the ALU pipe to integer and FP16 instructions.
// The earliest issue time over all of them and the oldest live one are kept
// until something changes, so a scheduler that waits costs no scan.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "emu/chips/chip_timing.h"

namespace mtlemu::emu {

inline constexpr int kFp32Pipe = kNumExecUnits;
inline constexpr int kNumPipes = kNumExecUnits + 1;

class IssueQueue {
 public:
  static constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();

  IssueQueue() = default;
  // `simd_groups`: the core's SIMD group indices, oldest first.
  explicit IssueQueue(std::vector<int> simd_groups)
      : simd_groups_(std::move(simd_groups)),
        ready_(simd_groups_.size(), kNever),
        pipe_(simd_groups_.size(), 0),
        live_(simd_groups_.size(), 0) {}

  size_t size() const { return simd_groups_.size(); }
  int simd_group(size_t position) const { return simd_groups_[position]; }

  // What the SIMD group at `position` waits for: its operands until
  // `ready` (kNever: done or at a barrier), then `pipe`.
  void Set(size_t position, uint64_t ready, int pipe, bool live) {
    ready_[position] = ready;
    pipe_[position] = static_cast<uint8_t>(pipe);
    live_[position] = live ? 1 : 0;
    summary_valid_ = false;
  }

  int pipe(size_t position) const { return pipe_[position]; }
  double pipe_free(int pipe) const { return pipe_free_[pipe]; }
  void set_pipe_free(int pipe, double cycle) {
    pipe_free_[pipe] = cycle;
    // A pipe accepts an instruction in the cycle its busy time ends in
    // (times are >= 0 and < 2^63: the signed conversion is the same, and
    // cheaper).
    pipe_cycle_[pipe] = static_cast<uint64_t>(static_cast<int64_t>(cycle));
    summary_valid_ = false;
  }

  // The cycle the SIMD group at `position` may issue in.
  uint64_t IssueTime(size_t position) const {
    return std::max(ready_[position], pipe_cycle_[pipe_[position]]);
  }
  // The first position that may issue at `now`, or -1.
  int FirstReady(uint64_t now) {
    if (summary_valid_ && earliest_ > now) return -1;
    if (summary_valid_ && earliest_ == now) return first_at_earliest_;
    return Scan(now);
  }

  // The earliest cycle any SIMD group may issue in (kNever: none).
  uint64_t Earliest() {
    Summarize();
    return earliest_;
  }
  // The index of the oldest SIMD group not done, or -1.
  int OldestLive() {
    Summarize();
    return oldest_live_;
  }

 private:
  // One pass in order: it stops at the first that may issue (a busy
  // scheduler's is near the front), or else has seen them all and keeps
  // the summary.
  int Scan(uint64_t now) {
    uint64_t earliest = kNever;
    int first = -1;
    for (size_t i = 0; i < simd_groups_.size(); ++i) {
      const uint64_t t = IssueTime(i);
      if (t <= now) return static_cast<int>(i);
      if (t < earliest) {
        earliest = t;
        first = static_cast<int>(i);
      }
    }
    Keep(earliest, first);
    return -1;
  }

  void Keep(uint64_t earliest, int first) {
    int oldest = -1;
    for (size_t i = 0; i < simd_groups_.size(); ++i) {
      if (live_[i] != 0) {
        oldest = simd_groups_[i];
        break;
      }
    }
    earliest_ = earliest;
    first_at_earliest_ = first;
    oldest_live_ = oldest;
    summary_valid_ = true;
  }

  void Summarize() {
    if (summary_valid_) return;
    // Without branches: which SIMD group waits least is unpredictable.
    uint64_t earliest = kNever;
    int first = -1;
    for (size_t i = 0; i < simd_groups_.size(); ++i) {
      const uint64_t t = IssueTime(i);
      const bool sooner = t < earliest;
      earliest = sooner ? t : earliest;
      first = sooner ? static_cast<int>(i) : first;
    }
    Keep(earliest, first);
  }

  std::vector<int> simd_groups_;
  std::vector<uint64_t> ready_;
  std::vector<uint8_t> pipe_;
  std::vector<uint8_t> live_;
  double pipe_free_[kNumPipes] = {};
  uint64_t pipe_cycle_[kNumPipes] = {};
  bool summary_valid_ = false;
  uint64_t earliest_ = kNever;
  int first_at_earliest_ = -1;  // the first position issuing at earliest_
  int oldest_live_ = -1;
};

}  // namespace mtlemu::emu
