// simdgroup_load, simdgroup_store and simdgroup_multiply_accumulate for
// float and half: layouts with strides, offsets and .transpose in device,
// constant and threadgroup memory; which elements each lane's registers
// hold (Apple's layout); 8x8x8 products against a C++ reference; a 32x32
// product built from 8x8 tiles.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <ostream>
#include <random>
#include <string>
#include <type_traits>
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

using Half = _Float16;

template <typename T>
const char* Suffix() {
  return std::is_same_v<T, float> ? "f32" : "f16";
}

// --- load and store layouts --------------------------------------------------

// Where simdgroup_load reads and simdgroup_store writes.
enum class Space { kDevice, kConstant, kThreadgroup };

struct Layout {
  bool half;
  Space load_space;
  Space store_space;
  bool load_transpose;
  bool store_transpose;
};

const char* SpaceName(Space s) {
  return s == Space::kDevice     ? "device"
         : s == Space::kConstant ? "constant"
                                 : "threadgroup";
}

// "f16_from_constant_transposed_to_threadgroup"
std::string LayoutName(const Layout& l) {
  return fmt::format(
      "{}_from_{}{}_to_{}{}", l.half ? "f16" : "f32", SpaceName(l.load_space),
      l.load_transpose ? "_transposed" : "", SpaceName(l.store_space),
      l.store_transpose ? "_transposed" : "");
}

void PrintTo(const Layout& l, std::ostream* os) { *os << LayoutName(l); }

// Element offsets and strides of the matrices in src and dst.
constexpr int kLoadOffset = 3, kLoadStride = 12;
constexpr int kStoreOffset = 5, kStoreStride = 10;
constexpr int kRegionBytes = 1024;  // src and dst, in each space

// Moves one 8x8 matrix from src to dst. Both device buffers are first
// copied to threadgroup memory (src at 0, dst at 1024); a store to
// threadgroup memory is copied back to dst at the end. The load stride is a
// register, the store stride an immediate.
std::string LayoutKernel(const Layout& l) {
  const char* t = l.half ? "f16" : "f32";
  const int size = l.half ? 2 : 4;
  std::string s = fmt::format(
      ".kernel layout\n"
      ".buffer 0 u0 {} void src\n"
      ".buffer 1 u2 device void dst\n"
      ".threadgroup_memory 2048\n"
      "    mov.u32 r0, %thread_index_in_simdgroup\n",
      l.load_space == Space::kConstant ? "constant" : "device");
  for (int k = 0; k < kRegionBytes / 128; ++k) {
    s += fmt::format(
        "    ld.{0}.u32 r1, [u0 + r0*4 + {1}]\n"
        "    st.threadgroup.u32 [r0*4 + {1}], r1\n"
        "    ld.device.u32 r1, [u2 + r0*4 + {1}]\n"
        "    st.threadgroup.u32 [r0*4 + {2}], r1\n",
        l.load_space == Space::kConstant ? "constant" : "device", 128 * k,
        kRegionBytes + 128 * k);
  }
  s += "    threadgroup_barrier.mem_threadgroup\n";
  s += fmt::format("    mov.u32 r20, {}\n", kLoadStride);
  s += fmt::format("    simdgroup_load.{}.{}{} r8, [{}], r20\n",
                   SpaceName(l.load_space), t,
                   l.load_transpose ? ".transpose" : "",
                   l.load_space == Space::kThreadgroup
                       ? fmt::format("{}", kLoadOffset * size)
                       : fmt::format("u0 + {}", kLoadOffset * size));
  s += fmt::format("    simdgroup_store.{}.{}{} [{}], r8, {}\n",
                   SpaceName(l.store_space), t,
                   l.store_transpose ? ".transpose" : "",
                   l.store_space == Space::kThreadgroup
                       ? fmt::format("{}", kRegionBytes + kStoreOffset * size)
                       : fmt::format("u2 + {}", kStoreOffset * size),
                   kStoreStride);
  if (l.store_space == Space::kThreadgroup) {
    s += "    threadgroup_barrier.mem_threadgroup\n";
    for (int k = 0; k < kRegionBytes / 128; ++k) {
      s += fmt::format(
          "    ld.threadgroup.u32 r1, [r0*4 + {}]\n"
          "    st.device.u32 [u2 + r0*4 + {}], r1\n",
          kRegionBytes + 128 * k, 128 * k);
    }
  }
  return s + "    exit\n.end\n";
}

