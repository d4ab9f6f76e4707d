// ld and st in the four address spaces, at every width, with every address
// form, under full and partial masks; and the faults of out-of-bounds
// accesses. Expected values come from the input bytes and C++ arithmetic.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <random>
#include <set>
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

// Whether `text` contains `part`; the failure message shows the text.
AssertionResult Mentions(const std::string& text, std::string_view part) {
  if (text.find(part) != std::string::npos) return AssertionSuccess();
  return AssertionFailure() << "'" << part << "' not in:\n" << text;
}

std::vector<uint8_t> RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> out(n);
  for (uint8_t& b : out) b = static_cast<uint8_t>(rng());
  return out;
}

// --- every width through every address space ---------------------------------

enum class Space { kDevice, kConstant, kThreadgroup, kThread };

const char* SpaceName(Space s) {
  switch (s) {
    case Space::kDevice:
      return "device";
    case Space::kConstant:
      return "constant";
    case Space::kThreadgroup:
      return "threadgroup";
    case Space::kThread:
      return "thread";
  }
  return "";
}

void PrintTo(Space s, std::ostream* os) { *os << SpaceName(s); }

// A load/store type: ISA suffix, element bytes, vector count, and how an
// element sits in its 32-bit register(s).
struct Width {
  const char* suffix;
  int size;
  int vector;
  enum Extend { kZero, kSign, kLow16 } extend;
};

const Width kWidths[] = {
    {"u8", 1, 1, Width::kZero},   {"i8", 1, 1, Width::kSign},
    {"u16", 2, 1, Width::kZero},  {"i16", 2, 1, Width::kSign},
    {"f16", 2, 1, Width::kLow16}, {"bf16", 2, 1, Width::kLow16},
    {"u32", 4, 1, Width::kZero},  {"i32", 4, 1, Width::kZero},
    {"f32", 4, 1, Width::kZero},  {"u64", 8, 1, Width::kZero},
    {"i64", 8, 1, Width::kZero},  {"f32", 4, 2, Width::kZero},
    {"u32", 4, 4, Width::kZero},  {"u64", 8, 2, Width::kZero},
    {"f16", 2, 4, Width::kLow16}, {"i8", 1, 4, Width::kSign},
    {"i16", 2, 2, Width::kSign},  {"u32", 4, 3, Width::kZero},
};

void PrintTo(const Width& w, std::ostream* os) {
  *os << (w.vector > 1 ? "v" + std::to_string(w.vector) + "." : "") << w.suffix;
}

constexpr int kRoundTripThreads = 64;

// The 32-bit register words that `w` loads from `bytes`.
std::vector<uint32_t> RegisterWords(const Width& w, const uint8_t* bytes) {
  std::vector<uint32_t> words;
  for (int e = 0; e < w.vector; ++e) {
    const uint8_t* p = bytes + e * w.size;
    if (w.size == 1) {
      words.push_back(w.extend == Width::kSign
                          ? static_cast<uint32_t>(static_cast<int8_t>(*p))
                          : *p);
    } else if (w.size == 2) {
      uint16_t v;
      std::memcpy(&v, p, 2);
      words.push_back(w.extend == Width::kSign
                          ? static_cast<uint32_t>(static_cast<int16_t>(v))
                          : v);
    } else {
      for (int half = 0; half < w.size / 4; ++half) {
        uint32_t v;
        std::memcpy(&v, p + 4 * half, 4);
        words.push_back(v);
      }
    }
  }
  return words;
}

// Loads thread i's element of `in` (from device or constant memory), stores
// it to the space under test, loads it back from there (for threadgroup
// memory: the next thread's element, after a barrier) and writes the
// registers it loaded to out as 32-bit words.
std::string RoundTripKernel(Space space, const Width& w, int words) {
  const int bytes = w.size * w.vector;
  const std::string type =
      (w.vector > 1 ? fmt::format("v{}.", w.vector) : std::string()) + w.suffix;
  std::string s = fmt::format(
      ".kernel roundtrip\n"
      ".buffer 0 u0 {} void in\n"
      ".buffer 1 u2 device uint out\n"
      ".buffer 2 u4 device void scratch\n"
      ".threadgroup_memory 1024\n"
      ".thread_memory 32\n"
      "    mov.u32 r0, %thread_position_in_grid.x\n"
      "    mul.u32 r1, r0, {}\n"
      "    ld.{}.{} r8, [u0 + r1]\n",
      space == Space::kConstant ? "constant" : "device", bytes,
      space == Space::kConstant ? "constant" : "device", type);
  switch (space) {
    case Space::kDevice:
      s += fmt::format(
          "    st.device.{0} [u4 + r1], r8\n"
          "    mov.u32 r8, 0\n    mov.u32 r9, 0\n"
          "    mov.u32 r10, 0\n    mov.u32 r11, 0\n"
          "    ld.device.{0} r8, [u4 + r1]\n",
          type);
      break;
    case Space::kConstant:
      break;
    case Space::kThreadgroup:
      s += fmt::format(
          "    st.threadgroup.{0} [r1], r8\n"
          "    threadgroup_barrier.mem_threadgroup\n"
          "    add.u32 r3, r0, 1\n"
          "    rem.u32 r3, r3, {1}\n"
          "    mul.u32 r3, r3, {2}\n"
          "    ld.threadgroup.{0} r8, [r3]\n",
          type, kRoundTripThreads, bytes);
      break;
    case Space::kThread:
      // Every thread uses the same offset: thread memory must be private.
      s += fmt::format(
          "    st.thread.{0} [8], r8\n"
          "    mov.u32 r8, 0\n    mov.u32 r9, 0\n"
          "    mov.u32 r10, 0\n    mov.u32 r11, 0\n"
          "    ld.thread.{0} r8, [8]\n",
          type);
      break;
  }
  s += fmt::format("    mul.u32 r2, r0, {}\n", words * 4);
  for (int k = 0; k < words; ++k) {
    s += fmt::format("    st.device.u32 [u2 + r2 + {}], r{}\n", 4 * k, 8 + k);
  }
  return s + "    exit\n.end\n";
}

class RoundTripTest
    : public ::testing::TestWithParam<std::tuple<Space, Width>> {};

