// The timing model (emu/timing/) through the public host API: the same
// report on any number of host threads, results untouched by timing, the
// verdicts of a bandwidth-bound and an ALU-bound kernel, limits every
// report keeps, occupancy by the chip's rule, the timeline of a trace, and
// chips that differ as their numbers say. Expected values are worked out by
// hand from the rules in the headers (occupancy.h, chip_timing.h) or by
// comparing runs, never copied from a run.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "emu/chips/chip_timing.h"
#include "emu/timing/occupancy.h"
#include "traces/timing_report.h"
#include "tests/support/kernel_harness.h"
#include "tests/support/test_kernels.h"
#include "tests/traces/strict_json.h"
#include "traces/chrome_trace.h"
#include "traces/timeline.h"
#include "traces/timing_report_format.h"

namespace mtlemu {
namespace {

using testing::KernelHarness;
using testing::Runs;
using traces::testing::Json;
using traces::testing::ParseStrictJson;

// The member `key` of `object`, or nullptr.
const Json* Find(const Json& object, const std::string& key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  return it != object.end() ? &*it : nullptr;
}

// `report` as JSON, read back (a failure if it is not JSON).
std::optional<Json> ParseReport(const emu::TimingReport& report) {
  const std::string text = traces::FormatReportJson(report);
  std::string error;
  std::optional<Json> json = ParseStrictJson(text, &error);
  EXPECT_TRUE(json.has_value()) << error << "\n" << text;
  return json;
}

// --- kernels -----------------------------------------------------------------

// Everything the model has a rule for: device loads (a coalesced one and a
// scattered gather), divergent trip counts, an if/else, threadgroup memory
// and a barrier. out[i] = (reversed neighbour after i % 7 fma steps) +
// in[(i * 97) % n].
constexpr char kMixed[] = R"(
.kernel mixed
.buffer 0 u0 device float in
.buffer 1 u2 device float out
.buffer 2 u4 constant uint n
.threadgroup_memory 1024
    mov.u32 r0, %thread_position_in_grid.x
    mov.u32 r1, %thread_index_in_threadgroup
    ld.device.f32 r2, [u0 + r0*4]
    rem.u32 r4, r0, 7
    bz r4, looped, looped
loop:
    fma.f32 r2, r2, 0.5, 1.0
    sub.u32 r4, r4, 1
    bnz r4, loop, looped
looped:
    and.u32 r3, r0, 1
    bnz r3, odd, join
    mul.f32 r2, r2, 3.0
    br join
odd:
    add.f32 r2, r2, -2.0
join:
    st.threadgroup.f32 [r1*4], r2
    threadgroup_barrier.mem_threadgroup
    mov.u32 r5, %threads_per_threadgroup.x
    sub.u32 r5, r5, r1
    sub.u32 r5, r5, 1
    ld.threadgroup.f32 r6, [r5*4]
    ld.constant.u32 r9, [u4]
    mul.u32 r7, r0, 97
    rem.u32 r7, r7, r9
    ld.device.f32 r8, [u0 + r7*4]
    add.f32 r6, r6, r8
    st.device.f32 [u2 + r0*4], r6
    exit
.end
)";

// Eight independent fma chains per thread, kFmaIterations times, then the
// chains summed (7 adds) and one store: nearly all ALU, one 4-byte store per
// thread.
constexpr uint32_t kFmaIterations = 16;
constexpr uint32_t kFmaChains = 8;
std::string FmaChainsIsa() {
  return R"(
.kernel fma_chains
.buffer 0 u0 device float out
    mov.u32 r0, %thread_position_in_grid.x
    cvt.f32.u32 r2, r0
    mov.u32 r3, r2
    mov.u32 r4, r2
    mov.u32 r5, r2
    mov.u32 r6, r2
    mov.u32 r7, r2
    mov.u32 r8, r2
    mov.u32 r9, r2
    mov.u32 r10, )" +
         std::to_string(kFmaIterations) + R"(
loop:
    fma.f32 r2, r2, 0.999, 0.5
    fma.f32 r3, r3, 0.999, 0.5
    fma.f32 r4, r4, 0.999, 0.5
    fma.f32 r5, r5, 0.999, 0.5
    fma.f32 r6, r6, 0.999, 0.5
    fma.f32 r7, r7, 0.999, 0.5
    fma.f32 r8, r8, 0.999, 0.5
    fma.f32 r9, r9, 0.999, 0.5
    sub.u32 r10, r10, 1
    bnz r10, loop, done
done:
    add.f32 r2, r2, r3
    add.f32 r4, r4, r5
    add.f32 r6, r6, r7
    add.f32 r8, r8, r9
    add.f32 r2, r2, r4
    add.f32 r6, r6, r8
    add.f32 r2, r2, r6
    st.device.f32 [u0 + r0*4], r2
    exit
.end
)";
}
// FLOPs per thread of FmaChainsIsa(): 2 per fma lane, 1 per add lane.
constexpr double kFmaChainsFlopsPerThread =
    kFmaIterations * kFmaChains * 2.0 + 7.0;

// 480 threadgroups of 256 threads: whole waves on M1 (8 cores x 12 = 96
// threadgroups at once, 5 waves) and on M2 (10 x 12 = 120, 4 waves).
constexpr uint32_t kFmaThreadgroups = 480;
constexpr uint32_t kFmaThreads = kFmaThreadgroups * 256;

// Threadgroup memory of `bytes` (static), a few registers.
std::string ThreadgroupMemoryKernel(uint32_t bytes) {
  return R"(
.kernel tg_memory
.buffer 0 u0 device float out
.threadgroup_memory )" +
         std::to_string(bytes) + R"(
    mov.u32 r0, %thread_position_in_grid.x
    mov.u32 r1, %thread_index_in_threadgroup
    cvt.f32.u32 r2, r0
    st.threadgroup.f32 [r1*4], r2
    threadgroup_barrier.mem_threadgroup
    ld.threadgroup.f32 r3, [r1*4]
    st.device.f32 [u0 + r0*4], r3
    exit
.end
)";
}

// Threadgroup memory set with setThreadgroupMemoryLength (no static memory).
constexpr char kThreadgroupArgument[] = R"(
.kernel tg_argument
.buffer 0 u0 device float out
.threadgroup 0 u2 scratch
    mov.u32 r0, %thread_position_in_grid.x
    mov.u32 r1, %thread_index_in_threadgroup
    cvt.f32.u32 r2, r0
    st.threadgroup.f32 [u2 + r1*4], r2
    threadgroup_barrier.mem_threadgroup
    ld.threadgroup.f32 r3, [u2 + r1*4]
    st.device.f32 [u0 + r0*4], r3
    exit
.end
)";

// Writes r99: 100 registers per thread (the count is the highest used + 1).
constexpr char kRegisterHeavy[] = R"(
.kernel register_heavy
.buffer 0 u0 device uint out
    mov.u32 r0, %thread_position_in_grid.x
    add.u32 r99, r0, 7
    st.device.u32 [u0 + r0*4], r99
    exit
.end
)";

// --- helpers -----------------------------------------------------------------

void EnableTiming(KernelHarness& h, bool timeline = false,
                  bool simd_detail = false) {
  h.device().options().timing = true;
  h.device().options().timeline = timeline;
  h.device().options().simd_detail = simd_detail;
}

std::vector<float> Ramp(uint32_t n, float scale) {
  std::vector<float> v(n);
  for (uint32_t i = 0; i < n; ++i) {
    v[i] = static_cast<float>((i * 2654435761u) % 1000) * scale;
  }
  return v;
}

// The timing report of the last dispatch, or a failure.
const emu::TimingReport* TimingOf(const KernelHarness& h) {
  const DispatchReport* r = h.report();
  EXPECT_NE(r, nullptr) << "no dispatch report";
  if (r == nullptr) return nullptr;
  EXPECT_NE(r->timing, nullptr) << "timed dispatch without a timing report";
  return r->timing.get();
}

constexpr uint32_t kMixedThreads = 256 * 300 - 100;  // a cut last threadgroup

struct MixedRun {
  std::string json;
  emu::TimingReport report;
  std::string trace;
  std::vector<float> out;
};

