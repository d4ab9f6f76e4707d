// Xcode's GPU counters for a dispatch, from what the timing model summed:
// utilizations and limiters in percent of their path's peak over the
// dispatch (without the stalls Xcode's limiters would add), bandwidths in
// GB/s. The limiter (limiter.h) reads the same values, so the verdict and
// the counters agree.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "emu/chips/chip_timing.h"
#include "emu/timing/core_stats.h"
#include "traces/timing_report.h"

namespace mtlemu::emu {

struct XcodeCounters {
  double alu_utilization = 0;
  double f32_utilization = 0;
  double kernel_occupancy = 0;
  double buffer_read_limiter = 0;       // L1: bytes loaded
  double buffer_write_limiter = 0;      // lines stored, at L2's rate
  double threadgroup_load_limiter = 0;  // threadgroup memory port busy
  double last_level_cache_limiter = 0;  // requests to L2
  double gpu_memory_read_limiter = 0;   // DRAM reads, of the chip's peak
  double gpu_memory_write_limiter = 0;
  double gpu_read_bandwidth = 0;  // GB/s
  double gpu_write_bandwidth = 0;

  // Xcode's names and order, as the report lists them.
  std::vector<std::pair<std::string, double>> Named() const;
};

// From the cores' sums and the report's figures so far (bytes, ALU
// utilization, FLOP rates, occupancy, DRAM reads and writes), over a
// dispatch of `cycles` (at least 1) that took `seconds`.
XcodeCounters ComputeXcodeCounters(const ChipTiming& chip, const CoreStats& sum,
                                   const TimingReport& r, double cycles,
                                   double seconds);

}  // namespace mtlemu::emu