TEST_P(RoundTripTest, LoadsStoresAndExtends) {
  const auto [space, w] = GetParam();
  const int bytes = w.size * w.vector;
  const std::vector<uint8_t> in =
      RandomBytes(static_cast<size_t>(bytes) * kRoundTripThreads, bytes * 7);
  const int words = static_cast<int>(RegisterWords(w, in.data()).size());
  KernelHarness h(RoundTripKernel(space, w, words));
  h.SetBuffer(0, in);
  h.SetBuffer(1, std::vector<uint32_t>(words * kRoundTripThreads, 0xdeadbeef));
  h.SetBuffer(2, std::vector<uint8_t>(in.size(), 0));
  ASSERT_TRUE(Runs(h, {kRoundTripThreads}, {kRoundTripThreads}));

  const std::vector<uint32_t> out = h.Read<uint32_t>(1);
  for (int i = 0; i < kRoundTripThreads; ++i) {
    const int from =
        space == Space::kThreadgroup ? (i + 1) % kRoundTripThreads : i;
    const std::vector<uint32_t> want = RegisterWords(w, &in[from * bytes]);
    for (int k = 0; k < words; ++k) {
      const uint32_t got = out[i * words + k];
      if (w.extend == Width::kLow16) {
        EXPECT_EQ(got & 0xffffu, want[k]) << "thread " << i << " word " << k;
      } else {
        EXPECT_EQ(got, want[k]) << "thread " << i << " word " << k;
      }
    }
  }
  if (space == Space::kDevice) {
    EXPECT_EQ(h.Read<uint8_t>(2), in) << "st.device wrote other bytes";
  }
}

std::string RoundTripName(
    const ::testing::TestParamInfo<std::tuple<Space, Width>>& info) {
  const auto& [space, w] = info.param;
  return fmt::format("{}_{}{}", SpaceName(space),
                     w.vector > 1 ? fmt::format("v{}", w.vector) : "",
                     w.suffix);
}

INSTANTIATE_TEST_SUITE_P(
    AllSpacesAndWidths, RoundTripTest,
    ::testing::Combine(::testing::Values(Space::kDevice, Space::kConstant,
                                         Space::kThreadgroup, Space::kThread),
                       ::testing::ValuesIn(kWidths)),
    RoundTripName);

// --- narrow values in registers ----------------------------------------------

TEST(MemoryTest, HalfAndBFloatLoadAsFloatBits) {
  // ld.f16 / ld.bf16 put the bits where cvt.f32 reads them.
  const std::vector<float> values = {1.0f,  -2.5f,   0.099975586f, 65504.0f,
                                     -0.0f, 3.0e-5f, 1024.5f,      -7.75f};
  std::vector<uint16_t> halves, bfloats;
  for (float v : values) {
    const _Float16 h = static_cast<_Float16>(v);
    halves.push_back(std::bit_cast<uint16_t>(h));
    bfloats.push_back(static_cast<uint16_t>(std::bit_cast<uint32_t>(v) >> 16));
  }
  KernelHarness h(R"(
.kernel widen
.buffer 0 u0 constant half h
.buffer 1 u2 device bfloat b
.buffer 2 u4 device float out
    mov.u32 r0, %thread_position_in_grid.x
    ld.constant.f16 r1, [u0 + r0*2]
    cvt.f32.f16 r2, r1
    st.device.f32 [u4 + r0*8], r2
    ld.device.bf16 r1, [u2 + r0*2]
    cvt.f32.bf16 r2, r1
    st.device.f32 [u4 + r0*8 + 4], r2
    exit
.end
)");
  h.SetBuffer(0, halves);
  h.SetBuffer(1, bfloats);
  h.SetBuffer(2, std::vector<float>(2 * values.size()));
  ASSERT_TRUE(Runs(h, {values.size()}, {values.size()}));
  const std::vector<float> out = h.Read<float>(2);
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(std::bit_cast<uint32_t>(out[2 * i]),
              std::bit_cast<uint32_t>(
                  static_cast<float>(std::bit_cast<_Float16>(halves[i]))))
        << i;
    EXPECT_EQ(std::bit_cast<uint32_t>(out[2 * i + 1]),
              static_cast<uint32_t>(bfloats[i]) << 16)
        << i;
  }
}

TEST(MemoryTest, NarrowStoresWriteOnlyTheirLowBytes) {
  // Each thread stores 0x11223344 + i at 8, 16 and 32 bits into slots 8
  // bytes apart; the bytes between stay 0xaa.
  KernelHarness h(R"(
.kernel narrow
.buffer 0 u0 device void b8
.buffer 1 u2 device void b16
.buffer 2 u4 device void b32
    mov.u32 r0, %thread_position_in_grid.x
    add.u32 r1, r0, 0x11223344
    st.device.u8 [u0 + r0*8 + 1], r1
    st.device.i16 [u2 + r0*8 + 2], r1
    st.device.u32 [u4 + r0*8 + 4], r1
    exit
.end
)");
  constexpr int kThreads = 40;
  for (int b = 0; b < 3; ++b) {
    h.SetBuffer(b, std::vector<uint8_t>(8 * kThreads, 0xaa));
  }
  ASSERT_TRUE(Runs(h, {kThreads}, {kThreads}));
  for (int b = 0; b < 3; ++b) {
    const int size = 1 << b, offset = 1 << b;
    const std::vector<uint8_t> out = h.Read<uint8_t>(b);
    for (int i = 0; i < kThreads; ++i) {
      const uint32_t v = 0x11223344u + i;
      for (int k = 0; k < 8; ++k) {
        const bool stored = k >= offset && k < offset + size;
        const uint8_t want =
            stored ? static_cast<uint8_t>(v >> (8 * (k - offset))) : 0xaa;
        EXPECT_EQ(out[8 * i + k], want)
            << "store " << 8 * size << " thread " << i << " byte " << k;
      }
    }
  }
}

TEST(MemoryTest, SixtyFourBitValuesUseRegisterPairs) {
  // The low half is in rN, the high half in rN+1: an add carries into the
  // high register, and the halves stored separately come out swapped.
  const std::vector<uint64_t> in = {0x00000000ffffffffull, 0x1ffffffffull,
                                    0xffffffffffffffffull, 0x123456789abcdefull,
                                    0x8000000000000000ull, 7};
  KernelHarness h(R"(
.kernel pairs
.buffer 0 u0 device ulong in
.buffer 1 u2 device ulong sum
.buffer 2 u4 device uint swapped
    mov.u32 r0, %thread_position_in_grid.x
    ld.device.u64 r2, [u0 + r0*8]
    add.u64 r4, r2, 1
    st.device.u64 [u2 + r0*8], r4
    st.device.u32 [u4 + r0*8], r3
    st.device.u32 [u4 + r0*8 + 4], r2
    exit
.end
)");
  h.SetBuffer(0, in);
  h.SetBuffer(1, std::vector<uint64_t>(in.size()));
  h.SetBuffer(2, std::vector<uint32_t>(2 * in.size()));
  ASSERT_TRUE(Runs(h, {in.size()}, {in.size()}));
  const std::vector<uint64_t> sum = h.Read<uint64_t>(1);
  const std::vector<uint32_t> swapped = h.Read<uint32_t>(2);
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(sum[i], in[i] + 1) << i;
    EXPECT_EQ(swapped[2 * i], static_cast<uint32_t>(in[i] >> 32)) << i;
    EXPECT_EQ(swapped[2 * i + 1], static_cast<uint32_t>(in[i])) << i;
  }
}