// kMixed on `chip`, timed with its timeline (the trace's JSON in `trace`)
// unless `timed` is false.
MixedRun RunMixed(int host_threads, bool timed = true,
                  std::string_view chip = "m1") {
  MixedRun run;
  KernelHarness h(kMixed, "", chip, host_threads);
  EXPECT_TRUE(h.status().ok()) << h.status().error().message;
  if (timed) EnableTiming(h, /*timeline=*/true);
  h.SetBuffer(0, Ramp(kMixedThreads, 0.25f));
  h.SetBuffer(1, std::vector<float>(kMixedThreads));
  h.SetBytes(2, kMixedThreads);
  EXPECT_TRUE(Runs(h, {kMixedThreads, 1, 1}, {256, 1, 1}));
  run.out = h.Read<float>(1);
  if (!timed) return run;
  const emu::TimingReport* r = TimingOf(h);
  if (r == nullptr) return run;
  run.report = *r;
  run.json = traces::FormatReportJson(*r);
  EXPECT_NE(h.report()->timeline, nullptr);
  if (h.report()->timeline != nullptr) {
    std::ostringstream trace;
    traces::WriteChromeTrace(*h.report()->timeline, trace);
    run.trace = trace.str();
  }
  return run;
}

bool BitIdentical(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// A timed vector add of `n` floats on `chip`.
emu::TimingReport TimedVectorAdd(uint32_t n, std::string_view chip) {
  KernelHarness h(testing::kVectorAddIsa, "", chip);
  EXPECT_TRUE(h.status().ok()) << h.status().error().message;
  EnableTiming(h);
  h.SetBuffer(0, Ramp(n, 1.0f));
  h.SetBuffer(1, Ramp(n, 0.5f));
  h.SetBuffer(2, std::vector<float>(n));
  EXPECT_TRUE(Runs(h, {n, 1, 1}, {256, 1, 1}));
  const emu::TimingReport* r = TimingOf(h);
  return r ? *r : emu::TimingReport{};
}

// A timed FmaChainsIsa() on `chip`; `functional` gets the executor's own
// instruction counts.
emu::TimingReport TimedFmaChains(std::string_view chip,
                                 DispatchReport* functional = nullptr) {
  KernelHarness h(FmaChainsIsa(), "", chip);
  EXPECT_TRUE(h.status().ok()) << h.status().error().message;
  EnableTiming(h);
  h.SetBuffer(0, std::vector<float>(kFmaThreads));
  EXPECT_TRUE(Runs(h, {kFmaThreads, 1, 1}, {256, 1, 1}));
  if (functional != nullptr && h.report() != nullptr) *functional = *h.report();
  const emu::TimingReport* r = TimingOf(h);
  return r ? *r : emu::TimingReport{};
}

emu::TimingReport TimedKernel(const std::string& isa, std::string_view chip,
                              uint32_t threads, uint32_t group,
                              uint64_t threadgroup_argument = 0) {
  KernelHarness h(isa, "", chip);
  EXPECT_TRUE(h.status().ok()) << h.status().error().message;
  EnableTiming(h);
  h.SetBuffer(0, std::vector<float>(threads));
  if (threadgroup_argument > 0) {
    EXPECT_TRUE(h.SetThreadgroupMemoryLength(threadgroup_argument, 0).ok());
  }
  EXPECT_TRUE(Runs(h, {threads, 1, 1}, {group, 1, 1}));
  const emu::TimingReport* r = TimingOf(h);
  return r ? *r : emu::TimingReport{};
}

ChipTiming Chip(std::string_view name) {
  std::optional<ChipTiming> chip = FindChipTiming(name);
  EXPECT_TRUE(chip.has_value()) << name;
  return chip.value_or(ChipTiming{});
}

// --- 1. determinism ----------------------------------------------------------

TEST(Timing, SameReportOnAnyNumberOfHostThreads) {
  const MixedRun one = RunMixed(1);
  ASSERT_FALSE(one.json.empty());
  // The kernel exercises what it is meant to: divergence, a barrier,
  // threadgroup memory and device loads all show up in the report.
  EXPECT_GT(one.report.cycles, 0u);
  EXPECT_LT(one.report.simd_efficiency, 1.0);
  EXPECT_GT(one.report.l1_bytes, 0u);
  EXPECT_EQ(one.report.threadgroups, 300u);
  std::map<std::string, uint64_t> units(one.report.instructions_by_unit.begin(),
                                        one.report.instructions_by_unit.end());
  EXPECT_GT(units["barrier"], 0u);
  EXPECT_GT(units["load"], 0u);
  EXPECT_GT(units["branch"], 0u);

  for (int threads : {2, 5, 1}) {
    const MixedRun other = RunMixed(threads);
    EXPECT_EQ(other.report.cycles, one.report.cycles)
        << threads << " host threads";
    EXPECT_EQ(other.json, one.json) << threads << " host threads";
    EXPECT_TRUE(other.trace == one.trace)
        << "the trace differs on " << threads << " host threads";
    EXPECT_TRUE(BitIdentical(other.out, one.out)) << threads << " host threads";
  }
  // M3 too: its FP32 pipe pairs with another SIMD group's instruction, and
  // its occupancy comes from the first batch of threadgroups.
  const MixedRun m3 = RunMixed(1, true, "m3");
  ASSERT_FALSE(m3.json.empty());
  EXPECT_TRUE(m3.report.dynamic_caching);
  for (int threads : {2, 5}) {
    const MixedRun other = RunMixed(threads, true, "m3");
    EXPECT_EQ(other.json, m3.json) << threads << " host threads on m3";
    EXPECT_TRUE(other.trace == m3.trace)
        << "the m3 trace differs on " << threads << " host threads";
  }
}

// --- 2. timing never changes a result ----------------------------------------

TEST(Timing, TimingOffGivesTheSameBuffers) {
  const MixedRun timed = RunMixed(0, true);
  const MixedRun untimed = RunMixed(0, false);
  EXPECT_TRUE(BitIdentical(timed.out, untimed.out));
  // And the values are the ones the kernel computes (so that the comparison
  // is not of two empty or zeroed buffers).
  const std::vector<float> in = Ramp(kMixedThreads, 0.25f);
  ASSERT_EQ(untimed.out.size(), kMixedThreads);
  auto stage1 = [&](uint32_t i) {
    float x = in[i];
    for (uint32_t k = 0; k < i % 7; ++k) x = std::fma(x, 0.5f, 1.0f);
    return (i & 1) ? x + -2.0f : x * 3.0f;
  };
  for (uint32_t i = 0; i < kMixedThreads; i += 37) {
    const uint32_t group = i / 256, t = i % 256;
    const uint32_t size = std::min(256u, kMixedThreads - group * 256);
    const uint32_t mirror = group * 256 + (size - 1 - t);
    const float expected =
        stage1(mirror) +
        in[static_cast<uint32_t>((uint64_t{i} * 97) % kMixedThreads)];
    EXPECT_EQ(untimed.out[i], expected) << "thread " << i;
  }
}

TEST(Timing, TimingOffGivesTheSameBuffersWithAtomics) {
  // examples/histogram.s: atomics in threadgroup memory and device memory.
  std::ifstream file(std::string(MTLEMU_SOURCE_DIR) + "/examples/histogram.s");
  const std::string isa((std::istreambuf_iterator<char>(file)), {});
  ASSERT_FALSE(isa.empty());
  const uint32_t n = 100000;
  std::vector<uint8_t> data(n);
  for (uint32_t i = 0; i < n; ++i) data[i] = (i * 2654435761u) >> 24;
  std::vector<uint32_t> expected(256);
  for (uint8_t b : data) ++expected[b];
  std::vector<std::vector<uint32_t>> results;
  for (bool timed : {false, true}) {
    KernelHarness h(isa, "histogram", "m1");
    ASSERT_TRUE(h.status().ok()) << h.status().error().message;
    if (timed) EnableTiming(h, true, true);
    h.SetBuffer(0, data);
    h.SetBuffer(1, std::vector<uint32_t>(256));
    h.SetBytes(2, n);
    ASSERT_TRUE(h.DispatchThreadgroups({16, 1, 1}, {256, 1, 1}).ok());
    ASSERT_EQ(h.error(), nullptr) << h.error()->message;
    EXPECT_EQ(h.report()->timing != nullptr, timed);
    results.push_back(h.Read<uint32_t>(1));
  }
  EXPECT_EQ(results[0], expected);
  EXPECT_EQ(results[1], results[0]);
}

// --- 3. verdicts -------------------------------------------------------------

TEST(Timing, LargeVectorAddIsBandwidthBound) {
  const uint32_t n = 4u << 20;  // 4M floats: 48 MiB moved, 6x the M1's SLC
  const emu::TimingReport r = TimedVectorAdd(n, "m1");
  const ChipTiming m1 = Chip("m1");
  EXPECT_EQ(r.limiter, "memory bandwidth") << r.verdict;
  EXPECT_EQ(r.peak_dram_gbps, m1.dram_gbps);
  EXPECT_GE(r.achieved_dram_gbps, 0.6 * m1.dram_gbps);
  EXPECT_LE(r.achieved_dram_gbps, 1.1 * m1.dram_gbps);
  // Each 128-byte line of a, b and out crosses DRAM once: two loads and a
  // store of 4 bytes per thread, the lines of one SIMD group its own. The
  // last stores may still be in the SLC when the kernel completes (at most
  // its size), and cross after it.
  EXPECT_EQ(r.dram_bytes + r.slc_held_write_bytes, uint64_t{3} * 4 * n);
  EXPECT_LE(r.slc_held_write_bytes, m1.slc_bytes);
  EXPECT_EQ(r.flops, static_cast<double>(n));  // one add per thread
  // The time is at least what the bytes take at the peak bandwidth.
  EXPECT_GE(r.time_us, r.dram_bytes / (m1.dram_gbps * 1e3));
  EXPECT_EQ(r.threadgroups, n / 256);
  EXPECT_EQ(r.chip, "m1");
  EXPECT_EQ(r.cores, m1.spec.gpu_cores);
}

TEST(Timing, FmaChainsAreAluBound) {
  DispatchReport functional;
  const emu::TimingReport r = TimedFmaChains("m1", &functional);
  EXPECT_EQ(r.limiter, "ALU") << r.verdict;
  EXPECT_EQ(r.flops, kFmaChainsFlopsPerThread * kFmaThreads);
  // The model counts the instructions the executor ran.
  EXPECT_EQ(r.instructions, functional.instructions);
  EXPECT_EQ(r.lane_instructions, functional.lane_instructions);
  EXPECT_DOUBLE_EQ(r.simd_efficiency, 1.0);  // no divergence, full groups
  // Never faster than the FP32 peak, and close to it: 8 of the 10 loop
  // instructions are fma, so at one issue per scheduler per cycle about 80%
  // of the peak.
  const ChipTiming m1 = Chip("m1");
  EXPECT_DOUBLE_EQ(r.peak_tflops, m1.peak_flops() / 1e12);
  EXPECT_LE(r.achieved_tflops, r.peak_tflops);
  EXPECT_GE(r.achieved_tflops, 0.5 * r.peak_tflops);
  // Cycles are at least the instructions spread over every scheduler.
  const double slots = m1.spec.gpu_cores * m1.schedulers_per_core;
  EXPECT_GE(static_cast<double>(r.cycles), r.instructions / slots);
  EXPECT_LE(r.alu_utilization, 1.0);
  EXPECT_LT(r.dram_bandwidth_utilization, 0.6);
  // The stores only, those still in the SLC at the end too.
  EXPECT_EQ(r.dram_bytes + r.slc_held_write_bytes, uint64_t{4} * kFmaThreads);
}

// A kernel completes when its stores reach the SLC, which writes them back
// to DRAM later: 4 MiB of output fits M1's 8 MiB SLC and costs the cores'
// L2 ports (32 B per core-clock, 8 cores: 16384 cycles), not DRAM's 56
// GB/s (75 us); 16 MiB does not fit, and the 8 MiB beyond it must cross to
// DRAM before the kernel completes.
// Threadgroup loads that all hit one bank keep the port busy: the verdict
// names threadgroup memory and says the value of Xcode's counter for it,
// which is the busiest of the path limiters.
TEST(Timing, LimiterAgreesWithTheCounters) {
  const std::string isa = R"(
.kernel k
.buffer 0 u0 device float out
.threadgroup_memory 8192
    mov.u32 r1, %thread_index_in_threadgroup
    shl.u32 r3, r1, 7
    mov.u32 r4, 64
    mov.f32 r2, 0.0
loop:
    ld.threadgroup.f32 r5, [r3]
    add.f32 r2, r2, r5
    sub.u32 r4, r4, 1
    bnz r4, loop, done
done:
    mov.u32 r0, %thread_position_in_grid.x
    st.device.f32 [u0 + r0*4], r2
    exit
.end
)";
  const emu::TimingReport r = TimedKernel(isa, "m1", 256 * 64, 64);
  std::map<std::string, double> counters(r.xcode_counters.begin(),
                                         r.xcode_counters.end());
  const double port = counters["Threadgroup/Imageblock Load Limiter"];
  EXPECT_EQ(r.limiter, "threadgroup memory") << r.verdict;
  EXPECT_GE(port, 60);
  for (const char* other :
       {"Buffer Read Limiter", "Buffer Write Limiter",
        "Last Level Cache Limiter", "GPU Memory Read Limiter",
        "GPU Memory Write Limiter"}) {
    EXPECT_LT(counters[other], port) << other;
  }
  const std::string said = std::to_string(std::lround(port)) + "%";
  EXPECT_NE(r.verdict.find(said), std::string::npos)
      << r.verdict << " does not say " << said;
}

