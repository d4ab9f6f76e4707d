// Metal's compute limits as the host API enforces them, and the shape of
// dispatches: edge threadgroups of dispatchThreads, whole threadgroups of
// dispatchThreadgroups, and every position special register in 1-D, 2-D
// and 3-D grids against a C++ loop over the grid.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "tests/support/kernel_harness.h"

namespace mtlemu {
namespace {

using ::mtlemu::testing::KernelHarness;
using ::mtlemu::testing::RanOk;
using ::testing::AssertionFailure;
using ::testing::AssertionResult;
using ::testing::AssertionSuccess;

// Checks that `s` is an error whose message contains every one of `parts`.
AssertionResult FailsWith(const Status& s,
                          std::initializer_list<std::string_view> parts) {
  if (s.ok()) return AssertionFailure() << "no error";
  for (std::string_view part : parts) {
    if (s.error().message.find(part) == std::string::npos) {
      return AssertionFailure()
             << "'" << part << "' not in: " << s.error().message;
    }
  }
  return AssertionSuccess();
}

// Every thread adds 1 to count[linear thread_position_in_grid.x].
constexpr char kCount[] = R"(
.kernel count
.buffer 0 u0 device uint count
    mov.u32 r0, %thread_position_in_grid.x
    atomic_add.device.u32 r1, [u0 + r0*4], 1
    exit
.end
)";

// --- threads per threadgroup -------------------------------------------------

TEST(LimitsTest, ThreadgroupOf1025ThreadsIsRejected) {
  KernelHarness h(kCount);
  ASSERT_TRUE(h.status().ok()) << h.status().error().message;
  h.SetBuffer(0, std::vector<uint32_t>(4096));
  for (MTLSize group : {MTLSize{1025}, MTLSize{32, 33}, MTLSize{4, 16, 17},
                        MTLSize{1, 1, 1025}}) {
    SCOPED_TRACE(
        fmt::format("{}x{}x{}", group.width, group.height, group.depth));
    const uint64_t total = group.width * group.height * group.depth;
    const std::string size =
        fmt::format("threadgroup size {}x{}x{} = {} threads", group.width,
                    group.height, group.depth, total);
    EXPECT_TRUE(
        FailsWith(h.DispatchThreads({4096}, group),
                  {"dispatchThreads", size,
                   "maxTotalThreadsPerThreadgroup (1024)", "kernel 'count'"}));
    EXPECT_TRUE(FailsWith(h.DispatchThreadgroups({2}, group),
                          {"dispatchThreadgroups", size,
                           "maxTotalThreadsPerThreadgroup (1024)"}));
  }
}

TEST(LimitsTest, ThreadgroupSizeWhoseProductWrapsIsRejected) {
  // 2^22 x 2^21 x 2^21 = 2^64 threads: 0 in 64-bit arithmetic.
  KernelHarness h(kCount);
  h.SetBuffer(0, std::vector<uint32_t>(16));
  EXPECT_TRUE(FailsWith(
      h.DispatchThreads(
          {1}, {uint64_t{1} << 22, uint64_t{1} << 21, uint64_t{1} << 21}),
      {"maxTotalThreadsPerThreadgroup (1024)"}));
  EXPECT_TRUE(FailsWith(
      h.DispatchThreadgroups({1}, {uint64_t{1} << 32, uint64_t{1} << 32, 1}),
      {"maxTotalThreadsPerThreadgroup (1024)"}));
}

TEST(LimitsTest, GridOver32BitsIsRejected) {
  KernelHarness h(kCount);
  h.SetBuffer(0, std::vector<uint32_t>(16));
  EXPECT_TRUE(FailsWith(h.DispatchThreads({uint64_t{1} << 32}, {64}),
                        {"threadsPerGrid", "2^32-1"}));
  // 2^62 threadgroups of 4 threads: 2^64 threads, 0 in 64-bit arithmetic.
  EXPECT_TRUE(FailsWith(h.DispatchThreadgroups({uint64_t{1} << 62}, {4}),
                        {"dispatchThreadgroups", "2^32-1"}));
}

TEST(LimitsTest, ThreadgroupOf1024ThreadsRunsEveryThreadOnce) {
  KernelHarness h(kCount);
  h.SetBuffer(0, std::vector<uint32_t>(4096));
  ASSERT_TRUE(RanOk(h, h.DispatchThreads({4096}, {1024})));
  for (uint32_t c : h.Read<uint32_t>(0)) ASSERT_EQ(c, 1u);
  ASSERT_TRUE(RanOk(h, h.DispatchThreadgroups({4}, {1024})));
  for (uint32_t c : h.Read<uint32_t>(0)) ASSERT_EQ(c, 2u);
}

TEST(LimitsTest, ZeroThreadgroupDimensionIsRejected) {
  KernelHarness h(kCount);
  h.SetBuffer(0, std::vector<uint32_t>(16));
  EXPECT_TRUE(FailsWith(h.DispatchThreads({16}, {16, 0, 1}),
                        {"16x0x1", "zero dimension"}));
  EXPECT_TRUE(FailsWith(h.DispatchThreadgroups({1}, {0}), {"zero dimension"}));
}

TEST(LimitsTest, KernelMaxTotalThreadsPerThreadgroupIsEnforced) {
  KernelHarness h(R"(
.kernel small_groups
.buffer 0 u0 device uint count
.max_total_threads_per_threadgroup 128
    mov.u32 r0, %thread_position_in_grid.x
    atomic_add.device.u32 r1, [u0 + r0*4], 1
    exit
.end
)");
  ASSERT_TRUE(h.status().ok()) << h.status().error().message;
  EXPECT_EQ(h.pipeline().maxTotalThreadsPerThreadgroup(), 128u);
  h.SetBuffer(0, std::vector<uint32_t>(256));
  EXPECT_TRUE(FailsWith(h.DispatchThreads({256}, {256}),
                        {"256 threads", "maxTotalThreadsPerThreadgroup (128)",
                         "kernel 'small_groups'"}));
  EXPECT_TRUE(FailsWith(h.DispatchThreadgroups({1}, {16, 9}),
                        {"144 threads", "(128)"}));
  ASSERT_TRUE(RanOk(h, h.DispatchThreads({256}, {128})));
  for (uint32_t c : h.Read<uint32_t>(0)) EXPECT_EQ(c, 1u);
}

// --- threadgroup memory ------------------------------------------------------

// 16 KB static plus a [[threadgroup(0)]] block; 1024 threads write the
// block's last 4 KB.
constexpr char kBigThreadgroupMemory[] = R"(
.kernel big_tg
.buffer 0 u0 device uint out
.threadgroup 0 u2 block
.threadgroup_memory 16384
    mov.u32 r0, %thread_index_in_threadgroup
    shl.u32 r1, r0, 2
    st.threadgroup.u32 [u2 + r1 + 12288], r0
    threadgroup_barrier.mem_threadgroup
    ld.threadgroup.u32 r3, [u2 + r1 + 12288]
    st.device.u32 [u0 + r0*4], r3
    exit
.end
)";