class LayoutTest : public ::testing::TestWithParam<Layout> {};

TEST_P(LayoutTest, MovesEveryElementToItsPlace) {
  const Layout& l = GetParam();
  auto run = [&]<typename T>() {
    constexpr int n = kRegionBytes / sizeof(T);
    std::vector<T> src(n), dst(n);
    for (int k = 0; k < n; ++k) {
      src[k] = static_cast<T>(0.25f * k - 10);
      dst[k] = static_cast<T>(-1000.0f - k);
    }
    KernelHarness h(LayoutKernel(l));
    h.SetBuffer(0, src);
    h.SetBuffer(1, dst);
    ASSERT_TRUE(Runs(h, {32}, {32}));
    // Element (r, c) of the matrix, as loaded.
    auto element = [&](int r, int c) {
      return l.load_transpose ? src[kLoadOffset + c * kLoadStride + r]
                              : src[kLoadOffset + r * kLoadStride + c];
    };
    std::vector<T> want = dst;
    for (int r = 0; r < 8; ++r) {
      for (int c = 0; c < 8; ++c) {
        const int at =
            l.store_transpose ? c * kStoreStride + r : r * kStoreStride + c;
        want[kStoreOffset + at] = element(r, c);
      }
    }
    const std::vector<T> out = h.Read<T>(1);
    for (int k = 0; k < n; ++k) {
      EXPECT_EQ(static_cast<float>(out[k]), static_cast<float>(want[k]))
          << "dst[" << k << "]";
    }
  };
  if (l.half) {
    run.template operator()<Half>();
  } else {
    run.template operator()<float>();
  }
}

