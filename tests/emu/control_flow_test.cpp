// Divergence and reconvergence: nested if/else, loops with divergent trip
// counts, break and continue, early exit; each checked against the same
// logic written as a plain C++ loop over threads.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "tests/support/kernel_harness.h"
#include "tests/support/test_kernels.h"

namespace mtlemu {
namespace {

using testing::KernelHarness;
using testing::RanOk;

std::vector<int32_t> RunOneBuffer(const char* isa, uint32_t threads,
                                  uint32_t threadgroup, int host_threads = 0) {
  KernelHarness h(isa, "", "m1", host_threads);
  EXPECT_TRUE(h.status().ok()) << h.status().error().message;
  h.SetBuffer(0, std::vector<int32_t>(threads, -1));
  Status s = h.DispatchThreads({threads, 1, 1}, {threadgroup, 1, 1});
  EXPECT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(h.error(), nullptr) << h.error()->message;
  return h.Read<int32_t>(0);
}

constexpr char kNestedIfElse[] = R"(
.kernel nested
.buffer 0 u0 device int out
    mov.u32 r0, %thread_position_in_grid.x
    and.u32 r1, r0, 1
    bnz r1, odd, join
    lt.u32 r2, r0, 16
    bz r2, even_big, even_join
    mov.i32 r3, 3
    br even_join
even_big:
    mov.i32 r3, 4
even_join:
    br join
odd:
    and.u32 r2, r0, 3
    eq.u32 r2, r2, 1
    bz r2, odd_else, odd_join
    mov.i32 r3, 1
    br odd_join
odd_else:
    mov.i32 r3, 2
odd_join:
join:
    st.device.i32 [u0 + r0*4], r3
    exit
.end
)";

TEST(ControlFlow, NestedDivergentIfElse) {
  const uint32_t n = 100;  // a partial last SIMD group too
  const std::vector<int32_t> out = RunOneBuffer(kNestedIfElse, n, 64);
  for (uint32_t i = 0; i < n; ++i) {
    int32_t expected;
    if (i % 2) {
      expected = (i % 4 == 1) ? 1 : 2;
    } else {
      expected = (i < 16) ? 3 : 4;
    }
    EXPECT_EQ(out[i], expected) << "thread " << i;
  }
}

// for (k = 0; k < n_i; ++k) { if (k % 3 == 0) continue; if (k > 10) break;
//   acc += k; }  with n_i = i % 13 + i / 4: divergent trip counts.
constexpr char kLoopBreakContinue[] = R"(
.kernel loops
.buffer 0 u0 device int out
    mov.u32 r0, %thread_position_in_grid.x
    rem.u32 r1, r0, 13
    shr.u32 r2, r0, 2
    add.u32 r1, r1, r2
    mov.i32 r3, 0
    mov.u32 r4, 0
loop:
    ge.u32 r5, r4, r1
    bnz r5, done, done
    rem.u32 r6, r4, 3
    bz r6, next, done
    gt.u32 r7, r4, 10
    bnz r7, done, done
    add.i32 r3, r3, r4
next:
    add.u32 r4, r4, 1
    br loop
done:
    st.device.i32 [u0 + r0*4], r3
    exit
.end
)";

TEST(ControlFlow, LoopWithDivergentTripCountBreakAndContinue) {
  const uint32_t n = 200;
  const std::vector<int32_t> out = RunOneBuffer(kLoopBreakContinue, n, 96);
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t trips = i % 13 + i / 4;
    int32_t acc = 0;
    for (uint32_t k = 0; k < trips; ++k) {
      if (k % 3 == 0) continue;
      if (k > 10) break;
      acc += static_cast<int32_t>(k);
    }
    EXPECT_EQ(out[i], acc) << "thread " << i;
  }
}

// Nested loops: the inner trip count depends on the outer index and lane.
constexpr char kNestedLoops[] = R"(
.kernel nested_loops
.buffer 0 u0 device int out
    mov.u32 r0, %thread_position_in_grid.x
    and.u32 r1, r0, 7
    mov.i32 r2, 0
    mov.u32 r3, 0
outer:
    ge.u32 r4, r3, r1
    bnz r4, outer_done, outer_done
    mov.u32 r5, 0
