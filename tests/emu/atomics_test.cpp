// Atomics on int, uint, long and ulong in device and threadgroup memory,
// float atomics in device memory: returned old values, final values under
// contention from many threadgroups and host threads, a spin lock guarding
// plain loads and stores across host threads, and misaligned addresses.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "tests/support/kernel_harness.h"

namespace mtlemu {
namespace {

using ::mtlemu::testing::KernelHarness;
using ::mtlemu::testing::Runs;
using ::testing::AssertionFailure;
using ::testing::AssertionResult;
using ::testing::AssertionSuccess;

// --- the integer operations --------------------------------------------------

enum class Form { kRmw, kCas, kLoad, kStore };

struct AtomicOp {
  const char* name;
  Form form;
  // The new value from old value a, operand v and (cas) desired w.
  uint32_t (*apply)(uint32_t a, uint32_t v, uint32_t w, bool is_signed);
};

void PrintTo(const AtomicOp& op, std::ostream* os) { *os << op.name; }

uint32_t MinOf(uint32_t a, uint32_t v, uint32_t, bool is_signed) {
  return is_signed ? static_cast<uint32_t>(std::min(static_cast<int32_t>(a),
                                                    static_cast<int32_t>(v)))
                   : std::min(a, v);
}
uint32_t MaxOf(uint32_t a, uint32_t v, uint32_t, bool is_signed) {
  return is_signed ? static_cast<uint32_t>(std::max(static_cast<int32_t>(a),
                                                    static_cast<int32_t>(v)))
                   : std::max(a, v);
}

const AtomicOp kAdd = {
    "atomic_add", Form::kRmw,
    [](uint32_t a, uint32_t v, uint32_t, bool) { return a + v; }};
const AtomicOp kSub = {
    "atomic_sub", Form::kRmw,
    [](uint32_t a, uint32_t v, uint32_t, bool) { return a - v; }};
const AtomicOp kMin = {"atomic_min", Form::kRmw, MinOf};
const AtomicOp kMax = {"atomic_max", Form::kRmw, MaxOf};
const AtomicOp kAnd = {
    "atomic_and", Form::kRmw,
    [](uint32_t a, uint32_t v, uint32_t, bool) { return a & v; }};
const AtomicOp kOr = {
    "atomic_or", Form::kRmw,
    [](uint32_t a, uint32_t v, uint32_t, bool) { return a | v; }};
const AtomicOp kXor = {
    "atomic_xor", Form::kRmw,
    [](uint32_t a, uint32_t v, uint32_t, bool) { return a ^ v; }};
const AtomicOp kExchange = {
    "atomic_exchange", Form::kRmw,
    [](uint32_t, uint32_t v, uint32_t, bool) { return v; }};
const AtomicOp kCompareExchange = {
    "atomic_compare_exchange", Form::kCas,
    [](uint32_t a, uint32_t v, uint32_t w, bool) { return a == v ? w : a; }};
const AtomicOp kLoad = {"atomic_load", Form::kLoad,
                        [](uint32_t a, uint32_t, uint32_t, bool) { return a; }};
const AtomicOp kStore = {
    "atomic_store", Form::kStore,
    [](uint32_t, uint32_t v, uint32_t, bool) { return v; }};

struct IntType {
  const char* suffix;
  bool is_signed;
};
void PrintTo(const IntType& t, std::ostream* os) { *os << t.suffix; }
const IntType kI32 = {"i32", true};
const IntType kU32 = {"u32", false};

// The instruction text of `op` on [ADDR] with operand r1, desired r2, old
// value into r3 (0 for atomic_store).
std::string Instruction(const AtomicOp& op, std::string_view space,
                        const IntType& t, std::string_view address) {
  const std::string mnemonic =
      fmt::format("{}.{}.{}", op.name, space, t.suffix);
  switch (op.form) {
    case Form::kRmw:
      return fmt::format("{} r3, [{}], r1", mnemonic, address);
    case Form::kCas:
      return fmt::format("{} r3, [{}], r1, r2", mnemonic, address);
    case Form::kLoad:
      return fmt::format("{} r3, [{}]", mnemonic, address);
    case Form::kStore:
      return fmt::format("{} [{}], r1\n    mov.u32 r3, 0", mnemonic, address);
  }
  return "";
}

using OpParam = std::tuple<AtomicOp, IntType, bool /*threadgroup*/>;

std::string OpName(const ::testing::TestParamInfo<OpParam>& info) {
  const auto& [op, type, threadgroup] = info.param;
  return fmt::format("{}_{}_{}", op.name, type.suffix,
                     threadgroup ? "threadgroup" : "device");
}

// Thread i applies the operation to its own word mem[i] (copied into
// threadgroup memory and back for the threadgroup variant) with operand[i]
// and desired[i], and records the old value.
std::string OwnWordKernel(const AtomicOp& op, const IntType& t,
                          bool threadgroup) {
  std::string s =
      ".kernel own_word\n"
      ".buffer 0 u0 device uint mem\n"
      ".buffer 1 u2 device uint operand\n"
      ".buffer 2 u4 device uint desired\n"
      ".buffer 3 u6 device uint old\n"
      ".threadgroup_memory 256\n"
      "    mov.u32 r0, %thread_position_in_grid.x\n"
      "    mov.u32 r7, %thread_index_in_threadgroup\n"
      "    ld.device.u32 r1, [u2 + r0*4]\n"
      "    ld.device.u32 r2, [u4 + r0*4]\n";
  if (threadgroup) {
    s += "    ld.device.u32 r5, [u0 + r0*4]\n"
         "    st.threadgroup.u32 [r7*4], r5\n    " +
         Instruction(op, "threadgroup", t, "r7*4") +
         "\n"
         "    ld.threadgroup.u32 r5, [r7*4]\n"
         "    st.device.u32 [u0 + r0*4], r5\n";
  } else {
    s += "    " + Instruction(op, "device", t, "u0 + r0*4") + "\n";
  }
  return s +
         "    st.device.u32 [u6 + r0*4], r3\n"
         "    exit\n"
         ".end\n";
}

class AtomicOpTest : public ::testing::TestWithParam<OpParam> {};

TEST_P(AtomicOpTest, OwnWordGetsTheOperationAndReturnsTheOldValue) {
  const auto& [op, type, threadgroup] = GetParam();
  constexpr int kThreads = 128;
  std::mt19937 rng(42);
  std::vector<uint32_t> mem(kThreads), operand(kThreads), desired(kThreads);
  for (int i = 0; i < kThreads; ++i) {
    // Small, large and negative values, some equal.
    const uint32_t pick[] = {0u,          1u,
                             0x7fffffffu, 0x80000000u,
                             0xfffffffeu, static_cast<uint32_t>(rng())};
    mem[i] = pick[rng() % 6];
    operand[i] = pick[rng() % 6];
    desired[i] = static_cast<uint32_t>(rng());
    if (op.form == Form::kCas && i % 2 == 0) operand[i] = mem[i];
  }
  KernelHarness h(OwnWordKernel(op, type, threadgroup));
  h.SetBuffer(0, mem);
  h.SetBuffer(1, operand);
  h.SetBuffer(2, desired);
  h.SetBuffer(3, std::vector<uint32_t>(kThreads, 0xdeadbeef));
  ASSERT_TRUE(Runs(h, {kThreads}, {64}));
  const std::vector<uint32_t> final_mem = h.Read<uint32_t>(0);
  const std::vector<uint32_t> old = h.Read<uint32_t>(3);
  for (int i = 0; i < kThreads; ++i) {
    EXPECT_EQ(final_mem[i],
              op.apply(mem[i], operand[i], desired[i], type.is_signed))
        << "thread " << i << ": " << mem[i] << " op " << operand[i];
    EXPECT_EQ(old[i], op.form == Form::kStore ? 0u : mem[i]) << "thread " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllOps, AtomicOpTest,
    ::testing::Combine(::testing::Values(kAdd, kSub, kMin, kMax, kAnd, kOr,
                                         kXor, kExchange, kCompareExchange,
                                         kLoad, kStore),
                       ::testing::Values(kI32, kU32), ::testing::Bool()),
    OpName);

// All threads of the grid apply the operation to one word (in device
// memory: 8 threadgroups of 64; in threadgroup memory: one threadgroup of
// 512, with thread 0 moving the word in and out).
std::string SharedWordKernel(const AtomicOp& op, const IntType& t,
                             bool threadgroup) {
  std::string s =
      ".kernel shared_word\n"
      ".buffer 0 u0 device uint word\n"
      ".buffer 1 u2 device uint operand\n"
      ".buffer 2 u4 device uint old\n"
      ".threadgroup_memory 16\n"
      "    mov.u32 r0, %thread_position_in_grid.x\n"
      "    ld.device.u32 r1, [u2 + r0*4]\n";
  if (!threadgroup) {
    s += "    " + Instruction(op, "device", t, "u0 + 4") + "\n";
  } else {
    s += "    eq.u32 r5, r0, 0\n"
         "    bz r5, in, in\n"
         "    ld.device.u32 r6, [u0 + 4]\n"
         "    st.threadgroup.u32 [8], r6\n"
         "in:\n"
         "    threadgroup_barrier.mem_threadgroup\n    " +
         Instruction(op, "threadgroup", t, "8") +
         "\n"
         "    threadgroup_barrier.mem_threadgroup\n"
         "    bz r5, out, out\n"
         "    ld.threadgroup.u32 r6, [8]\n"
         "    st.device.u32 [u0 + 4], r6\n"
         "out:\n";
  }
  return s +
         "    st.device.u32 [u4 + r0*4], r3\n"
         "    exit\n"
         ".end\n";
}

class SharedWordTest : public ::testing::TestWithParam<OpParam> {};

TEST_P(SharedWordTest, FinalValueIsTheFoldOfAllOperands) {
  const auto& [op, type, threadgroup] = GetParam();
  constexpr int kThreads = 512;
  std::mt19937 rng(7);
  std::vector<uint32_t> operand(kThreads);
  for (uint32_t& v : operand) v = rng();
  if (op.name == kAdd.name || op.name == kSub.name) {
    // Distinct and small, so that the old values show the order applied.
    for (int i = 0; i < kThreads; ++i) operand[i] = 1 + 3 * i + (i % 2);
  }
  const uint32_t initial = 0x5a5a1234;
  KernelHarness h(SharedWordKernel(op, type, threadgroup));
  h.SetBuffer(0, std::vector<uint32_t>{0xdeadbeef, initial, 0xdeadbeef});
  h.SetBuffer(1, operand);
  h.SetBuffer(2, std::vector<uint32_t>(kThreads));
  ASSERT_TRUE(Runs(h, {kThreads}, {threadgroup ? 512u : 64u}));
  const std::vector<uint32_t> word = h.Read<uint32_t>(0);
  uint32_t want = initial;
  for (uint32_t v : operand) want = op.apply(want, v, 0, type.is_signed);
  EXPECT_EQ(word[1], want);
  EXPECT_EQ(word[0], 0xdeadbeef);
  EXPECT_EQ(word[2], 0xdeadbeef);
  if (op.name == kAdd.name || op.name == kSub.name) {
    // Each thread saw the value after some set of earlier operations: in
    // the order of the old values, each is the previous one plus (minus) the
    // previous thread's operand.
    const std::vector<uint32_t> old = h.Read<uint32_t>(2);
    std::vector<int> order(kThreads);
    std::iota(order.begin(), order.end(), 0);
    const bool add = op.name == kAdd.name;
    std::sort(order.begin(), order.end(), [&](int a, int b) {
      return add ? old[a] < old[b] : old[a] > old[b];
    });
    uint32_t expect = initial;
    for (int i : order) {
      ASSERT_EQ(old[i], expect) << "thread " << i;
      expect = op.apply(expect, operand[i], 0, false);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(FoldingOps, SharedWordTest,
                         ::testing::Combine(::testing::Values(kAdd, kSub, kMin,
                                                              kMax, kAnd, kOr,
                                                              kXor),
                                            ::testing::Values(kI32, kU32),
                                            ::testing::Bool()),
                         OpName);

TEST(AtomicsTest, ExchangeHandsEveryValueOnExactlyOnce) {
  // 512 threads exchange i + 1 into one word: the old values and the final
  // value are the initial value and every i + 1, each once.
  KernelHarness h(R"(
.kernel swap
.buffer 0 u0 device uint word
.buffer 1 u2 device uint old
    mov.u32 r0, %thread_position_in_grid.x
    add.u32 r1, r0, 1
    atomic_exchange.device.u32 r2, [u0], r1
    st.device.u32 [u2 + r0*4], r2
    exit
.end
)");
  h.SetBuffer(0, std::vector<uint32_t>{0});
  h.SetBuffer(1, std::vector<uint32_t>(512));
  ASSERT_TRUE(Runs(h, {512}, {64}));
  std::vector<uint32_t> seen = h.Read<uint32_t>(1);
  seen.push_back(h.Read<uint32_t>(0)[0]);
  std::sort(seen.begin(), seen.end());
  for (uint32_t i = 0; i <= 512; ++i) ASSERT_EQ(seen[i], i);
}

// Every thread takes a ticket with a load / compare-exchange retry loop on
// the counter at {base} in {space} memory. The threadgroup variant zeroes the
// counter first and publishes it to counter[1] at the end.
constexpr char kTickets[] = R"(
.kernel tickets
.buffer 0 u0 device uint counter
.buffer 1 u2 device uint ticket
.threadgroup_memory 16
    mov.u32 r0, %thread_position_in_grid.x
    eq.u32 r5, r0, 0
{init}
retry:
    atomic_load.{space}.u32 r1, [{base}]
    add.u32 r2, r1, 1
    atomic_compare_exchange.{space}.u32 r3, [{base}], r1, r2
    ne.u32 r4, r3, r1
    bnz r4, retry, won
won:
    st.device.u32 [u2 + r0*4], r1
{publish}
    exit
.end
)";

void ExpectTickets(bool threadgroup, int threads, int group) {
  const std::string isa =
      threadgroup
          ? fmt::format(kTickets, fmt::arg("space", "threadgroup"),
                        fmt::arg("base", "4"),
                        fmt::arg("init",
                                 "    bz r5, start, start\n"
                                 "    atomic_store.threadgroup.u32 [4], 0\n"
                                 "start:\n"
                                 "    threadgroup_barrier.mem_threadgroup"),
                        fmt::arg("publish",
                                 "    threadgroup_barrier.mem_threadgroup\n"
                                 "    bz r5, done, done\n"
                                 "    atomic_load.threadgroup.u32 r1, [4]\n"
                                 "    st.device.u32 [u0 + 4], r1\n"
                                 "done:"))
          : fmt::format(kTickets, fmt::arg("space", "device"),
                        fmt::arg("base", "u0"), fmt::arg("init", ""),
                        fmt::arg("publish", ""));
  KernelHarness h(isa);
  h.SetBuffer(0, std::vector<uint32_t>{0, 0});
  h.SetBuffer(1, std::vector<uint32_t>(threads));
  ASSERT_TRUE(Runs(h, {static_cast<uint64_t>(threads)},
                   {static_cast<uint64_t>(group)}));
  std::vector<uint32_t> tickets = h.Read<uint32_t>(1);
  std::sort(tickets.begin(), tickets.end());
  for (int i = 0; i < threads; ++i) ASSERT_EQ(tickets[i], i);
  EXPECT_EQ(h.Read<uint32_t>(0)[threadgroup ? 1 : 0],
            static_cast<uint32_t>(threads));
}

TEST(AtomicsTest, CompareExchangeLoopHandsOutUniqueTicketsInDeviceMemory) {
  ExpectTickets(false, 1024, 128);
}

TEST(AtomicsTest, CompareExchangeLoopHandsOutUniqueTicketsInThreadgroupMemory) {
  ExpectTickets(true, 1024, 1024);
}

TEST(AtomicsTest, InactiveLanesDoNotTakePart) {
  // Only threads with i % 3 == 1 add i; the others branch around the add.
  KernelHarness h(R"(
.kernel some
.buffer 0 u0 device uint sum
    mov.u32 r0, %thread_position_in_grid.x
    rem.u32 r1, r0, 3
    eq.u32 r1, r1, 1
    bz r1, done, done
    atomic_add.device.u32 r2, [u0], r0
done:
    exit
.end
)");
  h.SetBuffer(0, std::vector<uint32_t>{0});
  ASSERT_TRUE(Runs(h, {1000}, {100}));
  uint32_t want = 0;
  for (uint32_t i = 0; i < 1000; ++i) want += i % 3 == 1 ? i : 0;
  EXPECT_EQ(h.Read<uint32_t>(0)[0], want);
}

// --- float atomics -----------------------------------------------------------

TEST(AtomicsTest, FloatOperationsOnOwnWords) {
  KernelHarness h(R"(
.kernel floats
.buffer 0 u0 device float add
.buffer 1 u2 device float sub
.buffer 2 u4 device float swap
.buffer 3 u6 device float store
.buffer 4 u8 device float operand
.buffer 5 u10 device float old
    mov.u32 r0, %thread_position_in_grid.x
    ld.device.f32 r1, [u8 + r0*4]
    atomic_add.device.f32 r2, [u0 + r0*4], r1
    atomic_sub.device.f32 r3, [u2 + r0*4], r1
    atomic_exchange.device.f32 r4, [u4 + r0*4], r1
    atomic_load.device.f32 r5, [u6 + r0*4]
    atomic_store.device.f32 [u6 + r0*4], r1
    mul.u32 r6, r0, 16
    st.device.f32 [u10 + r6], r2
    st.device.f32 [u10 + r6 + 4], r3
    st.device.f32 [u10 + r6 + 8], r4
    st.device.f32 [u10 + r6 + 12], r5
    exit
.end
)");
  constexpr int kThreads = 96;
  std::vector<float> a(kThreads), b(kThreads), c(kThreads), d(kThreads),
      v(kThreads);
  for (int i = 0; i < kThreads; ++i) {
    a[i] = 0.1f * i - 3;
    b[i] = 1.0f / (i + 1);
    c[i] = -7.5f * i;
    d[i] = 1e30f * i;
    v[i] = 0.3f * (i % 11) - 1.7f;
  }
  h.SetBuffer(0, a);
  h.SetBuffer(1, b);
  h.SetBuffer(2, c);
  h.SetBuffer(3, d);
  h.SetBuffer(4, v);
  h.SetBuffer(5, std::vector<float>(4 * kThreads));
  ASSERT_TRUE(Runs(h, {kThreads}, {32}));
  const std::vector<float> add = h.Read<float>(0), sub = h.Read<float>(1),
                           swap = h.Read<float>(2), store = h.Read<float>(3),
                           old = h.Read<float>(5);
  for (int i = 0; i < kThreads; ++i) {
    EXPECT_EQ(add[i], a[i] + v[i]) << i;
    EXPECT_EQ(sub[i], b[i] - v[i]) << i;
    EXPECT_EQ(swap[i], v[i]) << i;
    EXPECT_EQ(store[i], v[i]) << i;
    EXPECT_EQ(old[4 * i], a[i]) << i;
    EXPECT_EQ(old[4 * i + 1], b[i]) << i;
    EXPECT_EQ(old[4 * i + 2], c[i]) << i;
    EXPECT_EQ(old[4 * i + 3], d[i]) << i;
  }
}

TEST(AtomicsTest, FloatAddFromManyThreadgroupsIsExact) {
  // 64 threadgroups x 128 threads add 0.5 and subtract 0.25 (exact in
  // float at every step up to 2^24).
  KernelHarness h(R"(
.kernel fsum
.buffer 0 u0 device float acc
    atomic_add.device.f32 r0, [u0], 0.5
    atomic_sub.device.f32 r0, [u0 + 4], 0.25
    exit
.end
)");
  h.SetBuffer(0, std::vector<float>{1.0f, 4096.0f});
  ASSERT_TRUE(Runs(h, {64 * 128}, {128}));
  const std::vector<float> acc = h.Read<float>(0);
  EXPECT_EQ(acc[0], 1.0f + 0.5f * 64 * 128);
  EXPECT_EQ(acc[1], 4096.0f - 0.25f * 64 * 128);
}

// --- many threadgroups, many host threads ------------------------------------

TEST(AtomicsTest, OneCounterFromFourThousandThreadgroups) {
  // 4096 threadgroups x 256 threads each add 1; the count is exact on one
  // host thread and on all of them.
  constexpr char kIsa[] = R"(
.kernel count
.buffer 0 u0 device uint counter
    atomic_add.device.u32 r0, [u0], 1
    atomic_sub.device.i32 r0, [u0 + 4], 1
    exit
.end
)";
  for (int host_threads : {1, 0}) {
    KernelHarness h(kIsa, "", "m1", host_threads);
    h.SetBuffer(0, std::vector<uint32_t>{0, 0});
    ASSERT_TRUE(Runs(h, {4096 * 256}, {256}));
    const std::vector<uint32_t> counter = h.Read<uint32_t>(0);
    EXPECT_EQ(counter[0], 4096u * 256u) << host_threads << " host threads";
    EXPECT_EQ(static_cast<int32_t>(counter[1]), -4096 * 256)
        << host_threads << " host threads";
  }
}

// Bins each input value (0..255) with device atomics, directly or through a
// threadgroup-local histogram merged at the end.
constexpr char kHistogram[] = R"(
.kernel direct
.buffer 0 u0 device uchar in
.buffer 1 u2 device uint bins
    mov.u32 r0, %thread_position_in_grid.x
    ld.device.u8 r1, [u0 + r0]
    atomic_add.device.u32 r2, [u2 + r1*4], 1
    exit
.end

.kernel local
.buffer 0 u0 device uchar in
.buffer 1 u2 device uint bins
.threadgroup_memory 1024
    mov.u32 r0, %thread_position_in_grid.x
    mov.u32 r7, %thread_index_in_threadgroup
    atomic_store.threadgroup.u32 [r7*4], 0
    threadgroup_barrier.mem_threadgroup
    ld.device.u8 r1, [u0 + r0]
    atomic_add.threadgroup.u32 r2, [r1*4], 1
    threadgroup_barrier.mem_threadgroup
    atomic_load.threadgroup.u32 r3, [r7*4]
    bz r3, done, done
    atomic_add.device.u32 r2, [u2 + r7*4], r3
done:
    exit
.end
)";

TEST(AtomicsTest, HistogramMatchesReference) {
  constexpr int kGroups = 1024, kGroupSize = 256;
  std::mt19937 rng(1234);
  std::vector<uint8_t> in(kGroups * kGroupSize);
  for (uint8_t& v : in) {
    // Skewed: low bins are hot, so contention is real.
    const uint32_t r = rng();
    v = static_cast<uint8_t>((r & 1) ? r % 8 : (r >> 8) % 256);
  }
  std::vector<uint32_t> want(256, 0);
  for (uint8_t v : in) ++want[v];
  for (const char* kernel : {"direct", "local"}) {
    for (int host_threads : {1, 0}) {
      SCOPED_TRACE(fmt::format("{}, {} host threads", kernel, host_threads));
      KernelHarness h(kHistogram, kernel, "m1", host_threads);
      h.SetBuffer(0, in);
      h.SetBuffer(1, std::vector<uint32_t>(256, 0));
      ASSERT_TRUE(Runs(h, {kGroups * kGroupSize}, {kGroupSize}));
      EXPECT_EQ(h.Read<uint32_t>(1), want);
    }
  }
}

// --- 64-bit integers
// ------------------------------------------------------------

// An operation on 64-bit words: the new value from old a, operand v and
// (cas) desired w.
struct Atomic64Op {
  const char* name;
  Form form;
  uint64_t (*apply)(uint64_t a, uint64_t v, uint64_t w, bool is_signed);
};
void PrintTo(const Atomic64Op& op, std::ostream* os) { *os << op.name; }

uint64_t Min64(uint64_t a, uint64_t v, uint64_t, bool is_signed) {
  return is_signed ? static_cast<uint64_t>(std::min(static_cast<int64_t>(a),
                                                    static_cast<int64_t>(v)))
                   : std::min(a, v);
}
uint64_t Max64(uint64_t a, uint64_t v, uint64_t, bool is_signed) {
  return is_signed ? static_cast<uint64_t>(std::max(static_cast<int64_t>(a),
                                                    static_cast<int64_t>(v)))
                   : std::max(a, v);
}

const Atomic64Op k64Ops[] = {
    {"atomic_add", Form::kRmw,
     [](uint64_t a, uint64_t v, uint64_t, bool) { return a + v; }},
    {"atomic_sub", Form::kRmw,
     [](uint64_t a, uint64_t v, uint64_t, bool) { return a - v; }},
    {"atomic_min", Form::kRmw, Min64},
    {"atomic_max", Form::kRmw, Max64},
    {"atomic_and", Form::kRmw,
     [](uint64_t a, uint64_t v, uint64_t, bool) { return a & v; }},
    {"atomic_or", Form::kRmw,
     [](uint64_t a, uint64_t v, uint64_t, bool) { return a | v; }},
    {"atomic_xor", Form::kRmw,
     [](uint64_t a, uint64_t v, uint64_t, bool) { return a ^ v; }},
    {"atomic_exchange", Form::kRmw,
     [](uint64_t, uint64_t v, uint64_t, bool) { return v; }},
    {"atomic_compare_exchange", Form::kCas,
     [](uint64_t a, uint64_t v, uint64_t w, bool) { return a == v ? w : a; }},
    {"atomic_load", Form::kLoad,
     [](uint64_t a, uint64_t, uint64_t, bool) { return a; }},
    {"atomic_store", Form::kStore,
     [](uint64_t, uint64_t v, uint64_t, bool) { return v; }},
};

const IntType kI64 = {"i64", true};
const IntType kU64 = {"u64", false};

using Op64Param = std::tuple<Atomic64Op, IntType, bool /*threadgroup*/>;

std::string Op64Name(const ::testing::TestParamInfo<Op64Param>& info) {
  const auto& [op, type, threadgroup] = info.param;
  return fmt::format("{}_{}_{}", op.name, type.suffix,
                     threadgroup ? "threadgroup" : "device");
}

// OwnWordKernel on 64-bit words: the operand in r10:r11, desired in
// r12:r13, the old value into r14:r15.
std::string OwnWord64Kernel(const Atomic64Op& op, const IntType& t,
                            bool threadgroup) {
  const std::string space = threadgroup ? "threadgroup" : "device";
  const std::string address = threadgroup ? "r7*8" : "u0 + r0*8";
  const std::string mnemonic =
      fmt::format("{}.{}.{}", op.name, space, t.suffix);
  std::string inst;
  switch (op.form) {
    case Form::kRmw:
      inst = fmt::format("{} r14, [{}], r10", mnemonic, address);
      break;
    case Form::kCas:
      inst = fmt::format("{} r14, [{}], r10, r12", mnemonic, address);
      break;
    case Form::kLoad:
      inst = fmt::format("{} r14, [{}]", mnemonic, address);
      break;
    case Form::kStore:
      inst = fmt::format("{} [{}], r10\n    mov.u64 r14, 0", mnemonic, address);
      break;
  }
  std::string s =
      ".kernel own_word\n"
      ".buffer 0 u0 device ulong mem\n"
      ".buffer 1 u2 device ulong operand\n"
      ".buffer 2 u4 device ulong desired\n"
      ".buffer 3 u6 device ulong old\n"
      ".threadgroup_memory 512\n"
      "    mov.u32 r0, %thread_position_in_grid.x\n"
      "    mov.u32 r7, %thread_index_in_threadgroup\n"
      "    ld.device.u64 r10, [u2 + r0*8]\n"
      "    ld.device.u64 r12, [u4 + r0*8]\n";
  if (threadgroup) {
    s += "    ld.device.u64 r8, [u0 + r0*8]\n"
         "    st.threadgroup.u64 [r7*8], r8\n    " +
         inst +
         "\n"
         "    ld.threadgroup.u64 r8, [r7*8]\n"
         "    st.device.u64 [u0 + r0*8], r8\n";
  } else {
    s += "    " + inst + "\n";
  }
  return s +
         "    st.device.u64 [u6 + r0*8], r14\n"
         "    exit\n"
         ".end\n";
}

class Atomic64OpTest : public ::testing::TestWithParam<Op64Param> {};

TEST_P(Atomic64OpTest, OwnWordGetsTheOperationAndReturnsTheOldValue) {
  const auto& [op, type, threadgroup] = GetParam();
  constexpr int kThreads = 128;
  std::mt19937_64 rng(64);
  std::vector<uint64_t> mem(kThreads), operand(kThreads), desired(kThreads);
  for (int i = 0; i < kThreads; ++i) {
    // Values that differ in the high half only, carries across bit 32,
    // the extremes of both signednesses.
    const uint64_t pick[] = {0u,
                             1u,
                             0xffffffffu,
                             0x100000000u,
                             0x1ffffffffu,
                             0x7fffffffffffffffu,
                             0x8000000000000000u,
                             0xffffffff00000000u,
                             0xfffffffffffffffeu,
                             rng()};
    mem[i] = pick[rng() % 10];
    operand[i] = pick[rng() % 10];
    desired[i] = rng();
    if (op.form == Form::kCas && i % 2 == 0) operand[i] = mem[i];
  }
  KernelHarness h(OwnWord64Kernel(op, type, threadgroup));
  h.SetBuffer(0, mem);
  h.SetBuffer(1, operand);
  h.SetBuffer(2, desired);
  h.SetBuffer(3, std::vector<uint64_t>(kThreads, 0xdeadbeefdeadbeefu));
  ASSERT_TRUE(Runs(h, {kThreads}, {64}));
  const std::vector<uint64_t> final_mem = h.Read<uint64_t>(0);
  const std::vector<uint64_t> old = h.Read<uint64_t>(3);
  for (int i = 0; i < kThreads; ++i) {
    EXPECT_EQ(final_mem[i],
              op.apply(mem[i], operand[i], desired[i], type.is_signed))
        << "thread " << i << ": " << mem[i] << " op " << operand[i];
    EXPECT_EQ(old[i], op.form == Form::kStore ? 0u : mem[i]) << "thread " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(AllOps, Atomic64OpTest,
                         ::testing::Combine(::testing::ValuesIn(k64Ops),
                                            ::testing::Values(kI64, kU64),
                                            ::testing::Bool()),
                         Op64Name);

TEST(AtomicsTest, SixtyFourBitCounterCarriesFromManyThreadgroups) {
  // 1024 threadgroups x 64 threads add 2^32 - 1 and subtract 2^32 + 1 from
  // 64-bit words: exact in both halves on one host thread and on all.
  constexpr char kIsa[] = R"(
.kernel count64
.buffer 0 u0 device ulong counter
    mov.u64 r0, 0xffffffff
    atomic_add.device.u64 r2, [u0], r0
    mov.u64 r0, 0x100000001
    atomic_sub.device.i64 r2, [u0 + 8], r0
    mov.u32 r4, %thread_position_in_grid.x
    cvt.u64.u32 r6, r4
    atomic_max.device.u64 r2, [u0 + 16], r6
    exit
.end
)";
  constexpr uint64_t kThreads = 1024 * 64;
  for (int host_threads : {1, 0}) {
    KernelHarness h(kIsa, "", "m1", host_threads);
    h.SetBuffer(0, std::vector<uint64_t>{0, 0, 0});
    ASSERT_TRUE(Runs(h, {kThreads}, {64}));
    const std::vector<uint64_t> c = h.Read<uint64_t>(0);
    EXPECT_EQ(c[0], kThreads * 0xffffffffu) << host_threads;
    EXPECT_EQ(static_cast<int64_t>(c[1]),
              -static_cast<int64_t>(kThreads * 0x100000001u))
        << host_threads;
    EXPECT_EQ(c[2], kThreads - 1) << host_threads;
  }
}

TEST(AtomicsTest, MisalignedSixtyFourBitAtomicFaults) {
  // 4-byte aligned is not enough for a 64-bit atomic.
  KernelHarness h(R"(
.kernel misaligned
.buffer 0 u0 device ulong data
    mov.u64 r0, 1
    atomic_add.device.u64 r2, [u0 + 4], r0
    exit
.end
)");
  h.SetBuffer(0, std::vector<uint64_t>(4, 0));
  ASSERT_TRUE(h.status().ok()) << h.status().error().message;
  ASSERT_TRUE(h.DispatchThreads({1}, {1}).ok());
  ASSERT_NE(h.error(), nullptr) << "no fault";
  EXPECT_EQ(h.error()->fault.kind, emu::FaultKind::kMisalignedAtomic);
}

TEST(AtomicsTest, WordAtomicReachesTheRestOfABuffersLastWord) {
  // A buffer of three 16-bit elements (6 bytes): the word at offset 4
  // holds the last one and two bytes past the end, which a 16-bit
  // compare-and-swap loop works on; the word at 8 is out of bounds.
  constexpr char kIsa[] = R"(
.kernel last_word
.buffer 0 u0 device ushort data
.buffer 1 u2 device uint old
    mov.u32 r0, %thread_position_in_grid.x
    mul.u32 r1, r0, 4
    atomic_or.device.u32 r2, [u0 + r1], 0x00010001
    st.device.u32 [u2 + r0*4], r2
    exit
.end
)";
  {
    KernelHarness h(kIsa);
    h.SetBuffer(0, std::vector<uint16_t>{0x10, 0x20, 0x30});
    h.SetBuffer(1, std::vector<uint32_t>(2, 0xdeadbeef));
    ASSERT_TRUE(Runs(h, {2}, {2}));
    EXPECT_EQ(h.Read<uint16_t>(0), (std::vector<uint16_t>{0x11, 0x21, 0x31}));
    EXPECT_EQ(h.Read<uint32_t>(1)[0], 0x00200010u);
    EXPECT_EQ(h.Read<uint32_t>(1)[1], 0x30u);
  }
  {
    // The caller's memory (a NumPy array's): the two bytes after its six
    // are someone else's and stay as they were; the atomic sees them as
    // zero, as a GPU sees the rest of a buffer's page.
    alignas(4) uint16_t host[4] = {0x10, 0x20, 0x30, 0xabcc};
    for (int run = 0; run < 2; ++run) {
      KernelHarness h(kIsa, "", "m1", /*host_threads=*/run == 0 ? 1 : 0);
      h.SetBufferNoCopy(0, host, 6);
      h.SetBuffer(1, std::vector<uint32_t>(2, 0xdeadbeef));
      ASSERT_TRUE(Runs(h, {2}, {1}));
      EXPECT_EQ(host[3], 0xabcc) << "wrote past the buffer";
      EXPECT_EQ(h.Read<uint32_t>(1)[1], run == 0 ? 0x30u : 0x31u);
    }
    EXPECT_EQ(host[2], 0x31);
  }
  KernelHarness h(kIsa);
  h.SetBuffer(0, std::vector<uint16_t>{0x10, 0x20, 0x30});
  h.SetBuffer(1, std::vector<uint32_t>(3, 0));
  ASSERT_TRUE(h.status().ok()) << h.status().error().message;
  // The third word is wholly past the end: a fault under the fault policy
  // (under the default, NearBufferTest's zeros and a finding).
  h.device().options().out_of_bounds = emu::OutOfBoundsPolicy::kFault;
  ASSERT_TRUE(h.DispatchThreads({3}, {3}).ok());
  ASSERT_NE(h.error(), nullptr) << "no fault";
  EXPECT_EQ(h.error()->fault.kind, emu::FaultKind::kOutOfBounds);
  EXPECT_EQ(h.error()->fault.lane, 2);
}

TEST(AtomicsTest, CompareExchangeLoopOnABuffersLastHalfWordLosesNothing) {
  // Triton's fp16 atomic add: load the word, swap in the word with the
  // half added, until the swap finds what was loaded. The half is the last
  // of a 6-byte buffer of the caller's memory, so every load and swap takes
  // the tail path; one thread per threadgroup adds 1, on several host
  // threads. A load that wrote its copy back would undo other swaps.
  constexpr char kIsa[] = R"(
.kernel tail_counter
.buffer 0 u0 device uint data
    mov.u32 r0, %thread_index_in_threadgroup
    bnz r0, done, done
    atomic_load.device.u32 r2, [u0 + 4]
retry:
    add.u32 r3, r2, 1
    atomic_compare_exchange.device.u32 r4, [u0 + 4], r2, r3
    ne.u32 r5, r4, r2
    mov.u32 r2, r4
    bnz r5, retry, done
done:
    exit
.end
)";
  constexpr int kGroups = 3000;
  for (int host_threads : {1, 4}) {
    alignas(4) uint16_t host[4] = {7, 7, 0, 0xabcc};
    KernelHarness h(kIsa, "", "m1", host_threads);
    h.SetBufferNoCopy(0, host, 6);
    ASSERT_TRUE(Runs(h, {kGroups * 32}, {32}));
    EXPECT_EQ(host[2], kGroups) << host_threads << " host threads";
    EXPECT_EQ(host[3], 0xabcc);
    EXPECT_EQ(host[0], 7);
  }
}

// --- a spin lock across host threads
// ------------------------------------------

// Thread 0 of each threadgroup takes the lock (a compare-exchange loop),
// adds 1 to 64 words with plain loads and stores, and releases it with an
// exchange. An update lost between host threads shows as a count below the
// number of threadgroups; an exchange that returns 0 shows a release of a
// lock nobody held.
constexpr char kSpinLock[] = R"(
.kernel spin_lock
.buffer 0 u0 device {type} lock
.buffer 1 u2 device uint data
.buffer 2 u4 device uint bad_release
    mov.u32 r0, %thread_index_in_threadgroup
    bnz r0, done, done
    mov.{t} r8, 0
    mov.{t} r10, 1
spin:
    atomic_compare_exchange.device.{t} r12, [u0], r8, r10
    ne.{t} r1, r12, r8
    bnz r1, spin, locked
locked:
    mov.u32 r2, 0
copy:
    ld.device.u32 r3, [u2 + r2*4]
    add.u32 r3, r3, 1
    st.device.u32 [u2 + r2*4], r3
    add.u32 r2, r2, 1
    lt.u32 r4, r2, 64
    bnz r4, copy, copied
copied:
    atomic_exchange.device.{t} r12, [u0], r8
    ne.{t} r1, r12, r10
    bz r1, done, done
    atomic_add.device.u32 r5, [u4], 1
done:
    exit
.end
)";

TEST(AtomicsTest, SpinLockKeepsEveryUpdateAcrossHostThreads) {
  constexpr int kGroups = 3000;
  for (const char* t : {"u32", "u64"}) {
    const std::string isa = fmt::format(
        kSpinLock, fmt::arg("t", t),
        fmt::arg("type", std::string_view(t) == "u32" ? "uint" : "ulong"));
    for (int host_threads : {0, 4}) {
      for (int run = 0; run < 5; ++run) {
        SCOPED_TRACE(
            fmt::format("{}, {} host threads, run {}", t, host_threads, run));
        KernelHarness h(isa, "", "m1", host_threads);
        h.SetBuffer(0, std::vector<uint64_t>{0});
        h.SetBuffer(1, std::vector<uint32_t>(64, 0));
        h.SetBuffer(2, std::vector<uint32_t>{0});
        ASSERT_TRUE(Runs(h, {kGroups * 32}, {32}));
        EXPECT_EQ(h.Read<uint32_t>(1), std::vector<uint32_t>(64, kGroups));
        EXPECT_EQ(h.Read<uint32_t>(2)[0], 0u);
        EXPECT_EQ(h.Read<uint64_t>(0)[0], 0u);
      }
    }
  }
}

// --- misaligned addresses ----------------------------------------------------

void ExpectMisaligned(std::string_view isa, std::string_view region) {
  KernelHarness h(isa);
  h.SetBuffer(0, std::vector<uint32_t>(64, 0xdeadbeef));
  ASSERT_TRUE(h.status().ok()) << h.status().error().message;
  const Status s = h.DispatchThreads({64}, {64});
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_NE(h.error(), nullptr) << "no fault";
  const CommandBufferError& e = *h.error();
  EXPECT_EQ(e.code, CommandBufferErrorCode::kPageFault);
  EXPECT_EQ(e.fault.kind, emu::FaultKind::kMisalignedAtomic);
  EXPECT_EQ(e.fault.lane, 3);
  for (std::string_view part :
       {std::string_view("misaligned atomic access in kernel 'misaligned'"),
        std::string_view("thread_position_in_grid (3, 0, 0)"),
        std::string_view("lane 3"), region}) {
    EXPECT_NE(e.message.find(part), std::string::npos)
        << "'" << part << "' not in:\n"
        << e.message;
  }
  // The store before the atomic landed in the faulting SIMD group.
  EXPECT_EQ(h.Read<uint32_t>(0)[31], 31u);
}

TEST(AtomicsTest, MisalignedDeviceAtomicFaults) {
  // Thread 3 adds at byte offset 10 of the buffer, the others at 8.
  ExpectMisaligned(R"(
.kernel misaligned
.buffer 0 u0 device uint data
    mov.u32 r0, %thread_position_in_grid.x
    st.device.u32 [u0 + r0*4], r0
    eq.u32 r1, r0, 3
    mul.u32 r2, r1, 2
    add.u32 r2, r2, 8
    atomic_add.device.u32 r3, [u0 + r2], 1
    exit
.end
)",
                   "buffer(0) 'data' (256 bytes) at offset 10");
}

TEST(AtomicsTest, MisalignedThreadgroupAtomicFaults) {
  ExpectMisaligned(R"(
.kernel misaligned
.buffer 0 u0 device uint data
.threadgroup_memory 64
    mov.u32 r0, %thread_position_in_grid.x
    st.device.u32 [u0 + r0*4], r0
    eq.u32 r1, r0, 3
    mul.u32 r2, r1, 2
    add.u32 r2, r2, 8
    atomic_max.threadgroup.i32 r3, [r2], r0
    exit
.end
)",
                   "threadgroup memory (64 bytes) at offset 10");
}

}  // namespace
}  // namespace mtlemu