// The opcode table's FloatUnit and Flops columns: float `mul` is full-rate
// ALU work and integer `mul` goes to the multiplier; FLOPs are 2 for fma, 1
// for add, sub, mul and div, 1024 for an 8x8x8 simdgroup multiply-add,
// none for integer work. Counted by hand for two SIMD groups.
TEST(Timing, UnitsAndFlopsFollowTheOpcodeTable) {
  const std::string isa = R"(
.kernel k
.buffer 0 u0 device float out
    mov.u32 r0, %thread_index_in_threadgroup
    mov.f32 r1, 1.5
    mul.f32 r2, r1, r1
    mul.u32 r3, r0, r0
    fma.f32 r4, r2, r1, r1
    sub.f32 r5, r4, r2
    div.f32 r6, r5, r1
    add.u32 r7, r3, 1
    simdgroup_multiply_accumulate.f32 r14, r8, r10, r12
    st.device.f32 [u0 + r0*4], r6
    exit
.end
)";
  const uint32_t threads = 64;
  const emu::TimingReport r = TimedKernel(isa, "m1", threads, threads);
  const auto count = [&](std::string_view unit) -> uint64_t {
    for (const auto& [name, n] : r.instructions_by_unit) {
      if (name == unit) return n;
    }
    return 0;
  };
  const uint64_t groups = threads / 32;
  // mov, mov, mul.f32, fma, sub, add.u32.
  EXPECT_EQ(count("alu"), 6 * groups);
  EXPECT_EQ(count("mul"), 1 * groups);  // mul.u32
  EXPECT_EQ(count("div"), 1 * groups);
  EXPECT_EQ(count("matrix"), 1 * groups);
  EXPECT_EQ(r.flops, static_cast<double>(threads * (1 + 2 + 1 + 1) +
                                         groups * 8 * 8 * 8 * 2));
}

TEST(Timing, TheSlcTakesAKernelsLastWrites) {
  constexpr char kFill[] = R"(
.kernel fill
.buffer 0 u0 device float out
    mov.u32 r0, %thread_position_in_grid.x
    cvt.f32.u32 r1, r0
    st.device.f32 [u0 + r0*4], r1
    exit
.end
)";
  const ChipTiming m1 = Chip("m1");
  ASSERT_EQ(m1.slc_bytes, 8u << 20);
  const double attainable_gbps = m1.dram_gbps * m1.dram_efficiency;

  const uint32_t fits = 1u << 20;  // floats: 4 MiB
  const emu::TimingReport small = TimedKernel(kFill, "m1", fits, 256);
  EXPECT_EQ(small.dram_bytes + small.slc_held_write_bytes, 4u * fits);
  EXPECT_GT(small.slc_held_write_bytes, 0u);
  EXPECT_GE(small.cycles, 4u * fits / (8 * 32));
  EXPECT_LT(small.cycles, 1.25 * 4 * fits / (8 * 32));
  EXPECT_LT(small.time_us, 0.5 * 4 * fits / (attainable_gbps * 1e3));
  EXPECT_LE(small.achieved_dram_gbps, attainable_gbps * 1.01);

  const uint32_t spills = 4u << 20;  // floats: 16 MiB
  const emu::TimingReport large = TimedKernel(kFill, "m1", spills, 256);
  EXPECT_EQ(large.dram_bytes + large.slc_held_write_bytes, 4u * spills);
  EXPECT_LE(large.slc_held_write_bytes, m1.slc_bytes);
  EXPECT_GE(large.time_us,
            (4.0 * spills - m1.slc_bytes) / (attainable_gbps * 1e3));
  EXPECT_LE(large.achieved_dram_gbps, attainable_gbps * 1.01);
}

// Too few SIMD groups to hide latency, for want of resources or of work:
// a chain of 512 dependent fmas a thread waits out the ALU latency at each
// step unless other SIMD groups issue meanwhile.
std::string DependentFmaChain(uint32_t threadgroup_memory) {
  std::string isa =
      ".kernel chain\n.buffer 0 u0 device float out\n"
      ".threadgroup_memory " +
      std::to_string(threadgroup_memory) +
      "\n    mov.u32 r0, %thread_position_in_grid.x\n"
      "    cvt.f32.u32 r1, r0\n";
  for (int i = 0; i < 512; ++i) isa += "    fma.f32 r1, r1, 0.5, 1.0\n";
  return isa + "    st.device.f32 [u0 + r0*4], r1\n    exit\n.end\n";
}

