// How a value of each ScalarType sits in 32-bit lane registers, and the C++
// type the emulator computes it in. 64-bit values are split: the low half in
// the first register, the high half in the next. Narrow integers are kept
// sign- or zero-extended; half and bfloat sit in the low 16 bits.
#pragma once

#include <bit>
#include <cstdint>
#include <type_traits>

#include "isa/numeric.h"
#include "isa/scalar_type.h"

namespace mtlemu::emu {

using isa::ScalarType;

template <ScalarType T>
struct LaneType;

// Integers narrower than 32 bits compute in 32 bits and wrap on write.
template <typename Value, typename Storage, int kBitsV>
struct IntLaneType {
  using V = Value;    // what the emulator computes in
  using S = Storage;  // the exact C++ type of the Metal type
  static constexpr int kBits = kBitsV;
  static constexpr bool kWide = kBits == 64;
  static constexpr bool kFloat = false;
  static constexpr bool kSigned = std::is_signed_v<Value>;
  static V Get(const uint32_t* lo, const uint32_t* hi, int lane) {
    if constexpr (kWide) {
      return static_cast<V>(static_cast<uint64_t>(lo[lane]) |
                            (static_cast<uint64_t>(hi[lane]) << 32));
    } else {
      (void)hi;
      return static_cast<V>(static_cast<S>(lo[lane]));
    }
  }
  static void Put(uint32_t* lo, uint32_t* hi, int lane, V v) {
    if constexpr (kWide) {
      const uint64_t bits = static_cast<uint64_t>(v);
      lo[lane] = static_cast<uint32_t>(bits);
      hi[lane] = static_cast<uint32_t>(bits >> 32);
    } else {
      (void)hi;
      // Wrap to the type's width, then extend back to 32 bits.
      lo[lane] = static_cast<uint32_t>(static_cast<V>(static_cast<S>(v)));
    }
  }
};

template <>
struct LaneType<ScalarType::kBool> {
  using V = uint32_t;
  using S = uint8_t;
  static constexpr int kBits = 8;
  static constexpr bool kWide = false;
  static constexpr bool kFloat = false;
  static constexpr bool kSigned = false;
  static V Get(const uint32_t* lo, const uint32_t*, int lane) {
    return lo[lane] & 0xffu;
  }
  static void Put(uint32_t* lo, uint32_t*, int lane, V v) {
    lo[lane] = v & 0xffu;
  }
};
template <>
struct LaneType<ScalarType::kChar> : IntLaneType<int32_t, int8_t, 8> {};
template <>
struct LaneType<ScalarType::kUChar> : IntLaneType<uint32_t, uint8_t, 8> {};
template <>
struct LaneType<ScalarType::kShort> : IntLaneType<int32_t, int16_t, 16> {};
template <>
struct LaneType<ScalarType::kUShort> : IntLaneType<uint32_t, uint16_t, 16> {};
template <>
struct LaneType<ScalarType::kInt> : IntLaneType<int32_t, int32_t, 32> {};
template <>
struct LaneType<ScalarType::kUInt> : IntLaneType<uint32_t, uint32_t, 32> {};
template <>
struct LaneType<ScalarType::kLong> : IntLaneType<int64_t, int64_t, 64> {};
template <>
struct LaneType<ScalarType::kULong> : IntLaneType<uint64_t, uint64_t, 64> {};

template <>
struct LaneType<ScalarType::kFloat> {
  using V = float;
  static constexpr int kBits = 32;
  static constexpr bool kWide = false;
  static constexpr bool kFloat = true;
  static constexpr bool kSigned = true;
  static V Get(const uint32_t* lo, const uint32_t*, int lane) {
    return std::bit_cast<float>(lo[lane]);
  }
  static void Put(uint32_t* lo, uint32_t*, int lane, V v) {
    lo[lane] = std::bit_cast<uint32_t>(v);
  }
};

// 16-bit floats: bits in the low half of the register, computed in float.
template <float (*kToFloat)(uint16_t), uint16_t (*kFromFloat)(float)>
struct Float16LaneType {
  using V = float;
  static constexpr int kBits = 16;
  static constexpr bool kWide = false;
  static constexpr bool kFloat = true;
  static constexpr bool kSigned = true;
  static V Get(const uint32_t* lo, const uint32_t*, int lane) {
    return kToFloat(static_cast<uint16_t>(lo[lane]));
  }
  static void Put(uint32_t* lo, uint32_t*, int lane, V v) {
    lo[lane] = kFromFloat(v);
  }
};

template <>
struct LaneType<ScalarType::kHalf>
    : Float16LaneType<isa::HalfBitsToFloat, isa::FloatToHalfBits> {};
template <>
struct LaneType<ScalarType::kBFloat>
    : Float16LaneType<isa::BFloatBitsToFloat, isa::FloatToBFloatBits> {};

// Calls f.template operator()<T>() with the ScalarType as a template
// argument: turns a run-time type into a compile-time one.
template <typename F>
decltype(auto) VisitScalarType(ScalarType t, F&& f) {
  switch (t) {
#define X(e, metal, suffix, size, kind) \
  case ScalarType::e:                   \
    return f.template operator()<ScalarType::e>();
#include "isa/scalar_types.def"
#undef X
  }
  return f.template operator()<ScalarType::kUInt>();
}

}  // namespace mtlemu::emu
