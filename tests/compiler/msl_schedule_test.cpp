// The order of a threadgroup's SIMD groups (emu/dispatch/schedule.h) on a
// kernel with mlx-lm's kl_forward race: each SIMD group's maximum and then
// its sum go through the same slots of threadgroup memory, with no barrier
// between reading the maxima and writing the sums. The default
// (interleaved) order gives the race-free answer, checked against float64;
// the sequential order does not; the race check and the order check (two
// orders) both name the lines.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "compiler/msl_compiler.h"
#include "tests/support/kernel_harness.h"

namespace mtlemu {
namespace {

using testing::KernelHarness;
using testing::Runs;

constexpr char kLogSumExp[] = R"(#include <metal_stdlib>
using namespace metal;
kernel void logsumexp(device const float* x [[buffer(0)]],
                      device float* out [[buffer(1)]],
                      uint tid [[thread_index_in_threadgroup]],
                      uint group [[threadgroup_position_in_grid]],
                      uint lane [[thread_index_in_simdgroup]],
                      uint sg [[simdgroup_index_in_threadgroup]],
                      uint n [[simdgroups_per_threadgroup]]) {
  threadgroup float shared[32];
  const float v = x[group * 256 + tid];
  float m = simd_max(v);
  if (lane == 0) shared[sg] = m;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  m = simd_max(lane < n ? shared[lane] : -INFINITY);
  float s = simd_sum(exp(v - m));
  if (lane == 0) shared[sg] = s;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  s = simd_sum(lane < n ? shared[lane] : 0.0f);
  if (tid == 0) out[group] = m + log(s);
})";
constexpr uint32_t kGroups = 4;

std::vector<float> Inputs() {
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> x(256 * kGroups);
  for (float& v : x) v = dist(gen);
  return x;
}

// float64 log(sum(exp(x))) of each row of 256.
std::vector<double> Reference(const std::vector<float>& x) {
  std::vector<double> out(kGroups);
  for (uint32_t g = 0; g < kGroups; ++g) {
    double m = -INFINITY, s = 0;
    for (int i = 0; i < 256; ++i) m = std::max(m, double{x[g * 256 + i]});
    for (int i = 0; i < 256; ++i) s += std::exp(x[g * 256 + i] - m);
    out[g] = m + std::log(s);
  }
  return out;
}

struct Outcome {
  std::vector<float> out;
  std::shared_ptr<const emu::CheckReport> check;
};

Outcome RunWith(const emu::Schedule& schedule, const char* checks = "",
                int host_threads = 0) {
  KernelHarness h(compiler::CompileMsl(kLogSumExp, "test.metal", {}, {}),
                  "logsumexp", "m1", host_threads);
  EXPECT_TRUE(h.status().ok()) << h.status().error().message;
  if (!h.status().ok()) return {};
  h.device().options().schedule = schedule;
  if (*checks)
    h.device().options().checks = emu::ParseCheckList(checks).value();
  h.SetBuffer(0, Inputs());
  h.SetBuffer(1, std::vector<float>(kGroups, -1.0f));
  EXPECT_TRUE(Runs(h, {256 * kGroups}, {256}));
  return {h.Read<float>(1), h.report() ? h.report()->check : nullptr};
}

double WorstRelativeError(const std::vector<float>& out) {
  const std::vector<double> want = Reference(Inputs());
  double worst = 0;
  for (uint32_t g = 0; g < kGroups; ++g) {
    worst = std::max(worst, std::abs(out[g] - want[g]) / std::abs(want[g]));
  }
  return worst;
}

TEST(MslSchedule, DefaultOrderGivesTheRaceFreeAnswer) {
  for (int host_threads : {1, 3}) {
    const Outcome r = RunWith({}, "", host_threads);
    ASSERT_EQ(r.out.size(), kGroups);
    EXPECT_LT(WorstRelativeError(r.out), 1e-5);
  }
}

TEST(MslSchedule, SequentialOrderShowsTheRace) {
  const Outcome r = RunWith({emu::SimdgroupOrder::kSequential});
  ASSERT_EQ(r.out.size(), kGroups);
  EXPECT_GT(WorstRelativeError(r.out), 1e-2);
}

TEST(MslSchedule, RandomOrdersRepeatOnAnyThreadCount) {
  emu::Schedule random{emu::SimdgroupOrder::kRandom, 12345};
  const Outcome a = RunWith(random, "", 1);
  const Outcome b = RunWith(random, "", 4);
  EXPECT_EQ(a.out, b.out);
  random.seed = 99;
  EXPECT_EQ(RunWith(random, "", 1).out, RunWith(random, "", 2).out);
}

TEST(MslSchedule, RaceCheckNamesTheReadAndTheWrite) {
  const Outcome r = RunWith({}, "race");
  ASSERT_NE(r.check, nullptr);
  bool named = false;
  for (const emu::Finding& f : r.check->findings) {
    if (f.kind != emu::FindingKind::kThreadgroupRace || !f.second) continue;
    const uint32_t a = f.first.location.line, b = f.second->location.line;
    named |= std::min(a, b) == 15 && std::max(a, b) == 17;
  }
  EXPECT_TRUE(named) << r.check->findings.size() << " findings";
}

TEST(MslSchedule, OrderCheckNamesTheOutputsAndTheLines) {
  const Outcome r = RunWith({}, "order");
  ASSERT_NE(r.check, nullptr);
  EXPECT_EQ(r.check->checks, "order");
  ASSERT_EQ(r.check->findings.size(), 1u);
  const emu::Finding& f = r.check->findings[0];
  EXPECT_EQ(f.kind, emu::FindingKind::kOrderDependentResult);
  EXPECT_NE(f.region.find("buffer(1)"), std::string::npos) << f.region;
  EXPECT_EQ(f.first.location.line, 15u);
  ASSERT_TRUE(f.second.has_value());
  EXPECT_EQ(f.second->location.line, 17u);
  const std::string text = f.Describe(r.check->kernel);
  EXPECT_NE(text.find("test.metal:15 (read) and test.metal:17 (write)"),
            std::string::npos)
      << text;
  // The buffers keep the interleaved (default) order's numbers.
  EXPECT_LT(WorstRelativeError(r.out), 1e-5);
}

// A race-free kernel (a barrier between the read and the write): the same
// bits in every order, and the order check finds nothing.
TEST(MslSchedule, RaceFreeKernelIsTheSameInEveryOrder) {
  std::string fixed = kLogSumExp;
  const std::string write = "  if (lane == 0) shared[sg] = s;\n";
  fixed.replace(fixed.find(write), write.size(),
                "  threadgroup_barrier(mem_flags::mem_threadgroup);\n" + write);
  const auto run = [&](const emu::Schedule& schedule, const char* checks) {
    KernelHarness h(compiler::CompileMsl(fixed, "test.metal", {}, {}),
                    "logsumexp");
    EXPECT_TRUE(h.status().ok());
    h.device().options().schedule = schedule;
    if (*checks) {
      h.device().options().checks = emu::ParseCheckList(checks).value();
    }
    h.SetBuffer(0, Inputs());
    h.SetBuffer(1, std::vector<float>(kGroups));
    EXPECT_TRUE(Runs(h, {256 * kGroups}, {256}));
    if (*checks) {
      EXPECT_NE(h.report()->check, nullptr);
      if (h.report()->check) {
        EXPECT_TRUE(h.report()->check->findings.empty());
      }
    }
    return h.Read<float>(1);
  };
  const std::vector<float> sequential =
      run({emu::SimdgroupOrder::kSequential}, "");
  EXPECT_LT(WorstRelativeError(sequential), 1e-5);
  EXPECT_EQ(run({}, ""), sequential);
  EXPECT_EQ(run({emu::SimdgroupOrder::kRandom, 5}, ""), sequential);
  run({}, "order");
}

TEST(MslSchedule, ScheduleNames) {
  EXPECT_EQ(emu::ParseSchedule("random:42").value().seed, 42u);
  EXPECT_EQ(emu::ScheduleText(emu::ParseSchedule("sequential").value()),
            "sequential");
  EXPECT_FALSE(emu::ParseSchedule("random:x").ok());
  EXPECT_FALSE(emu::ParseSchedule("lockstep").ok());
}

}  // namespace
}  // namespace mtlemu