TEST(Timing, OccupancyVerdicts) {
  const ChipTiming m1 = Chip("m1");
  // 32 KB of threadgroup memory a threadgroup: one fits M1's 60 KB, so a
  // core holds 4 SIMD groups of its 96, whatever the grid.
  const emu::TimingReport starved = TimedKernel(
      DependentFmaChain(32 * 1024), "m1", 128 * m1.spec.gpu_cores * 4, 128);
  EXPECT_EQ(starved.threadgroups_per_core, 1u);
  EXPECT_EQ(starved.limiter, "occupancy") << starved.verdict;
  EXPECT_NE(starved.verdict.find("limited by threadgroup memory"),
            std::string::npos)
      << starved.verdict;

  // Without it, 24 threadgroups of 128 fit a core, but the grid has one a
  // core: 8 of M1's 8 x 24 slots.
  const emu::TimingReport small =
      TimedKernel(DependentFmaChain(0), "m1", 128 * m1.spec.gpu_cores, 128);
  EXPECT_EQ(small.threadgroups_per_core, 24u);
  EXPECT_EQ(small.limiter, "occupancy") << small.verdict;
  EXPECT_NE(small.verdict.find("8 threadgroups fill 4% of the chip's 192 "
                               "threadgroup slots (8 cores x 24)"),
            std::string::npos)
      << small.verdict;
  // Every slot filled: the latency is hidden, and issue limits.
  const emu::TimingReport full = TimedKernel(
      DependentFmaChain(0), "m1", 128 * m1.spec.gpu_cores * 24 * 2, 128);
  EXPECT_EQ(full.limiter, "ALU") << full.verdict;
}

// The cores with work share the chip's DRAM bandwidth: two threadgroups on
// a 32-core M1 Max each read 256 KB from DRAM (four loads in flight per
// SIMD group, more than DRAM's latency needs), each at what its SLC port
// takes (17.5 B per clock: at least 14980 cycles), not at a 32nd of the
// chip (7.9 B per clock, 33180 cycles).
TEST(Timing, FewBusyCoresShareDram) {
  constexpr char kStream[] = R"(
.kernel stream
.buffer 0 u0 device float in
.buffer 1 u2 device float out
    mov.u32 r0, %thread_position_in_grid.x
    mov.u32 r1, r0
    mov.f32 r2, 0.0
    mov.u32 r3, 16
loop:
    ld.device.f32 r4, [u0 + r1*4]
    ld.device.f32 r5, [u0 + r1*4 + 8192]
    ld.device.f32 r6, [u0 + r1*4 + 16384]
    ld.device.f32 r7, [u0 + r1*4 + 24576]
    add.f32 r2, r2, r4
    add.f32 r2, r2, r5
    add.f32 r2, r2, r6
    add.f32 r2, r2, r7
    add.u32 r1, r1, 8192
    sub.u32 r3, r3, 1
    bnz r3, loop, done
done:
    st.device.f32 [u2 + r0*4], r2
    exit
.end
)";
  const ChipTiming max = Chip("m1-max");
  ASSERT_EQ(max.spec.gpu_cores, 32);
  KernelHarness h(kStream, "", "m1-max");
  ASSERT_TRUE(h.status().ok()) << h.status().error().message;
  EnableTiming(h);
  h.SetBuffer(0, Ramp(2048 * 64, 1.0f));
  h.SetBuffer(1, std::vector<float>(2048));
  ASSERT_TRUE(Runs(h, {2048, 1, 1}, {1024, 1, 1}));
  const emu::TimingReport* r = TimingOf(h);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->dram_read_bytes, 2u * 256 * 1024);
  const double per_core = 256.0 * 1024;
  EXPECT_GE(r->cycles, per_core / max.slc_bytes_per_clock);
  EXPECT_LT(r->cycles,
            0.6 * per_core / (max.dram_bytes_per_clock() / max.spec.gpu_cores));
}

// --- limits every report keeps --------------------------------------------

// No report moves more bytes than the chip's DRAM can in its time, counts a
// utilization or share above 100%, or beats the FP32 peak. Small kernels
// too, where the dispatch is shorter than a few of the model's epochs.
void ExpectWithinLimits(const emu::TimingReport& r, const std::string& what) {
  SCOPED_TRACE(what + " on " + r.chip);
  ASSERT_GT(r.cycles, 0u);
  const double eps = 1e-9;
  EXPECT_LE(r.achieved_dram_gbps, r.peak_dram_gbps * (1 + eps))
      << r.dram_bytes << " bytes in " << r.cycles << " cycles";
  EXPECT_LE(r.dram_bandwidth_utilization, 1 + eps);
  EXPECT_LE(r.achieved_tflops, r.peak_tflops * (1 + eps));
  EXPECT_GE(r.alu_utilization, 0);
  EXPECT_LE(r.alu_utilization, 1 + eps);
  EXPECT_GE(r.occupancy, 0);
  EXPECT_LE(r.occupancy, 1 + eps);
  EXPECT_GT(r.simd_efficiency, 0);
  EXPECT_LE(r.simd_efficiency, 1 + eps);
  EXPECT_GE(r.l1_hit_rate, 0);
  EXPECT_LE(r.l1_hit_rate, 1 + eps);
  EXPECT_GE(r.l2_hit_rate, 0);
  EXPECT_LE(r.l2_hit_rate, 1 + eps);
  double stalled = 0;
  for (const auto& [why, share] : r.stalls) {
    EXPECT_GE(share, 0) << why;
    EXPECT_LE(share, 1 + eps) << why;
    stalled += share;
  }
  // A scheduler cycle either issues or is counted under one reason.
  EXPECT_LE(stalled, 1 + eps) << "stall shares add up to " << stalled;
  EXPECT_LE(r.max_simd_groups_per_core * 32,
            std::max(r.threads_per_threadgroup, 3072u));
  const std::set<std::string> limiters = {
      "ALU",     "memory bandwidth", "threadgroup memory", "cache bandwidth",
      "latency", "occupancy"};
  EXPECT_EQ(limiters.count(r.limiter), 1u) << r.limiter;
}

TEST(Timing, ReportsStayWithinTheChipsLimits) {
  ExpectWithinLimits(RunMixed(0).report, "mixed");
  ExpectWithinLimits(TimedVectorAdd(4096, "m1"), "small vector add");
  ExpectWithinLimits(TimedVectorAdd(1u << 20, "m2"), "vector add");
  ExpectWithinLimits(TimedFmaChains("m1"), "fma chains");
  ExpectWithinLimits(TimedFmaChains("m3"), "fma chains");
  ExpectWithinLimits(
      TimedKernel(ThreadgroupMemoryKernel(20 * 1024), "m1", 256 * 96, 256),
      "threadgroup memory");
  for (const char* chip : {"m2", "m3"}) {
    ExpectWithinLimits(TimedKernel(kRegisterHeavy, chip, 256 * 40, 256),
                       "register heavy");
  }
}

// --- 4. occupancy ------------------------------------------------------------

TEST(Occupancy, RuleOnM1) {
  const ChipTiming m1 = Chip("m1");
  ASSERT_EQ(m1.max_threads_per_core, 3072u);
  ASSERT_EQ(m1.threadgroup_memory_per_core, 60u * 1024);

  emu::Occupancy o = emu::ComputeOccupancy(m1, 8, 256, 0);
  EXPECT_EQ(o.threadgroups_per_core, 3072u / 256);
  EXPECT_EQ(o.simd_groups_per_threadgroup, 8u);
  EXPECT_EQ(o.limiter, "threads");

  o = emu::ComputeOccupancy(m1, 100, 256, 0);
  EXPECT_EQ(o.threadgroups_per_core, m1.register_file_bytes / (100 * 4 * 256));
  EXPECT_EQ(o.limiter, "registers");

  o = emu::ComputeOccupancy(m1, 8, 256, 20 * 1024);
  EXPECT_EQ(o.threadgroups_per_core, 3u);  // 60 KB / 20 KB
  EXPECT_EQ(o.limiter, "threadgroup memory");

  o = emu::ComputeOccupancy(m1, 8, 1024, 0);
  EXPECT_EQ(o.threadgroups_per_core, 3u);  // 3072 / 1024
  EXPECT_EQ(o.simd_groups_per_threadgroup, 32u);

  // Always at least one: Metal runs every threadgroup it accepts.
  o = emu::ComputeOccupancy(m1, 256, 1024, 32 * 1024);
  EXPECT_EQ(o.threadgroups_per_core, 1u);
}

