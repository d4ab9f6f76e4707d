// --expect's element comparison (cli/buffer_compare.h) against values
// worked out by hand: equal values (infinities included), NaN with NaN,
// the tolerance |got - expected| <= atol + rtol * |expected|, and the
// report of the first mismatches.
#include "cli/buffer_compare.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <vector>

namespace mtlemu::cli {
namespace {

template <typename T>
std::vector<uint8_t> Bytes(const std::vector<T>& values) {
  std::vector<uint8_t> out(values.size() * sizeof(T));
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

template <typename T>
NpyArray Expected(isa::ScalarType type, const std::vector<T>& values) {
  NpyArray a;
  a.type = type;
  a.shape = {values.size()};
  a.data = Bytes(values);
  return a;
}

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST(BufferCompare, InfinitiesMatchThemselvesOnly) {
  const std::vector<float> want = {kInf, -kInf, kInf, kNaN, 1.0f};
  const std::vector<float> got = {kInf, -kInf, -kInf, kNaN, 1.0f};
  const auto c = CompareBuffer(isa::ScalarType::kFloat, Bytes(got),
                               Expected(isa::ScalarType::kFloat, want), {});
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c.value().elements, 5u);
  EXPECT_EQ(c.value().mismatches, 1u);  // [2]: -inf for inf
  EXPECT_EQ(c.value().first_mismatches, "  [2] got -inf, expected inf\n");
}

TEST(BufferCompare, ToleranceIsAtolPlusRtolTimesExpected) {
  // atol 0.5, rtol 0.1: within 0.5 + 0.1 * |expected|.
  const Tolerance t{0.1, 0.5};
  const std::vector<float> want = {10.0f, 10.0f, -10.0f, 0.0f, 0.0f};
  const std::vector<float> got = {11.5f, 11.75f, -8.5f, 0.5f, -0.75f};
  const auto c = CompareBuffer(isa::ScalarType::kFloat, Bytes(got),
                               Expected(isa::ScalarType::kFloat, want), t);
  ASSERT_TRUE(c.ok()) << c.error().message;
  // 1.5 <= 1.5 yes; 1.75 no; 1.5 yes; 0.5 yes; 0.75 no.
  EXPECT_EQ(c.value().mismatches, 2u);
  EXPECT_EQ(c.value().first_mismatches,
            "  [1] got 11.75, expected 10\n  [4] got -0.75, expected 0\n");
}

TEST(BufferCompare, IntegersExactlyAndAtMostFiveReported) {
  const std::vector<int32_t> want = {0, 1, 2, 3, 4, 5, 6, -7};
  const std::vector<int32_t> got = {9, 9, 9, 9, 9, 9, 6, -7};
  const auto c = CompareBuffer(isa::ScalarType::kInt, Bytes(got),
                               Expected(isa::ScalarType::kInt, want), {});
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c.value().mismatches, 6u);
  EXPECT_EQ(c.value().first_mismatches,
            "  [0] got 9, expected 0\n  [1] got 9, expected 1\n  [2] got 9, "
            "expected 2\n  [3] got 9, expected 3\n  [4] got 9, expected 4\n");
  const std::vector<uint32_t> big = {4000000000u};
  const auto u =
      CompareBuffer(isa::ScalarType::kUInt, Bytes(std::vector<uint32_t>{1}),
                    Expected(isa::ScalarType::kUInt, big), {});
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u.value().first_mismatches, "  [0] got 1, expected 4000000000\n");
}

TEST(BufferCompare, WrongTypeOrCountIsAnError) {
  const std::vector<float> want = {1.0f, 2.0f};
  EXPECT_FALSE(CompareBuffer(isa::ScalarType::kInt,
                             Bytes(std::vector<int32_t>{1, 2}),
                             Expected(isa::ScalarType::kFloat, want), {})
                   .ok());
  EXPECT_FALSE(CompareBuffer(isa::ScalarType::kFloat,
                             Bytes(std::vector<float>{1.0f}),
                             Expected(isa::ScalarType::kFloat, want), {})
                   .ok());
}

}  // namespace
}  // namespace mtlemu::cli
