#include "emu/timing/core_model.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cmath>
#include <limits>

namespace mtlemu::emu {
namespace {

constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();

// std::ceil for the model's times (>= 0, < 2^63), without a libm call or
// the unsigned conversion's range check (x86-64 has neither inline).
uint64_t Ceil(double v) {
  const int64_t whole = static_cast<int64_t>(v);
  return static_cast<uint64_t>(whole) + (static_cast<double>(whole) < v);
}

// "(3,0,0)": the position of threadgroup number `index` in `grid`.
std::string PositionName(const DispatchGrid& grid, uint64_t index) {
  const Size3 p = ThreadgroupPosition(grid, index);
  return "(" + std::to_string(p[0]) + "," + std::to_string(p[1]) + "," +
         std::to_string(p[2]) + ")";
}

}  // namespace

CoreModel::CoreModel(const ChipTiming& chip,
                     const std::vector<InstructionTiming>& timings, int core,
                     uint32_t threadgroup_slots,
                     uint32_t simd_groups_per_threadgroup, uint32_t registers,
                     bool simd_detail)
    : chip_(chip),
      timings_(timings),
      core_(core),
      sgs_per_tg_(simd_groups_per_threadgroup),
      registers_(std::max<uint32_t>(registers, 1) + 2),
      simd_detail_(simd_detail),
      schedulers_(chip.schedulers_per_core),
      residents_(threadgroup_slots),
      simd_groups_(static_cast<size_t>(threadgroup_slots) *
                   simd_groups_per_threadgroup),
      next_time_(chip.schedulers_per_core, kNever),
      oldest_(chip.schedulers_per_core, -1),
      cached_simd_group_(2 * chip.schedulers_per_core, -1),
      cached_instruction_(2 * chip.schedulers_per_core, nullptr),
      l1_(chip.l1_bytes, chip.line_bytes, chip.l1_ways),
      dram_share_(chip.dram_bytes_per_clock() / chip.spec.gpu_cores) {
  // CountStalls takes the schedulers that issued as a 64-bit mask.
  assert(schedulers_ >= 1 && schedulers_ <= 64);
  std::vector<std::vector<int>> by_scheduler(schedulers_);
  for (size_t i = 0; i < simd_groups_.size(); ++i) {
    simd_groups_[i].slot = static_cast<int>(i / sgs_per_tg_);
    simd_groups_[i].scheduler = static_cast<int>(i % schedulers_);
    simd_groups_[i].position =
        static_cast<int>(by_scheduler[i % schedulers_].size());
    simd_groups_[i].register_ready.assign(registers_, 0);
    simd_groups_[i].register_from_memory.assign(registers_, 0);
    by_scheduler[i % schedulers_].push_back(static_cast<int>(i));
  }
  for (auto& simd_groups : by_scheduler)
    queues_.emplace_back(std::move(simd_groups));
}

// Sync, ComputeReady, Refresh, CountStalls, OperandCycles and Issue run for
// every instruction issued or cycle stepped: forced inline into RunEpoch,
// which GCC does not do on its own (timed mode on an FMA chain: 17%
// faster).
[[gnu::always_inline]] inline void CoreModel::Sync(const SimdGroupState& w) {
  queues_[w.scheduler].Set(w.position,
                           w.done || w.at_barrier ? kNever : w.ready,
                           w.next_pipe, !w.done);
}

int CoreModel::FreeSlots(uint64_t now) {
  int free = 0;
  for (Resident& r : residents_) {
    if (r.used && r.finished && r.end <= now) r.used = false;
    free += r.used ? 0 : 1;
  }
  return free;
}

bool CoreModel::Idle() const {
  return std::none_of(residents_.begin(), residents_.end(),
                      [](const Resident& r) { return r.used; });
}

void CoreModel::Place(ThreadgroupTrace&& trace, uint64_t now) {
  for (size_t s = 0; s < residents_.size(); ++s) {
    Resident& r = residents_[s];
    if (r.used) continue;
    r = Resident{};
    r.used = true;
    r.finished = false;
    r.trace = std::move(trace);
    r.start = now;
    r.live = static_cast<uint32_t>(r.trace.simd_groups.size());
    for (uint32_t i = 0; i < sgs_per_tg_; ++i) {
      SimdGroupState& w = simd_groups_[s * sgs_per_tg_ + i];
      w.done = true;
      if (i >= r.trace.simd_groups.size() ||
          r.trace.simd_groups[i].records.empty()) {
        if (i < r.trace.simd_groups.size()) --r.live;
        Sync(w);
        continue;
      }
      w.cursor = TraceCursor(&r.trace.simd_groups[i]);
      w.previous = nullptr;
      w.done = false;
      w.at_barrier = false;
      w.waiting_memory = false;
      w.start = now;
      std::fill(w.register_ready.begin(), w.register_ready.end(), 0);
      ComputeReady(w, now);
      ++resident_;
    }
    if (r.live == 0) {
      r.finished = true;
      r.end = now;
    }
    return;
  }
}

[[gnu::always_inline]] inline void CoreModel::ComputeReady(SimdGroupState& w,
                                                           uint64_t after) {
  const InstructionTiming& t = timings_[w.cursor.pc()];
  uint64_t ready = after;
  bool memory = false;
  for (uint16_t r : t.reads) {
    if (r < registers_ && w.register_ready[r] > ready) {
      ready = w.register_ready[r];
      memory = w.register_from_memory[r] != 0;
    }
  }
  w.ready = ready;
  w.waiting_memory = memory;
  w.next_pipe = PipeOf(t);
  Sync(w);
}

[[gnu::always_inline]] inline void CoreModel::Refresh(int scheduler) {
  next_time_[scheduler] = queues_[scheduler].Earliest();
  oldest_[scheduler] = queues_[scheduler].OldestLive();
}

void CoreModel::RunEpoch(uint64_t begin, uint64_t end, double dram_share,
                         const SharedView& shared) {
  dram_share_ = dram_share;
  fetched_this_epoch_.Clear();
  for (int s = 0; s < schedulers_; ++s) Refresh(s);
  uint64_t now = std::max(now_, begin);
  while (now < end) {
    uint64_t earliest = kNever;
    for (int s = 0; s < schedulers_; ++s) {
      earliest = std::min(earliest, next_time_[s]);
    }
    if (earliest > now) {
      const uint64_t next = std::min(earliest, end);
      CountStalls(now, next, 0);
      now = next;
      continue;
    }
    refresh_all_ = false;
    uint64_t issued = 0;
    int issuing = 0;  // schedulers that issued (a count, not a popcount call)
    for (int s = 0; s < schedulers_; ++s) {
      if (next_time_[s] > now) continue;
      // Oldest ready SIMD group first (lowest slot: placed earliest among
      // equals); M3 may issue an FP32 instruction beside an integer or
      // FP16 one.
      IssueQueue& q = queues_[s];
      const int first_position = q.FirstReady(now);
      if (first_position < 0) {
        Refresh(s);  // (a scheduler that issued is refreshed lazily)
        continue;
      }
      issued |= uint64_t{1} << s;
      ++issuing;
      const int first = q.simd_group(first_position);
      const int pipe = q.pipe(first_position);
      Issue(simd_groups_[first], s, now, shared);
      if (chip_.fp32_dual_issue) IssuePartner(s, first, pipe, now, shared);
      // (A partner is ALU work only beside ALU work.)
      if (pipe == kFp32Pipe || pipe == static_cast<int>(isa::ExecUnit::kAlu)) {
        ++stats_.alu_issue_cycles;
      }
      // It may issue again next cycle; if not, FirstReady there says so
      // and Refresh finds when it may.
      next_time_[s] = now + 1;
    }
    CountStalls(now, now + 1, issued);
    stats_.issue_cycles += issuing;
    epoch_issues_ += issuing;
    if (refresh_all_) {
      for (int s = 0; s < schedulers_; ++s) Refresh(s);
    }
    now += 1;
  }
  now_ = now;
}

[[gnu::always_inline]] inline void CoreModel::CountStalls(uint64_t from,
                                                          uint64_t to,
                                                          uint64_t issued) {
  if (to <= from) return;
  const uint64_t span = to - from;
  stats_.resident_simd_group_cycles += static_cast<double>(resident_) * span;
  epoch_resident_ += static_cast<double>(resident_) * span;
  for (int s = 0; s < schedulers_; ++s) {
    if ((issued >> s) & 1) continue;
    // Why the oldest SIMD group of this scheduler is not issuing.
    uint64_t* reason = &stats_.stall_idle;
    if (oldest_[s] >= 0) {
      const SimdGroupState& w = simd_groups_[oldest_[s]];
      if (w.at_barrier) {
        reason = &stats_.stall_barrier;
      } else if (w.ready > from) {
        reason =
            w.waiting_memory ? &stats_.stall_memory : &stats_.stall_dependency;
      } else {
        reason = &stats_.stall_pipe;
      }
    }
    *reason += span;
  }
}

int CoreModel::PartnerPipe(int pipe) const {
  constexpr int kAlu = static_cast<int>(isa::ExecUnit::kAlu);
  if (pipe == kFp32Pipe) return kAlu;
  if (pipe == kAlu) return kFp32Pipe;
  return -1;
}

void CoreModel::IssuePartner(int scheduler, int first, int pipe, uint64_t now,
                             const SharedView& shared) {
  const int partner = PartnerPipe(pipe);
  if (partner < 0) return;
  IssueQueue& q = queues_[scheduler];
  for (size_t p = 0; p < q.size(); ++p) {
    if (q.pipe(p) != partner || q.simd_group(p) == first ||
        q.IssueTime(p) > now) {
      continue;
    }
    Issue(simd_groups_[q.simd_group(p)], scheduler, now, shared);
    return;
  }
}

[[gnu::always_inline]] inline double CoreModel::OperandCycles(
    const InstructionTiming& t, int simd_group, int cache) const {
  // Only the full-rate pipe: a slower instruction reads its operands while
  // the pipe is busy with it anyway.
  if (t.unit != isa::ExecUnit::kAlu) return 0;
  const bool switched = cached_simd_group_[cache] != simd_group;
  if (t.narrow) {
    // 16-bit: after a switch, only a register the SIMD group's own last
    // instruction wrote costs (a back-to-back dependency [T]).
    const InstructionTiming* previous = simd_groups_[simd_group].previous;
    if (!switched || previous == nullptr) return 0;
    for (uint16_t r : t.reads) {
      if (std::find(previous->writes.begin(), previous->writes.end(), r) !=
          previous->writes.end()) {
        return chip_.register_cache_miss_cycles_16;
      }
    }
    return 0;
  }
  if (t.reads.size() < 2) return 0;
  // After a switch the cache holds none of them.
  if (switched) return chip_.register_cache_miss_cycles;
  const InstructionTiming* last = cached_instruction_[cache];
  int misses = 0;
  for (uint16_t r : t.reads) {
    const bool cached = last != nullptr &&
                        (std::find(last->reads.begin(), last->reads.end(), r) !=
                             last->reads.end() ||
                         std::find(last->writes.begin(), last->writes.end(),
                                   r) != last->writes.end());
    misses += cached ? 0 : 1;
  }
  return misses >= 2 ? chip_.register_cache_miss_cycles : 0;
}

[[gnu::always_inline]] inline void CoreModel::Issue(SimdGroupState& w,
                                                    int scheduler, uint64_t now,
                                                    const SharedView& shared) {
  const TraceEvent e = w.cursor.event();
  const InstructionTiming& t = timings_[e.pc];
  const UnitCost& cost = chip_.cost(t.unit);
  IssueQueue& queue = queues_[scheduler];
  const int pipe = w.next_pipe;  // PipeOf(t), worked out by ComputeReady
  const int simd_group = static_cast<int>(&w - simd_groups_.data());
  const int cache = OperandCache(scheduler, pipe);
  const double operand_cycles = OperandCycles(t, simd_group, cache);
  cached_simd_group_[cache] = simd_group;
  cached_instruction_[cache] = &t;
  w.previous = &t;
  queue.set_pipe_free(
      pipe, std::max(queue.pipe_free(pipe), static_cast<double>(now)) +
                cost.cycles_per_instruction + operand_cycles);
  stats_.operand_cycles += operand_cycles;

  ++stats_.instructions;
  stats_.lane_instructions += e.lanes;
  ++stats_.by_unit[static_cast<int>(t.unit)];
  stats_.flops += static_cast<double>(t.flops_per_lane) * e.lanes;

  const uint64_t* lines = w.cursor.lines();
  const double latency = t.narrow ? chip_.alu16_latency : cost.latency;
  uint64_t done = now + Ceil(latency + operand_cycles);
  bool from_memory = false;
  switch (t.memory) {
    case MemoryKind::kNone:
      break;
    case MemoryKind::kDeviceLoad:
      done = DeviceLoad(e, lines, now, shared);
      from_memory = true;
      break;
    case MemoryKind::kDeviceStore:
      DeviceStore(e, lines, now);
      done = now + 1;
      break;
    case MemoryKind::kDeviceAtomic: {
      // At L2; lanes on one address serialize.
      DeviceStore(e, lines, now);
      done = now + Ceil(chip_.l2_latency_cycles +
                        (e.conflict - 1) * chip_.atomic_cycles_per_conflict);
      from_memory = true;
      break;
    }
    case MemoryKind::kThreadgroup: {
      const double start = std::max(threadgroup_port_free_, double(now));
      threadgroup_port_free_ = start + e.conflict;
      stats_.bank_conflict_cycles += e.conflict - 1;
      stats_.threadgroup_cycles += e.conflict;
      done = Ceil(start + chip_.threadgroup_latency_cycles + e.conflict - 1);
      from_memory = true;
      break;
    }
    case MemoryKind::kThread:
      done = now + Ceil(chip_.l1_latency_cycles);
      from_memory = true;
      break;
  }
  for (uint16_t r : t.writes) {
    if (r < registers_) {
      w.register_ready[r] = done;
      w.register_from_memory[r] = from_memory ? 1 : 0;
    }
  }
  last_cycle_ = std::max(last_cycle_, now + 1);

  Resident& tg = residents_[w.slot];
  w.cursor.Next();
  if (w.cursor.done()) {
    FinishSimdGroup(w, std::max(now + 1, done));
    return;
  }
  if (t.barrier) {
    w.at_barrier = true;
    Sync(w);
    ++tg.arrived;
    if (tg.arrived >= tg.live) {
      ReleaseBarrier(w.slot, now);
    }
    return;
  }
  ComputeReady(w, now + 1);
}

// Every live SIMD group of the threadgroup in `slot` has arrived.
void CoreModel::ReleaseBarrier(int slot, uint64_t now) {
  const uint64_t release = now + Ceil(chip_.barrier_cycles);
  for (uint32_t i = 0; i < sgs_per_tg_; ++i) {
    SimdGroupState& o = simd_groups_[slot * sgs_per_tg_ + i];
    if (o.done || !o.at_barrier) continue;
    o.at_barrier = false;
    ComputeReady(o, release);
  }
  residents_[slot].arrived = 0;
  refresh_all_ = true;
}

void CoreModel::FinishSimdGroup(SimdGroupState& w, uint64_t now) {
  w.done = true;
  Sync(w);
  --resident_;
  last_cycle_ = std::max(last_cycle_, now);
  Resident& tg = residents_[w.slot];
  const uint32_t index =
      static_cast<uint32_t>(&w - &simd_groups_[w.slot * sgs_per_tg_]);
  if (simd_detail_) {
    slices_.push_back({static_cast<int>(&w - simd_groups_.data()), w.start,
                       std::max(now, w.start + 1), tg.trace.index, index,
                       w.cursor.trace().instructions});
  }
  if (--tg.live > 0) {
    // Those still running may be waiting at a barrier for this one.
    if (tg.arrived > 0 && tg.arrived >= tg.live) {
      ReleaseBarrier(w.slot, now);
    }
    return;
  }
  tg.finished = true;
  tg.end = now;
  slices_.push_back({-1, tg.start, std::max(now, tg.start + 1), tg.trace.index,
                     tg.trace.threads, tg.trace.simd_groups.size()});
  // The traces are done with: back to the dispatch for the next batch
  // (their vectors keep their capacity, which saves allocations).
  recycled_.push_back(std::move(tg.trace));
  tg.trace = ThreadgroupTrace{};
}

uint64_t CoreModel::DeviceLoad(const TraceEvent& e, const uint64_t* lines,
                               uint64_t now, const SharedView& shared) {
  const double line = chip_.line_bytes;
  const double start = std::max(l1_port_free_, double(now));
  l1_port_free_ = start + e.line_count * line / chip_.l1_bytes_per_clock;
  double done = start + chip_.l1_latency_cycles;
  const double ns_to_cycles = chip_.clock_ghz();
  for (uint32_t i = 0; i < e.line_count; ++i) {
    const uint64_t l = lines[i];
    ++stats_.l1_lines;
    if (l1_.Access(l)) {
      ++stats_.l1_hits;
      continue;
    }
    ++stats_.l2_lines;
    l2_reads_.push_back(l);
    const double l2_start = std::max(l2_port_free_, start);
    l2_port_free_ = l2_start + line / chip_.l2_bytes_per_clock;
    double finish;
    if (fetched_this_epoch_.Contains(l) || shared.l2->Contains(l)) {
      ++stats_.l2_hits;
      finish = l2_start + chip_.l2_latency_cycles;
    } else {
      fetched_this_epoch_.Insert(l);
      ++stats_.slc_lines;
      const double slc_start = std::max(slc_port_free_, l2_start);
      slc_port_free_ = slc_start + line / chip_.slc_bytes_per_clock;
      if (shared.slc->Contains(l)) {
        finish = slc_start + chip_.slc_latency_ns * ns_to_cycles;
      } else {
        dram_reads_.push_back(l);
        const double dram_start = std::max(dram_port_free_, slc_start);
        dram_port_free_ = dram_start + line / DramBytesPerClock();
        finish = dram_start + chip_.dram_latency_ns * ns_to_cycles;
      }
    }
    done = std::max(done, finish);
  }
  return Ceil(done);
}

void CoreModel::DeviceStore(const TraceEvent& e, const uint64_t* lines,
                            uint64_t now) {
  // Write-through to L2 (no allocation in L1), written back to DRAM.
  const double line = chip_.line_bytes;
  const double start = std::max(l2_port_free_, double(now));
  l2_port_free_ = start + e.line_count * line / chip_.l2_bytes_per_clock;
  for (uint32_t i = 0; i < e.line_count; ++i) {
    l2_writes_.push_back(lines[i]);
  }
  stats_.l2_lines += e.line_count;
  stats_.store_lines += e.line_count;
  stats_.dram_write_bytes += uint64_t{e.line_count} * chip_.line_bytes;
  dram_port_free_ = std::max(dram_port_free_, start) +
                    e.line_count * line / DramBytesPerClock();
}

void CoreModel::TakeSlices(const DispatchGrid& grid,
                           std::vector<traces::Slice>& out) {
  for (const SliceRecord& r : slices_) {
    traces::Slice s;
    s.core = core_;
    s.slot = r.slot;
    s.start_cycle = r.start;
    s.end_cycle = r.end;
    const double threadgroup = static_cast<double>(r.threadgroup);
    if (r.slot < 0) {
      s.name = "threadgroup " + PositionName(grid, r.threadgroup);
      s.args = {
          {"threadgroup", threadgroup},
          {"threads", static_cast<double>(r.threads_or_simd_group)},
          {"simdgroups", static_cast<double>(r.simd_groups_or_instructions)}};
    } else {
      s.name = "simdgroup " + std::to_string(r.threads_or_simd_group) +
               " of tg " + PositionName(grid, r.threadgroup);
      s.args = {
          {"threadgroup", threadgroup},
          {"simdgroup", static_cast<double>(r.threads_or_simd_group)},
          {"instructions", static_cast<double>(r.simd_groups_or_instructions)}};
    }
    out.push_back(std::move(s));
  }
  slices_.clear();
  slices_.shrink_to_fit();
}

}  // namespace mtlemu::emu
