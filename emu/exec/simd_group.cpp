#include "emu/exec/simd_group.h"

#include <algorithm>
#include <bit>

#include "emu/check/kernel_checker.h"
#include "emu/exec/event_recorder.h"
#include "emu/exec/lane_loop.h"

namespace mtlemu::emu {

bool StopSignal::ShouldStop() {
  if (cancel->load(std::memory_order_relaxed)) return true;
  if (interrupt != nullptr && interrupt->load(std::memory_order_relaxed)) {
    interrupted = true;
    return true;
  }
  if (std::chrono::steady_clock::now() > deadline) {
    timed_out = true;
    return true;
  }
  return false;
}

void SimdGroup::Start(uint32_t live_mask) {
  live_ = live_mask;
  finished_after_ = 0;
  stepped_ = false;
  stack_.clear();
  stack_.push_back({0, kNoReconvergence, live_mask});
  status_ = live_mask ? SimdGroupStatus::kReady : SimdGroupStatus::kDone;
}

namespace {

// The counts of one call of Run, added to the caller's when it returns:
// kept in registers, not stored and loaded again per instruction (a store
// of one field then a load of both stalls store forwarding).
struct LocalStats : SimdGroupStats {
  SimdGroupStats& total;
  explicit LocalStats(SimdGroupStats& t) : total(t) {}
  ~LocalStats() {
    total.instructions += instructions;
    total.lane_instructions += lane_instructions;
  }
};

// The faults of Run's own instructions, out of its way (their messages'
// strings would cost its loop registers).
[[gnu::noinline]] void Trapped(ExecContext& ctx, uint32_t mask) {
  ctx.faulted = true;
  ctx.fault->kind = FaultKind::kTrap;
  ctx.fault->lane = std::countr_zero(mask);
  ctx.fault->detail =
      "the kernel trapped: __builtin_trap(), or a tl.device_assert "
      "whose condition was false in this lane (" +
      std::to_string(std::popcount(mask)) +
      " of the SIMD group's lanes reached it)";
}

[[gnu::noinline]] void DivergedAtBarrier(ExecContext& ctx, uint32_t mask,
                                         uint32_t live) {
  ctx.faulted = true;
  ctx.fault->kind = FaultKind::kDivergentBarrier;
  ctx.fault->lane = std::countr_zero(live & ~mask);
  ctx.fault->detail =
      "threadgroup_barrier/simdgroup_barrier must be reached by all "
      "threads of the group; lanes " +
      std::to_string(std::popcount(mask)) + " of " +
      std::to_string(std::popcount(live)) + " live lanes arrived here (lane " +
      std::to_string(ctx.fault->lane) + " did not)";
}

// The first instruction of the run [begin + 1, end) that stepping SIMD
// groups wait before (yield_before), else 0.
uint32_t WaitBefore(const DecodedInstruction* code, uint32_t begin,
                    uint32_t end) {
  for (uint32_t pc = begin + 1; pc < end; ++pc) {
    if (code[pc].yield_before) return pc;
  }
  return 0;
}

// What a compiled run went through (SimdGroup::Run), in instructions
// from its first: the run, and where an if-then or an if-else follows it
// (JitTrips), `head` up to and with the branch, `body` of the if-then's
// body or of the if-else's taken way (which starts at `body_at`), `other`
// of the if-else's way that fell through, with its `br`; up to the
// instruction that faulted, if one did. `last`: the last instruction run.
struct JitArms {
  uint32_t head = 0;
  uint32_t body = 0;
  uint32_t body_at = 0;
  uint32_t other = 0;
  uint32_t last = 0;
  bool if_else = false;
};

JitArms CountArms(const DecodedInstruction* code, uint32_t pc, uint32_t ran,
                  bool faulted, const JitTrips& trips) {
  JitArms a;
  const uint32_t through = faulted ? ran + 1 : ran;
  a.head = trips.head != 0 ? std::min(through, trips.head) : through;
  a.body_at = a.head;
  if (trips.head != 0) {
    const DecodedInstruction& branch = code[pc + trips.head - 1];
    if (branch.target == branch.reconverge) {
      if (trips.body_mask != 0) a.body = through - a.head;
    } else {
      // The taken way [taken, join) ran first, then the other [head,
      // taken) with its `br`.
      a.if_else = true;
      const uint32_t taken = branch.target - pc;
      const uint32_t join = branch.reconverge - pc;
      a.body_at = taken;
      if (!faulted) {
        if (trips.body_mask != 0) a.body = join - taken;
        if (trips.else_mask != 0) a.other = taken - a.head;
      } else if (through > taken) {
        a.body = through - taken;
      } else if (through > a.head) {
        if (trips.body_mask != 0) a.body = join - taken;
        a.other = through - a.head;
      }
    }
  }
  a.last = a.other != 0  ? a.head + a.other - 1
           : a.body != 0 ? a.body_at + a.body - 1
                         : a.head - 1;
  return a;
}

}  // namespace

uint32_t SimdGroup::RunHandlers(const DecodedInstruction* code,
                                ExecContext& ctx, uint32_t begin,
                                uint32_t end) {
  for (uint32_t pc = begin; pc < end; ++pc) {
    code[pc].fn(ctx, code[pc]);
    if (ctx.faulted) [[unlikely]] {
      return pc;
    }
  }
  return end;
}

uint32_t SimdGroup::RunTraced(const DecodedInstruction* code, ExecContext& ctx,
                              uint32_t begin, uint32_t end, uint32_t mask) {
  // Each instruction is recorded before it runs (RecordEvent); those that
  // touch no memory and cannot fault are recorded in stretches, as one
  // record each (SimdGroupTrace::AppendRun).
  const auto lanes = static_cast<uint32_t>(counted_lanes_);
  uint32_t unrecorded = begin;
  for (uint32_t pc = begin; pc < end; ++pc) {
    const DecodedInstruction& d = code[pc];
    if (d.accesses_memory || d.flow != Flow::kNext) {
      if (unrecorded < pc) {
        trace_->AppendRun(unrecorded, static_cast<uint8_t>(lanes),
                          pc - unrecorded);
      }
      RecordEvent(ctx, d, pc, mask, lanes, geometry_, *trace_);
      unrecorded = pc + 1;
    }
    d.fn(ctx, d);
    if (ctx.faulted) [[unlikely]] {
      return pc;
    }
  }
  if (unrecorded < end) {
    trace_->AppendRun(unrecorded, static_cast<uint8_t>(lanes),
                      end - unrecorded);
  }
  return end;
}

SimdGroupStatus SimdGroup::Run(const DecodedKernel& kernel, ExecContext& ctx,
                               StopSignal& stop, SimdGroupStats& total,
                               bool step) {
  LocalStats stats(total);
  const DecodedInstruction* code = kernel.code.data();
  // The instruction run last (for finished_after_): before the one at pc()
  // after a barrier, the branch where a step ended.
  uint32_t current = stepped_ ? stepped_at_ : pc() > 0 ? pc() - 1 : 0;
  stepped_ = false;
  // A step may begin at an instruction that others wait before.
  const uint32_t resumed_at = pc();
  uint32_t previous = current;
  while (true) {
    if (stack_.empty()) return status_ = SimdGroupStatus::kDone;
    ReconvergenceEntry& top = stack_.back();
    const uint32_t mask = top.mask & live_;
    if (mask == 0 || top.pc == top.reconverge) {
      stack_.pop_back();
      continue;
    }
    if (mask != counted_mask_) {
      counted_mask_ = mask;
      counted_lanes_ = static_cast<uint64_t>(std::popcount(mask));
    }
    const DecodedInstruction& d = code[top.pc];
    if (step && d.yield_before && top.pc != resumed_at) return Stepped(current);
    // Stepping: where the run has an instruction to wait before, its
    // handlers up to it.
    const uint32_t wait_at = step ? WaitBefore(code, top.pc, d.run_end) : 0;
    if (d.jit != nullptr && (trace_ == nullptr || d.jit_alu_only) &&
        !(step && (d.jit_branches || wait_at != 0))) {
      // Compiled code: a straight run, maybe a loop round it or an if-then
      // after it (JitTrips). The budget keeps until_check at 1 or more.
      const uint32_t n = d.run_end > top.pc ? d.run_end - top.pc : 0;
      if (stop.Spend(n)) return status_ = SimdGroupStatus::kFaulted;
      ctx.mask = mask;
      // Each time round a compiled loop is the run and its branch.
      // A stepping SIMD group leaves the loop's branch to the switch below.
      JitTrips trips{step ? 0 : stop.until_check - 1, 0};
      const uint32_t ran = d.jit(&ctx, code, &trips);
      const uint64_t looped = trips.taken * (n + 1);
      stop.until_check -= looped;
      stats.instructions += looped;
      stats.lane_instructions += looped * counted_lanes_;
      // The instructions it went through: up to the one that faulted, or
      // to the next one; an if-then's body, an if-else's two ways, each
      // under its own lanes.
      const JitArms arms = CountArms(code, top.pc, ran, ctx.faulted, trips);
      const uint32_t head = arms.head, body = arms.body, other = arms.other;
      stats.instructions += head + body + other;
      stats.lane_instructions += head * counted_lanes_;
      const uint32_t body_lanes =
          body == 0 ? 0
          : trips.body_mask == mask
              ? static_cast<uint32_t>(counted_lanes_)
              : static_cast<uint32_t>(std::popcount(trips.body_mask));
      const auto other_lanes =
          static_cast<uint32_t>(std::popcount(trips.else_mask));
      stats.lane_instructions +=
          uint64_t{body} * body_lanes + uint64_t{other} * other_lanes;
      if (trace_ != nullptr) [[unlikely]] {
        // What the interpreter would have recorded: each time round, the
        // run and its branch; then the run, the if-then's head and body
        // (an if-else's taken way, then the other).
        const auto lanes = static_cast<uint8_t>(counted_lanes_);
        for (uint64_t t = 0; t < trips.taken; ++t) {
          trace_->AppendRun(top.pc, lanes, n + 1);
        }
        trace_->AppendRun(top.pc, lanes, head);
        if (body != 0) {
          trace_->AppendRun(top.pc + arms.body_at,
                            static_cast<uint8_t>(body_lanes), body);
        }
        if (other != 0) {
          trace_->AppendRun(top.pc + head, static_cast<uint8_t>(other_lanes),
                            other);
        }
      }
      const uint32_t at = top.pc;
      top.pc += ran;
      if (ctx.faulted) [[unlikely]] {
        return status_ = SimdGroupStatus::kFaulted;
      }
      current = at + arms.last;
      if (!arms.if_else && body != 0 && code[top.pc].flow == Flow::kExit) {
        // The lanes that skipped the body went to `exit`: done now, as
        // where the interpreter takes the branch.
        live_ &= ~mask | trips.body_mask;
      }
      // A barrier next, reached by every live lane: the SIMD group waits
      // there now (the switch below, without a way round the loop).
      const bool at_barrier = code[top.pc].flow == Flow::kThreadgroupBarrier &&
                              mask == live_ && top.reconverge != top.pc;
      const uint32_t beyond =
          head + body + other > n ? head + body + other - n : 0;
      if (stop.Spend(beyond + at_barrier)) {
        return status_ = SimdGroupStatus::kFaulted;
      }
      if (at_barrier) {
        ++stats.instructions;
        stats.lane_instructions += counted_lanes_;
        if (trace_ != nullptr) [[unlikely]] {
          trace_->AppendRun(top.pc, static_cast<uint8_t>(counted_lanes_), 1);
        }
        ++top.pc;
        return status_ = SimdGroupStatus::kAtBarrier;
      }
      continue;
    } else if (d.run_end > top.pc) {
      // A straight run: its handlers back to back, under one mask.
      const uint32_t end = wait_at != 0 ? wait_at : d.run_end;
      const uint64_t n = end - top.pc;
      if (stop.Spend(n)) return status_ = SimdGroupStatus::kFaulted;
      ctx.mask = mask;
      const uint32_t faulted_at = trace_ != nullptr
                                      ? RunTraced(code, ctx, top.pc, end, mask)
                                      : RunHandlers(code, ctx, top.pc, end);
      if (faulted_at != end) [[unlikely]] {
        const uint64_t ran = faulted_at + 1 - top.pc;
        stats.instructions += ran;
        stats.lane_instructions += ran * counted_lanes_;
        top.pc = faulted_at;
        return status_ = SimdGroupStatus::kFaulted;
      }
      stats.instructions += n;
      stats.lane_instructions += n * counted_lanes_;
      current = end - 1;
      top.pc = end;
      continue;
    }
    if (stop.Spend(1)) return status_ = SimdGroupStatus::kFaulted;
    previous = current;
    current = top.pc;
    if (trace_ != nullptr) [[unlikely]] {
      RecordEvent(ctx, d, top.pc, mask, static_cast<uint32_t>(counted_lanes_),
                  geometry_, *trace_);
    }
    ++stats.instructions;
    stats.lane_instructions += counted_lanes_;
    switch (d.flow) {
      case Flow::kNext:
        ctx.mask = mask;
        d.fn(ctx, d);
        ++top.pc;
        break;
      case Flow::kMayFault:
        ctx.mask = mask;
        d.fn(ctx, d);
        if (ctx.faulted) return status_ = SimdGroupStatus::kFaulted;
        ++top.pc;
        break;
      case Flow::kBranch:
        top.pc = d.target;
        if (step) return Stepped(current);
        break;
      case Flow::kBranchNonZero:
      case Flow::kBranchZero: {
        const uint32_t nonzero = NonZeroLanes(ctx.Slot(d.slot[0]));
        uint32_t taken =
            mask & (d.flow == Flow::kBranchNonZero ? nonzero : ~nonzero);
        uint32_t not_taken = mask & ~taken;
        const uint32_t next = top.pc + 1;
        // Lanes whose way goes straight to `exit` (an early `return`) are
        // done now: a barrier further on waits for the others only, as on
        // Apple's GPUs, even where the branch reconverges at the exit.
        if (taken != 0 && not_taken != 0) {
          if (code[d.target].flow == Flow::kExit) {
            live_ &= ~taken;
            taken = 0;
          } else if (code[next].flow == Flow::kExit) {
            live_ &= ~not_taken;
            not_taken = 0;
          }
        }
        if (not_taken == 0) {
          top.pc = d.target;
        } else if (taken == 0) {
          top.pc = next;
        } else {
          // Diverge: this entry waits at the reconvergence point; the two
          // paths run above it, the taken one first. When this entry already
          // ends at the same point (a loop exit taken again), the not-taken
          // path replaces it, so loops do not grow the stack.
          const uint32_t reconverge = d.reconverge;
          if (top.reconverge == reconverge) {
            top = {next, reconverge, not_taken};
          } else {
            top.pc = reconverge;
            stack_.push_back({next, reconverge, not_taken});
          }
          stack_.push_back({d.target, reconverge, taken});
        }
        if (step) return Stepped(current);
        break;
      }
      case Flow::kExit:
        live_ &= ~mask;
        finished_after_ = previous;
        stack_.pop_back();
        break;
      case Flow::kTrap:
        Trapped(ctx, mask);
        return status_ = SimdGroupStatus::kFaulted;
      case Flow::kThreadgroupBarrier:
      case Flow::kSimdgroupBarrier:
        // Every live thread must reach the same barrier together.
        if (mask != live_) [[unlikely]] {
          DivergedAtBarrier(ctx, mask, live_);
          return status_ = SimdGroupStatus::kFaulted;
        }
        ++top.pc;
        if (d.flow == Flow::kThreadgroupBarrier) {
          return status_ = SimdGroupStatus::kAtBarrier;
        }
        if (ctx.checker != nullptr) [[unlikely]] {
          ctx.checker->SimdgroupBarrier(d.inst->mem_flags);
        }
        break;
    }
  }
}

}  // namespace mtlemu::emu