TEST(MemoryTest, VectorElementsLandInConsecutiveRegisters) {
  // v4.u32 loaded, stored reversed (128 bits); v2.f32 swapped (64 bits);
  // v2.u64 swapped (128 bits).
  KernelHarness h(R"(
.kernel vectors
.buffer 0 u0 device uint in
.buffer 1 u2 device uint rev4
.buffer 2 u4 device uint swap2
.buffer 3 u6 device uint swap64
    mov.u32 r0, %thread_position_in_grid.x
    ld.device.v4.u32 r4, [u0 + r0*16]
    mov.u32 r8, r7
    mov.u32 r9, r6
    mov.u32 r10, r5
    mov.u32 r11, r4
    st.device.v4.u32 [u2 + r0*16], r8
    ld.device.v2.f32 r4, [u0 + r0*16 + 4]
    mov.f32 r8, r5
    mov.f32 r9, r4
    st.device.v2.f32 [u4 + r0*8], r8
    ld.device.v2.u64 r4, [u0 + r0*16]
    mov.u64 r8, r6
    mov.u64 r10, r4
    st.device.v2.u64 [u6 + r0*16], r8
    exit
.end
)");
  constexpr int kThreads = 48;
  std::vector<uint32_t> in(4 * kThreads);
  for (size_t i = 0; i < in.size(); ++i) in[i] = 0x1000u * i + 0xabc;
  h.SetBuffer(0, in);
  h.SetBuffer(1, std::vector<uint32_t>(4 * kThreads));
  h.SetBuffer(2, std::vector<uint32_t>(2 * kThreads));
  h.SetBuffer(3, std::vector<uint32_t>(4 * kThreads));
  ASSERT_TRUE(Runs(h, {kThreads}, {16}));
  const std::vector<uint32_t> rev4 = h.Read<uint32_t>(1);
  const std::vector<uint32_t> swap2 = h.Read<uint32_t>(2);
  const std::vector<uint32_t> swap64 = h.Read<uint32_t>(3);
  for (int i = 0; i < kThreads; ++i) {
    const uint32_t* v = &in[4 * i];
    for (int k = 0; k < 4; ++k) EXPECT_EQ(rev4[4 * i + k], v[3 - k]) << i;
    EXPECT_EQ(swap2[2 * i], v[2]) << i;
    EXPECT_EQ(swap2[2 * i + 1], v[1]) << i;
    EXPECT_EQ(swap64[4 * i], v[2]) << i;
    EXPECT_EQ(swap64[4 * i + 1], v[3]) << i;
    EXPECT_EQ(swap64[4 * i + 2], v[0]) << i;
    EXPECT_EQ(swap64[4 * i + 3], v[1]) << i;
  }
}

// --- address forms -----------------------------------------------------------

TEST(MemoryTest, AddressFormsScaleExtendAndDisplace) {
  // Every form names in[i] (or a fixed part of record i) for thread i.
  KernelHarness h(R"(
.kernel forms
.buffer 0 u0 device uint in
.buffer 1 u2 device uint out
.buffer 2 u4 constant uint words
    mov.u32 r0, %thread_position_in_grid.x
    ld.constant.u32 r20, [u4]
    mul.u32 r21, r0, r20
    add.u64 r4, u0, 64
    sub.u32 r1, r0, 14
    ld.device.u32 r10, [r4 + sext(r1)*4 - 8]
    st.device.u32 [u2 + r21*4], r10
    sub.u32 r1, r0, 16
    ld.device.u32 r10, [r4 + sext(r1)*4]
    st.device.u32 [u2 + r21*4 + 4], r10
    shl.u32 r2, r0, 2
    ld.device.u32 r10, [u0 + r2]
    st.device.u32 [u2 + r21*4 + 8], r10
    shr.u32 r3, r0, 1
    and.u32 r6, r0, 1
    ld.device.u32 r10, [u0 + r3*8]
    ld.device.u32 r11, [u0 + r3*8 + 4]
    select.u32 r10, r6, r11, r10
    st.device.u32 [u2 + r21*4 + 12], r10
    shr.u32 r3, r0, 2
    and.u32 r12, r0, 3
    shl.u32 r12, r12, 2
    mov.u32 r13, 0
    add.u64 r8, u0, r12
    ld.device.u32 r10, [r8 + r3*16]
    st.device.u32 [u2 + r21*4 + 16], r10
    ld.device.u16 r10, [u0 + r0*2]
    shr.u32 r7, r0, 1
    ld.device.u32 r11, [u0 + r7*4]
    and.u32 r6, r0, 1
    shl.u32 r6, r6, 4
    shr.u32 r11, r11, r6
    and.u32 r11, r11, 0xffff
    sub.u32 r10, r10, r11
    st.device.u32 [u2 + r21*4 + 20], r10
    add.u32 r1, r0, 2
    ld.device.u32 r10, [u0 + sext(r1)*4 - 8]
    st.device.u32 [u2 + r21*4 + 24], r10
    exit
.end
)");
  constexpr int kThreads = 64;
  constexpr uint32_t kForms = 7;
  std::vector<uint32_t> in(kThreads);
  for (int i = 0; i < kThreads; ++i) in[i] = 0x9e3779b9u * (i + 1);
  h.SetBuffer(0, in);
  h.SetBuffer(1, std::vector<uint32_t>(kForms * kThreads, 0xdeadbeef));
  h.SetBytes(2, kForms);
  ASSERT_TRUE(Runs(h, {kThreads}, {32}));
  const std::vector<uint32_t> out = h.Read<uint32_t>(1);
  for (int i = 0; i < kThreads; ++i) {
    EXPECT_EQ(out[kForms * i + 0], in[i]) << "sext*4 - 8, thread " << i;
    EXPECT_EQ(out[kForms * i + 1], in[i]) << "register base + sext*4, " << i;
    EXPECT_EQ(out[kForms * i + 2], in[i]) << "byte index, thread " << i;
    EXPECT_EQ(out[kForms * i + 3], in[i]) << "*8 and *8 + 4, thread " << i;
    EXPECT_EQ(out[kForms * i + 4], in[i]) << "*16, thread " << i;
    EXPECT_EQ(out[kForms * i + 5], 0u) << "*2 halves, thread " << i;
    EXPECT_EQ(out[kForms * i + 6], in[i]) << "uniform + sext*4 - 8, " << i;
  }
}