TEST(Occupancy, FallsAsRegistersOrThreadgroupMemoryGrow) {
  for (const char* name : {"m1", "m2", "m3"}) {
    const ChipTiming chip = Chip(name);
    for (uint32_t threads : {64u, 256u, 1024u}) {
      uint32_t last = UINT32_MAX;
      for (uint32_t registers = 1; registers <= 256; ++registers) {
        const uint32_t tgs = emu::ComputeOccupancy(chip, registers, threads, 0)
                                 .threadgroups_per_core;
        EXPECT_LE(tgs, last) << name << ", " << threads << " threads, "
                             << registers << " registers";
        EXPECT_LE(tgs * threads, chip.max_threads_per_core) << name;
        last = tgs;
      }
      last = UINT32_MAX;
      for (uint32_t bytes = 0; bytes <= 32 * 1024; bytes += 256) {
        const uint32_t tgs = emu::ComputeOccupancy(chip, 16, threads, bytes)
                                 .threadgroups_per_core;
        EXPECT_LE(tgs, last)
            << name << ", " << threads << " threads, " << bytes << " bytes";
        EXPECT_GE(tgs, 1u);
        last = tgs;
      }
    }
    // And it does fall, not only stay: from the thread limit down to 1.
    EXPECT_GT(emu::ComputeOccupancy(chip, 8, 256, 0).threadgroups_per_core,
              emu::ComputeOccupancy(chip, 200, 256, 0).threadgroups_per_core)
        << name;
    EXPECT_GT(
        emu::ComputeOccupancy(chip, 8, 256, 0).threadgroups_per_core,
        emu::ComputeOccupancy(chip, 8, 256, 32 * 1024).threadgroups_per_core)
        << name;
  }
}

TEST(Occupancy, M3PoolsRegistersAndThreadgroupMemory) {
  const ChipTiming m2 = Chip("m2");
  const ChipTiming m3 = Chip("m3");
  ASSERT_FALSE(m2.dynamic_caching);
  ASSERT_TRUE(m3.dynamic_caching);
  for (uint32_t registers : {64u, 100u, 128u, 200u}) {
    const emu::Occupancy o2 = emu::ComputeOccupancy(m2, registers, 256, 0);
    const emu::Occupancy o3 = emu::ComputeOccupancy(m3, registers, 256, 0);
    EXPECT_GE(o3.threadgroups_per_core, o2.threadgroups_per_core)
        << registers << " registers";
  }
  // 100 registers, 256 threads: M2 holds register file / 102400 B; M3,
  // without a measured use, holds (register file + threadgroup memory) /
  // 102400 B, the same pool arithmetic by hand.
  EXPECT_EQ(emu::ComputeOccupancy(m2, 100, 256, 0).threadgroups_per_core,
            m2.register_file_bytes / 102400u);
  const uint32_t pool = m3.register_file_bytes + m3.threadgroup_memory_per_core;
  EXPECT_EQ(emu::ComputeOccupancy(m3, 100, 256, 0).threadgroups_per_core,
            pool / 102400u);
  // With 25 registers in use on average: 25 x 4 B x 256 threads = 25600 B
  // a threadgroup, plus 4 KB of threadgroup memory from the same pool.
  EXPECT_EQ(emu::ComputeOccupancy(m3, 100, 256, 0, 25.0).threadgroups_per_core,
            pool / 25600u);
  EXPECT_EQ(
      emu::ComputeOccupancy(m3, 100, 256, 4096, 25.0).threadgroups_per_core,
      pool / (25600u + 4096u));
  EXPECT_EQ(emu::ComputeOccupancy(m3, 100, 256, 4096, 25.0).limiter,
            "registers and threadgroup memory");
  // The measured use matters only where registers are allocated by it.
  EXPECT_EQ(emu::ComputeOccupancy(m2, 100, 256, 0, 25.0).threadgroups_per_core,
            m2.register_file_bytes / 102400u);
  // It never counts more than the allocation, nor less than one register.
  EXPECT_EQ(emu::ComputeOccupancy(m3, 100, 256, 0, 500.0).threadgroups_per_core,
            pool / 102400u);
  EXPECT_EQ(emu::ComputeOccupancy(m3, 100, 32, 0, 0.0).threadgroups_per_core,
            m3.max_threads_per_core / 32);
}

TEST(Occupancy, ThreadgroupMemoryOfADispatch) {
  const ChipTiming m1 = Chip("m1");
  const uint32_t threads = 256 * 96;
  const emu::TimingReport small =
      TimedKernel(ThreadgroupMemoryKernel(1024), "m1", threads, 256);
  const emu::TimingReport large =
      TimedKernel(ThreadgroupMemoryKernel(20 * 1024), "m1", threads, 256);
  EXPECT_EQ(small.threadgroup_memory, 1024u);
  EXPECT_EQ(small.threads_per_threadgroup, 256u);
  EXPECT_EQ(small.threadgroups_per_core, 12u);  // 3072 / 256
  EXPECT_EQ(small.occupancy_limiter, "threads");
  EXPECT_EQ(small.max_simd_groups_per_core, 12u * 8);
  EXPECT_EQ(large.threadgroup_memory, 20u * 1024);
  EXPECT_EQ(large.threadgroups_per_core,
            m1.threadgroup_memory_per_core / (20 * 1024));
  EXPECT_EQ(large.occupancy_limiter, "threadgroup memory");
  EXPECT_LT(large.threadgroups_per_core, small.threadgroups_per_core);
  // Fewer SIMD groups resident: lower achieved occupancy.
  EXPECT_LT(large.occupancy, small.occupancy);

  // The same through setThreadgroupMemoryLength: 16 KB per threadgroup,
  // 60 KB / 16 KB = 3 threadgroups.
  const emu::TimingReport argument =
      TimedKernel(kThreadgroupArgument, "m1", threads, 256, 16 * 1024);
  EXPECT_EQ(argument.threadgroup_memory, 16u * 1024);
  EXPECT_EQ(argument.threadgroups_per_core, 3u);
  EXPECT_EQ(argument.occupancy_limiter, "threadgroup memory");
}

TEST(Occupancy, RegisterHeavyKernelOnM2AndM3) {
  const uint32_t threads = 256 * 40;
  const emu::TimingReport m2 = TimedKernel(kRegisterHeavy, "m2", threads, 256);
  const emu::TimingReport m3 = TimedKernel(kRegisterHeavy, "m3", threads, 256);
  EXPECT_EQ(m2.registers, 100u);
  EXPECT_EQ(m2.threadgroups_per_core,
            Chip("m2").register_file_bytes / (100u * 4 * 256));
  EXPECT_EQ(m2.occupancy_limiter, "registers");
  EXPECT_EQ(m3.registers, 100u);
  // The kernel names r99 but holds at most two registers: per instruction
  // (mov r0; add r99, r0; st r99; exit) 1, 2, 2 and 0 live, 1.25 on
  // average, which M2 does not count and M3 allocates (Dynamic Caching):
  // 1.25 x 4 B x 256 threads leaves the thread limit, 3072 / 256.
  EXPECT_DOUBLE_EQ(m2.registers_in_use, 1.25);
  EXPECT_FALSE(m2.dynamic_caching);
  EXPECT_DOUBLE_EQ(m3.registers_in_use, 1.25);
  EXPECT_TRUE(m3.dynamic_caching);
  EXPECT_EQ(m3.threadgroups_per_core, 3072u / 256);
  EXPECT_EQ(m3.occupancy_limiter, "threads");
  EXPECT_NE(traces::FormatReportText(m3).find("1.2 live on average, allocated "
                                              "by use (Dynamic Caching)"),
            std::string::npos)
      << traces::FormatReportText(m3);
  const std::optional<Json> json = ParseReport(m3);
  ASSERT_TRUE(json.has_value());
  ASSERT_TRUE(json->contains("registers_in_use"));
  ASSERT_TRUE(json->at("registers_in_use").is_number());
  EXPECT_EQ(json->at("registers_in_use").get<double>(), 1.25);
}

