// IEEE binary16 (Metal `half`) and bfloat16 (Metal `bfloat`) conversions,
// bit-exact and portable: no compiler half type is assumed.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace mtlemu::isa {

// float -> half bits, round to nearest even; overflow to inf, NaN kept quiet.
inline uint16_t FloatToHalfBits(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or NaN
    if (abs == 0x7f800000u) return static_cast<uint16_t>(sign | 0x7c00u);
    return static_cast<uint16_t>(sign | 0x7e00u | ((abs >> 13) & 0x3ffu));
  }
  if (abs >= 0x477ff000u) {  // rounds to >= 65520: overflow
    return static_cast<uint16_t>(sign | 0x7c00u);
  }
  if (abs < 0x38800000u) {  // below the smallest normal half: subnormal or 0
    // The result is abs / 2^-24 rounded to nearest even, as an integer.
    const uint32_t exp = abs >> 23;
    if (exp < 102) return static_cast<uint16_t>(sign);  // < 2^-25: rounds to 0
    const uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - exp;  // 14..24
    uint32_t q = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) ++q;
    return static_cast<uint16_t>(sign | q);
  }
  // Normal: rebias the exponent and round the mantissa to 10 bits.
  uint32_t h = ((abs - 0x38000000u) >> 13);
  const uint32_t rem = abs & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) ++h;
  return static_cast<uint16_t>(sign | h);
}

inline float HalfBitsToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalize
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      bits = sign | ((112 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  }
  return std::bit_cast<float>(bits);
}

// float -> bfloat bits, round to nearest even; NaN kept quiet.
inline uint16_t FloatToBFloatBits(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) {
    return static_cast<uint16_t>((x >> 16) | 0x40u);
  }
  const uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

inline float BFloatBitsToFloat(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

// double -> float rounding to odd, so that a second rounding to half or
// bfloat is as if rounded once from the double.
inline float RoundToOddFloat(double d) {
  if (std::fabs(d) > std::numeric_limits<float>::max()) {
    return d < 0 ? -std::numeric_limits<float>::infinity()
                 : std::numeric_limits<float>::infinity();
  }
  float f = static_cast<float>(d);
  if (static_cast<double>(f) == d || std::isnan(d)) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(d)) {
    f = std::nextafter(f, 0.0f);
  }
  return std::bit_cast<float>(std::bit_cast<uint32_t>(f) | 1u);
}

// A literal's value (parsed as a double) as half or bfloat bits, rounded
// once to nearest even: the one codec of the assembler and the command
// line.
inline uint16_t DoubleToHalfBits(double d) {
  return FloatToHalfBits(RoundToOddFloat(d));
}
inline uint16_t DoubleToBFloatBits(double d) {
  return FloatToBFloatBits(RoundToOddFloat(d));
}

}  // namespace mtlemu::isa