TEST(MemoryTest, ThreadgroupAddressesWithoutBase) {
  // [sext(r)*16 + 32] and [DISP] in threadgroup memory, no base register.
  KernelHarness h(R"(
.kernel nobase
.buffer 0 u0 device uint out
.threadgroup_memory 1024
    mov.u32 r0, %thread_index_in_threadgroup
    sub.u32 r1, r0, 2
    add.u32 r2, r0, 100
    st.threadgroup.u32 [sext(r1)*16 + 32], r2
    eq.u32 r3, r0, 5
    bz r3, skip, skip
    st.threadgroup.u32 [4], 77
skip:
    threadgroup_barrier.mem_threadgroup
    ld.threadgroup.u32 r4, [r0*16]
    ld.threadgroup.u32 r5, [4]
    add.u32 r4, r4, r5
    st.device.u32 [u0 + r0*4], r4
    exit
.end
)");
  constexpr int kThreads = 48;
  h.SetBuffer(0, std::vector<uint32_t>(kThreads));
  ASSERT_TRUE(Runs(h, {kThreads}, {kThreads}));
  const std::vector<uint32_t> out = h.Read<uint32_t>(0);
  for (int i = 0; i < kThreads; ++i) EXPECT_EQ(out[i], i + 100u + 77u) << i;
}

TEST(MemoryTest, GathersAndScattersFollowThePermutation) {
  constexpr int kThreads = 96;
  std::vector<uint32_t> perm(kThreads);
  std::vector<float> in(kThreads);
  for (int i = 0; i < kThreads; ++i) {
    perm[i] = (i * 37 + 11) % kThreads;  // 37 is coprime with 96
    in[i] = 0.25f * i - 3.0f;
  }
  KernelHarness h(R"(
.kernel gather
.buffer 0 u0 device float in
.buffer 1 u2 device uint perm
.buffer 2 u4 device float gathered
.buffer 3 u6 device float scattered
.buffer 4 u8 device ulong wide
    mov.u32 r0, %thread_position_in_grid.x
    ld.device.u32 r1, [u2 + r0*4]
    ld.device.f32 r2, [u0 + r1*4]
    st.device.f32 [u4 + r0*4], r2
    ld.device.f32 r3, [u0 + r0*4]
    st.device.f32 [u6 + r1*4], r3
    mov.u32 r4, r0
    mov.u32 r5, r1
    st.device.u64 [u8 + r1*8], r4
    exit
.end
)");
  h.SetBuffer(0, in);
  h.SetBuffer(1, perm);
  h.SetBuffer(2, std::vector<float>(kThreads));
  h.SetBuffer(3, std::vector<float>(kThreads));
  h.SetBuffer(4, std::vector<uint64_t>(kThreads));
  ASSERT_TRUE(Runs(h, {kThreads}, {32}));
  const std::vector<float> gathered = h.Read<float>(2);
  const std::vector<float> scattered = h.Read<float>(3);
  const std::vector<uint64_t> wide = h.Read<uint64_t>(4);
  for (int i = 0; i < kThreads; ++i) {
    EXPECT_EQ(gathered[i], in[perm[i]]) << i;
    EXPECT_EQ(scattered[perm[i]], in[i]) << i;
    EXPECT_EQ(wide[perm[i]], (uint64_t{perm[i]} << 32) | i) << i;
  }
}

// A load or store whose lanes land in two buffers (a pointer chosen per
// lane) cannot be served from one region: lane by lane, each in its own.
TEST(MemoryTest, GathersAcrossTwoBuffersGoLaneByLane) {
  constexpr int kThreads = 64;
  std::vector<uint32_t> a(kThreads), b(kThreads);
  for (uint32_t i = 0; i < kThreads; ++i) {
    a[i] = 1000 + i;
    b[i] = 2000 + i;
  }
  KernelHarness h(R"(
.kernel two_buffers
.buffer 0 u0 device uint a
.buffer 1 u2 device uint b
.buffer 2 u4 device uint out
    mov.u32 r0, %thread_position_in_grid.x
    and.u32 r1, r0, 1
    select.u64 r2, r1, u2, u0
    ld.device.u32 r4, [r2 + r0*4]
    st.device.u32 [u4 + r0*4], r4
    add.u32 r4, r4, 5
    st.device.u32 [r2 + r0*4], r4
    exit
.end
)");
  h.SetBuffer(0, a);
  h.SetBuffer(1, b);
  h.SetBuffer(2, std::vector<uint32_t>(kThreads));
  ASSERT_TRUE(Runs(h, {kThreads}, {32}));
  const std::vector<uint32_t> out = h.Read<uint32_t>(2);
  const std::vector<uint32_t> a_after = h.Read<uint32_t>(0);
  const std::vector<uint32_t> b_after = h.Read<uint32_t>(1);
  for (uint32_t i = 0; i < kThreads; ++i) {
    const bool odd = i % 2 == 1;
    EXPECT_EQ(out[i], odd ? b[i] : a[i]) << i;
    EXPECT_EQ(a_after[i], odd ? a[i] : a[i] + 5) << i;
    EXPECT_EQ(b_after[i], odd ? b[i] + 5 : b[i]) << i;
  }
}

// Inactive lanes' addresses are never looked at, even far out of bounds:
// a gather under a partial mask in threadgroup and in thread memory.
TEST(MemoryTest, PartialMaskGathersIgnoreInactiveLanesAddresses) {
  KernelHarness h(R"(
.kernel partial_gather
.buffer 0 u0 device uint from_threadgroup
.buffer 1 u2 device uint from_thread
.threadgroup_memory 128
.thread_memory 128
    mov.u32 r0, %thread_index_in_simdgroup
    mul.u32 r1, r0, 4
    st.threadgroup.u32 [r1], r0
    mov.u32 r9, 0
fill:
    mul.u32 r8, r0, 1000
    add.u32 r8, r8, r9
    st.thread.u32 [r9*4], r8
    add.u32 r9, r9, 1
    lt.u32 r8, r9, 32
    bnz r8, fill, filled
filled:
    threadgroup_barrier.mem_threadgroup
    mul.u32 r5, r0, 7
    and.u32 r5, r5, 31
    lt.u32 r2, r0, 20
    select.u32 r4, r2, r5, 1073741824
    bz r2, skip, skip
    ld.threadgroup.u32 r3, [r4*4]
    ld.thread.u32 r6, [r4*4]
    st.threadgroup.u32 [r4*4 + 0], r6
skip:
    st.device.u32 [u0 + r0*4], r3
    st.device.u32 [u2 + r0*4], r6
    exit
.end
)");
  h.SetBuffer(0, std::vector<uint32_t>(32, 7));
  h.SetBuffer(1, std::vector<uint32_t>(32, 7));
  ASSERT_TRUE(Runs(h, {32}, {32}));
  const std::vector<uint32_t> tg = h.Read<uint32_t>(0);
  const std::vector<uint32_t> thread = h.Read<uint32_t>(1);
  for (uint32_t l = 0; l < 32; ++l) {
    const uint32_t index = (l * 7) % 32;
    // Registers start at zero in lanes that skipped the loads.
    EXPECT_EQ(tg[l], l < 20 ? index : 0) << l;
    EXPECT_EQ(thread[l], l < 20 ? l * 1000 + index : 0) << l;
  }
}

