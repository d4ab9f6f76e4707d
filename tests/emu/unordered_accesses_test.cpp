// FindUnorderedThreadgroupAccesses (emu/exec/unordered_accesses.h): the
// threadgroup reads and writes with a branch, and no barrier, between
// them; written by hand for small kernels whose pairs are known.
#include <gtest/gtest.h>

#include <string>

#include "tests/support/kernel_harness.h"

namespace mtlemu {
namespace {

using ::mtlemu::testing::KernelHarness;

std::vector<emu::UnorderedAccesses> PairsOf(const std::string& body) {
  KernelHarness h(
      ".kernel k\n.buffer 0 u0 device int out\n"
      ".threadgroup_memory 1024\n"
      "    mov.u32 r1, %thread_index_in_threadgroup\n"
      "    mov.u32 r9, %thread_index_in_simdgroup\n" +
      body + "    exit\n.end\n");
  EXPECT_TRUE(h.status().ok()) << h.status().error().message;
  if (!h.status().ok()) return {};
  return h.pipeline().kernelFor(1).unordered_accesses;
}

// Read the others' slots, branch, overwrite them (kl_forward's race).
TEST(UnorderedAccessesTest, AReadThenABranchThenAWriteIsAPair) {
  const auto pairs = PairsOf(
      "    ld.threadgroup.i32 r2, [r9*4]\n"  // pc 2
      "    bnz r9, skip, skip\n"             // pc 3
      "    st.threadgroup.i32 [r1*4], r2\n"  // pc 4
      "skip:\n");
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0].read, 2u);
  EXPECT_EQ(pairs[0].write, 4u);
}

// partial[tid] += partial[tid + s]: no branch between, either order alike.
TEST(UnorderedAccessesTest, AReadAndAWriteInOneRunAreNone) {
  EXPECT_TRUE(PairsOf("    ld.threadgroup.i32 r2, [r9*4]\n"
                      "    add.i32 r2, r2, 1\n"
                      "    st.threadgroup.i32 [r1*4], r2\n")
                  .empty());
}

TEST(UnorderedAccessesTest, ABarrierBetweenOrdersThem) {
  EXPECT_TRUE(PairsOf("    ld.threadgroup.i32 r2, [r9*4]\n"
                      "    threadgroup_barrier.mem_threadgroup\n"
                      "    bnz r9, skip, skip\n"
                      "    st.threadgroup.i32 [r1*4], r2\n"
                      "skip:\n")
                  .empty());
}

// A barrier missing between a write and a read of others' slots: a pair,
// and the read waits for the other SIMD groups' writes.
TEST(UnorderedAccessesTest, AWriteThenAReadIsAPairAndTheReadWaits) {
  KernelHarness h(R"(
.kernel k
.buffer 0 u0 device int out
.threadgroup_memory 1024
    mov.u32 r1, %thread_index_in_threadgroup
    st.threadgroup.i32 [r1*4], r1
    add.u32 r2, r1, 1
    ld.threadgroup.i32 r3, [r2*4]
    exit
.end
)");
  ASSERT_TRUE(h.status().ok()) << h.status().error().message;
  const emu::DecodedKernel& k = h.pipeline().kernelFor(1);
  ASSERT_EQ(k.unordered_accesses.size(), 1u);
  EXPECT_EQ(k.unordered_accesses[0].write, 1u);
  EXPECT_EQ(k.unordered_accesses[0].read, 3u);
  EXPECT_TRUE(k.code[3].yield_before);
}

// Two writes are no pair: both orders keep one of the values.
TEST(UnorderedAccessesTest, TwoWritesAreNone) {
  EXPECT_TRUE(PairsOf("    st.threadgroup.i32 [r9*4], r1\n"
                      "    bnz r9, skip, skip\n"
                      "    st.threadgroup.i32 [r1*4], r1\n"
                      "skip:\n")
                  .empty());
}

// A loop without a barrier: the write of one time round and the read of
// the next have the back edge between them.
TEST(UnorderedAccessesTest, ALoopWithoutABarrierIsAPair) {
  const auto pairs = PairsOf(
      "    mov.u32 r3, 4\n"
      "loop:\n"
      "    ld.threadgroup.i32 r2, [r1*4]\n"  // pc 3
      "    add.i32 r2, r2, 1\n"
      "    st.threadgroup.i32 [r1*4], r2\n"  // pc 5
      "    sub.u32 r3, r3, 1\n"
      "    bnz r3, loop, end\n"
      "end:\n");
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0].read, 3u);
  EXPECT_EQ(pairs[0].write, 5u);
}

// The tree reduction of barrier_test.cpp: a barrier after each step.
TEST(UnorderedAccessesTest, ATreeReductionWithBarriersIsNone) {
  EXPECT_TRUE(PairsOf("    st.threadgroup.i32 [r1*4], r1\n"
                      "    threadgroup_barrier.mem_threadgroup\n"
                      "    mov.u32 r3, 128\n"
                      "loop:\n"
                      "    lt.u32 r4, r1, r3\n"
                      "    bz r4, skip, skip\n"
                      "    add.u32 r5, r1, r3\n"
                      "    ld.threadgroup.i32 r6, [r5*4]\n"
                      "    ld.threadgroup.i32 r7, [r1*4]\n"
                      "    add.i32 r7, r7, r6\n"
                      "    st.threadgroup.i32 [r1*4], r7\n"
                      "skip:\n"
                      "    threadgroup_barrier.mem_threadgroup\n"
                      "    shr.u32 r3, r3, 1\n"
                      "    bnz r3, loop, end\n"
                      "end:\n")
                  .empty());
}

}  // namespace
}  // namespace mtlemu
