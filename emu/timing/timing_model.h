// The cycle-approximate timing model of an Apple GPU. It consumes the
// traces the functional executor records in timed mode (simd_trace.h) and
// never changes a result.
//
// Threadgroups go to cores in index order as resources free (occupancy from
// threads, registers and threadgroup memory, by the chip's rule). Per core,
// each scheduler issues one instruction per cycle (M3: an FP32 one and an
// integer or FP16 one of another SIMD group beside it, each on its own
// pipe) from its ready SIMD groups, oldest first; a SIMD group
// waits for the registers it reads (latency per unit, unit_costs.def) and for
// its unit's pipe (throughput). Loads go through the core's L1, a shared
// L2 and SLC, to DRAM at the chip's bandwidth, in 128-byte lines; stores
// go through L2 to DRAM, and the kernel completes when they have reached
// the SLC (what it cannot hold must reach DRAM first);
// threadgroup memory costs its bank conflicts; barriers wait for every SIMD
// group of the threadgroup.
//
// Cores run in parallel on TBB in epochs of a fixed number of cycles. During
// an epoch a core sees the shared caches and the DRAM queue as they were at
// its start; at its end the cores' accesses are applied in core order (a
// line two cores fetch in one epoch crosses from DRAM once, and the later
// core gets back the port time it charged for it). The cores with work
// in an epoch share the chip's DRAM bandwidth evenly. So the result depends
// only on the kernel, its inputs and the chip, never on the number of host
// threads.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "emu/chips/chip_timing.h"
#include "emu/dispatch/dispatch.h"
#include "isa/module.h"
#include "traces/timeline.h"
#include "traces/timing_report.h"

namespace mtlemu::emu {

struct TimingOptions {
  bool simd_detail = false;  // a trace slice per SIMD group, not only per TG
  // For the cores' epochs that Finish runs (0: all); those run as the
  // dispatch consumes share the dispatch's host threads.
  int host_threads = 0;
};

class TimingModel : public TraceSink {
 public:
  // `grid` as dispatched; `threadgroup_memory` per threadgroup (static
  // plus arguments).
  TimingModel(const ChipTiming& chip, const isa::Kernel& kernel,
              const DispatchGrid& grid, uint32_t threadgroup_memory,
              TimingOptions options = {});
  ~TimingModel() override;

  TraceGeometry geometry() const override;
  void Consume(std::vector<ThreadgroupTrace>& batch) override;

  // Runs what is left and sums it up. `timeline` may be null.
  TimingReport Finish(traces::Timeline* timeline);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace mtlemu::emu
