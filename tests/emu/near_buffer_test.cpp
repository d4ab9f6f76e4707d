// Accesses just outside a buffer (emu/exec/near_buffer.h): under the
// default policy they read zeros, store nothing, and are reported with
// their source line while the dispatch goes on; farther away, or under
// OutOfBoundsPolicy::kFault, they fault. Expected values are written from
// what the kernels mean, with the out-of-range bytes as zeros.
#include "emu/exec/near_buffer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/support/kernel_harness.h"

namespace mtlemu {
namespace {

using ::mtlemu::testing::KernelHarness;
using ::mtlemu::testing::Runs;

// MLX's grid_sample in small: each thread loads in[i - 9] and keeps it only
// where i - 9 is in range, so threads 0 to 8 read 36 to 4 bytes before the
// buffer and throw the value away.
constexpr char kCorners[] = R"(
.kernel corners
.buffer 0 u0 device uint in
.buffer 1 u2 device uint out
    mov.u32 r0, %thread_position_in_grid.x
    sub.u32 r1, r0, 9
    ld.device.u32 r2, [u0 + sext(r1)*4]
    lt.u32 r3, r0, 9
    mov.u32 r5, 0
    select.u32 r4, r3, r5, r2
    st.device.u32 [u2 + r0*4], r4
    exit
.end
)";

std::vector<uint32_t> Iota(uint32_t n, uint32_t from) {
  std::vector<uint32_t> v(n);
  for (uint32_t i = 0; i < n; ++i) v[i] = from + i;
  return v;
}

TEST(NearBufferTest, DiscardedReadBeforeABufferGivesTheMacsResult) {
  std::string first;
  for (int host_threads : {1, 4}) {
    SCOPED_TRACE(host_threads);
    KernelHarness h(kCorners, "", "m1", host_threads);
    ASSERT_TRUE(h.status().ok()) << h.status().error().message;
    const std::vector<uint32_t> in = Iota(256, 1000);
    h.SetBuffer(0, in);
    h.SetBuffer(1, std::vector<uint32_t>(256, 7));
    ASSERT_TRUE(Runs(h, {256}, {64}));
    const std::vector<uint32_t> out = h.Read<uint32_t>(1);
    for (uint32_t i = 0; i < 256; ++i) {
      ASSERT_EQ(out[i], i < 9 ? 0u : in[i - 9]) << i;
    }
    ASSERT_NE(h.report(), nullptr);
    ASSERT_NE(h.report()->check, nullptr) << "no finding";
    const emu::CheckReport& r = *h.report()->check;
    EXPECT_EQ(r.checks, "");
    ASSERT_EQ(r.findings.size(), 1u);
    const emu::Finding& f = r.findings[0];
    EXPECT_EQ(f.kind, emu::FindingKind::kNearBufferAccess);
    EXPECT_EQ(f.count, 9u);
    EXPECT_EQ(f.first.type, emu::AccessType::kRead);
    EXPECT_EQ(f.first.location.line, 7u);
    EXPECT_EQ(f.first.thread_position[0], 0u);
    EXPECT_EQ(f.region_offset, -36);
    EXPECT_NE(f.region.find("buffer(0)"), std::string::npos) << f.region;
    const std::string text = f.Describe(r.kernel);
    EXPECT_NE(text.find("access outside a buffer"), std::string::npos) << text;
    EXPECT_NE(text.find("read as zero"), std::string::npos) << text;
    if (first.empty()) first = text;
    EXPECT_EQ(text, first);  // the same example on any thread count
  }
}

TEST(NearBufferTest, UnderTheFaultPolicyTheSameReadFaults) {
  KernelHarness h(kCorners);
  ASSERT_TRUE(h.status().ok());
  h.device().options().out_of_bounds = emu::OutOfBoundsPolicy::kFault;
  h.SetBuffer(0, Iota(64, 1000));
  h.SetBuffer(1, std::vector<uint32_t>(64));
  ASSERT_TRUE(h.DispatchThreads({64}, {64}).ok());
  ASSERT_NE(h.error(), nullptr);
  EXPECT_EQ(h.error()->fault.kind, emu::FaultKind::kOutOfBounds);
  EXPECT_EQ(h.error()->fault.lane, 0);
}

// Thread i stores i to out[i] and out has 40 words: the stores of threads
// 40 to 63 (SIMD group 1, lanes 8 to 31) land past its end.
TEST(NearBufferTest, StoresPastTheEndChangeNothing) {
  constexpr char kIsa[] = R"(
.kernel store_past
.buffer 0 u0 device uint out
.buffer 1 u2 device uint other
    mov.u32 r0, %thread_position_in_grid.x
    st.device.u32 [u0 + r0*4], r0
    exit
.end
)";
  KernelHarness h(kIsa);
  ASSERT_TRUE(h.status().ok());
  h.SetBuffer(0, std::vector<uint32_t>(40, 0xdeadbeef));
  h.SetBuffer(1, std::vector<uint32_t>(64, 5));
  ASSERT_TRUE(Runs(h, {64}, {64}));
  EXPECT_EQ(h.Read<uint32_t>(0), Iota(40, 0));
  EXPECT_EQ(h.Read<uint32_t>(1), std::vector<uint32_t>(64, 5));
  ASSERT_NE(h.report()->check, nullptr);
  ASSERT_EQ(h.report()->check->findings.size(), 1u);
  const emu::Finding& f = h.report()->check->findings[0];
  EXPECT_EQ(f.first.type, emu::AccessType::kWrite);
  EXPECT_EQ(f.count, 24u);
  EXPECT_EQ(f.first.simdgroup, 1u);
  EXPECT_EQ(f.first.lane, 8u);
  EXPECT_EQ(f.region_offset, 160);
}