// A thread has 128 registers: a kernel that needs more holds 128 (Metal's
// compiler spills the rest), and the report says so.
TEST(Occupancy, RegistersBeyondTheHardwareCountAsItsMaximum) {
  const ChipTiming m1 = Chip("m1");
  ASSERT_EQ(m1.max_registers_per_thread, 128u);
  EXPECT_EQ(emu::ComputeOccupancy(m1, 200, 128, 0).threadgroups_per_core,
            m1.register_file_bytes / (128u * 4 * 128));
  EXPECT_EQ(emu::ComputeOccupancy(m1, 200, 128, 0).threadgroups_per_core,
            emu::ComputeOccupancy(m1, 128, 128, 0).threadgroups_per_core);
  std::string heavy = kRegisterHeavy;
  heavy.replace(heavy.find("r99"), 3, "r199");
  heavy.replace(heavy.find("r99"), 3, "r199");
  const emu::TimingReport r = TimedKernel(heavy, "m1", 128 * 16, 128);
  EXPECT_EQ(r.registers, 200u);
  EXPECT_EQ(r.threadgroups_per_core, m1.register_file_bytes / (128u * 4 * 128));
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("200 registers"), std::string::npos) << r.notes[0];
  EXPECT_NE(traces::FormatReportText(r).find("note: "), std::string::npos);
  const std::optional<Json> json = ParseReport(r);
  ASSERT_TRUE(json.has_value());
  ASSERT_TRUE(json->contains("notes"));
  ASSERT_TRUE(json->at("notes").is_array());
  ASSERT_EQ(json->at("notes").size(), 1u);
  ASSERT_TRUE(json->at("notes")[0].is_string());
  EXPECT_EQ(json->at("notes")[0].get<std::string>(), r.notes[0]);
  EXPECT_TRUE(TimedKernel(kRegisterHeavy, "m1", 128 * 16, 128).notes.empty());
}

// --- 5. the timeline and its trace -------------------------------------------

bool HavePython() { return access("/usr/bin/python3", X_OK) == 0; }

// Exit status of python3 loading `path` as JSON.
int PythonJsonLoad(const std::string& path) {
  const std::string command =
      "/usr/bin/python3 -c 'import json,sys; json.load(open(sys.argv[1]))' '" +
      path + "'";
  return std::system(command.c_str());
}

class TempFile {
 public:
  explicit TempFile(const std::string& suffix) {
    std::string name = (std::filesystem::temp_directory_path() /
                        ("mtlemu_timing_XXXXXX" + suffix))
                           .string();
    const int fd = mkstemps(name.data(), static_cast<int>(suffix.size()));
    EXPECT_GE(fd, 0) << name;
    if (fd >= 0) close(fd);
    path_ = name;
  }
  ~TempFile() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

struct TimelineRun {
  emu::TimingReport report;
  std::shared_ptr<const traces::Timeline> timeline;
};

constexpr uint32_t kTimelineGroups = 64;
constexpr uint32_t kTimelineGroupSize = 128;  // 4 SIMD groups

// The threadgroups in `rows` rows of the grid.
TimelineRun RunWithTimeline(bool simd_detail, uint32_t rows = 1) {
  TimelineRun run;
  const uint32_t n = kTimelineGroups * kTimelineGroupSize;
  KernelHarness h(kMixed, "", "m1");
  EXPECT_TRUE(h.status().ok()) << h.status().error().message;
  EnableTiming(h, /*timeline=*/true, simd_detail);
  h.SetBuffer(0, Ramp(n, 0.25f));
  h.SetBuffer(1, std::vector<float>(n));
  h.SetBytes(2, n);
  EXPECT_TRUE(Runs(h, {n / rows, rows, 1}, {kTimelineGroupSize, 1, 1}));
  if (const emu::TimingReport* r = TimingOf(h)) run.report = *r;
  if (h.report() != nullptr) run.timeline = h.report()->timeline;
  return run;
}

TEST(Timeline, SlicesAndCounters) {
  const TimelineRun run = RunWithTimeline(false);
  ASSERT_NE(run.timeline, nullptr);
  const traces::Timeline& t = *run.timeline;
  const ChipTiming m1 = Chip("m1");
  EXPECT_EQ(t.chip, "m1");
  EXPECT_EQ(t.kernel, "mixed");
  EXPECT_EQ(t.cores, m1.spec.gpu_cores);
  EXPECT_EQ(t.clock_mhz, m1.spec.clock_mhz);
  EXPECT_EQ(t.total_cycles, run.report.cycles);
  ASSERT_GT(t.total_cycles, 0u);

  std::set<double> indices;
  size_t threadgroup_slices = 0;
  for (const traces::Slice& s : t.slices) {
    EXPECT_EQ(s.slot, -1) << "a SIMD-group slice without simd_detail";
    EXPECT_LT(s.start_cycle, s.end_cycle) << s.name;
    EXPECT_LE(s.end_cycle, t.total_cycles) << s.name;
    EXPECT_GE(s.core, 0) << s.name;
    EXPECT_LT(s.core, t.cores) << s.name;
    if (s.slot == -1) {
      ++threadgroup_slices;
      for (const auto& [key, value] : s.args) {
        if (key == "threadgroup") indices.insert(value);
      }
    }
  }
  EXPECT_EQ(threadgroup_slices, kTimelineGroups);
  // One slice per threadgroup index, 0 .. 63.
  ASSERT_EQ(indices.size(), kTimelineGroups);
  EXPECT_EQ(*indices.begin(), 0);
  EXPECT_EQ(*indices.rbegin(), kTimelineGroups - 1);

  // Per core "resident SIMD groups" and "ALU busy %", GPU-wide "DRAM GB/s".
  std::map<std::string, std::set<int>> counters;
  for (const traces::Counter& c : t.counters) {
    counters[c.name].insert(c.core);
    EXPECT_FALSE(c.samples.empty()) << c.name << " of core " << c.core;
    uint64_t last = 0;
    for (const traces::CounterSample& sample : c.samples) {
      EXPECT_GE(sample.cycle, last) << c.name;
      EXPECT_LE(sample.cycle, t.total_cycles) << c.name;
      EXPECT_GE(sample.value, 0) << c.name;
      if (c.name == "ALU busy %") {
        EXPECT_LE(sample.value, 100) << c.name;
      }
      if (c.name == "resident SIMD groups") {
        EXPECT_LE(sample.value, run.report.max_simd_groups_per_core) << c.name;
      }
      last = sample.cycle;
    }
  }
  std::set<int> all_cores;
  for (int c = 0; c < t.cores; ++c) all_cores.insert(c);
  EXPECT_EQ(counters["resident SIMD groups"], all_cores);
  EXPECT_EQ(counters["ALU busy %"], all_cores);
  EXPECT_EQ(counters["DRAM GB/s"], std::set<int>{-1});
}

TEST(Timeline, SimdDetailAddsASlicePerSimdGroup) {
  const TimelineRun run = RunWithTimeline(true);
  ASSERT_NE(run.timeline, nullptr);
  const traces::Timeline& t = *run.timeline;
  size_t threadgroup_slices = 0, simd_slices = 0;
  std::set<std::pair<double, double>> simd_groups;  // (threadgroup, index)
  for (const traces::Slice& s : t.slices) {
    EXPECT_LT(s.start_cycle, s.end_cycle) << s.name;
    EXPECT_LE(s.end_cycle, t.total_cycles) << s.name;
    EXPECT_GE(s.core, 0);
    EXPECT_LT(s.core, t.cores);
    if (s.slot < 0) {
      ++threadgroup_slices;
      continue;
    }
    ++simd_slices;
    EXPECT_LT(static_cast<uint32_t>(s.slot),
              run.report.max_simd_groups_per_core)
        << s.name;
    double tg = -1, sg = -1;
    for (const auto& [key, value] : s.args) {
      if (key == "threadgroup") tg = value;
      if (key == "simdgroup") sg = value;
    }
    simd_groups.insert({tg, sg});
  }
  const size_t per_group = kTimelineGroupSize / 32;
  EXPECT_EQ(threadgroup_slices, kTimelineGroups);
  EXPECT_EQ(simd_slices, kTimelineGroups * per_group);
  EXPECT_EQ(simd_groups.size(), kTimelineGroups * per_group);
}

// Slices are named by the threadgroup's position in the grid, as
// traces/README.md says: "threadgroup (3,1,0)", "simdgroup 2 of tg (3,1,0)".
TEST(Timeline, SlicesNameTheThreadgroupsPosition) {
  constexpr uint32_t kRows = 2;
  const TimelineRun run = RunWithTimeline(true, kRows);
  ASSERT_NE(run.timeline, nullptr);
  const uint32_t per_row = kTimelineGroups / kRows;
  std::set<std::string> names;
  for (const traces::Slice& s : run.timeline->slices) {
    double tg = -1, sg = -1;
    for (const auto& [key, value] : s.args) {
      if (key == "threadgroup") tg = value;
      if (key == "simdgroup") sg = value;
    }
    ASSERT_GE(tg, 0) << s.name;
    const uint32_t index = static_cast<uint32_t>(tg);
    const std::string position = "(" + std::to_string(index % per_row) + "," +
                                 std::to_string(index / per_row) + ",0)";
    EXPECT_EQ(s.name, s.slot < 0 ? "threadgroup " + position
                                 : "simdgroup " +
                                       std::to_string(static_cast<int>(sg)) +
                                       " of tg " + position);
    names.insert(s.name);
  }
  EXPECT_TRUE(names.count("threadgroup (31,1,0)"));
  EXPECT_TRUE(names.count("simdgroup 3 of tg (0,1,0)"));
}

TEST(Timeline, ChromeTraceParses) {
  const TimelineRun run = RunWithTimeline(true);
  ASSERT_NE(run.timeline, nullptr);
  TempFile file(".json");
  const Status s = traces::WriteChromeTraceFile(*run.timeline, file.path());
  ASSERT_TRUE(s.ok()) << s.error().message;
  std::ifstream in(file.path());
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  ASSERT_FALSE(text.empty());

  if (HavePython()) {
    EXPECT_EQ(PythonJsonLoad(file.path()), 0)
        << "python3 cannot load " << file.path();
  }

  std::string error;
  const std::optional<Json> json = ParseStrictJson(text, &error);
  ASSERT_TRUE(json.has_value()) << error;
  const Json* events = Find(*json, "traceEvents");
  ASSERT_NE(events, nullptr);
  std::set<std::string> thread_names;
  size_t complete = 0;
  for (const Json& e : *events) {
    const Json* name = Find(e, "name");
    const Json* ph = Find(e, "ph");
    ASSERT_NE(ph, nullptr);
    if (*ph == "X") ++complete;
    if (*ph == "M" && name != nullptr && *name == "thread_name") {
      const Json* args = Find(e, "args");
      ASSERT_NE(args, nullptr);
      ASSERT_NE(Find(*args, "name"), nullptr);
      thread_names.insert(Find(*args, "name")->get<std::string>());
    }
  }
  EXPECT_EQ(complete, run.timeline->slices.size());
  for (int c = 0; c < run.timeline->cores; ++c) {
    EXPECT_EQ(thread_names.count("core " + std::to_string(c)), 1u)
        << "no thread_name for core " << c;
  }
}

// --- 6. chips differ as their numbers say ------------------------------------

TEST(Timing, MoreBandwidthIsFaster) {
  const uint32_t n = 2u << 20;  // 24 MiB moved
  const emu::TimingReport m1 = TimedVectorAdd(n, "m1");
  const emu::TimingReport max = TimedVectorAdd(n, "m1-max");
  EXPECT_EQ(m1.dram_bytes + m1.slc_held_write_bytes,
            max.dram_bytes + max.slc_held_write_bytes);
  EXPECT_EQ(max.limiter, "memory bandwidth") << max.verdict;
  EXPECT_LT(max.time_us, m1.time_us);
  // Both bandwidth-bound at 0.6 .. 1.1 of their peaks (as the 4M-float run
  // above): the speed-up is at least 0.6 / 1.1 of the ratio of the peaks.
  const double peaks = Chip("m1-max").dram_gbps / Chip("m1").dram_gbps;
  EXPECT_GE(m1.time_us / max.time_us, 0.6 / 1.1 * peaks)
      << "m1 " << m1.time_us << " us, m1-max " << max.time_us << " us";
}

TEST(Timing, MoreCoresAndClockAreFasterForCompute) {
  const emu::TimingReport m1 = TimedFmaChains("m1");
  const emu::TimingReport m2 = TimedFmaChains("m2");
  EXPECT_EQ(m1.flops, m2.flops);
  EXPECT_EQ(m2.limiter, "ALU") << m2.verdict;
  EXPECT_LT(m2.time_us, m1.time_us);
  // 5 whole waves on M1 against 4 on M2, at 1398 against 1278 MHz: ~1.37x.
  // Allow for the waves' ragged ends.
  EXPECT_GT(m1.time_us / m2.time_us, 1.15)
      << "m1 " << m1.time_us << " us, m2 " << m2.time_us << " us";
}

}  // namespace
}  // namespace mtlemu