TEST(MemoryTest, DestinationMayBeTheIndexRegister) {
  // next[] is a permutation; each thread follows it twice with loads that
  // overwrite their own index register, then loads a vector over it.
  constexpr int kThreads = 64;
  std::vector<uint32_t> next(kThreads);
  for (int i = 0; i < kThreads; ++i) next[i] = (i * 5 + 3) % kThreads;
  KernelHarness h(R"(
.kernel chase
.buffer 0 u0 device uint next
.buffer 1 u2 device uint out
    mov.u32 r0, %thread_position_in_grid.x
    mov.u32 r2, r0
    ld.device.u32 r2, [u0 + r2*4]
    ld.device.u32 r2, [u0 + r2*4]
    st.device.u32 [u2 + r0*16], r2
    and.u32 r2, r0, 15
    ld.device.v4.u32 r1, [u0 + r2*16]
    st.device.v2.u32 [u2 + r0*16 + 4], r2
    exit
.end
)");
  h.SetBuffer(0, next);
  h.SetBuffer(1, std::vector<uint32_t>(4 * kThreads));
  ASSERT_TRUE(Runs(h, {kThreads}, {kThreads}));
  const std::vector<uint32_t> out = h.Read<uint32_t>(1);
  for (int i = 0; i < kThreads; ++i) {
    EXPECT_EQ(out[4 * i], next[next[i]]) << i;
    EXPECT_EQ(out[4 * i + 1], next[4 * (i % 16) + 1]) << i;
    EXPECT_EQ(out[4 * i + 2], next[4 * (i % 16) + 2]) << i;
  }
}

// --- full and partial masks --------------------------------------------------

// Threads whose flag is set copy in[i] * 2 to out[i] (32-bit, contiguous);
// the others compute an index far out of bounds but never use it.
constexpr char kMaskedCopy[] = R"(
.kernel masked_copy
.buffer 0 u0 device float in
.buffer 1 u2 device float out
.buffer 2 u4 device uint flag
    mov.u32 r0, %thread_position_in_grid.x
    ld.device.u32 r1, [u4 + r0*4]
    select.u32 r2, r1, r0, 1000000
    bz r1, skip, skip
    ld.device.f32 r3, [u0 + r2*4]
    add.f32 r3, r3, r3
    st.device.f32 [u2 + r2*4], r3
skip:
    exit
.end
)";

void ExpectMaskedCopy(int threads, int group,
                      const std::vector<uint32_t>& flag) {
  std::vector<float> in(threads);
  for (int i = 0; i < threads; ++i) in[i] = 1.5f * i + 1;
  KernelHarness h(kMaskedCopy);
  h.SetBuffer(0, in);  // exactly `threads` elements: no slack at the end
  h.SetBuffer(1, std::vector<float>(threads, -1.0f));
  h.SetBuffer(2, flag);
  ASSERT_TRUE(Runs(h, {static_cast<uint64_t>(threads)},
                   {static_cast<uint64_t>(group)}));
  const std::vector<float> out = h.Read<float>(1);
  for (int i = 0; i < threads; ++i) {
    EXPECT_EQ(out[i], flag[i] ? 2 * in[i] : -1.0f) << "thread " << i;
  }
}

TEST(MemoryTest, ContiguousAccessWithFullMask) {
  ExpectMaskedCopy(128, 64, std::vector<uint32_t>(128, 1));
}

TEST(MemoryTest, ContiguousAccessWithPartialMaskLeavesOthersUntouched) {
  std::vector<uint32_t> flag(128);
  for (int i = 0; i < 128; ++i) flag[i] = i % 3 != 0 && i != 31 && i < 100;
  ExpectMaskedCopy(128, 64, flag);
}

TEST(MemoryTest, ContiguousAccessWithOneLaneActive) {
  std::vector<uint32_t> flag(64, 0);
  flag[17] = 1;
  flag[63] = 1;
  ExpectMaskedCopy(64, 64, flag);
}

TEST(MemoryTest, PartialSimdGroupAtTheEndOfABuffer) {
  // 40 threads: the second SIMD group has 8 lanes, and the buffers end at
  // element 40; nothing past the end may be touched.
  ExpectMaskedCopy(40, 40, std::vector<uint32_t>(40, 1));
  ExpectMaskedCopy(40, 20, std::vector<uint32_t>(40, 1));
}

TEST(MemoryTest, NonContiguousFullMaskAccesses) {
  // Reversed and strided 32-bit accesses with every lane active.
  KernelHarness h(R"(
.kernel reverse
.buffer 0 u0 device uint in
.buffer 1 u2 device uint out
    mov.u32 r0, %thread_position_in_grid.x
    sub.u32 r1, 63, r0
    ld.device.u32 r2, [u0 + r1*4]
    st.device.u32 [u2 + r0*8], r2
    st.device.u32 [u2 + r1*8 + 4], r0
    exit
.end
)");
  std::vector<uint32_t> in(64);
  for (int i = 0; i < 64; ++i) in[i] = i * i + 5;
  h.SetBuffer(0, in);
  h.SetBuffer(1, std::vector<uint32_t>(128));
  ASSERT_TRUE(Runs(h, {64}, {64}));
  const std::vector<uint32_t> out = h.Read<uint32_t>(1);
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(out[2 * i], in[63 - i]) << i;
    EXPECT_EQ(out[2 * i + 1], 63u - i) << i;
  }
}

// --- threadgroup and thread memory -------------------------------------------

TEST(MemoryTest, ThreadgroupArgumentsAndStaticMemoryDoNotOverlap) {
  KernelHarness h(R"(
.kernel blocks
.buffer 0 u0 device uint out
.buffer 1 u2 device uint offsets
.threadgroup 0 u4 first
.threadgroup 1 u5 second
.threadgroup_memory 200
    mov.u32 r0, %thread_index_in_threadgroup
    add.u32 r1, r0, 1000
    add.u32 r2, r0, 2000
    add.u32 r3, r0, 3000
    lt.u32 r9, r0, 50
    bz r9, skip, skip
    st.threadgroup.u32 [r0*4], r1
skip:
    st.threadgroup.u32 [u4 + r0*4], r2
    st.threadgroup.u16 [u5 + r0*2], r3
    threadgroup_barrier.mem_threadgroup
    sub.u32 r6, 63, r0
    rem.u32 r7, r6, 50
    ld.threadgroup.u32 r10, [r7*4]
    ld.threadgroup.u32 r11, [u4 + r6*4]
    ld.threadgroup.u16 r12, [u5 + r6*2]
    mul.u32 r8, r0, 12
    st.device.u32 [u0 + r8], r10
    st.device.u32 [u0 + r8 + 4], r11
    st.device.u32 [u0 + r8 + 8], r12
    st.device.u32 [u2], u4
    st.device.u32 [u2 + 4], u5
    exit
.end
)");
  h.SetBuffer(0, std::vector<uint32_t>(3 * 64));
  h.SetBuffer(1, std::vector<uint32_t>(2));
  ASSERT_TRUE(h.SetThreadgroupMemoryLength(256, 0).ok());
  ASSERT_TRUE(h.SetThreadgroupMemoryLength(128, 1).ok());
  // One threadgroup: every threadgroup would store to the same elements, a
  // data race between host threads (TSan).
  ASSERT_TRUE(Runs(h, {64}, {64}));
  const std::vector<uint32_t> out = h.Read<uint32_t>(0);
  for (int i = 0; i < 64; ++i) {
    const int j = 63 - i;
    EXPECT_EQ(out[3 * i], 1000u + j % 50) << i;
    EXPECT_EQ(out[3 * i + 1], 2000u + j) << i;
    EXPECT_EQ(out[3 * i + 2], 3000u + j) << i;
  }
  // The blocks: static [0, 200), first [u4, u4 + 256), second [u5, u5 + 128),
  // disjoint, 16-byte aligned, within 32 KB.
  const std::vector<uint32_t> offsets = h.Read<uint32_t>(1);
  const uint32_t first = offsets[0], second = offsets[1];
  EXPECT_EQ(first % 16, 0u);
  EXPECT_EQ(second % 16, 0u);
  EXPECT_GE(first, 200u);
  EXPECT_GE(second, 200u);
  EXPECT_TRUE(first + 256 <= second || second + 128 <= first)
      << first << " " << second;
  EXPECT_LE(std::max(first + 256, second + 128), 32768u);
}

