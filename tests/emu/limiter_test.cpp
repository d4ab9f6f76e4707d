// FindLimiter (emu/timing/limiter.h) on figures written by hand: the
// busiest memory path near its peak names the limiter and says its Xcode
// counter; below the paths come the execution units, occupancy and
// latency, in that order.
#include "emu/timing/limiter.h"

#include <gtest/gtest.h>

namespace mtlemu::emu {
namespace {

// A dispatch that uses nothing much: 96 of 96 SIMD groups resident.
LimiterInputs Quiet() {
  LimiterInputs in;
  in.counters.kernel_occupancy = 90;
  in.simd_groups_per_core = 96;
  in.hardware_simd_groups_per_core = 96;
  in.occupancy_limiter = "threads";
  in.threadgroups = 1000;
  in.threadgroups_per_core = 12;
  in.cores = 8;
  return in;
}

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(Limiter, ThreadgroupMemoryPortAgreesWithItsCounter) {
  // The tiled matmul of the issue: the port busy on 96.4% of core cycles,
  // half the issue slots used, DRAM at 9%.
  LimiterInputs in = Quiet();
  in.counters.threadgroup_load_limiter = 96.4;
  in.counters.last_level_cache_limiter = 46.7;
  in.counters.gpu_memory_read_limiter = 9;
  in.issue = 0.5;
  in.memory_waits_dominate = true;
  const Limiter l = FindLimiter(in);
  EXPECT_EQ(l.name, "threadgroup memory");
  EXPECT_TRUE(Contains(l.verdict, "96%")) << l.verdict;
  EXPECT_TRUE(Contains(l.verdict, "Threadgroup/Imageblock Load Limiter"))
      << l.verdict;
}

TEST(Limiter, BusiestPathWins) {
  LimiterInputs in = Quiet();
  in.counters.gpu_memory_read_limiter = 50;
  in.counters.gpu_memory_write_limiter = 20;
  in.counters.last_level_cache_limiter = 80;
  Limiter l = FindLimiter(in);
  EXPECT_EQ(l.name, "cache bandwidth");
  EXPECT_TRUE(Contains(l.verdict, "Last Level Cache Limiter")) << l.verdict;
  in.counters.last_level_cache_limiter = 50;
  l = FindLimiter(in);
  EXPECT_EQ(l.name, "memory bandwidth");
  EXPECT_TRUE(Contains(l.verdict, "70%")) << l.verdict;
  in.counters.buffer_read_limiter = 75;
  EXPECT_TRUE(Contains(FindLimiter(in).verdict, "Buffer Read Limiter"));
  in.counters.buffer_write_limiter = 90;
  EXPECT_TRUE(Contains(FindLimiter(in).verdict, "Buffer Write Limiter"));
}

TEST(Limiter, PathsBelowTheirPeakOrBelowIssueLeaveItToTheAlu) {
  LimiterInputs in = Quiet();
  in.counters.gpu_memory_read_limiter = 100 * kNearPeak - 1;
  in.issue = 0.3;
  EXPECT_EQ(FindLimiter(in).name, "latency");
  // A path at its threshold but issue busier: the ALU.
  in.counters.gpu_memory_read_limiter = 100 * kNearPeak;
  in.issue = 0.9;
  EXPECT_EQ(FindLimiter(in).name, "ALU");
  in.issue = 0.59;
  EXPECT_EQ(FindLimiter(in).name, "memory bandwidth");
}

TEST(Limiter, ExecutionUnitsThenOccupancyThenLatency) {
  LimiterInputs in = Quiet();
  in.counters.alu_utilization = 100 * kNearPeak;
  EXPECT_TRUE(Contains(FindLimiter(in).verdict, "instruction issue"));
  in = Quiet();
  in.pipe_stalls = kPipeBusy;
  EXPECT_TRUE(Contains(FindLimiter(in).verdict, "throughput"));
  in = Quiet();
  in.counters.f32_utilization = 100 * kF32Busy;
  EXPECT_EQ(FindLimiter(in).name, "ALU");
  // Few SIMD groups by the limit: 16 of 96.
  in = Quiet();
  in.counters.kernel_occupancy = 10;
  in.simd_groups_per_core = 16;
  in.occupancy_limiter = "registers";
  Limiter l = FindLimiter(in);
  EXPECT_EQ(l.name, "occupancy");
  EXPECT_TRUE(Contains(l.verdict, "registers")) << l.verdict;
  // A small dispatch: 24 threadgroups for 96 slots.
  in = Quiet();
  in.counters.kernel_occupancy = 10;
  in.threadgroups = 24;
  l = FindLimiter(in);
  EXPECT_EQ(l.name, "occupancy");
  EXPECT_TRUE(Contains(l.verdict, "24 threadgroups fill 25% of the chip's 96"))
      << l.verdict;
  in = Quiet();
  in.memory_waits_dominate = true;
  EXPECT_EQ(FindLimiter(in).verdict,
            "waiting for memory with bandwidth to spare");
  in.memory_waits_dominate = false;
  EXPECT_EQ(FindLimiter(in).verdict, "waiting for dependent results");
}

}  // namespace
}  // namespace mtlemu::emu