namespace mtlemu {
namespace {

// Xcode's counters: every name there, percentages in [0, 100], and the read
// and write bandwidths adding up to the achieved DRAM bandwidth.
TEST(Timing, XcodeCountersAreConsistent) {
  const emu::TimingReport r = TimedVectorAdd(1 << 20, "m1");
  std::map<std::string, double> c(r.xcode_counters.begin(),
                                  r.xcode_counters.end());
  for (const char* name :
       {"ALU Utilization", "F32 Utilization", "Kernel Occupancy",
        "Buffer Read Limiter", "Buffer Write Limiter",
        "Threadgroup/Imageblock Load Limiter", "Last Level Cache Limiter",
        "GPU Memory Read Limiter", "GPU Memory Write Limiter",
        "GPU Read Bandwidth", "GPU Write Bandwidth"}) {
    ASSERT_TRUE(c.count(name)) << name;
    if (std::string(name).find("Bandwidth") == std::string::npos) {
      EXPECT_GE(c[name], 0.0) << name;
      EXPECT_LE(c[name], 100.0) << name;
    }
  }
  EXPECT_NEAR(c["GPU Read Bandwidth"] + c["GPU Write Bandwidth"],
              r.achieved_dram_gbps, 1e-6 * r.achieved_dram_gbps);
  // A vector add reads two floats for each it writes.
  EXPECT_NEAR(c["GPU Read Bandwidth"] / c["GPU Write Bandwidth"], 2.0, 0.05);
  EXPECT_DOUBLE_EQ(c["Kernel Occupancy"], 100 * r.occupancy);
  // The memory limiters are the bandwidths over M1's 68.25 GB/s.
  EXPECT_NEAR(c["GPU Memory Read Limiter"],
              100 * c["GPU Read Bandwidth"] / 68.25, 1e-9);
  EXPECT_NEAR(c["GPU Memory Write Limiter"],
              100 * c["GPU Write Bandwidth"] / 68.25, 1e-9);
  // Every line crosses L2 (a streaming kernel hits L1 only on the constant
  // n): two loaded and one stored per SIMD group, 384 bytes for 32
  // elements, over the dispatch's core-cycles at 32 bytes a clock.
  const double l2_bytes = 384.0 * (1 << 20) / 32;
  EXPECT_NEAR(c["Last Level Cache Limiter"],
              100 * l2_bytes / (r.cycles * 8.0 * 32), 1e-6);
}

}  // namespace
}  // namespace mtlemu

namespace mtlemu {
namespace {

// Threadgroup memory has 32 banks of 4 bytes: a SIMD group's access costs
// one cycle per word the busiest bank serves, so the extra cycles are that
// count less one. Each kernel stores once per SIMD group; the expected
// counts are worked out from the lane addresses.
TEST(Timing, ThreadgroupBankConflicts) {
  struct Case {
    const char* what;
    const char* store;  // r1: thread index in the threadgroup
    uint64_t extra;     // per SIMD group
  };
  for (const Case& c : {
           // Lane l writes word l: every bank once.
           Case{"consecutive words", "st.threadgroup.f32 [r1*4], r2", 0},
           // Word 2l: the even banks twice each.
           Case{"stride 2 words", "st.threadgroup.f32 [r1*8], r2", 1},
           // Word 32l: all in bank 0.
           Case{"stride 32 words",
                "shl.u32 r3, r1, 7\n"
                "    st.threadgroup.f32 [r3], r2",
                31},
           // One word for every lane.
           Case{"one word", "st.threadgroup.f32 [0], r2", 0},
           // A float4 per lane, lanes back to back: 128 words, 4 per bank.
           Case{"float4 per lane", "st.threadgroup.v4.f32 [r1*16], r4", 3},
           // A float2 per lane, 16 bytes apart: words 4l and 4l+1, banks
           // 0-1, 4-5, ... 28-29 four times each.
           Case{"float2, 16 bytes apart", "st.threadgroup.v2.f32 [r1*16], r4",
                3},
       }) {
    const std::string isa = std::string(R"(
.kernel k
.buffer 0 u0 device float out
.threadgroup_memory 8192
    mov.u32 r1, %thread_index_in_threadgroup
    mov.f32 r2, 1.0
    mov.f32 r4, 1.0
    mov.f32 r5, 2.0
    mov.f32 r6, 3.0
    mov.f32 r7, 4.0
    )") + c.store + "\n    exit\n.end\n";
    const uint32_t threads = 8 * 64;  // 16 SIMD groups
    const emu::TimingReport r = TimedKernel(isa, "m1", threads, 64);
    EXPECT_EQ(r.threadgroup_bank_conflict_cycles, c.extra * (threads / 32))
        << c.what;
  }
}

}  // namespace
}  // namespace mtlemu