std::vector<Layout> AllLayouts() {
  std::vector<Layout> out;
  for (bool half : {false, true}) {
    for (Space load : {Space::kDevice, Space::kConstant, Space::kThreadgroup}) {
      for (Space store : {Space::kDevice, Space::kThreadgroup}) {
        for (bool lt : {false, true}) {
          for (bool st : {false, true}) {
            out.push_back({half, load, store, lt, st});
          }
        }
      }
    }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(AllSpacesAndTransposes, LayoutTest,
                         ::testing::ValuesIn(AllLayouts()),
                         [](const ::testing::TestParamInfo<Layout>& info) {
                           return LayoutName(info.param);
                         });

// --- the register layout -------------------------------------------------

// Apple's layout, computed here as MLX's GEMM kernels compute it
// (mlx/backend/metal/kernels/steel/gemm/mma.h, BaseMMAFrag::get_coord), not
// through the emulator's isa::SimdgroupMatrixRow/Col: lane L holds
// (row, col) in its first register and (row, col + 1) in its second.
struct LaneElements {
  int row, col;
};
LaneElements AppleLayout(int lane) {
  const int qid = lane / 4;
  return {(qid & 4) + (lane / 2) % 4, (qid & 2) * 2 + (lane % 2) * 2};
}

TEST(SimdgroupMatrixTest, AppleLayoutSpotChecks) {
  // A few lanes written out by hand (Philip Turner's MetalFlashAttention
  // draws the same table): quads 0 and 1 hold rows 0..3, columns 0..3;
  // quads 2 and 3 columns 4..7; lanes 16..31 repeat that four rows down.
  const struct {
    int lane, row, col;
  } kCases[] = {{0, 0, 0},  {1, 0, 2},  {2, 1, 0},  {3, 1, 2},
                {4, 2, 0},  {7, 3, 2},  {8, 0, 4},  {9, 0, 6},
                {10, 1, 4}, {15, 3, 6}, {16, 4, 0}, {19, 5, 2},
                {23, 7, 2}, {24, 4, 4}, {30, 7, 4}, {31, 7, 6}};
  for (const auto& c : kCases) {
    EXPECT_EQ(AppleLayout(c.lane).row, c.row) << c.lane;
    EXPECT_EQ(AppleLayout(c.lane).col, c.col) << c.lane;
  }
}

// Loads an 8x8 matrix whose element (r, c) is stored as the value
// 8 * r + c (at r * 8 + c, or at c * 8 + r with .transpose) and writes each
// lane's two registers to out[2 * lane] and out[2 * lane + 1].
template <typename T>
std::vector<T> LoadedRegisters(bool transpose) {
  const int size = sizeof(T);
  KernelHarness h(
      fmt::format(".kernel lanes\n"
                  ".buffer 0 u0 device void m\n"
                  ".buffer 1 u2 device void out\n"
                  "    mov.u32 r0, %thread_index_in_simdgroup\n"
                  "    simdgroup_load.device.{0}{1} r8, [u0], 8\n"
                  "    st.device.{0} [u2 + r0*{2}], r8\n"
                  "    st.device.{0} [u2 + r0*{2} + {3}], r9\n"
                  "    exit\n"
                  ".end\n",
                  Suffix<T>(), transpose ? ".transpose" : "", 2 * size, size));
  std::vector<T> m(64);
  for (int r = 0; r < 8; ++r) {
    for (int c = 0; c < 8; ++c) {
      m[transpose ? c * 8 + r : r * 8 + c] = static_cast<T>(8 * r + c);
    }
  }
  h.SetBuffer(0, m);
  h.SetBuffer(1, std::vector<T>(64, static_cast<T>(-1.0f)));
  EXPECT_TRUE(Runs(h, {32}, {32}));
  return h.Read<T>(1);
}

TEST(SimdgroupMatrixTest, LoadFillsEachLaneInAppleLayout) {
  auto check = [&]<typename T>(bool transpose) {
    SCOPED_TRACE(
        fmt::format("{}{}", Suffix<T>(), transpose ? " transposed" : ""));
    const std::vector<T> out = LoadedRegisters<T>(transpose);
    ASSERT_EQ(out.size(), 64u);
    for (int lane = 0; lane < 32; ++lane) {
      const LaneElements at = AppleLayout(lane);
      for (int e = 0; e < 2; ++e) {
        EXPECT_EQ(static_cast<float>(out[2 * lane + e]),
                  static_cast<float>(8 * at.row + at.col + e))
            << "lane " << lane << " register " << e;
      }
    }
  };
  check.template operator()<float>(false);
  check.template operator()<float>(true);
  check.template operator()<Half>(false);
  check.template operator()<Half>(true);
}

TEST(SimdgroupMatrixTest, StoreWritesEachLanesRegistersInAppleLayout) {
  // Lane L's registers hold 2L and 2L + 1; the store puts them at the
  // lane's two elements.
  for (bool transpose : {false, true}) {
    SCOPED_TRACE(transpose ? "transposed" : "plain");
    KernelHarness h(fmt::format(R"(
.kernel store_lanes
.buffer 0 u0 device float out
    mov.u32 r0, %thread_index_in_simdgroup
    shl.u32 r1, r0, 1
    cvt.f32.u32 r8, r1
    add.u32 r1, r1, 1
    cvt.f32.u32 r9, r1
    simdgroup_store.device.f32{} [u0], r8, 8
    exit
.end
)",
                                transpose ? ".transpose" : ""));
    h.SetBuffer(0, std::vector<float>(64, -1.0f));
    ASSERT_TRUE(Runs(h, {32}, {32}));
    const std::vector<float> out = h.Read<float>(0);
    for (int lane = 0; lane < 32; ++lane) {
      const LaneElements at = AppleLayout(lane);
      for (int e = 0; e < 2; ++e) {
        const int r = at.row, c = at.col + e;
        EXPECT_EQ(out[transpose ? c * 8 + r : r * 8 + c], 2 * lane + e)
            << "lane " << lane << " register " << e;
      }
    }
  }
}

TEST(SimdgroupMatrixTest, MultiplyReadsAndWritesRegistersInAppleLayout) {
  // A and B are placed in the registers lane by lane (no simdgroup_load):
  // lane L's registers get A's and B's elements at AppleLayout(L). D = A * B
  // is read back the same way, register by register.
  KernelHarness h(R"(
.kernel mma_registers
.buffer 0 u0 device float a
.buffer 1 u2 device float b
.buffer 2 u4 device float d
    mov.u32 r0, %thread_index_in_simdgroup
    ld.device.f32 r8, [u0 + r0*8]
    ld.device.f32 r9, [u0 + r0*8 + 4]
    ld.device.f32 r10, [u2 + r0*8]
    ld.device.f32 r11, [u2 + r0*8 + 4]
    mov.u32 r12, 0
    mov.u32 r13, 0
    simdgroup_multiply_accumulate.f32 r14, r8, r10, r12
    st.device.f32 [u4 + r0*8], r14
    st.device.f32 [u4 + r0*8 + 4], r15
    exit
.end
)");
  // Small integers: the product is exact.
  float a[8][8], b[8][8];
  for (int r = 0; r < 8; ++r) {
    for (int c = 0; c < 8; ++c) {
      a[r][c] = static_cast<float>((r * 3 + c * 5) % 7 - 3);
      b[r][c] = static_cast<float>((r * 5 + c * 2) % 9 - 4);
    }
  }
  // The registers, lane by lane.
  std::vector<float> a_regs(64), b_regs(64);
  for (int lane = 0; lane < 32; ++lane) {
    const LaneElements at = AppleLayout(lane);
    for (int e = 0; e < 2; ++e) {
      a_regs[2 * lane + e] = a[at.row][at.col + e];
      b_regs[2 * lane + e] = b[at.row][at.col + e];
    }
  }
  h.SetBuffer(0, a_regs);
  h.SetBuffer(1, b_regs);
  h.SetBuffer(2, std::vector<float>(64, -1.0f));
  ASSERT_TRUE(Runs(h, {32}, {32}));
  const std::vector<float> d = h.Read<float>(2);
  for (int lane = 0; lane < 32; ++lane) {
    const LaneElements at = AppleLayout(lane);
    for (int e = 0; e < 2; ++e) {
      float want = 0;
      for (int k = 0; k < 8; ++k) want += a[at.row][k] * b[k][at.col + e];
      EXPECT_EQ(d[2 * lane + e], want) << "lane " << lane << " register " << e;
    }
  }
}

TEST(SimdgroupMatrixTest, DestinationMayBeTheStrideOrBaseRegister) {
  // r8 holds the stride, r10:r11 the base address; the loads overwrite
  // them with the matrix.
  KernelHarness h(R"(
.kernel alias
.buffer 0 u0 device float m
.buffer 1 u2 device float out
    mov.u32 r8, 16
    simdgroup_load.device.f32 r8, [u0], r8
    simdgroup_store.device.f32 [u2], r8, 8
    mov.u64 r10, u0
    simdgroup_load.device.f32.transpose r10, [r10 + 4], 16
    simdgroup_store.device.f32 [u2 + 256], r10, 8
    exit
.end
)");
  std::vector<float> m(8 * 16);
  for (size_t k = 0; k < m.size(); ++k) m[k] = 0.5f * k + 0.25f;
  h.SetBuffer(0, m);
  h.SetBuffer(1, std::vector<float>(128));
  ASSERT_TRUE(Runs(h, {32}, {32}));
  const std::vector<float> out = h.Read<float>(1);
  for (int r = 0; r < 8; ++r) {
    for (int c = 0; c < 8; ++c) {
      EXPECT_EQ(out[r * 8 + c], m[r * 16 + c]) << r << ", " << c;
      EXPECT_EQ(out[64 + r * 8 + c], m[1 + c * 16 + r]) << r << ", " << c;
    }
  }
}

// 60 floats: element (7, 4), held by lane 30 (with (7, 5); lane 31 holds
// (7, 6) and (7, 7)), is the first one missing.
constexpr char kShortMatrix[] = R"(
.kernel short_matrix
.buffer 0 u0 device float m
    simdgroup_load.device.f32 r8, [u0], 8
    exit
.end
)";

