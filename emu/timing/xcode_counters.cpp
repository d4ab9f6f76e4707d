#include "emu/timing/xcode_counters.h"

namespace mtlemu::emu {

std::vector<std::pair<std::string, double>> XcodeCounters::Named() const {
  return {{"ALU Utilization", alu_utilization},
          {"F32 Utilization", f32_utilization},
          {"Kernel Occupancy", kernel_occupancy},
          {"Buffer Read Limiter", buffer_read_limiter},
          {"Buffer Write Limiter", buffer_write_limiter},
          {"Threadgroup/Imageblock Load Limiter", threadgroup_load_limiter},
          {"Last Level Cache Limiter", last_level_cache_limiter},
          {"GPU Memory Read Limiter", gpu_memory_read_limiter},
          {"GPU Memory Write Limiter", gpu_memory_write_limiter},
          {"GPU Read Bandwidth", gpu_read_bandwidth},
          {"GPU Write Bandwidth", gpu_write_bandwidth}};
}

XcodeCounters ComputeXcodeCounters(const ChipTiming& chip, const CoreStats& sum,
                                   const TimingReport& r, double cycles,
                                   double seconds) {
  const double core_cycles = cycles * chip.spec.gpu_cores;
  XcodeCounters c;
  c.alu_utilization = 100 * r.alu_utilization;
  c.f32_utilization =
      r.peak_tflops > 0 ? 100 * r.achieved_tflops / r.peak_tflops : 0;
  c.kernel_occupancy = 100 * r.occupancy;
  c.buffer_read_limiter =
      100.0 * r.l1_bytes / (core_cycles * chip.l1_bytes_per_clock);
  c.buffer_write_limiter = 100.0 * sum.store_lines * chip.line_bytes /
                           (core_cycles * chip.l2_bytes_per_clock);
  c.threadgroup_load_limiter = 100.0 * sum.threadgroup_cycles / core_cycles;
  // Requests to the highest GPU cache, L2 (loads that missed L1, stores).
  c.last_level_cache_limiter =
      100.0 * r.l2_bytes / (core_cycles * chip.l2_bytes_per_clock);
  c.gpu_read_bandwidth = r.dram_read_bytes / seconds / 1e9;
  c.gpu_write_bandwidth = r.dram_write_bytes / seconds / 1e9;
  // Percent of the chip's peak memory bandwidth, as Xcode defines them.
  c.gpu_memory_read_limiter = 100 * c.gpu_read_bandwidth / chip.dram_gbps;
  c.gpu_memory_write_limiter = 100 * c.gpu_write_bandwidth / chip.dram_gbps;
  return c;
}

}  // namespace mtlemu::emu
