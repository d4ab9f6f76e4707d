// One GPU core of the timing model (timing_model.h): its resident
// threadgroups, their SIMD groups on the core's schedulers, its L1, its
// pipes and ports. A core runs an epoch on its own, against a read-only
// view of what the cores share; what it did to shared state is collected
// for the model to apply afterwards in a fixed order.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "emu/chips/chip_timing.h"
#include "emu/dispatch/grid.h"
#include "emu/exec/simd_trace.h"
#include "emu/timing/cache_model.h"
#include "emu/timing/core_stats.h"
#include "emu/timing/instruction_timing.h"
#include "emu/timing/issue_queue.h"
#include "emu/timing/line_set.h"
#include "traces/timeline.h"

namespace mtlemu::emu {

// What the cores share, as it was when the epoch began.
struct SharedView {
  const CacheModel* l2 = nullptr;
  const CacheModel* slc = nullptr;
};

class CoreModel {
 public:
  CoreModel(const ChipTiming& chip,
            const std::vector<InstructionTiming>& timings, int core,
            uint32_t threadgroup_slots, uint32_t simd_groups_per_threadgroup,
            uint32_t registers, bool simd_detail);

  // Free threadgroup slots at cycle `now` (finished ones are released).
  int FreeSlots(uint64_t now);
  // Places a threadgroup in a free slot, starting at `now`.
  void Place(ThreadgroupTrace&& trace, uint64_t now);
  bool Idle() const;
  // Whether the core's DRAM port is still sending at `cycle`.
  bool DramBusy(uint64_t cycle) const {
    return dram_port_free_ > static_cast<double>(cycle);
  }

  // Runs cycles [begin, end), with `dram_share` bytes per clock of the
  // chip's DRAM bandwidth: the cores with work share it evenly.
  void RunEpoch(uint64_t begin, uint64_t end, double dram_share,
                const SharedView& shared);

  // What the epoch did to shared state, in order; cleared by the model.
  std::vector<uint64_t>& l2_reads() { return l2_reads_; }
  std::vector<uint64_t>& l2_writes() { return l2_writes_; }
  // The lines of l2_reads() the core sent to DRAM. Another core may have
  // fetched one in the same epoch: the model then gives the bandwidth back
  // (RefundDram), as the second request would have waited for the first
  // one's fill instead of crossing from DRAM again.
  std::vector<uint64_t>& dram_reads() { return dram_reads_; }
  void RefundDram(uint64_t lines) {
    dram_port_free_ = std::max(
        0.0, dram_port_free_ - lines * chip_.line_bytes / DramBytesPerClock());
  }
  // When the core's stores are done, and how many of their bytes the SLC
  // still holds then. A store is done once it has left the core (its L2
  // port) and reached the SLC, a memory-side cache the CPU sees, so a
  // kernel's last writes need not reach DRAM before it completes: the SLC
  // takes up to `slc_share` bytes of the stores still queued for the DRAM
  // port then, and only the rest must drain first.
  struct StoreDrain {
    uint64_t done = 0;
    uint64_t held_bytes = 0;  // written back after the kernel
  };
  StoreDrain DrainStores(double slc_share) const {
    const double left =
        std::max(static_cast<double>(last_cycle_), l2_port_free_);
    const double rate = DramBytesPerClock();
    const double queued = std::max(0.0, dram_port_free_ - left) * rate;
    const double held = std::min(queued, slc_share);
    return {static_cast<uint64_t>(std::ceil(left + (queued - held) / rate)),
            static_cast<uint64_t>(held)};
  }

  // Issue cycles and resident SIMD-group cycles since the last call
  // (counters).
  void TakeActivity(uint64_t* issues, double* resident_cycles) {
    *issues = epoch_issues_;
    *resident_cycles = epoch_resident_;
    epoch_issues_ = 0;
    epoch_resident_ = 0;
  }

  // Traces of finished threadgroups, for reuse.
  std::vector<ThreadgroupTrace>& recycled() { return recycled_; }

  const CoreStats& stats() const { return stats_; }
  // The trace slices of the threadgroups (and SIMD groups) that finished,
  // in the order they finished, named by their position in `grid`; the
  // core keeps none after.
  void TakeSlices(const DispatchGrid& grid, std::vector<traces::Slice>& out);
  uint64_t last_cycle() const { return last_cycle_; }

 private:
  // A SIMD group resident on the core: where its trace is and what it
  // waits for.
  struct SimdGroupState {
    TraceCursor cursor;  // at the next instruction
    uint64_t ready = 0;  // the next instruction may issue
    int next_pipe = 0;   // the pipe it needs (PipeOf)
    const InstructionTiming* previous = nullptr;  // it issued last
    bool waiting_memory = false;                  // ready is set by a load
    bool at_barrier = false;
    bool done = true;
    int slot = 0;       // threadgroup slot
    int scheduler = 0;  // and its place in that scheduler's IssueQueue
    int position = 0;
    uint64_t start = 0;  // cycle it was placed (trace slices)
    std::vector<uint64_t> register_ready;
    std::vector<uint8_t> register_from_memory;
  };
  struct Resident {
    bool used = false;
    ThreadgroupTrace trace;
    uint64_t start = 0, end = 0;
    uint32_t live = 0;     // SIMD groups not done
    uint32_t arrived = 0;  // at the barrier
    bool finished = true;
  };

