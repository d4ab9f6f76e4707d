#include "emu/timing/timing_model.h"

#include <fmt/format.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <bit>
#include <cassert>
#include <cmath>
#include <deque>
#include <optional>

#include "emu/timing/cache_model.h"
#include "emu/timing/core_model.h"
#include "emu/timing/instruction_timing.h"
#include "emu/timing/limiter.h"
#include "emu/timing/line_set.h"
#include "emu/timing/occupancy.h"
#include "emu/timing/registers_in_use.h"
#include "emu/timing/xcode_counters.h"

namespace mtlemu::emu {
namespace {

// Cycles a core runs on its own between two exchanges of shared state. A
// threadgroup that finishes mid-epoch frees its slot at the next boundary.
constexpr uint64_t kEpochCycles = 256;
// Counters are sampled every this many cycles.
constexpr uint64_t kCounterCycles = 1024;

}  // namespace

struct TimingModel::State {
  ChipTiming chip;
  const isa::Kernel& kernel;
  TimingOptions options;
  DispatchGrid grid;
  uint32_t threads_per_threadgroup;
  uint32_t threadgroup_memory;
  std::vector<InstructionTiming> timings;
  // Set, with the cores, by the first batch (Start).
  Occupancy occupancy;
  double registers_in_use = 0;
  // The cores' epochs run in the dispatch's arena while it consumes (so
  // a host thread done with its threadgroups takes some of them), and here
  // at Finish.
  tbb::task_arena arena;
  std::vector<std::unique_ptr<CoreModel>> cores;
  CacheModel l2, slc;
  uint64_t dram_read_bytes = 0;  // lines fetched once, whichever core asked
  LineSet fetched_from_dram;     // this epoch, by the cores applied so far
  std::deque<ThreadgroupTrace> queue;
  std::vector<int> free_slots;  // per core, at the current epoch (Advance)
  uint64_t now = 0;             // the current epoch's first cycle
  uint64_t threadgroups = 0;
  // Counters, accumulated over the current sampling interval.
  std::vector<traces::Counter> counters;
  std::vector<uint64_t> written_before;  // DRAM write bytes per core so far
  std::vector<uint64_t> interval_issues;
  std::vector<double> interval_resident;
  uint64_t interval_dram_bytes = 0;
  uint64_t interval_start = 0;

  State(const ChipTiming& c, const isa::Kernel& k, const DispatchGrid& g,
        uint32_t tg_memory, TimingOptions o)
      : chip(c),
        kernel(k),
        options(o),
        grid(g),
        threads_per_threadgroup(g.threads_per_threadgroup[0] *
                                g.threads_per_threadgroup[1] *
                                g.threads_per_threadgroup[2]),
        threadgroup_memory(tg_memory),
        timings(InstructionTimings(k)),
        arena(o.host_threads > 0 ? o.host_threads : tbb::task_arena::automatic),
        l2(c.l2_bytes, c.line_bytes, c.l2_ways),
        slc(c.slc_bytes, c.line_bytes, c.l2_ways) {}

  // Occupancy and the cores, once the first batch is in: on M3 (Dynamic
  // Caching) occupancy counts the registers the batch's threads hold on
  // average as they run. The first batch is the same threadgroups on any
  // number of host threads (RunDispatch), so the result is too.
  void Start(const std::vector<ThreadgroupTrace>& first_batch) {
    const double mean =
        MeanRegistersInUse(LiveRegisters(kernel, timings), first_batch);
    registers_in_use = mean > 0 ? mean : kernel.registers;
    occupancy = ComputeOccupancy(
        chip, kernel.registers, threads_per_threadgroup, threadgroup_memory,
        chip.dynamic_caching ? std::optional<double>(registers_in_use)
                             : std::nullopt);
    for (int i = 0; i < chip.spec.gpu_cores; ++i) {
      cores.push_back(std::make_unique<CoreModel>(
          chip, timings, i, occupancy.threadgroups_per_core,
          occupancy.simd_groups_per_threadgroup, kernel.registers,
          options.simd_detail));
      counters.push_back({"resident SIMD groups", i, {}});
      counters.push_back({"ALU busy %", i, {}});
    }
    counters.push_back({"DRAM GB/s", -1, {}});
    free_slots.assign(cores.size(), 0);
    interval_issues.assign(cores.size(), 0);
    written_before.assign(cores.size(), 0);
    interval_resident.assign(cores.size(), 0);
  }

