// The SIMD groups of one scheduler of a core (core_model.h), in issue
// priority order: when each may issue next as far as its operands go (never
// when done or at a barrier), the pipe it needs, and when each pipe is free.
// A pipe is an execution unit of the opcode table (isa::ExecUnit), or, on a
// chip that dual-issues FP32 (M3), kFp32Pipe: FP32 arithmetic then leaves
// the ALU pipe to integer and FP16 instructions.
// In every cycle it may issue, the scheduler asks for the first one ready:
// a bit set of those whose operands are ready, kept up to date by a timing
// wheel as cycles pass, so the answer is usually its lowest bit. The
// earliest issue time over all of them and the oldest live one, for a
// scheduler that waits, are kept until something changes.
#pragma once

#include <algorithm>
#include <bit>
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
        words_((simd_groups_.size() + 63) / 64),
        ready_bits_(words_, 0),
        far_bits_(words_, 0),
        live_bits_(words_, 0),
        wheel_(kWheel * words_, 0),
        pipe_bits_(kNumPipes * words_, 0) {
    // Every position starts on pipe 0.
    for (size_t p = 0; p < simd_groups_.size(); ++p) {
      pipe_bits_[p / 64] |= uint64_t{1} << (p % 64);
    }
  }

  size_t size() const { return simd_groups_.size(); }
  int simd_group(size_t position) const { return simd_groups_[position]; }

  // What the SIMD group at `position` waits for: its operands until
  // `ready` (kNever: done or at a barrier), then `pipe`.
  void Set(size_t position, uint64_t ready, int pipe, bool live) {
    const size_t word = position / 64;
    const uint64_t bit = uint64_t{1} << (position % 64);
    // Out of wherever it waited (a bit is only ever in one place).
    ready_bits_[word] &= ~bit;
    if ((far_bits_[word] & bit) != 0) far_min_exact_ = false;
    far_bits_[word] &= ~bit;
    wheel_[(ready_[position] % kWheel) * words_ + word] &= ~bit;
    pipe_bits_[pipe_[position] * words_ + word] &= ~bit;
    pipe_bits_[pipe * words_ + word] |= bit;
    ready_[position] = ready;
    pipe_[position] = static_cast<uint8_t>(pipe);
    live_bits_[word] = (live_bits_[word] & ~bit) | (live ? bit : 0);
    Wait(position, ready);
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
  // The first position that may issue at `now`, or -1: the first whose
  // operands are ready by then (the bits) with its pipe free (a busy pipe
  // takes all of its positions out of the search at once).
  int FirstReady(uint64_t now) {
    Advance(now);
    for (size_t w = 0; w < words_; ++w) {
      uint64_t m = ready_bits_[w];
      while (m != 0) {
        const size_t p = w * 64 + static_cast<size_t>(std::countr_zero(m));
        const int pipe = pipe_[p];
        if (pipe_cycle_[pipe] <= now) return static_cast<int>(p);
        m &= ~pipe_bits_[pipe * words_ + w];
      }
    }
    return -1;
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
  // Operand waits shorter than this many cycles go on the wheel: slot
  // ready % kWheel, emptied into ready_bits_ as the cycle comes. Longer
  // ones (memory) wait in far_bits_ until they come within it.
  static constexpr uint64_t kWheel = 64;

  // Files `position`, ready at `ready`, by how far that is from cursor_.
  void Wait(size_t position, uint64_t ready) {
    if (ready == kNever) return;
    const size_t word = position / 64;
    const uint64_t bit = uint64_t{1} << (position % 64);
    if (ready <= cursor_) {
      ready_bits_[word] |= bit;
    } else if (ready - cursor_ < kWheel) {
      wheel_[(ready % kWheel) * words_ + word] |= bit;
      occupied_ |= uint64_t{1} << (ready % kWheel);
    } else {
      far_bits_[word] |= bit;
      if (ready < far_min_) {
        far_min_ = ready;
        far_min_position_ = position;
      }
    }
  }

  // Moves the cursor to `now`: what became ready by then joins ready_bits_.
  void Advance(uint64_t now) {
    if (now == cursor_) return;
    if (now < cursor_) {
      // Back in time (not in the model's use): file everything again.
      std::fill(ready_bits_.begin(), ready_bits_.end(), 0);
      std::fill(far_bits_.begin(), far_bits_.end(), 0);
      std::fill(wheel_.begin(), wheel_.end(), 0);
      occupied_ = 0;
      cursor_ = now;
      far_min_ = kNever;
      far_min_exact_ = true;
      for (size_t p = 0; p < ready_.size(); ++p) Wait(p, ready_[p]);
      return;
    }
    // The slots of cycles cursor_ + 1 to now that hold something.
    const uint64_t steps = std::min(now - cursor_, kWheel);
    const uint64_t span =
        steps == kWheel ? ~uint64_t{0} : (uint64_t{1} << steps) - 1;
    const uint64_t due =
        occupied_ & std::rotl(span, static_cast<int>((cursor_ + 1) % kWheel));
    occupied_ &= ~due;
    for (uint64_t m = due; m != 0; m &= m - 1) {
      uint64_t* slot = &wheel_[std::countr_zero(m) * words_];
      for (size_t w = 0; w < words_; ++w) {
        ready_bits_[w] |= slot[w];
        slot[w] = 0;
      }
    }
    cursor_ = now;
    if (far_min_ - cursor_ >= kWheel && far_min_ > cursor_) return;
    far_min_ = kNever;
    far_min_exact_ = true;
    for (size_t w = 0; w < words_; ++w) {
      const uint64_t far = far_bits_[w];
      far_bits_[w] = 0;
      for (uint64_t m = far; m != 0; m &= m - 1) {
        const size_t p = w * 64 + static_cast<size_t>(std::countr_zero(m));
        Wait(p, ready_[p]);
      }
    }
  }

  // The earliest issue time, from the bit sets: those ready by cursor_
  // (a pipe busy past cursor_ answers for all of its positions at once),
  // then the wheel in time order until no slot can be sooner, then the
  // far ones if they might be.
  void Summarize() {
    if (summary_valid_) return;
    uint64_t best = kNever;
    for (size_t w = 0; w < words_; ++w) {
      uint64_t m = ready_bits_[w];
      while (m != 0) {
        const size_t p = w * 64 + static_cast<size_t>(std::countr_zero(m));
        const int pipe = pipe_[p];
        const uint64_t* on_pipe = &pipe_bits_[pipe * words_];
        if (pipe_cycle_[pipe] >= cursor_) {
          best = std::min(best, pipe_cycle_[pipe]);
          m &= ~on_pipe[w];
        } else {
          best = std::min(best, IssueTime(p));
          m &= m - 1;
        }
      }
    }
    // The slots that hold something, from cycle cursor_ + 1 (bit 0) on.
    const uint64_t ahead =
        std::rotr(occupied_, static_cast<int>((cursor_ + 1) % kWheel));
    for (uint64_t r = ahead; r != 0; r &= r - 1) {
      const uint64_t t = cursor_ + 1 + std::countr_zero(r);
      if (t >= best) break;
      const uint64_t* slot = &wheel_[(t % kWheel) * words_];
      for (size_t w = 0; w < words_; ++w) {
        for (uint64_t m = slot[w]; m != 0; m &= m - 1) {
          const size_t p = w * 64 + static_cast<size_t>(std::countr_zero(m));
          best = std::min(best, std::max(t, pipe_cycle_[pipe_[p]]));
        }
      }
    }
    if (far_min_ < best) {
      // None waits less than the soonest; where that one's pipe will be
      // free by then, it is the answer. Else look at each.
      if (far_min_exact_ && pipe_cycle_[pipe_[far_min_position_]] <= far_min_) {
        best = far_min_;
      } else {
        for (size_t w = 0; w < words_; ++w) {
          for (uint64_t m = far_bits_[w]; m != 0; m &= m - 1) {
            const size_t p = w * 64 + static_cast<size_t>(std::countr_zero(m));
            best = std::min(best, IssueTime(p));
          }
        }
      }
    }
    int oldest = -1;
    for (size_t w = 0; w < words_ && oldest < 0; ++w) {
      if (live_bits_[w] != 0) {
        oldest = simd_groups_[w * 64 + std::countr_zero(live_bits_[w])];
      }
    }
    earliest_ = best;
    oldest_live_ = oldest;
    summary_valid_ = true;
  }

  std::vector<int> simd_groups_;
  std::vector<uint64_t> ready_;
  std::vector<uint8_t> pipe_;
  double pipe_free_[kNumPipes] = {};
  uint64_t pipe_cycle_[kNumPipes] = {};
  bool summary_valid_ = false;
  uint64_t earliest_ = kNever;
  int oldest_live_ = -1;
  // Bit sets of positions, 64 to a word: operands ready by cursor_; on
  // the wheel (kWheel slots of words_ words); waiting longer (far_min_:
  // no later than the soonest of them; with far_min_exact_, its time, and
  // far_min_position_ one that waits until then).
  size_t words_ = 0;
  std::vector<uint64_t> ready_bits_;
  std::vector<uint64_t> far_bits_;
  std::vector<uint64_t> live_bits_;  // not done
  std::vector<uint64_t> wheel_;
  uint64_t occupied_ = 0;            // slot i of the wheel may hold something
  std::vector<uint64_t> pipe_bits_;  // by pipe: the positions that need it
  uint64_t far_min_ = kNever;
  size_t far_min_position_ = 0;
  bool far_min_exact_ = true;
  uint64_t cursor_ = 0;
};

}  // namespace mtlemu::emu