TEST(SimdgroupMatrixTest, LoadPastTheEndIsReported) {
  KernelHarness h(kShortMatrix);
  h.SetBuffer(0, std::vector<float>(60));
  ASSERT_TRUE(Runs(h, {32}, {32}));
  ASSERT_NE(h.report()->check, nullptr);
  ASSERT_EQ(h.report()->check->findings.size(), 1u);
  const emu::Finding& f = h.report()->check->findings[0];
  EXPECT_EQ(f.count, 4u);  // the four missing elements
  EXPECT_EQ(f.first.lane, 30u);
  EXPECT_EQ(f.region_offset, 240);
}

TEST(SimdgroupMatrixTest, LoadPastTheEndFaults) {
  KernelHarness h(kShortMatrix);
  h.SetBuffer(0, std::vector<float>(60));
  ASSERT_TRUE(h.status().ok()) << h.status().error().message;
  h.device().options().out_of_bounds = emu::OutOfBoundsPolicy::kFault;
  ASSERT_TRUE(h.DispatchThreads({32}, {32}).ok());
  ASSERT_NE(h.error(), nullptr);
  EXPECT_EQ(h.error()->code, CommandBufferErrorCode::kPageFault);
  EXPECT_EQ(h.error()->fault.lane, 30);
  const std::string& message = h.error()->message;
  for (const char* part :
       {"kernel 'short_matrix'", "lane 30", "read of 4 bytes",
        "buffer(0) 'm' (240 bytes) at offset 240"}) {
    EXPECT_NE(message.find(part), std::string::npos) << part << "\n" << message;
  }
}