TEST(MemoryTest, ThreadgroupsHaveTheirOwnMemory) {
  // Every threadgroup fills its block with its own id and reads it back
  // after a barrier; run on one host thread and on several.
  const char* kIsa = R"(
.kernel own
.buffer 0 u0 device uint out
.threadgroup_memory 512
    mov.u32 r0, %thread_index_in_threadgroup
    mov.u32 r1, %threadgroup_position_in_grid.x
    mov.u32 r2, %thread_position_in_grid.x
    st.threadgroup.u32 [r0*4], r1
    threadgroup_barrier.mem_threadgroup
    xor.u32 r3, r0, 77
    ld.threadgroup.u32 r4, [r3*4]
    st.device.u32 [u0 + r2*4], r4
    exit
.end
)";
  for (int host_threads : {1, 4}) {
    KernelHarness h(kIsa, "", "m1", host_threads);
    h.SetBuffer(0, std::vector<uint32_t>(128 * 64));
    ASSERT_TRUE(Runs(h, {128 * 64}, {128}));
    const std::vector<uint32_t> out = h.Read<uint32_t>(0);
    for (int i = 0; i < 128 * 64; ++i) {
      ASSERT_EQ(out[i], i / 128u)
          << "thread " << i << ", " << host_threads << " host threads";
    }
  }
}

TEST(MemoryTest, ThreadMemoryIsPrivatePerThread) {
  // Each thread fills 16 words of its private memory in a loop, then sums
  // them back; 3 SIMD groups share nothing.
  KernelHarness h(R"(
.kernel private_sum
.buffer 0 u0 device uint out
.thread_memory 64
    mov.u32 r0, %thread_position_in_grid.x
    mov.u32 r1, 0
fill:
    mul.u32 r2, r0, 100
    add.u32 r2, r2, r1
    st.thread.u32 [r1*4], r2
    add.u32 r1, r1, 1
    lt.u32 r3, r1, 16
    bnz r3, fill, filled
filled:
    mov.u32 r1, 0
    mov.u32 r4, 0
sum:
    ld.thread.u32 r2, [r1*4]
    add.u32 r4, r4, r2
    add.u32 r1, r1, 1
    lt.u32 r3, r1, 16
    bnz r3, sum, done
done:
    st.device.u32 [u0 + r0*4], r4
    exit
.end
)");
  h.SetBuffer(0, std::vector<uint32_t>(96));
  ASSERT_TRUE(Runs(h, {96}, {96}));
  const std::vector<uint32_t> out = h.Read<uint32_t>(0);
  for (uint32_t i = 0; i < 96; ++i) {
    uint32_t want = 0;
    for (uint32_t k = 0; k < 16; ++k) want += i * 100 + k;
    EXPECT_EQ(out[i], want) << i;
  }
}

// --- out-of-bounds accesses --------------------------------------------------

// Runs a kernel that must fault, on 1 and on 4 host threads, and returns the
// error of the 1-thread run after checking that both runs report the same
// fault. `bind` binds the buffers; `check` inspects the harness afterwards.
template <typename Bind, typename Check>
CommandBufferError ExpectFault(std::string_view isa, Bind bind, MTLSize grid,
                               MTLSize group, Check check) {
  CommandBufferError first;
  for (int host_threads : {1, 4}) {
    SCOPED_TRACE(fmt::format("{} host threads", host_threads));
    KernelHarness h(isa, "", "m1", host_threads);
    EXPECT_TRUE(h.status().ok()) << h.status().error().message;
    if (!h.status().ok()) return {};
    // Near a buffer too (emu/exec/near_buffer.h).
    h.device().options().out_of_bounds = emu::OutOfBoundsPolicy::kFault;
    bind(h);
    const Status s = h.DispatchThreads(grid, group);
    EXPECT_TRUE(s.ok()) << s.error().message;
    EXPECT_NE(h.error(), nullptr) << "the dispatch did not fault";
    if (!s.ok() || h.error() == nullptr) return {};
    EXPECT_EQ(h.error()->code, CommandBufferErrorCode::kPageFault);
    check(h);
    if (host_threads == 1) {
      first = *h.error();
    } else {
      EXPECT_EQ(h.error()->message, first.message);
    }
  }
  return first;
}