TEST(LimitsTest, ThreadgroupMemoryOver32KBIsRejected) {
  KernelHarness h(kBigThreadgroupMemory);
  ASSERT_TRUE(h.status().ok()) << h.status().error().message;
  h.SetBuffer(0, std::vector<uint32_t>(1024));
  ASSERT_TRUE(h.SetThreadgroupMemoryLength(16400, 0).ok());
  EXPECT_TRUE(FailsWith(h.DispatchThreads({1024}, {1024}),
                        {"kernel 'big_tg'", "32784 bytes",
                         "maxThreadgroupMemoryLength (32768 bytes)"}));
  // Exactly 32 KB is allowed.
  ASSERT_TRUE(h.SetThreadgroupMemoryLength(16384, 0).ok());
  ASSERT_TRUE(RanOk(h, h.DispatchThreads({1024}, {1024})));
  const std::vector<uint32_t> out = h.Read<uint32_t>(0);
  for (uint32_t i = 0; i < 1024; ++i) ASSERT_EQ(out[i], i);
}

TEST(LimitsTest, SetThreadgroupMemoryLengthOver32KBIsRejected) {
  KernelHarness h(kBigThreadgroupMemory);
  h.SetBuffer(0, std::vector<uint32_t>(1024));
  ASSERT_TRUE(h.SetThreadgroupMemoryLength(32784, 0).ok());
  EXPECT_TRUE(FailsWith(h.DispatchThreads({1024}, {1024}),
                        {"setThreadgroupMemoryLength", "32784",
                         "maxThreadgroupMemoryLength (32768 bytes)"}));
}

TEST(LimitsTest, StaticThreadgroupMemoryOver32KBIsRejected) {
  KernelHarness h(R"(
.kernel too_big
.threadgroup_memory 32784
    exit
.end
)");
  EXPECT_TRUE(FailsWith(h.status(), {"kernel 'too_big' declares 32784 bytes",
                                     "maxThreadgroupMemoryLength (32768"}));
}