// --- 8x8x8 products ----------------------------------------------------------

// How the product is formed: which inputs are loaded transposed, and which
// register the result overwrites.
struct Product {
  const char* name;
  bool transpose_a = false;
  bool transpose_b = false;
  const char* instruction =
      "simdgroup_multiply_accumulate.{0} r14, r8, r10, r12\n"
      "    simdgroup_store.device.{0} [u6], r14, 8";
};

const Product kPlain = {"plain"};
const Product kTransposedA = {"a transposed", true, false};
const Product kTransposedB = {"b transposed", false, true};
const Product kAccumulateInPlace = {
    "d is c", false, false,
    "simdgroup_multiply_accumulate.{0} r12, r8, r10, r12\n"
    "    simdgroup_store.device.{0} [u6], r12, 8"};
const Product kOverwriteA = {
    "d is a", false, false,
    "simdgroup_multiply_accumulate.{0} r8, r8, r10, r12\n"
    "    simdgroup_store.device.{0} [u6], r8, 8"};
const Product kSquare = {"a times a", false, false,
                         "simdgroup_multiply_accumulate.{0} r10, r8, r8, r12\n"
                         "    simdgroup_store.device.{0} [u6], r10, 8"};

// D = A * B + C for 8x8 matrices in device buffers 0..2, D into buffer 3;
// returns D. Fails the test (and returns nothing) if the kernel fails.
template <typename T>
std::vector<T> Multiply(const Product& p, const std::vector<T>& a,
                        const std::vector<T>& b, const std::vector<T>& c) {
  KernelHarness h(
      fmt::format(fmt::runtime(".kernel mma\n"
                               ".buffer 0 u0 device void a\n"
                               ".buffer 1 u2 device void b\n"
                               ".buffer 2 u4 device void c\n"
                               ".buffer 3 u6 device void d\n"
                               "    simdgroup_load.device.{0}{1} r8, [u0], 8\n"
                               "    simdgroup_load.device.{0}{2} r10, [u2], 8\n"
                               "    simdgroup_load.device.{0} r12, [u4], 8\n"
                               "    " +
                               std::string(p.instruction) +
                               "\n"
                               "    exit\n"
                               ".end\n"),
                  Suffix<T>(), p.transpose_a ? ".transpose" : "",
                  p.transpose_b ? ".transpose" : ""));
  h.SetBuffer(0, a);
  h.SetBuffer(1, b);
  h.SetBuffer(2, c);
  h.SetBuffer(3, std::vector<T>(64));
  EXPECT_TRUE(Runs(h, {32}, {32}));
  return h.Read<T>(3);
}

// The exact D = A * B + C in double (from the element values as stored).
template <typename T>
std::vector<double> Reference(const Product& p, const std::vector<T>& a,
                              const std::vector<T>& b, const std::vector<T>& c,
                              std::vector<double>* magnitude) {
  const bool a_is_b = std::string_view(p.name) == "a times a";
  const std::vector<T>& bb = a_is_b ? a : b;
  std::vector<double> d(64);
  magnitude->assign(64, 0);
  for (int r = 0; r < 8; ++r) {
    for (int col = 0; col < 8; ++col) {
      double sum = static_cast<double>(c[r * 8 + col]);
      (*magnitude)[r * 8 + col] = std::abs(sum);
      for (int k = 0; k < 8; ++k) {
        const double x =
            static_cast<double>(p.transpose_a ? a[k * 8 + r] : a[r * 8 + k]);
        const double y = static_cast<double>(
            p.transpose_b && !a_is_b ? bb[col * 8 + k] : bb[k * 8 + col]);
        sum += x * y;
        (*magnitude)[r * 8 + col] += std::abs(x * y);
      }
      d[r * 8 + col] = sum;
    }
  }
  return d;
}