// Farther than a page from every buffer: a fault, as on a Mac.
TEST(NearBufferTest, AReadFarOutsideStillFaults) {
  constexpr char kIsa[] = R"(
.kernel far
.buffer 0 u0 device uint in
.buffer 1 u2 device uint out
    mov.u32 r0, %thread_position_in_grid.x
    add.u32 r1, r0, 8192
    ld.device.u32 r2, [u0 + r1*4]
    st.device.u32 [u2 + r0*4], r2
    exit
.end
)";
  KernelHarness h(kIsa);
  ASSERT_TRUE(h.status().ok());
  h.SetBuffer(0, Iota(64, 0));
  h.SetBuffer(1, std::vector<uint32_t>(64));
  ASSERT_TRUE(h.DispatchThreads({64}, {64}).ok());
  ASSERT_NE(h.error(), nullptr) << "a read 32 KiB past the end ran";
  EXPECT_EQ(h.error()->fault.kind, emu::FaultKind::kOutOfBounds);
}

// A vector load across the end: the words inside are the buffer's, those
// outside zero.
TEST(NearBufferTest, AVectorLoadAcrossTheEndKeepsTheBytesInside) {
  constexpr char kIsa[] = R"(
.kernel across
.buffer 0 u0 device uint in
.buffer 1 u2 device uint out
    mov.u32 r0, %thread_position_in_grid.x
    ld.device.v4.u32 r4, [u0 + r0*16 + 16]
    st.device.v4.u32 [u2 + r0*16], r4
    exit
.end
)";
  KernelHarness h(kIsa);
  ASSERT_TRUE(h.status().ok());
  h.SetBuffer(0, Iota(6, 100));
  h.SetBuffer(1, std::vector<uint32_t>(4, 9));
  ASSERT_TRUE(Runs(h, {1}, {1}));
  EXPECT_EQ(h.Read<uint32_t>(1), (std::vector<uint32_t>{104, 105, 0, 0}));
  ASSERT_NE(h.report()->check, nullptr);
  EXPECT_EQ(h.report()->check->findings.size(), 1u);
}

TEST(NearBufferTest, PolicyNames) {
  EXPECT_EQ(emu::ParseOutOfBoundsPolicy("fault").value(),
            emu::OutOfBoundsPolicy::kFault);
  EXPECT_EQ(emu::ParseOutOfBoundsPolicy("report").value(),
            emu::OutOfBoundsPolicy::kReport);
  EXPECT_FALSE(emu::ParseOutOfBoundsPolicy("ignore").ok());
}

}  // namespace
}  // namespace mtlemu
