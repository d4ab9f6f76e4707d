#include "isa/numeric.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace mtlemu::isa {
namespace {

float Bits(uint32_t b) { return std::bit_cast<float>(b); }

TEST(HalfTest, HandValues) {
  EXPECT_EQ(FloatToHalfBits(1.0f), 0x3C00);
  EXPECT_EQ(FloatToHalfBits(-2.0f), 0xC000);
  EXPECT_EQ(FloatToHalfBits(0.5f), 0x3800);
  EXPECT_EQ(FloatToHalfBits(65504.0f), 0x7BFF);
  EXPECT_EQ(FloatToHalfBits(65519.0f), 0x7BFF);  // rounds down to max
  EXPECT_EQ(FloatToHalfBits(65520.0f), 0x7C00);  // ties to even: inf
  EXPECT_EQ(FloatToHalfBits(1e10f), 0x7C00);
  EXPECT_EQ(FloatToHalfBits(-1e10f), 0xFC00);
  EXPECT_EQ(FloatToHalfBits(std::numeric_limits<float>::infinity()), 0x7C00);
  EXPECT_EQ(FloatToHalfBits(-std::numeric_limits<float>::infinity()), 0xFC00);
  EXPECT_EQ(FloatToHalfBits(0.0f), 0x0000);
  EXPECT_EQ(FloatToHalfBits(-0.0f), 0x8000);
  EXPECT_EQ(FloatToHalfBits(std::ldexp(1.0f, -14)), 0x0400);  // min normal
}

TEST(HalfTest, Subnormals) {
  EXPECT_EQ(FloatToHalfBits(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(FloatToHalfBits(-std::ldexp(1.0f, -24)), 0x8001);
  // 2^-25 is exactly half the smallest subnormal: ties to even gives 0.
  EXPECT_EQ(FloatToHalfBits(std::ldexp(1.0f, -25)), 0x0000);
  EXPECT_EQ(FloatToHalfBits(-std::ldexp(1.0f, -25)), 0x8000);
  // 3*2^-26 = 0.75 * 2^-24 rounds up to the smallest subnormal.
  EXPECT_EQ(FloatToHalfBits(3.0f * std::ldexp(1.0f, -26)), 0x0001);
  // 3*2^-25 = 1.5 * 2^-24: a tie, to even (2).
  EXPECT_EQ(FloatToHalfBits(3.0f * std::ldexp(1.0f, -25)), 0x0002);
  // Slightly above 2^-25 rounds up.
  EXPECT_EQ(FloatToHalfBits(std::nextafter(std::ldexp(1.0f, -25), 1.0f)),
            0x0001);
  EXPECT_EQ(FloatToHalfBits(std::ldexp(1.0f, -30)), 0x0000);
  EXPECT_EQ(FloatToHalfBits(std::numeric_limits<float>::denorm_min()), 0x0000);
  // The largest subnormal, and rounding up from it into the normals.
  EXPECT_EQ(FloatToHalfBits(1023.0f * std::ldexp(1.0f, -24)), 0x03FF);
  EXPECT_EQ(FloatToHalfBits(1023.5f * std::ldexp(1.0f, -24)), 0x0400);
}

TEST(HalfTest, RoundsTiesToEven) {
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even (1.0).
  EXPECT_EQ(FloatToHalfBits(1.0f + std::ldexp(1.0f, -11)), 0x3C00);
  // 1 + 3*2^-11 is halfway between 1+2^-10 (odd) and 1+2^-9: up.
  EXPECT_EQ(FloatToHalfBits(1.0f + 3.0f * std::ldexp(1.0f, -11)), 0x3C02);
  // Just above the tie rounds up.
  EXPECT_EQ(FloatToHalfBits(std::nextafter(1.0f + std::ldexp(1.0f, -11), 2.0f)),
            0x3C01);
  // Rounding carries into the exponent.
  EXPECT_EQ(FloatToHalfBits(std::nextafter(2.0f, 0.0f)), 0x4000);
}

TEST(HalfTest, NaNStaysNaN) {
  const uint16_t h = FloatToHalfBits(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(h & 0x7C00, 0x7C00);
  EXPECT_NE(h & 0x03FF, 0);
  // A signaling NaN whose payload is only in the low bits stays a NaN.
  const uint16_t s = FloatToHalfBits(Bits(0x7F800001u));
  EXPECT_EQ(s & 0x7C00, 0x7C00);
  EXPECT_NE(s & 0x03FF, 0);
  EXPECT_EQ(FloatToHalfBits(Bits(0xFFC00000u)) & 0x8000, 0x8000);
  EXPECT_TRUE(std::isnan(HalfBitsToFloat(0x7E00)));
  EXPECT_TRUE(std::isnan(HalfBitsToFloat(0x7C01)));
}

TEST(HalfTest, HalfToFloatHandValues) {
  EXPECT_EQ(HalfBitsToFloat(0x3C00), 1.0f);
  EXPECT_EQ(HalfBitsToFloat(0x7BFF), 65504.0f);
  EXPECT_EQ(HalfBitsToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(HalfBitsToFloat(0x03FF), 1023.0f * std::ldexp(1.0f, -24));
  EXPECT_EQ(HalfBitsToFloat(0x0400), std::ldexp(1.0f, -14));
  EXPECT_EQ(HalfBitsToFloat(0x7C00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(HalfBitsToFloat(0xFC00), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(std::bit_cast<uint32_t>(HalfBitsToFloat(0x8000)), 0x80000000u);
  EXPECT_EQ(HalfBitsToFloat(0xC000), -2.0f);
}

// Every half converts to float exactly and back unchanged; NaNs stay NaNs
// with the quiet bit set and the sign kept.
TEST(HalfTest, ExhaustiveRoundTrip) {
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    const uint16_t bits = static_cast<uint16_t>(h);
    const float f = HalfBitsToFloat(bits);
    const uint16_t back = FloatToHalfBits(f);
    const bool is_nan = (bits & 0x7C00) == 0x7C00 && (bits & 0x03FF) != 0;
    if (is_nan) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << h;
      ASSERT_EQ(back, bits | 0x0200) << std::hex << h;
    } else {
      ASSERT_EQ(back, bits) << std::hex << h;
    }
  }
}

TEST(BFloatTest, HandValues) {
  EXPECT_EQ(FloatToBFloatBits(1.0f), 0x3F80);
  EXPECT_EQ(FloatToBFloatBits(-2.0f), 0xC000);
  EXPECT_EQ(FloatToBFloatBits(0.0f), 0x0000);
  EXPECT_EQ(FloatToBFloatBits(-0.0f), 0x8000);
  EXPECT_EQ(FloatToBFloatBits(std::numeric_limits<float>::infinity()), 0x7F80);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even.
  EXPECT_EQ(FloatToBFloatBits(1.0f + std::ldexp(1.0f, -8)), 0x3F80);
  EXPECT_EQ(FloatToBFloatBits(1.0f + 3.0f * std::ldexp(1.0f, -8)), 0x3F82);
  EXPECT_EQ(
      FloatToBFloatBits(std::nextafter(1.0f + std::ldexp(1.0f, -8), 2.0f)),
      0x3F81);
  // The largest float rounds up to inf.
  EXPECT_EQ(FloatToBFloatBits(std::numeric_limits<float>::max()), 0x7F80);
  EXPECT_EQ(FloatToBFloatBits(Bits(0x7F7F7FFFu)), 0x7F7F);
  // Subnormals keep their top bits.
  EXPECT_EQ(FloatToBFloatBits(Bits(0x00010000u)), 0x0001);
  EXPECT_EQ(BFloatBitsToFloat(0x3F80), 1.0f);
  EXPECT_EQ(BFloatBitsToFloat(0x7F80), std::numeric_limits<float>::infinity());
}

TEST(BFloatTest, NaNStaysNaN) {
  // A NaN whose payload is only in the low 16 bits would truncate to inf.
  const uint16_t b = FloatToBFloatBits(Bits(0x7F800001u));
  EXPECT_EQ(b & 0x7F80, 0x7F80);
  EXPECT_NE(b & 0x007F, 0);
  EXPECT_EQ(FloatToBFloatBits(Bits(0xFFC00000u)), 0xFFC0);
  EXPECT_TRUE(std::isnan(BFloatBitsToFloat(0x7FC0)));
}

TEST(BFloatTest, ExhaustiveRoundTrip) {
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    const uint16_t bits = static_cast<uint16_t>(h);
    const float f = BFloatBitsToFloat(bits);
    const uint16_t back = FloatToBFloatBits(f);
    const bool is_nan = (bits & 0x7F80) == 0x7F80 && (bits & 0x007F) != 0;
    if (is_nan) {
      ASSERT_EQ(back, bits | 0x0040) << std::hex << h;
    } else {
      ASSERT_EQ(back, bits) << std::hex << h;
    }
  }
}

}  // namespace
}  // namespace mtlemu::isa