TEST(MemoryFaultTest, ReadOnePastTheEnd) {
  // 'in' holds 37 floats; thread 37 (threadgroup 1, lane 5) reads one past
  // its end. Every thread first records its address (in a word of its own:
  // threadgroups storing to one word would race, TSan) and index.
  constexpr char kIsa[] = R"(
.kernel read_past
.buffer 0 u0 device float in
.buffer 1 u2 device uint out
.buffer 2 u4 device ulong where
    mov.u32 r0, %thread_position_in_grid.x
    st.device.u32 [u2 + r0*4], r0
    st.device.u64 [u4 + r0*8], u0
    ld.device.u32 r1, [u0 + r0*4]
    st.device.u32 [u2 + r0*4], r1
    exit
.end
)";
  std::vector<uint32_t> in(37);
  for (int i = 0; i < 37; ++i) in[i] = 1000 + i;
  uint64_t base = 0;
  const CommandBufferError e = ExpectFault(
      kIsa,
      [&](KernelHarness& h) {
        h.SetBuffer(0, in);
        h.SetBuffer(1, std::vector<uint32_t>(64, 0xdeadbeef));
        h.SetBuffer(2, std::vector<uint64_t>(64));
      },
      {64}, {32},
      [&](KernelHarness& h) {
        base = h.Read<uint64_t>(2)[0];
        // Threadgroup 0 finished; threadgroup 1 stored its indices before
        // the faulting load.
        const std::vector<uint32_t> out = h.Read<uint32_t>(1);
        for (uint32_t i = 0; i < 64; ++i) {
          EXPECT_EQ(out[i], i < 32 ? in[i] : i) << i;
        }
      });
  EXPECT_EQ(e.fault.kind, emu::FaultKind::kOutOfBounds);
  EXPECT_EQ(e.fault.lane, 5);
  EXPECT_EQ(e.fault.address, base + 148);
  EXPECT_FALSE(e.fault.is_write);
  EXPECT_TRUE(Mentions(e.message, "test.s:9:5: out-of-bounds access"));
  EXPECT_TRUE(Mentions(e.message, "kernel 'read_past'"));
  EXPECT_TRUE(Mentions(e.message, "thread_position_in_grid (37, 0, 0)"));
  EXPECT_TRUE(Mentions(e.message, "threadgroup (1, 0, 0)"));
  EXPECT_TRUE(Mentions(e.message, "lane 5"));
  EXPECT_TRUE(Mentions(
      e.message,
      fmt::format("read of 4 bytes at device address 0x{:x}", base + 148)));
  EXPECT_TRUE(Mentions(e.message, "buffer(0) 'in'"));
  EXPECT_TRUE(Mentions(e.message, "at offset 148"));
}

// Thread i stores to out[i - 1]: lane 0 writes 4 bytes before the start.
constexpr char kWriteBefore[] = R"(
.kernel write_before
.buffer 0 u0 device uint low
.buffer 1 u2 device uint out
    mov.u32 r0, %thread_position_in_grid.x
    sub.u32 r1, r0, 1
    st.device.u32 [u2 + sext(r1)*4], r0
    exit
.end
)";

void ExpectWriteBeforeStart(bool out_mapped_first) {
  const CommandBufferError e = ExpectFault(
      kWriteBefore,
      [&](KernelHarness& h) {
        // Buffers get ascending addresses in the order they are made.
        if (out_mapped_first) {
          h.SetBuffer(1, std::vector<uint32_t>(64, 0xdeadbeef));
        }
        h.SetBuffer(0, std::vector<uint32_t>(16));
        if (!out_mapped_first) {
          h.SetBuffer(1, std::vector<uint32_t>(64, 0xdeadbeef));
        }
      },
      {64}, {64},
      [](KernelHarness& h) {
        // The faulting lane is lane 0; no other lane of the store ran.
        for (uint32_t v : h.Read<uint32_t>(1)) EXPECT_EQ(v, 0xdeadbeef);
      });
  EXPECT_EQ(e.fault.lane, 0);
  EXPECT_TRUE(e.fault.is_write);
  EXPECT_TRUE(Mentions(e.message, "thread_position_in_grid (0, 0, 0)"));
  EXPECT_TRUE(Mentions(e.message, "write of 4 bytes at device address"));
  EXPECT_TRUE(Mentions(e.message, "buffer(1) 'out'"));
  EXPECT_TRUE(Mentions(e.message, "at offset -4"));
}

TEST(MemoryFaultTest, WriteBeforeTheStart) { ExpectWriteBeforeStart(true); }

// Disabled: with another buffer mapped below 'out', the report names that
// buffer ("buffer(0) 'low' (64 bytes) at offset 131068"):
// DeviceMemory::Nearest returns the region below the address, not the
// nearest one. Enable when fixed.
TEST(MemoryFaultTest, WriteBeforeTheStartAfterAnotherBuffer) {
  ExpectWriteBeforeStart(false);
}

TEST(MemoryFaultTest, ZeroExtendedNegativeIndex) {
  // The same index that works with sext() is 4 * (2^32 - 1) bytes past the
  // base without it.
  constexpr char kIsa[] = R"(
.kernel zext
.buffer 0 u0 device uint data
    add.u64 r2, u0, 64
    mov.u32 r1, 0xffffffff
    ld.device.u32 r4, [r2 + sext(r1)*4]
    st.device.u32 [u0], r4
    ld.device.u32 r4, [r2 + r1*4]
    exit
.end
)";
  std::vector<uint32_t> data(32);
  data[15] = 1234;
  const CommandBufferError e = ExpectFault(
      kIsa, [&](KernelHarness& h) { h.SetBuffer(0, data); }, {1}, {1},
      [](KernelHarness& h) { EXPECT_EQ(h.Read<uint32_t>(0)[0], 1234u); });
  EXPECT_TRUE(Mentions(e.message, "buffer(0) 'data'"));
  EXPECT_TRUE(
      Mentions(e.message, fmt::format("at offset {}", 64 + 4 * 0xffffffffull)));
}

TEST(MemoryFaultTest, ThreadgroupAccessPastTheAllocation) {
  // 128 bytes static + 64 set = 192 bytes; thread 48 (SIMD group 1, lane 16)
  // writes at offset 192.
  constexpr char kIsa[] = R"(
.kernel tg_past
.buffer 0 u0 device uint out
.threadgroup 0 u2 extra
.threadgroup_memory 128
    mov.u32 r0, %thread_index_in_threadgroup
    st.device.u32 [u0 + r0*4], r0
    st.threadgroup.u32 [r0*4], r0
    exit
.end
)";
  const CommandBufferError e = ExpectFault(
      kIsa,
      [](KernelHarness& h) {
        h.SetBuffer(0, std::vector<uint32_t>(64, 0xdeadbeef));
        ASSERT_TRUE(h.SetThreadgroupMemoryLength(64, 0).ok());
      },
      {64}, {64},
      [](KernelHarness& h) {
        const std::vector<uint32_t> out = h.Read<uint32_t>(0);
        for (uint32_t i = 0; i < 64; ++i) EXPECT_EQ(out[i], i);
      });
  EXPECT_EQ(e.fault.lane, 16);
  EXPECT_EQ(e.fault.simdgroup, 1u);
  EXPECT_TRUE(Mentions(e.message, "kernel 'tg_past'"));
  EXPECT_TRUE(Mentions(e.message, "thread_position_in_grid (48, 0, 0)"));
  EXPECT_TRUE(Mentions(e.message, "simdgroup 1, lane 16"));
  EXPECT_TRUE(
      Mentions(e.message, "write of 4 bytes at threadgroup address 0xc0"));
  EXPECT_TRUE(Mentions(e.message, "threadgroup memory (192 bytes)"));
  EXPECT_TRUE(Mentions(e.message, "at offset 192"));
}