namespace mtlemu {
namespace {

// The operand cache (ChipTiming::register_cache_miss_cycles): a full-rate
// ALU instruction with two or more register sources that its scheduler's
// previous instruction (of the same SIMD group) did not touch takes one
// more issue cycle. A dependent chain cannot issue twice in a row, so with
// many SIMD groups per scheduler every chain instruction follows one of
// another SIMD group: `x = x + y` costs 2 cycles, `x = x * 0.5 + 1` and
// `x = x * x + 1` (one register source: [T]'s 95 % of peak at ILP 1) 1. With
// one SIMD group per scheduler the cache holds the chain's registers and both
// cost the latency.
TEST(Timing, OperandCache) {
  auto chain = [](const std::string& instruction) {
    std::string isa =
        ".kernel k\n.buffer 0 u0 device float out\n"
        "    mov.u32 r0, %thread_position_in_grid.x\n"
        "    mov.f32 r1, 0.25\n    mov.f32 r2, 0.5\n"
        "    cvt.f32.u32 r10, r0\n";
    for (int i = 0; i < 512; ++i) isa += "    " + instruction + "\n";
    return isa + "    st.device.f32 [u0 + r0*4], r10\n    exit\n.end\n";
  };
  const std::string two = chain("add.f32 r10, r10, r1");
  const std::string three = chain("fma.f32 r10, r10, r1, r2");
  const std::string one = chain("fma.f32 r10, r10, 0.5, 1.0");
  const std::string square = chain("fma.f32 r10, r10, r10, 1.0");
  const ChipTiming m1 = Chip("m1");
  ASSERT_EQ(m1.register_cache_miss_cycles, 1.0);

  // A full core: 96 SIMD groups, 24 per scheduler.
  const uint32_t full = m1.spec.gpu_cores * 3072;
  const uint64_t chain_instructions = uint64_t{512} * full / 32;
  const emu::TimingReport r2 = TimedKernel(two, "m1", full, 256);
  const emu::TimingReport r3 = TimedKernel(three, "m1", full, 256);
  const emu::TimingReport r1 = TimedKernel(one, "m1", full, 256);
  EXPECT_EQ(r1.register_cache_miss_cycles, 0u);
  const emu::TimingReport rs = TimedKernel(square, "m1", full, 256);
  EXPECT_EQ(rs.register_cache_miss_cycles, 0u);
  EXPECT_EQ(rs.cycles, r1.cycles);
  // All but a few at the end, when a scheduler has one SIMD group left.
  EXPECT_GE(r2.register_cache_miss_cycles, 0.95 * chain_instructions);
  EXPECT_LE(r2.register_cache_miss_cycles, chain_instructions);
  EXPECT_EQ(r3.register_cache_miss_cycles, r2.register_cache_miss_cycles);
  const double ratio = static_cast<double>(r2.cycles) / r1.cycles;
  EXPECT_GT(ratio, 1.8) << r2.cycles << " / " << r1.cycles;
  EXPECT_LT(ratio, 2.1) << r2.cycles << " / " << r1.cycles;

  // One SIMD group per scheduler: latency-bound, no misses.
  const uint32_t low = m1.spec.gpu_cores * 4 * 32;
  const emu::TimingReport l2 = TimedKernel(two, "m1", low, 128);
  const emu::TimingReport l1 = TimedKernel(one, "m1", low, 128);
  EXPECT_EQ(l2.register_cache_miss_cycles, 0u);
  EXPECT_EQ(l2.cycles, l1.cycles);

  // 16-bit: a switch costs 0.56 cycles, and only for the register the SIMD
  // group's own last instruction wrote; two chains a SIMD group hide it.
  ASSERT_EQ(m1.register_cache_miss_cycles_16, 0.56);
  ASSERT_EQ(m1.alu16_latency, 3.0);
  const std::string half = chain("add.f16 r10, r10, r1");
  std::string two_chains =
      ".kernel k\n.buffer 0 u0 device float out\n"
      "    mov.u32 r0, %thread_position_in_grid.x\n"
      "    mov.f16 r1, 0.25\n    mov.u32 r10, r0\n    mov.u32 r11, r0\n";
  for (int i = 0; i < 256; ++i) {
    two_chains += "    add.f16 r10, r10, r1\n    add.f16 r11, r11, r1\n";
  }
  two_chains += "    st.device.f32 [u0 + r0*4], r10\n    exit\n.end\n";
  const emu::TimingReport h1 = TimedKernel(half, "m1", full, 256);
  const emu::TimingReport h2 = TimedKernel(two_chains, "m1", full, 256);
  const double half_ratio = static_cast<double>(h1.cycles) / r1.cycles;
  EXPECT_GT(half_ratio, 1.5) << h1.cycles << " / " << r1.cycles;
  EXPECT_LT(half_ratio, 1.7) << h1.cycles << " / " << r1.cycles;
  EXPECT_GE(h1.register_cache_miss_cycles, 0.95 * 0.56 * chain_instructions);
  EXPECT_LE(h1.register_cache_miss_cycles, 0.56 * chain_instructions + 1);
  EXPECT_LT(h2.register_cache_miss_cycles, 0.05 * 0.56 * chain_instructions);
  EXPECT_LT(static_cast<double>(h2.cycles) / r1.cycles, 1.1);
  // Alone on its scheduler a 16-bit chain waits 3 cycles a step, a 32-bit
  // one 4.
  const emu::TimingReport lh = TimedKernel(half, "m1", low, 128);
  EXPECT_EQ(lh.register_cache_miss_cycles, 0u);
  EXPECT_NEAR(static_cast<double>(lh.cycles) / l1.cycles, 0.75, 0.02);
}

// M3 issues an FP32 instruction beside an integer or FP16 one from another
// SIMD group ([TT]); M2 issues one instruction a cycle per scheduler. A loop
// of 10 instructions (8 of `body`, the counter's sub.u32 and the bnz) costs
// M2 10 issue cycles; M3 pairs what it can: 4 FP32 with 4 of the 5 integer
// (or FP16) instructions, then the fifth and the bnz alone, 6 cycles; 8
// FP32 pair with the sub only, 9 cycles; 9 integer instructions and a
// branch pair with nothing, 10.
TEST(Timing, M3DualIssuesFp32BesideIntegerOrFp16) {
  auto loop = [](const std::vector<std::string>& body) {
    std::string isa =
        ".kernel k\n.buffer 0 u0 device uint out\n"
        "    mov.u32 r0, %thread_position_in_grid.x\n"
        "    mov.u32 r1, 256\n";
    for (int i = 2; i < 10; ++i) {
      isa += "    mov.u32 r" + std::to_string(i) + ", r0\n";
    }
    isa += "loop:\n";
    for (size_t i = 0; i < body.size(); ++i) {
      // Independent chains: r2..r9, one an instruction.
      isa += "    " + body[i] + " r" + std::to_string(2 + i) + ", r" +
             std::to_string(2 + i) + ", 3\n";
    }
    return isa +
           "    sub.u32 r1, r1, 1\n    bnz r1, loop, done\ndone:\n"
           "    st.device.u32 [u0 + r0*4], r2\n    exit\n.end\n";
  };
  const std::string f32 = "mul.f32", u32 = "add.u32", f16 = "add.f16";
  const std::string mixed = loop({f32, u32, f32, u32, f32, u32, f32, u32});
  const std::string half = loop({f32, f16, f32, f16, f32, f16, f32, f16});
  const std::string fp32 = loop({f32, f32, f32, f32, f32, f32, f32, f32});
  const std::string integer = loop({u32, u32, u32, u32, u32, u32, u32, u32});
  ASSERT_FALSE(Chip("m2").fp32_dual_issue);
  ASSERT_TRUE(Chip("m3").fp32_dual_issue);
  ASSERT_EQ(Chip("m2").spec.gpu_cores, Chip("m3").spec.gpu_cores);
  // Full cores, 2 waves: issue-bound on both chips.
  const uint32_t threads = Chip("m2").spec.gpu_cores * 3072 * 2;
  auto ratio = [&](const std::string& isa) {
    const emu::TimingReport m2 = TimedKernel(isa, "m2", threads, 256);
    const emu::TimingReport m3 = TimedKernel(isa, "m3", threads, 256);
    return static_cast<double>(m3.cycles) / m2.cycles;
  };
  // The oldest-first scheduler leaves a few pairs unmade (up to 10 %).
  const double with_integer = ratio(mixed), only_fp32 = ratio(fp32);
  EXPECT_GE(with_integer, 0.6);
  EXPECT_LE(with_integer, 0.66);
  EXPECT_EQ(ratio(half), with_integer);
  EXPECT_GE(only_fp32, 0.9);
  EXPECT_LE(only_fp32, 0.95);
  EXPECT_NEAR(ratio(integer), 1.0, 0.01);
}

}  // namespace
}  // namespace mtlemu