  // Takes a scheduler's earliest issue time and oldest SIMD group from its
  // queue.
  void Refresh(int scheduler);
  // Tells the SIMD group's scheduler queue what it now waits for.
  void Sync(const SimdGroupState& w);
  void Issue(SimdGroupState& w, int scheduler, uint64_t now,
             const SharedView& shared);
  // The pipe `t` issues to (issue_queue.h): its unit's, or on a chip that
  // dual-issues FP32, kFp32Pipe for FP32 arithmetic.
  int PipeOf(const InstructionTiming& t) const {
    return chip_.fp32_dual_issue && t.fp32 ? kFp32Pipe
                                           : static_cast<int>(t.unit);
  }
  // On a chip that dual-issues FP32: the pipe an instruction issued to
  // `pipe` may pair with in one cycle (FP32 with integer or FP16 on the
  // ALU pipe, and back), or -1.
  int PartnerPipe(int pipe) const;
  // Issues, beside the SIMD group at `first` of `scheduler`'s queue that
  // went to `pipe` this cycle, another one ready for the partner pipe.
  void IssuePartner(int scheduler, int first, int pipe, uint64_t now,
                    const SharedView& shared);
  // Extra issue cycles of `t`, of SIMD group `simd_group`, from operand cache
  // `cache`: its register sources the cache does not hold.
  double OperandCycles(const InstructionTiming& t, int simd_group,
                       int cache) const;
  // `lines`: the event's e.line_count lines.
  uint64_t DeviceLoad(const TraceEvent& e, const uint64_t* lines, uint64_t now,
                      const SharedView& shared);
  void DeviceStore(const TraceEvent& e, const uint64_t* lines, uint64_t now);
  double DramBytesPerClock() const { return dram_share_; }
  void ComputeReady(SimdGroupState& w, uint64_t after);
  void FinishSimdGroup(SimdGroupState& w, uint64_t now);
  void ReleaseBarrier(int slot, uint64_t now);
  // Charges [from, to) to each scheduler that did not issue (bit s of
  // `issued`), by why its oldest SIMD group waits.
  void CountStalls(uint64_t from, uint64_t to, uint64_t issued);

  const ChipTiming& chip_;
  const std::vector<InstructionTiming>& timings_;
  int core_;
  uint32_t sgs_per_tg_;
  uint32_t registers_;
  bool simd_detail_;
  int schedulers_;

  std::vector<Resident> residents_;
  std::vector<SimdGroupState> simd_groups_;  // slot * sgs_per_tg + index
  std::vector<IssueQueue> queues_;           // per scheduler, with its pipes
  std::vector<uint64_t> next_time_;          // per scheduler (Refresh)
  std::vector<int> oldest_;  // per scheduler: oldest live SIMD group, or -1
  // Operand caches (ChipTiming::register_cache_miss_cycles), two per
  // scheduler (OperandCache): the SIMD group and instruction each served
  // last, or -1.
  int OperandCache(int scheduler, int pipe) const {
    return 2 * scheduler + (pipe == kFp32Pipe ? 1 : 0);
  }
  std::vector<int> cached_simd_group_;
  std::vector<const InstructionTiming*> cached_instruction_;
  bool refresh_all_ = false;  // a barrier released or a SIMD group finished
  uint32_t resident_ = 0;     // live SIMD groups

  CacheModel l1_;
  LineSet fetched_this_epoch_;  // lines now in L2
  // Ports: busy until. DRAM: each core with work its share of the chip's
  // attainable bandwidth (8-10 B per core-clock on Max chips with every
  // core busy [T], total / cores; more when fewer cores have work, up to
  // what the core's SLC port takes).
  double dram_share_ = 0;
  double l1_port_free_ = 0, l2_port_free_ = 0, slc_port_free_ = 0,
         dram_port_free_ = 0, threadgroup_port_free_ = 0;
  uint64_t now_ = 0;
  uint64_t last_cycle_ = 0;

  std::vector<uint64_t> l2_reads_, l2_writes_, dram_reads_;
  uint64_t epoch_issues_ = 0;
  double epoch_resident_ = 0;
  CoreStats stats_;
  // A finished threadgroup (slot -1) or SIMD group, made into a
  // traces::Slice only when a timeline is asked for.
  struct SliceRecord {
    int slot = -1;
    uint64_t start = 0, end = 0;
    uint64_t threadgroup = 0;
    uint64_t threads_or_simd_group = 0;
    uint64_t simd_groups_or_instructions = 0;
  };
  std::vector<SliceRecord> slices_;
  std::vector<ThreadgroupTrace> recycled_;
};

}  // namespace mtlemu::emu
