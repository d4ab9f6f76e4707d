// threadgroup_barrier with several SIMD groups exchanging data through
// threadgroup memory; barriers in loops; the divergent-barrier report.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "tests/support/kernel_harness.h"
#include "tests/support/test_kernels.h"

namespace mtlemu {
namespace {

using testing::KernelHarness;

using testing::kReverseIsa;  // (tests/support/test_kernels.h)

TEST(Barrier, SimdGroupsExchangeThroughThreadgroupMemory) {
  const uint32_t n = 256 * 16;
  KernelHarness h(kReverseIsa);
  ASSERT_TRUE(h.status().ok()) << h.status().error().message;
  std::vector<float> in(n);
  for (uint32_t i = 0; i < n; ++i) in[i] = static_cast<float>(i) * 0.5f;
  h.SetBuffer(0, in);
  h.SetBuffer(1, std::vector<float>(n));
  ASSERT_TRUE(h.DispatchThreads({n, 1, 1}, {256, 1, 1}).ok());
  ASSERT_EQ(h.error(), nullptr) << h.error()->message;
  const std::vector<float> out = h.Read<float>(1);
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t group = i / 256, t = i % 256;
    EXPECT_EQ(out[i], in[group * 256 + (255 - t)]) << "thread " << i;
  }
}

// A tree reduction: log2(256) steps, a barrier after each, inside a loop.
constexpr char kTreeSum[] = R"(
.kernel tree_sum
.buffer 0 u0 device int in
.buffer 1 u2 device int out
.threadgroup_memory 1024
    mov.u32 r0, %thread_position_in_grid.x
    mov.u32 r1, %thread_index_in_threadgroup
    ld.device.i32 r2, [u0 + r0*4]
    st.threadgroup.i32 [r1*4], r2
    threadgroup_barrier.mem_threadgroup
    mov.u32 r3, 128
loop:
    lt.u32 r4, r1, r3
    bz r4, skip, skip
    add.u32 r5, r1, r3
    ld.threadgroup.i32 r6, [r5*4]
    ld.threadgroup.i32 r7, [r1*4]
    add.i32 r7, r7, r6
    st.threadgroup.i32 [r1*4], r7
skip:
    threadgroup_barrier.mem_threadgroup
    shr.u32 r3, r3, 1
    bnz r3, loop, end
end:
    eq.u32 r8, r1, 0
    bz r8, out, out
    ld.threadgroup.i32 r9, [0]
    mov.u32 r10, %threadgroup_position_in_grid.x
    st.device.i32 [u2 + r10*4], r9
out:
    exit
.end
)";

TEST(Barrier, TreeReductionWithBarriersInALoop) {
  const uint32_t groups = 64, n = groups * 256;
  for (int host_threads : {1, 3}) {
    KernelHarness h(kTreeSum, "", "m1", host_threads);
    ASSERT_TRUE(h.status().ok()) << h.status().error().message;
    std::vector<int32_t> in(n);
    for (uint32_t i = 0; i < n; ++i) {
      in[i] = static_cast<int32_t>((i * 2654435761u) % 1000) - 500;
    }
    h.SetBuffer(0, in);
    h.SetBuffer(1, std::vector<int32_t>(groups));
    ASSERT_TRUE(h.DispatchThreadgroups({groups, 1, 1}, {256, 1, 1}).ok());
    ASSERT_EQ(h.error(), nullptr) << h.error()->message;
    const std::vector<int32_t> out = h.Read<int32_t>(1);
    for (uint32_t g = 0; g < groups; ++g) {
      const int32_t expected =
          std::accumulate(in.begin() + g * 256, in.begin() + (g + 1) * 256, 0);
      EXPECT_EQ(out[g], expected) << "threadgroup " << g;
    }
  }
}

// `if (tid < 16) threadgroup_barrier(...); out[tid] = tid;`: the other
// lanes skip the barrier and go on (lanes that skip it straight to `exit`
// have returned, and a barrier waits for them no more than Apple's GPUs
// do: ExitedThreadsDoNotBlockABarrier).
constexpr char kDivergentBarrier[] = R"(
.kernel divergent_barrier
.buffer 0 u0 device int out
    mov.u32 r0, %thread_index_in_threadgroup
    lt.u32 r1, r0, 16
    bz r1, skip, skip
    threadgroup_barrier.mem_threadgroup
skip:
    st.device.i32 [u0 + r0*4], r0
    exit
.end
)";

TEST(Barrier, DivergentBarrierIsReported) {
  KernelHarness h(kDivergentBarrier);
  ASSERT_TRUE(h.status().ok()) << h.status().error().message;
  h.SetBuffer(0, std::vector<int32_t>(64));
  ASSERT_TRUE(h.DispatchThreads({64, 1, 1}, {64, 1, 1}).ok());
  ASSERT_NE(h.error(), nullptr);
  EXPECT_EQ(h.error()->fault.kind, emu::FaultKind::kDivergentBarrier);
  EXPECT_NE(h.error()->message.find("divergent"), std::string::npos)
      << h.error()->message;
  EXPECT_NE(h.error()->message.find("divergent_barrier"), std::string::npos)
      << h.error()->message;
  // The report names the ISA line of the barrier instruction (line 7 of
  // the text, counting the leading newline as line 1).
  EXPECT_NE(h.error()->message.find("test.s:7"), std::string::npos)
      << h.error()->message;
}

// Threads that returned before a barrier do not block the others (Apple
// GPUs behave this way and real MSL relies on it).
constexpr char kExitedThreadsAndBarrier[] = R"(
.kernel exited_then_barrier
.buffer 0 u0 device int out
.threadgroup_memory 512
    mov.u32 r0, %thread_index_in_threadgroup
    ge.u32 r1, r0, 100
    bnz r1, leave, cont
cont:
    st.threadgroup.i32 [r0*4], r0
    threadgroup_barrier.mem_threadgroup
    sub.u32 r2, 99, r0
    ld.threadgroup.i32 r3, [r2*4]
    st.device.i32 [u0 + r0*4], r3
    exit
leave:
    exit
.end
)";

TEST(Barrier, ExitedThreadsDoNotBlockABarrier) {
  KernelHarness h(kExitedThreadsAndBarrier);
  ASSERT_TRUE(h.status().ok()) << h.status().error().message;
  h.SetBuffer(0, std::vector<int32_t>(128, -1));
  ASSERT_TRUE(h.DispatchThreads({128, 1, 1}, {128, 1, 1}).ok());
  ASSERT_EQ(h.error(), nullptr) << h.error()->message;
  const std::vector<int32_t> out = h.Read<int32_t>(0);
  for (int i = 0; i < 128; ++i) EXPECT_EQ(out[i], i < 100 ? 99 - i : -1);
}

}  // namespace
}  // namespace mtlemu