TEST(LimitsTest, ThreadgroupMemoryLengthMustBeAMultipleOf16) {
  KernelHarness h(kBigThreadgroupMemory);
  h.SetBuffer(0, std::vector<uint32_t>(1024));
  ASSERT_TRUE(h.SetThreadgroupMemoryLength(100, 0).ok());
  EXPECT_TRUE(
      FailsWith(h.DispatchThreads({1024}, {1024}),
                {"setThreadgroupMemoryLength", "100", "not a multiple of 16"}));
}

TEST(LimitsTest, MissingThreadgroupMemoryLengthIsNamed) {
  KernelHarness h(kBigThreadgroupMemory);
  h.SetBuffer(0, std::vector<uint32_t>(1024));
  EXPECT_TRUE(FailsWith(h.DispatchThreads({1024}, {1024}),
                        {"threadgroup memory at index 0", "'block'",
                         "setThreadgroupMemoryLength"}));
}

// --- buffers and bytes -------------------------------------------------------

// Copies the n bytes of `bytes` (n in out[0]) and the last byte to out.
constexpr char kBytes[] = R"(
.kernel bytes
.buffer 0 u0 constant uchar bytes
.buffer 1 u2 device uint out
    ld.constant.u8 r0, [u0]
    ld.constant.u8 r1, [u0 + 4095]
    st.device.u32 [u2], r0
    st.device.u32 [u2 + 4], r1
    exit
.end
)";

TEST(LimitsTest, SetBytesOver4096BytesIsRejected) {
  KernelHarness h(kBytes);
  h.SetBuffer(1, std::vector<uint32_t>(2));
  std::array<uint8_t, 4097> too_many{};
  h.SetBytes(0, too_many);
  EXPECT_TRUE(FailsWith(h.DispatchThreads({1}, {1}),
                        {"setBytes", "4097 bytes", "index 0", "4096"}));
  std::array<uint8_t, 4096> enough{};
  enough[0] = 17;
  enough[4095] = 42;
  h.SetBytes(0, enough);
  ASSERT_TRUE(RanOk(h, h.DispatchThreads({1}, {1})));
  EXPECT_EQ(h.Read<uint32_t>(1), (std::vector<uint32_t>{17, 42}));
}

TEST(LimitsTest, BufferIndex31IsRejected) {
  KernelHarness h(kCount);
  h.SetBuffer(0, std::vector<uint32_t>(16));
  h.SetBuffer(31, std::vector<uint32_t>(16));
  EXPECT_TRUE(
      FailsWith(h.DispatchThreads({16}, {16}), {"buffer index 31", "0..30"}));
}

TEST(LimitsTest, SetBytesAtIndex31IsRejected) {
  KernelHarness h(kCount);
  h.SetBuffer(0, std::vector<uint32_t>(16));
  h.SetBytes(31, uint32_t{5});
  EXPECT_TRUE(
      FailsWith(h.DispatchThreads({16}, {16}), {"buffer index 31", "0..30"}));
}

TEST(LimitsTest, KernelBufferIndex31IsRejected) {
  KernelHarness h(R"(
.kernel high_index
.buffer 31 u0 device uint x
    exit
.end
)");
  EXPECT_TRUE(FailsWith(h.status(), {"buffer index 31", "0..30"}));
}

TEST(LimitsTest, MissingBufferBindingNamesIndexAndName) {
  KernelHarness h(R"(
.kernel needs_two
.buffer 0 u0 device float in
.buffer 2 u2 device float out
    mov.f32 r0, 1.0
    st.device.f32 [u2], r0
    exit
.end
)");
  h.SetBuffer(0, std::vector<float>(4));
  EXPECT_TRUE(FailsWith(
      h.DispatchThreads({4}, {4}),
      {"kernel 'needs_two'", "buffer at index 2", "'out'", "none is bound"}));
}

// A buffer argument no instruction reads is inactive (Metal's
// MTLArgument.isActive) and need not be bound; an active one must be.
TEST(LimitsTest, InactiveBufferNeedsNoBinding) {
  KernelHarness h(R"(
.kernel one_of_two
.buffer 0 u0 device float out
.buffer 1 u2 device float unused
    mov.f32 r0, 2.5
    st.device.f32 [u0], r0
    exit
.end
)");
  h.SetBuffer(0, std::vector<float>(1));
  ASSERT_TRUE(Runs(h, {1}, {1}));
  EXPECT_EQ(h.Read<float>(0), std::vector<float>{2.5f});
}