inner:
    ge.u32 r6, r5, r3
    bnz r6, inner_done, inner_done
    mul.u32 r7, r3, r5
    add.i32 r2, r2, r7
    add.u32 r5, r5, 1
    br inner
inner_done:
    add.u32 r3, r3, 1
    br outer
outer_done:
    st.device.i32 [u0 + r0*4], r2
    exit
.end
)";

TEST(ControlFlow, NestedLoops) {
  const uint32_t n = 64;
  const std::vector<int32_t> out = RunOneBuffer(kNestedLoops, n, 64);
  for (uint32_t i = 0; i < n; ++i) {
    int32_t acc = 0;
    for (uint32_t a = 0; a < (i & 7); ++a) {
      for (uint32_t b = 0; b < a; ++b) acc += static_cast<int32_t>(a * b);
    }
    EXPECT_EQ(out[i], acc) << "thread " << i;
  }
}

// Lanes that exit early inside a divergent branch; the others go on.
constexpr char kEarlyExit[] = R"(
.kernel early_exit
.buffer 0 u0 device int out
    mov.u32 r0, %thread_position_in_grid.x
    rem.u32 r1, r0, 3
    bnz r1, keep, keep
    st.device.i32 [u0 + r0*4], 7
    exit
keep:
    mul.u32 r2, r0, 2
    st.device.i32 [u0 + r0*4], r2
    exit
.end
)";

TEST(ControlFlow, EarlyExitInDivergentBranch) {
  const uint32_t n = 70;
  const std::vector<int32_t> out = RunOneBuffer(kEarlyExit, n, 32);
  for (uint32_t i = 0; i < n; ++i) {
    EXPECT_EQ(out[i], i % 3 == 0 ? 7 : static_cast<int32_t>(2 * i))
        << "thread " << i;
  }
}

TEST(ControlFlow, SameResultOnOneAndManyHostThreads) {
  const uint32_t n = 4096;
  EXPECT_EQ(RunOneBuffer(kLoopBreakContinue, n, 128, 1),
            RunOneBuffer(kLoopBreakContinue, n, 128, 4));
}

constexpr char kTrapInOneThread[] = R"(
.kernel trap_one
.buffer 0 u0 device int out
    mov.u32 r0, %thread_position_in_grid.x
    st.device.i32 [u0 + r0*4], r0
    eq.u32 r1, r0, 50
    bz r1, done, done
    trap
done:
    exit
.end
)";

TEST(ControlFlow, TrapFaultsTheLaneThatReachesIt) {
  KernelHarness h(kTrapInOneThread);
  ASSERT_TRUE(h.status().ok()) << h.status().error().message;
  h.SetBuffer(0, std::vector<int32_t>(64, -1));
  ASSERT_TRUE(h.DispatchThreads({64, 1, 1}, {64, 1, 1}).ok());
  ASSERT_NE(h.error(), nullptr);
  EXPECT_EQ(h.error()->code, CommandBufferErrorCode::kInternal);
  EXPECT_EQ(h.error()->fault.kind, emu::FaultKind::kTrap);
  EXPECT_EQ(h.error()->fault.simdgroup, 1u);
  EXPECT_EQ(h.error()->fault.lane, 18);
  EXPECT_EQ(h.error()->fault.thread_position[0], 50u);
  // Line 8 of the text (the leading newline is line 1).
  EXPECT_NE(h.error()->message.find("test.s:8:5: trap"), std::string::npos)
      << h.error()->message;
  // What the trapping SIMD group stored before the trap is kept.
  const std::vector<int32_t> out = h.Read<int32_t>(0);
  for (int i = 32; i < 64; ++i) EXPECT_EQ(out[i], i) << i;
}

constexpr const char* kInfiniteLoop = testing::kSpinIsa;

// Runs `kernel` on 64 threads in threadgroups of `group` with a 200 ms
// timeout, which must stop it.
void ExpectTimesOut(const char* kernel, uint64_t group) {
  KernelHarness h(kernel);
  ASSERT_TRUE(h.status().ok()) << h.status().error().message;
  h.device().options().timeout = std::chrono::milliseconds(200);
  h.SetBuffer(0, std::vector<int32_t>(64));
  ASSERT_TRUE(h.DispatchThreads({64, 1, 1}, {group, 1, 1}).ok());
  ASSERT_NE(h.error(), nullptr);
  EXPECT_EQ(h.error()->code, CommandBufferErrorCode::kTimeout);
  EXPECT_NE(h.error()->message.find("timeout"), std::string::npos)
      << h.error()->message;
}