template <typename T>
void ExpectProduct(const Product& p, bool integers, uint32_t seed) {
  SCOPED_TRACE(fmt::format("{} {} {}", Suffix<T>(), p.name,
                           integers ? "integers" : "random"));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> real(-1, 1);
  std::uniform_int_distribution<int> small(-3, 3), medium(-8, 8);
  std::vector<T> a(64), b(64), c(64);
  for (int k = 0; k < 64; ++k) {
    a[k] = static_cast<T>(integers ? small(rng) : real(rng));
    b[k] = static_cast<T>(integers ? small(rng) : real(rng));
    c[k] = static_cast<T>(integers ? medium(rng) : real(rng));
  }
  const std::vector<T> d = Multiply(p, a, b, c);
  std::vector<double> magnitude;
  const std::vector<double> want = Reference(p, a, b, c, &magnitude);
  // Integer inputs: every partial sum is a small integer, exact in float and
  // half. Random inputs: each of the 9 roundings (8 fmas or adds and the
  // conversion to T) errs by at most one unit of T's precision relative to
  // the magnitudes involved.
  const double eps = std::is_same_v<T, float> ? 0x1p-24 : 0x1p-11;
  for (int k = 0; k < 64; ++k) {
    const double bound = integers ? 0 : 9 * eps * magnitude[k];
    EXPECT_NEAR(static_cast<double>(d[k]), want[k], bound)
        << "element (" << k / 8 << ", " << k % 8 << ")";
  }
}

TEST(SimdgroupMatrixTest, ProductsOfIntegersAreExact) {
  uint32_t seed = 1;
  for (const Product& p : {kPlain, kTransposedA, kTransposedB,
                           kAccumulateInPlace, kOverwriteA, kSquare}) {
    ExpectProduct<float>(p, true, seed++);
    ExpectProduct<Half>(p, true, seed++);
  }
}

TEST(SimdgroupMatrixTest, FloatProductWithinFloatBound) {
  for (uint32_t seed = 10; seed < 15; ++seed) {
    ExpectProduct<float>(kPlain, false, seed);
  }
  ExpectProduct<float>(kTransposedA, false, 20);
  ExpectProduct<float>(kAccumulateInPlace, false, 21);
}

TEST(SimdgroupMatrixTest, HalfProductWithinHalfBound) {
  for (uint32_t seed = 30; seed < 35; ++seed) {
    ExpectProduct<Half>(kPlain, false, seed);
  }
  ExpectProduct<Half>(kTransposedB, false, 40);
}

// --- a 32x32 product from 8x8 tiles ------------------------------------------