  // Runs epochs while there is work and input enough to place; with
  // `finishing`, to the end.
  void Advance(bool finishing) {
    std::vector<int>& slots = free_slots;
    while (true) {
      size_t free = 0;
      for (size_t i = 0; i < cores.size(); ++i) {
        slots[i] = cores[i]->FreeSlots(now);
        free += slots[i];
      }
      // Wait for more threadgroups rather than start an epoch with slots
      // that more input would have filled (the result must not depend on
      // how the input is batched).
      if (!finishing && free > 0 && queue.size() < free) return;
      // Round-robin over the cores, as the GPU spreads threadgroups.
      for (bool placed = true; placed && !queue.empty();) {
        placed = false;
        for (size_t i = 0; i < cores.size() && !queue.empty(); ++i) {
          if (slots[i] == 0) continue;
          --slots[i];
          cores[i]->Place(std::move(queue.front()), now);
          queue.pop_front();
          placed = true;
        }
      }
      const bool idle = std::all_of(cores.begin(), cores.end(),
                                    [](const auto& c) { return c->Idle(); });
      if (idle && queue.empty()) return;

      SharedView view;
      view.l2 = &l2;
      view.slc = &slc;
      const uint64_t begin = now, end = now + kEpochCycles;
      // The cores with work (or stores still leaving) share DRAM.
      const size_t busy = std::max<size_t>(
          1, std::count_if(cores.begin(), cores.end(), [&](const auto& c) {
            return !c->Idle() || c->DramBusy(begin);
          }));
      const double dram_share = chip.dram_bytes_per_clock() / busy;
      // Cores are independent within an epoch.
      tbb::parallel_for(size_t{0}, cores.size(), [&](size_t i) {
        cores[i]->RunEpoch(begin, end, dram_share, view);
      });
      // Shared state, in core order.
      uint64_t demand = 0;
      fetched_from_dram.Clear();
      for (size_t i = 0; i < cores.size(); ++i) {
        CoreModel& c = *cores[i];
        uint64_t fetched_before = 0;
        for (uint64_t line : c.dram_reads()) {
          if (fetched_from_dram.Contains(line)) {
            ++fetched_before;
          } else {
            fetched_from_dram.Insert(line);
          }
        }
        if (fetched_before > 0) c.RefundDram(fetched_before);
        c.dram_reads().clear();
        for (uint64_t line : c.l2_reads()) {
          if (!l2.Access(line) && !slc.Access(line)) {
            demand += chip.line_bytes;
            dram_read_bytes += chip.line_bytes;
          }
        }
        for (uint64_t line : c.l2_writes()) {
          l2.Access(line);
          slc.Access(line);
        }
        c.l2_reads().clear();
        c.l2_writes().clear();
        demand += c.stats().dram_write_bytes - written_before[i];
        written_before[i] = c.stats().dram_write_bytes;
        uint64_t issues;
        double resident;
        c.TakeActivity(&issues, &resident);
        interval_issues[i] += issues;
        interval_resident[i] += resident;
      }
      interval_dram_bytes += demand;
      now = end;
      if (now - interval_start >= kCounterCycles) SampleCounters();
    }
  }

