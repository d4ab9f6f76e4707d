#include "emu/timing/limiter.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string_view>

namespace mtlemu::emu {
namespace {

std::string Percent(double v) {
  return std::to_string(static_cast<int>(std::lround(100 * v))) + "%";
}

struct Path {
  std::string_view name;
  double use;                 // fraction of its peak
  std::string_view sentence;  // {} is the use in percent
};

}  // namespace

Limiter FindLimiter(const LimiterInputs& in) {
  const XcodeCounters& c = in.counters;
  const double alu = c.alu_utilization / 100;
  const double f32 = c.f32_utilization / 100;
  const double occupancy = c.kernel_occupancy / 100;
  const double dram =
      (c.gpu_memory_read_limiter + c.gpu_memory_write_limiter) / 100;
  // In order of preference on a tie.
  const Path paths[] = {
      {"memory bandwidth", dram,
       "DRAM bandwidth: {} of the chip's peak is in use"},
      {"threadgroup memory", c.threadgroup_load_limiter / 100,
       "the threadgroup memory port is busy on {} of core cycles, Xcode's "
       "Threadgroup/Imageblock Load Limiter"},
      {"cache bandwidth", c.last_level_cache_limiter / 100,
       "requests to L2 use {} of its bandwidth, Xcode's Last Level Cache "
       "Limiter"},
      {"cache bandwidth", c.buffer_read_limiter / 100,
       "loads use {} of L1's bandwidth, Xcode's Buffer Read Limiter"},
      {"cache bandwidth", c.buffer_write_limiter / 100,
       "stores use {} of the write path to L2, Xcode's Buffer Write "
       "Limiter"},
  };
  const Path* busiest = &paths[0];
  for (const Path& p : paths) {
    if (p.use > busiest->use) busiest = &p;
  }
  if (busiest->use >= kNearPeak && busiest->use >= std::max(in.issue, f32)) {
    return {
        std::string(busiest->name),
        fmt::format(fmt::runtime(busiest->sentence), Percent(busiest->use))};
  }
  if (in.issue >= kNearPeak || alu >= kNearPeak) {
    return {"ALU", "instruction issue: the schedulers issue on " +
                       Percent(in.issue) + " of cycles"};
  }
  if (f32 >= kF32Busy || in.pipe_stalls >= kPipeBusy) {
    return {"ALU", "execution units' throughput: FP32 at " + Percent(f32) +
                       " of peak, a busy pipe holds " +
                       Percent(in.pipe_stalls) + " of scheduler cycles"};
  }
  const uint64_t threadgroup_slots =
      uint64_t{in.threadgroups_per_core} * in.cores;
  if (occupancy < kLowOccupancy &&
      in.simd_groups_per_core <
          kLowOccupancy * in.hardware_simd_groups_per_core) {
    return {"occupancy",
            "too few SIMD groups per core to hide latency (limited by " +
                in.occupancy_limiter + ")"};
  }
  if (occupancy < kLowOccupancy && in.threadgroups < threadgroup_slots) {
    return {"occupancy",
            fmt::format("too few SIMD groups to hide latency: the dispatch's "
                        "{} threadgroups fill {} of the chip's {} threadgroup "
                        "slots ({} cores x {})",
                        in.threadgroups,
                        Percent(static_cast<double>(in.threadgroups) /
                                threadgroup_slots),
                        threadgroup_slots, in.cores, in.threadgroups_per_core)};
  }
  return {"latency", in.memory_waits_dominate
                         ? "waiting for memory with bandwidth to spare"
                         : "waiting for dependent results"};
}

}  // namespace mtlemu::emu