TEST(MemoryFaultTest, ThreadMemoryAccessPastItsSize) {
  // .thread_memory 16: lane i reads word i, so lane 4 is the first to read
  // past the end, in threadgroup 2 (threadgroups 0 and 1 skip the load).
  constexpr char kIsa[] = R"(
.kernel thread_past
.buffer 0 u0 device uint out
.thread_memory 16
    mov.u32 r0, %thread_index_in_simdgroup
    mov.u32 r1, %threadgroup_position_in_grid.x
    lt.u32 r2, r1, 2
    bnz r2, done, done
    ld.thread.u32 r3, [r0*4]
    mov.u32 r4, %thread_position_in_grid.x
    st.device.u32 [u0 + r4*4], r3
done:
    exit
.end
)";
  const CommandBufferError e = ExpectFault(
      kIsa,
      [](KernelHarness& h) { h.SetBuffer(0, std::vector<uint32_t>(256)); },
      {256}, {32}, [](KernelHarness&) {});
  EXPECT_EQ(e.fault.lane, 4);
  EXPECT_TRUE(Mentions(e.message, "thread_position_in_grid (68, 0, 0)"));
  EXPECT_TRUE(Mentions(e.message, "threadgroup (2, 0, 0)"));
  EXPECT_TRUE(Mentions(e.message, "read of 4 bytes at thread address 0x10"));
  EXPECT_TRUE(Mentions(e.message, "thread memory (16 bytes per thread)"));
  EXPECT_TRUE(Mentions(e.message, "at offset 16"));
}

TEST(MemoryFaultTest, FaultInA2DGridNamesThePosition) {
  // Only thread (13, 6) of a 20 x 10 grid in 8 x 4 threadgroups stores, out
  // of bounds: threadgroup (1, 1), position (5, 2) in it, index 21. (Had
  // the others stored to out[0], threadgroups would race: TSan.)
  constexpr char kIsa[] = R"(
.kernel grid2d
.buffer 0 u0 device uint out
    mov.u32 r0, %thread_position_in_grid.x
    mov.u32 r1, %thread_position_in_grid.y
    eq.u32 r2, r0, 13
    eq.u32 r3, r1, 6
    and.u32 r2, r2, r3
    bz r2, done, done
    mul.u32 r2, r2, 1000
    st.device.u32 [u0 + r2*4], r0
done:
    exit
.end
)";
  const CommandBufferError e = ExpectFault(
      kIsa, [](KernelHarness& h) { h.SetBuffer(0, std::vector<uint32_t>(16)); },
      {20, 10}, {8, 4}, [](KernelHarness&) {});
  EXPECT_EQ(e.fault.lane, 21);
  EXPECT_TRUE(Mentions(e.message, "thread_position_in_grid (13, 6, 0)"));
  EXPECT_TRUE(Mentions(e.message, "threadgroup (1, 1, 0)"));
  EXPECT_TRUE(Mentions(e.message, "simdgroup 0, lane 21"));
  EXPECT_TRUE(Mentions(e.message, "buffer(0) 'out' (64 bytes) at offset 4000"));
}

TEST(MemoryFaultTest, LowestThreadgroupWinsAndEarlierResultsStay) {
  // Threadgroups 100.. fault at lane 7; all threads of threadgroups 0..99
  // write their results, whatever order the host threads run them in.
  constexpr char kIsa[] = R"(
.kernel many_faults
.buffer 0 u0 device uint out
    mov.u32 r0, %thread_position_in_grid.x
    mov.u32 r1, %threadgroup_position_in_grid.x
    mov.u32 r2, %thread_index_in_threadgroup
    mul.u32 r3, r0, 3
    st.device.u32 [u0 + r0*4], r3
    ge.u32 r4, r1, 100
    eq.u32 r5, r2, 7
    and.u32 r4, r4, r5
    bz r4, done, done
    st.device.u32 [u0 + r0*4 + 0x100000], r3
done:
    exit
.end
)";
  constexpr int kGroups = 400;
  const CommandBufferError e = ExpectFault(
      kIsa,
      [](KernelHarness& h) {
        h.SetBuffer(0, std::vector<uint32_t>(32 * kGroups, 0xdeadbeef));
      },
      {32 * kGroups}, {32},
      [](KernelHarness& h) {
        const std::vector<uint32_t> out = h.Read<uint32_t>(0);
        for (uint32_t i = 0; i < 32 * 100; ++i) ASSERT_EQ(out[i], 3 * i) << i;
      });
  EXPECT_TRUE(Mentions(e.message, "thread_position_in_grid (3207, 0, 0)"));
  EXPECT_TRUE(Mentions(e.message, "threadgroup (100, 0, 0)"));
  EXPECT_TRUE(Mentions(e.message, "lane 7"));
  EXPECT_TRUE(Mentions(e.message, "buffer(0) 'out'"));
  EXPECT_TRUE(
      Mentions(e.message, fmt::format("at offset {}", 3207 * 4 + 0x100000)));
}

// Threadgroup memory nobody wrote: what EmulatorOptions'
// threadgroup_memory_fill puts there (Metal leaves it undefined).
constexpr char kReadUnwritten[] = R"(
.kernel read_unwritten
.buffer 0 u0 device uint out
.threadgroup_memory 256
    mov.u32 r0, %thread_position_in_threadgroup.x
    ld.threadgroup.u32 r1, [r0*4]
    mov.u32 r2, %thread_position_in_grid.x
    st.device.u32 [u0 + r2*4], r1
    exit
.end
)";

std::vector<uint32_t> ReadUnwritten(emu::ThreadgroupMemoryFill fill,
                                    int host_threads) {
  KernelHarness h(kReadUnwritten);
  EXPECT_TRUE(h.status().ok()) << h.status().error().message;
  h.device().options().threadgroup_memory_fill = fill;
  h.device().options().host_threads = host_threads;
  h.SetBuffer(0, std::vector<uint32_t>(256, 7));
  EXPECT_TRUE(Runs(h, {256}, {64}));
  return h.Read<uint32_t>(0);
}

TEST(MemoryTest, UnwrittenThreadgroupMemoryIsZeroPoisonOrRandom) {
  EXPECT_EQ(ReadUnwritten(emu::ThreadgroupMemoryFill::kZero, 0),
            std::vector<uint32_t>(256, 0));
  EXPECT_EQ(ReadUnwritten(emu::ThreadgroupMemoryFill::kPoison, 0),
            std::vector<uint32_t>(256, 0xffffffffu));
  const std::vector<uint32_t> one =
      ReadUnwritten(emu::ThreadgroupMemoryFill::kRandom, 1);
  // The same on any number of host threads, and each threadgroup its own.
  EXPECT_EQ(ReadUnwritten(emu::ThreadgroupMemoryFill::kRandom, 4), one);
  const std::set<uint32_t> distinct(one.begin(), one.end());
  EXPECT_GT(distinct.size(), 200u);
  for (int g = 1; g < 4; ++g) {
    EXPECT_FALSE(
        std::equal(one.begin(), one.begin() + 64, one.begin() + 64 * g))
        << "threadgroup " << g;
  }
}

}  // namespace
}  // namespace mtlemu