  void SampleCounters() {
    const double span = static_cast<double>(now - interval_start);
    if (span <= 0) return;
    for (size_t i = 0; i < cores.size(); ++i) {
      counters[2 * i].samples.push_back(
          {interval_start, interval_resident[i] / span});
      counters[2 * i + 1].samples.push_back(
          {interval_start,
           100.0 * interval_issues[i] / (span * chip.schedulers_per_core)});
      interval_issues[i] = 0;
      interval_resident[i] = 0;
    }
    counters.back().samples.push_back(
        {interval_start,
         interval_dram_bytes / span * chip.clock_ghz()});  // bytes/ns = GB/s
    interval_dram_bytes = 0;
    interval_start = now;
  }
};

TimingModel::TimingModel(const ChipTiming& chip, const isa::Kernel& kernel,
                         const DispatchGrid& grid, uint32_t threadgroup_memory,
                         TimingOptions options)
    : state_(std::make_unique<State>(chip, kernel, grid, threadgroup_memory,
                                     options)) {}

TimingModel::~TimingModel() = default;

TraceGeometry TimingModel::geometry() const {
  const ChipTiming& chip = state_->chip;
  assert(std::has_single_bit(chip.line_bytes));
  assert(chip.threadgroup_banks >= 1 &&
         chip.threadgroup_banks <= int{TraceGeometry::kMaxBanks});
  return {
      .line_shift = static_cast<uint32_t>(std::countr_zero(chip.line_bytes)),
      .threadgroup_banks = static_cast<uint32_t>(chip.threadgroup_banks)};
}

void TimingModel::Consume(std::vector<ThreadgroupTrace>& batch) {
  if (state_->cores.empty()) state_->Start(batch);
  for (ThreadgroupTrace& t : batch) {
    state_->queue.push_back(std::move(t));
    ++state_->threadgroups;
  }
  batch.clear();
  state_->Advance(false);
  // Finished threadgroups' traces go back to the dispatch, which fills
  // them again for the next batch without allocating.
  for (auto& core : state_->cores) {
    for (ThreadgroupTrace& t : core->recycled()) {
      if (batch.size() < 256) batch.push_back(std::move(t));
    }
    core->recycled().clear();
  }
}

TimingReport TimingModel::Finish(traces::Timeline* timeline) {
  State& s = *state_;
  if (s.cores.empty()) s.Start({});
  s.arena.execute([&] { s.Advance(true); });
  s.SampleCounters();
  const ChipTiming& chip = s.chip;

  TimingReport r;
  r.chip = std::string(chip.spec.name);
  r.chip_name = std::string(chip.spec.marketing_name);
  r.kernel = s.kernel.name;
  r.clock_mhz = chip.spec.clock_mhz;
  r.cores = chip.spec.gpu_cores;
  CoreStats sum;
  for (const auto& core : s.cores) {
    const CoreStats& c = core->stats();
    r.cycles = std::max(r.cycles, core->last_cycle());
    sum += c;
  }
  // Stores the SLC cannot take before the kernel completes (each core its
  // share of it) drain first; what it takes reaches DRAM after the kernel.
  const double slc_share =
      static_cast<double>(chip.slc_bytes) / chip.spec.gpu_cores;
  for (const auto& core : s.cores) {
    const CoreModel::StoreDrain drain = core->DrainStores(slc_share);
    r.cycles = std::max(r.cycles, drain.done);
    r.slc_held_write_bytes += drain.held_bytes;
  }
  sum.dram_write_bytes -=
      std::min(sum.dram_write_bytes, r.slc_held_write_bytes);
  // Epochs run whole: what the cores idled after the end is not a stall.
  const uint64_t after_end =
      s.now > r.cycles
          ? (s.now - r.cycles) * chip.spec.gpu_cores * chip.schedulers_per_core
          : 0;
  sum.stall_idle -= std::min(sum.stall_idle, after_end);
  const double cycles = std::max<double>(1.0, static_cast<double>(r.cycles));
  const double seconds = cycles / (chip.spec.clock_mhz * 1e6);
  r.time_us = seconds * 1e6;
  r.threadgroups = s.threadgroups;
  r.instructions = sum.instructions;
  r.lane_instructions = sum.lane_instructions;
  r.simd_efficiency =
      sum.instructions ? sum.lane_instructions / (32.0 * sum.instructions) : 0;
  for (int u = 0; u < kNumExecUnits; ++u) {
    if (sum.by_unit[u] > 0) {
      r.instructions_by_unit.push_back(
          {std::string(isa::ExecUnitName(static_cast<isa::ExecUnit>(u))),
           sum.by_unit[u]});
    }
  }
  r.registers = s.kernel.registers;
  r.registers_in_use = s.registers_in_use;
  r.dynamic_caching = chip.dynamic_caching;
  if (r.registers > chip.max_registers_per_thread) {
    r.notes.push_back(fmt::format(
        "the kernel needs {} registers per thread and a thread has {}: "
        "Metal's compiler would spill the rest to memory; occupancy counts "
        "{}, and the spills are not timed",
        r.registers, chip.max_registers_per_thread,
        chip.max_registers_per_thread));
  }
  r.threadgroup_memory = s.threadgroup_memory;
  r.threads_per_threadgroup = s.threads_per_threadgroup;
  r.threadgroups_per_core = s.occupancy.threadgroups_per_core;
  r.max_simd_groups_per_core = s.occupancy.threadgroups_per_core *
                               s.occupancy.simd_groups_per_threadgroup;
  r.occupancy_limiter = s.occupancy.limiter;
  const double hardware_max = chip.max_threads_per_core / 32.0;
  r.occupancy = sum.resident_simd_group_cycles /
                (cycles * chip.spec.gpu_cores * hardware_max);

  r.l1_bytes = sum.l1_lines * chip.line_bytes;
  r.l2_bytes = sum.l2_lines * chip.line_bytes;
  r.slc_bytes = sum.slc_lines * chip.line_bytes;
  r.dram_bytes = s.dram_read_bytes + sum.dram_write_bytes;
  r.l1_hit_rate = sum.l1_lines ? double(sum.l1_hits) / sum.l1_lines : 0;
  r.l2_hit_rate = sum.l2_lines ? double(sum.l2_hits) / sum.l2_lines : 0;
  r.achieved_dram_gbps = r.dram_bytes / seconds / 1e9;
  r.peak_dram_gbps = chip.dram_gbps;
  r.threadgroup_bank_conflict_cycles = sum.bank_conflict_cycles;
  r.register_cache_miss_cycles =
      static_cast<uint64_t>(std::llround(sum.operand_cycles));
  r.flops = sum.flops;
  r.achieved_tflops = sum.flops / seconds / 1e12;
  r.peak_tflops = chip.peak_flops() / 1e12;
  const double slots = cycles * chip.spec.gpu_cores * chip.schedulers_per_core;
  r.alu_utilization = sum.alu_issue_cycles / slots;
  r.dram_bandwidth_utilization = r.achieved_dram_gbps / r.peak_dram_gbps;
  const double stalled = sum.stall_memory + sum.stall_dependency +
                         sum.stall_pipe + sum.stall_barrier + sum.stall_idle;
  if (stalled > 0) {
    r.stalls = {
        {"waiting for memory", sum.stall_memory / slots},
        {"waiting for a result (ALU latency)", sum.stall_dependency / slots},
        {"pipe busy (throughput)", sum.stall_pipe / slots},
        {"at a barrier", sum.stall_barrier / slots},
        {"no SIMD group resident", sum.stall_idle / slots}};
  }

  r.dram_read_bytes = s.dram_read_bytes;
  r.dram_write_bytes = sum.dram_write_bytes;
  const XcodeCounters counters =
      ComputeXcodeCounters(chip, sum, r, cycles, seconds);
  r.xcode_counters = counters.Named();
  const Limiter limiter = FindLimiter(
      {.counters = counters,
       .issue = sum.issue_cycles / slots,
       .pipe_stalls = sum.stall_pipe / slots,
       .simd_groups_per_core = static_cast<double>(r.max_simd_groups_per_core),
       .hardware_simd_groups_per_core = hardware_max,
       .occupancy_limiter = r.occupancy_limiter,
       .threadgroups = r.threadgroups,
       .threadgroups_per_core = r.threadgroups_per_core,
       .cores = static_cast<uint32_t>(chip.spec.gpu_cores),
       .memory_waits_dominate = sum.stall_memory >= sum.stall_dependency});
  r.limiter = limiter.name;
  r.verdict = limiter.verdict;

  if (timeline != nullptr) {
    timeline->chip = r.chip;
    timeline->kernel = r.kernel;
    timeline->clock_mhz = r.clock_mhz;
    timeline->cores = r.cores;
    timeline->total_cycles = r.cycles;
    for (auto& core : s.cores) core->TakeSlices(s.grid, timeline->slices);
    timeline->counters = std::move(s.counters);
  }
  return r;
}

}  // namespace mtlemu::emu