// C = A * B for 32x32 row-major matrices: SIMD group s of the one
// threadgroup computes tile (s / 4, s % 4) with a loop over the four k
// tiles. From threadgroup memory, all threads first stage A and B there.
std::string TiledKernel(bool half, bool threadgroup) {
  const char* t = half ? "f16" : "f32";
  const int size = half ? 2 : 4;
  const int bytes = 32 * 32 * size;
  std::string s = fmt::format(
      ".kernel tiled\n"
      ".buffer 0 u0 device void a\n"
      ".buffer 1 u2 device void b\n"
      ".buffer 2 u4 device void c\n"
      ".threadgroup_memory {}\n"
      "    mov.u32 r0, %simdgroup_index_in_threadgroup\n"
      "    mov.u32 r1, %thread_index_in_threadgroup\n",
      2 * bytes);
  // The tiles' addresses: [A_BASE rI*SIZE] and [B_BASE rI*SIZE B_DISP].
  std::string a = "u0 + ", b = "u2 + ", b_disp;
  if (threadgroup) {
    // 512 threads copy the 2 * bytes / 4 words of A and B.
    for (int k = 0; k < bytes / 4 / 512; ++k) {
      s += fmt::format(
          "    ld.device.u32 r2, [u0 + r1*4 + {0}]\n"
          "    st.threadgroup.u32 [r1*4 + {0}], r2\n"
          "    ld.device.u32 r2, [u2 + r1*4 + {0}]\n"
          "    st.threadgroup.u32 [r1*4 + {1}], r2\n",
          2048 * k, bytes + 2048 * k);
    }
    s += "    threadgroup_barrier.mem_threadgroup\n";
    a = "";
    b = "";
    b_disp = fmt::format(" + {}", bytes);
  }
  const char* space = threadgroup ? "threadgroup" : "device";
  s += fmt::format(
      "    shr.u32 r1, r0, 2\n"
      "    and.u32 r2, r0, 3\n"
      "    mov.u32 r16, 0\n"
      "    mov.u32 r17, 0\n"
      "    mov.u32 r3, 0\n"
      "next_k:\n"
      "    mul.u32 r4, r1, 256\n"
      "    mul.u32 r5, r3, 8\n"
      "    add.u32 r4, r4, r5\n"
      "    simdgroup_load.{0}.{1} r8, [{2}r4*{3}], 32\n"
      "    mul.u32 r6, r3, 256\n"
      "    mul.u32 r7, r2, 8\n"
      "    add.u32 r6, r6, r7\n"
      "    simdgroup_load.{0}.{1} r10, [{4}r6*{3}{5}], 32\n"
      "    simdgroup_multiply_accumulate.{1} r16, r8, r10, r16\n"
      "    add.u32 r3, r3, 1\n"
      "    lt.u32 r12, r3, 4\n"
      "    bnz r12, next_k, done\n"
      "done:\n"
      "    mul.u32 r4, r1, 256\n"
      "    mul.u32 r7, r2, 8\n"
      "    add.u32 r4, r4, r7\n"
      "    simdgroup_store.device.{1} [u4 + r4*{3}], r16, 32\n"
      "    exit\n"
      ".end\n",
      space, t, a, size, b, b_disp);
  return s;
}

template <typename T>
void ExpectTiledProduct(bool threadgroup, bool integers) {
  SCOPED_TRACE(fmt::format("{} from {} memory, {}", Suffix<T>(),
                           threadgroup ? "threadgroup" : "device",
                           integers ? "integers" : "random"));
  constexpr int n = 32;
  std::mt19937 rng(99);
  std::uniform_real_distribution<float> real(-1, 1);
  std::uniform_int_distribution<int> small(-2, 2);
  std::vector<T> a(n * n), b(n * n);
  for (int k = 0; k < n * n; ++k) {
    a[k] = static_cast<T>(integers ? small(rng) : real(rng));
    b[k] = static_cast<T>(integers ? small(rng) : real(rng));
  }
  KernelHarness h(TiledKernel(std::is_same_v<T, Half>, threadgroup));
  h.SetBuffer(0, a);
  h.SetBuffer(1, b);
  h.SetBuffer(2, std::vector<T>(n * n, static_cast<T>(12345.0f)));
  ASSERT_TRUE(Runs(h, {512}, {512}));
  const std::vector<T> c = h.Read<T>(2);
  // Four accumulating 8x8 steps, each at most 9 roundings of T.
  const double eps = std::is_same_v<T, float> ? 0x1p-24 : 0x1p-11;
  for (int r = 0; r < n; ++r) {
    for (int col = 0; col < n; ++col) {
      double want = 0, magnitude = 0;
      for (int k = 0; k < n; ++k) {
        const double x = static_cast<double>(a[r * n + k]);
        const double y = static_cast<double>(b[k * n + col]);
        want += x * y;
        magnitude += std::abs(x * y);
      }
      const double bound = integers ? 0 : 4 * 9 * eps * magnitude;
      ASSERT_NEAR(static_cast<double>(c[r * n + col]), want, bound)
          << "element (" << r << ", " << col << ")";
    }
  }
}

TEST(SimdgroupMatrixTest, TiledProductFromDeviceMemory) {
  ExpectTiledProduct<float>(false, false);
  ExpectTiledProduct<float>(false, true);
  ExpectTiledProduct<Half>(false, true);
}

TEST(SimdgroupMatrixTest, TiledProductFromThreadgroupMemory) {
  ExpectTiledProduct<float>(true, false);
  ExpectTiledProduct<Half>(true, true);
  ExpectTiledProduct<Half>(true, false);
}

}  // namespace
}  // namespace mtlemu