// --- dispatch shapes and position registers ----------------------------------

// The special registers each thread records, in order.
constexpr const char* kRegisters[] = {
    "thread_position_in_grid.x",
    "thread_position_in_grid.y",
    "thread_position_in_grid.z",
    "threadgroup_position_in_grid.x",
    "threadgroup_position_in_grid.y",
    "threadgroup_position_in_grid.z",
    "thread_position_in_threadgroup.x",
    "thread_position_in_threadgroup.y",
    "thread_position_in_threadgroup.z",
    "thread_index_in_threadgroup",
    "simdgroup_index_in_threadgroup",
    "thread_index_in_simdgroup",
    "threads_per_threadgroup.x",
    "threads_per_threadgroup.y",
    "threads_per_threadgroup.z",
    "dispatch_threads_per_threadgroup.x",
    "dispatch_threads_per_threadgroup.y",
    "dispatch_threads_per_threadgroup.z",
    "threads_per_grid.x",
    "threads_per_grid.y",
    "threads_per_grid.z",
    "threadgroups_per_grid.x",
    "threadgroups_per_grid.y",
    "threadgroups_per_grid.z",
    "simdgroups_per_threadgroup",
    "quadgroup_index_in_threadgroup",
    "thread_index_in_quadgroup",
    "quadgroups_per_threadgroup",
    "dispatch_simdgroups_per_threadgroup",
    "dispatch_quadgroups_per_threadgroup",
};
constexpr int kNumRegisters = std::size(kRegisters);
// One record per thread: the registers, then a count of the threads that
// wrote it.
constexpr int kRecord = kNumRegisters + 1;

// Thread at grid position (x, y, z) writes record (z * H + y) * W + x of a
// W x H x D grid.
std::string PositionKernel() {
  std::string s =
      ".kernel positions\n"
      ".buffer 0 u0 device uint records\n"
      "    mov.u32 r0, %thread_position_in_grid.z\n"
      "    mul.u32 r0, r0, %threads_per_grid.y\n"
      "    add.u32 r0, r0, %thread_position_in_grid.y\n"
      "    mul.u32 r0, r0, %threads_per_grid.x\n"
      "    add.u32 r0, r0, %thread_position_in_grid.x\n" +
      fmt::format("    mul.u32 r1, r0, {}\n", 4 * kRecord);
  for (int k = 0; k < kNumRegisters; ++k) {
    s += fmt::format(
        "    mov.u32 r2, %{}\n"
        "    st.device.u32 [u0 + r1 + {}], r2\n",
        kRegisters[k], 4 * k);
  }
  return s + fmt::format(
                 "    atomic_add.device.u32 r2, [u0 + r1 + {}], 1\n"
                 "    exit\n"
                 ".end\n",
                 4 * kNumRegisters);
}

using Size3 = std::array<uint64_t, 3>;

// The records a dispatch must produce: a C++ loop over threadgroups and
// the threads of each (cut at the grid's edge for dispatchThreads).
std::vector<uint32_t> ExpectedRecords(const Size3& grid, const Size3& group) {
  const Size3 groups = {(grid[0] + group[0] - 1) / group[0],
                        (grid[1] + group[1] - 1) / group[1],
                        (grid[2] + group[2] - 1) / group[2]};
  std::vector<uint32_t> out(grid[0] * grid[1] * grid[2] * kRecord, 0);
  for (uint64_t gz = 0; gz < groups[2]; ++gz) {
    for (uint64_t gy = 0; gy < groups[1]; ++gy) {
      for (uint64_t gx = 0; gx < groups[0]; ++gx) {
        const Size3 g = {gx, gy, gz};
        Size3 size;  // this threadgroup's actual size
        for (int d = 0; d < 3; ++d) {
          size[d] = std::min(group[d], grid[d] - g[d] * group[d]);
        }
        const uint64_t threads = size[0] * size[1] * size[2];
        const uint64_t dispatch = group[0] * group[1] * group[2];
        for (uint64_t tz = 0; tz < size[2]; ++tz) {
          for (uint64_t ty = 0; ty < size[1]; ++ty) {
            for (uint64_t tx = 0; tx < size[0]; ++tx) {
              const Size3 t = {tx, ty, tz};
              Size3 p;
              for (int d = 0; d < 3; ++d) p[d] = g[d] * group[d] + t[d];
              const uint64_t index = (tz * size[1] + ty) * size[0] + tx;
              const uint64_t values[kRecord] = {p[0],
                                                p[1],
                                                p[2],
                                                g[0],
                                                g[1],
                                                g[2],
                                                t[0],
                                                t[1],
                                                t[2],
                                                index,
                                                index / 32,
                                                index % 32,
                                                size[0],
                                                size[1],
                                                size[2],
                                                group[0],
                                                group[1],
                                                group[2],
                                                grid[0],
                                                grid[1],
                                                grid[2],
                                                groups[0],
                                                groups[1],
                                                groups[2],
                                                (threads + 31) / 32,
                                                index / 4,
                                                index % 4,
                                                (threads + 3) / 4,
                                                (dispatch + 31) / 32,
                                                (dispatch + 3) / 4,
                                                1};
              uint32_t* record =
                  &out[((p[2] * grid[1] + p[1]) * grid[0] + p[0]) * kRecord];
              for (int k = 0; k < kRecord; ++k) {
                record[k] = static_cast<uint32_t>(values[k]);
              }
            }
          }
        }
      }
    }
  }
  return out;
}