TEST(ControlFlow, TimeoutStopsAnInfiniteLoop) {
  ExpectTimesOut(kInfiniteLoop, 32);
}

// A loop whose body is one straight run of arithmetic, every lane going
// round: the JIT goes round it in compiled code (this file's .jit run), a
// bounded number of times a call, so the clock is still looked at.
constexpr char kInfiniteArithmeticLoop[] = R"(
.kernel spin_adding
.buffer 0 u0 device int out
    mov.u32 r0, %thread_position_in_grid.x
loop:
    add.u32 r1, r1, r0
    mul.u32 r2, r1, 3
    add.u32 r3, r2, 1
    ne.u32 r4, r0, 4294967295
    bnz r4, loop, done
done:
    st.device.u32 [u0 + r0*4], r2
    exit
.end
)";

TEST(ControlFlow, TimeoutStopsAnInfiniteLoopOfArithmetic) {
  ExpectTimesOut(kInfiniteArithmeticLoop, 64);
}

// The clock is looked at every so many instructions of a SIMD group; a loop
// through a barrier goes back to its threadgroup's runner each iteration,
// and the count must not start over there.
constexpr char kInfiniteLoopThroughABarrier[] = R"(
.kernel spin_at_barrier
.buffer 0 u0 device int out
loop:
    threadgroup_barrier.mem_threadgroup
    br loop
.end
)";

TEST(ControlFlow, TimeoutStopsAnInfiniteLoopThroughABarrier) {
  ExpectTimesOut(kInfiniteLoopThroughABarrier, 64);
}

// 2^32 threadgroups of one thread that exits at once: the deadline is
// looked at between threadgroups too.
TEST(ControlFlow, TimeoutStopsAHugeGridOfShortThreadgroups) {
  KernelHarness h(R"(
.kernel nothing
.buffer 0 u0 device int out
    exit
.end
)");
  ASSERT_TRUE(h.status().ok()) << h.status().error().message;
  h.device().options().timeout = std::chrono::milliseconds(200);
  h.SetBuffer(0, std::vector<int32_t>(1));
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(h.DispatchThreadgroups({65536, 65536, 1}, {1, 1, 1}).ok());
  ASSERT_NE(h.error(), nullptr);
  EXPECT_EQ(h.error()->code, CommandBufferErrorCode::kTimeout);
  // Stopped near its deadline, not after the grid (hours).
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
}

// A timeout past what the clock holds means no limit, not an immediate one.
TEST(ControlFlow, HugeTimeoutIsNoLimit) {
  KernelHarness h(R"(
.kernel store_one
.buffer 0 u0 device int out
    mov.u32 r0, %thread_position_in_grid.x
    st.device.i32 [u0 + r0*4], 1
    exit
.end
)");
  ASSERT_TRUE(h.status().ok()) << h.status().error().message;
  h.device().options().timeout = std::chrono::milliseconds::max();
  h.SetBuffer(0, std::vector<int32_t>(64));
  ASSERT_TRUE(RanOk(h, h.DispatchThreads({64, 1, 1}, {64, 1, 1})));
  EXPECT_EQ(h.Read<int32_t>(0), std::vector<int32_t>(64, 1));
}

TEST(ControlFlow, InterruptStopsAnInfiniteLoop) {
  KernelHarness h(kInfiniteLoop);
  ASSERT_TRUE(h.status().ok()) << h.status().error().message;
  auto interrupt = std::make_shared<std::atomic<bool>>(false);
  h.device().options().interrupt = interrupt;
  h.SetBuffer(0, std::vector<int32_t>(64));
  // The host's Ctrl-C, from another thread while the dispatch runs.
  std::thread host([interrupt] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    interrupt->store(true);
  });
  ASSERT_TRUE(h.DispatchThreads({64, 1, 1}, {32, 1, 1}).ok());
  host.join();
  ASSERT_NE(h.error(), nullptr);
  EXPECT_EQ(h.error()->fault.kind, emu::FaultKind::kInterrupted);
  EXPECT_NE(h.error()->message.find("interrupted"), std::string::npos)
      << h.error()->message;
}

}  // namespace
}  // namespace mtlemu