// Dispatches PositionKernel with dispatchThreads(grid, group), or with
// dispatchThreadgroups(grid / group, group) when `whole_groups`, and
// compares every record.
void ExpectPositions(const Size3& grid, const Size3& group, bool whole_groups) {
  SCOPED_TRACE(
      fmt::format("{} {}x{}x{} in {}x{}x{}",
                  whole_groups ? "dispatchThreadgroups" : "dispatchThreads",
                  grid[0], grid[1], grid[2], group[0], group[1], group[2]));
  KernelHarness h(PositionKernel());
  ASSERT_TRUE(h.status().ok()) << h.status().error().message;
  const uint64_t threads = grid[0] * grid[1] * grid[2];
  // One spare record at the end must stay untouched.
  h.SetBuffer(0, std::vector<uint32_t>((threads + 1) * kRecord, 0));
  const MTLSize g{grid[0], grid[1], grid[2]};
  const MTLSize t{group[0], group[1], group[2]};
  if (whole_groups) {
    ASSERT_TRUE(RanOk(
        h,
        h.DispatchThreadgroups(
            {grid[0] / group[0], grid[1] / group[1], grid[2] / group[2]}, t)));
  } else {
    ASSERT_TRUE(RanOk(h, h.DispatchThreads(g, t)));
  }
  std::vector<uint32_t> want = ExpectedRecords(grid, group);
  want.resize((threads + 1) * kRecord, 0);
  const std::vector<uint32_t> got = h.Read<uint32_t>(0);
  for (size_t i = 0; i < want.size(); ++i) {
    const size_t thread = i / kRecord, k = i % kRecord;
    ASSERT_EQ(got[i], want[i])
        << "record " << thread << ": "
        << (k < kNumRegisters ? kRegisters[k] : "write count");
  }
}

TEST(DispatchShapeTest, GridNotAMultipleOfTheThreadgroup1D) {
  // 100 threads in 32s: the last threadgroup has 4 threads.
  ExpectPositions({100, 1, 1}, {32, 1, 1}, false);
  ExpectPositions({1, 1, 1}, {64, 1, 1}, false);
}

TEST(DispatchShapeTest, GridNotAMultipleOfTheThreadgroup2D) {
  ExpectPositions({37, 19, 1}, {8, 4, 1}, false);
  ExpectPositions({70, 3, 1}, {64, 16, 1}, false);
}

TEST(DispatchShapeTest, GridNotAMultipleOfTheThreadgroup3D) {
  ExpectPositions({13, 7, 5}, {4, 3, 2}, false);
  ExpectPositions({9, 9, 9}, {8, 8, 8}, false);
}

TEST(DispatchShapeTest, GridThatIsAMultipleOfTheThreadgroup) {
  ExpectPositions({256, 4, 1}, {64, 2, 1}, false);
  ExpectPositions({48, 6, 4}, {16, 3, 2}, false);
}

TEST(DispatchShapeTest, DispatchThreadgroupsRunsWholeThreadgroups) {
  ExpectPositions({15, 6, 1}, {5, 3, 1}, true);
  ExpectPositions({48, 16, 1}, {16, 4, 1}, true);
  ExpectPositions({16, 6, 6}, {8, 2, 3}, true);
  ExpectPositions({1024, 1, 1}, {1024, 1, 1}, true);
}

}  // namespace
}  // namespace mtlemu
