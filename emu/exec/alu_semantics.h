// What each arithmetic, bit, comparison and math opcode computes, for one
// lane: the scalar reference semantics. Every opcode of an ALU shape in
// isa/opcodes.def has a specialization of AluSemantics here (a missing one
// is a compile error in alu_handlers.cpp); vector versions must match these
// bit for bit.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <type_traits>

#include "emu/exec/lane_types.h"
#include "isa/opcode.h"

namespace mtlemu::emu {

using isa::Opcode;

template <Opcode op>
struct AluSemantics;  // specialized once per ALU opcode below

namespace sem {

template <ScalarType T>
using V = typename LaneType<T>::V;

template <ScalarType T>
constexpr uint64_t kWidthMask = LaneType<T>::kBits == 64
                                    ? ~0ull
                                    : (1ull << LaneType<T>::kBits) - 1;

// The type's bits as an unsigned 64-bit value (no sign extension).
template <ScalarType T>
uint64_t Bits(V<T> a) {
  return static_cast<uint64_t>(a) & kWidthMask<T>;
}

// A float result that is NaN becomes the canonical quiet NaN, whatever the
// operands' payloads: the host's payload rules depend on operand order,
// which compilers and SIMD targets do not keep.
inline float CanonicalNaN(float r) {
  return r != r ? std::bit_cast<float>(0x7fc00000u) : r;
}

// fma for half and bfloat operands, rounded once when Put rounds the float
// to the 16-bit type. std::fma in float would round twice (to float, then
// to half), which breaks halfway cases (fma.f16(1.333984375, 1.5, 2^-24)
// is 2.001953125, not 2). So: the product is exact in double (two 11-bit
// significands); the sum, made exact by TwoSum, is rounded to odd in
// double and then to odd in float. Round-to-odd at >= 2 more bits than the
// target, then nearest even, is one correct rounding.
inline float FmaForNarrowFloat(float a, float b, float c) {
  const double p = static_cast<double>(a) * static_cast<double>(b);
  const double dc = static_cast<double>(c);
  double s = p + dc;
  if (!std::isfinite(s)) return static_cast<float>(s);
  const double t = s - p;
  const double err = (p - (s - t)) + (dc - t);  // p + dc == s + err
  if (err != 0 && (std::bit_cast<uint64_t>(s) & 1) == 0) {
    s = std::nextafter(s, err > 0 ? HUGE_VAL : -HUGE_VAL);
  }
  float f = static_cast<float>(s);
  if (std::isfinite(f) && static_cast<double>(f) != s &&
      (std::bit_cast<uint32_t>(f) & 1) == 0) {
    f = std::nextafter(f, static_cast<double>(f) < s ? HUGE_VALF : -HUGE_VALF);
  }
  return f;
}

template <ScalarType T>
V<T> WrapAdd(V<T> a, V<T> b) {
  using U = std::make_unsigned_t<V<T>>;
  return static_cast<V<T>>(static_cast<U>(a) + static_cast<U>(b));
}
template <ScalarType T>
V<T> WrapSub(V<T> a, V<T> b) {
  using U = std::make_unsigned_t<V<T>>;
  return static_cast<V<T>>(static_cast<U>(a) - static_cast<U>(b));
}
template <ScalarType T>
V<T> WrapMul(V<T> a, V<T> b) {
  using U = std::make_unsigned_t<V<T>>;
  return static_cast<V<T>>(static_cast<U>(a) * static_cast<U>(b));
}

// Smallest and largest value of the type (narrow types inside V).
template <ScalarType T>
constexpr V<T> TypeMin() {
  if constexpr (!LaneType<T>::kSigned) return 0;
  // The sign bit and all above it set, in unsigned arithmetic: negating
  // 1 << 63 would overflow (UBSan).
  return static_cast<V<T>>(
      static_cast<int64_t>(~uint64_t{0} << (LaneType<T>::kBits - 1)));
}
template <ScalarType T>
constexpr V<T> TypeMax() {
  if constexpr (LaneType<T>::kSigned) {
    return static_cast<V<T>>((1ull << (LaneType<T>::kBits - 1)) - 1);
  }
  return static_cast<V<T>>(kWidthMask<T>);
}
// Evaluated by the compiler, where undefined behaviour does not compile.
static_assert(TypeMin<ScalarType::kLong>() ==
              std::numeric_limits<int64_t>::min());
static_assert(TypeMin<ScalarType::kChar>() == -128);
static_assert(TypeMax<ScalarType::kLong>() ==
              std::numeric_limits<int64_t>::max());

template <ScalarType T>
uint32_t ShiftAmount(V<T> b) {
  return static_cast<uint32_t>(b) & (LaneType<T>::kBits - 1);
}

// Transcendentals are computed in double and rounded once to float (and
// then to half/bfloat on write): within Metal's precise ULP bounds. Like
// every float math result, a NaN is the canonical one (libm's NaNs depend
// on the host: sqrt(-1) is 0xffc00000 on x86).
template <ScalarType T, typename F>
V<T> ViaDouble(V<T> a, F f) {
  return CanonicalNaN(static_cast<float>(f(static_cast<double>(a))));
}

// x reduced to [-1, 1] exactly, for the *pi functions.
inline double ReducePi(float x) {
  const float r = x - 2.0f * std::nearbyint(x * 0.5f);
  return static_cast<double>(r);
}

}  // namespace sem

#define MTLEMU_UNARY(OP, ...)                 \
  template <>                                 \
  struct AluSemantics<Opcode::OP> {           \
    template <ScalarType T>                   \
    static sem::V<T> Eval(sem::V<T> a) {      \
      using L [[maybe_unused]] = LaneType<T>; \
      __VA_ARGS__                             \
    }                                         \
  };
#define MTLEMU_BINARY(OP, ...)                        \
  template <>                                         \
  struct AluSemantics<Opcode::OP> {                   \
    template <ScalarType T>                           \
    static sem::V<T> Eval(sem::V<T> a, sem::V<T> b) { \
      using L [[maybe_unused]] = LaneType<T>;         \
      __VA_ARGS__                                     \
    }                                                 \
  };
#define MTLEMU_MATH1(OP, ...) \
  MTLEMU_UNARY(               \
      OP, return sem::ViaDouble<T>(a, [](double x) { return __VA_ARGS__; });)

// --- moves and arithmetic
// -----------------------------------------------------
MTLEMU_UNARY(kMov, return a;)
MTLEMU_BINARY(kAdd, if constexpr (L::kFloat) return sem::CanonicalNaN(a + b);
              else return sem::WrapAdd<T>(a, b);)
MTLEMU_BINARY(kSub, if constexpr (L::kFloat) return sem::CanonicalNaN(a - b);
              else return sem::WrapSub<T>(a, b);)
MTLEMU_BINARY(kMul, if constexpr (L::kFloat) return sem::CanonicalNaN(a * b);
              else return sem::WrapMul<T>(a, b);)
MTLEMU_BINARY(
    kDiv, if constexpr (L::kFloat) { return sem::CanonicalNaN(a / b); } else {
      if (b == 0) return static_cast<sem::V<T>>(sem::kWidthMask<T>);
      if constexpr (L::kSigned) {
        if (a == sem::TypeMin<T>() && b == -1) return a;
      }
      return static_cast<sem::V<T>>(a / b);
    })
MTLEMU_BINARY(
    kRem, if constexpr (L::kFloat) { return std::fmod(a, b); } else {
      if (b == 0) return a;
      if constexpr (L::kSigned) {
        if (a == sem::TypeMin<T>() && b == -1) return 0;
      }
      return static_cast<sem::V<T>>(a % b);
    })
MTLEMU_BINARY(
    kMulHi,
    if constexpr (L::kFloat) {
      return a * b;
    } else if constexpr (L::kBits == 64) {
      using W = std::conditional_t<L::kSigned, __int128, unsigned __int128>;
      return static_cast<sem::V<T>>((static_cast<W>(a) * static_cast<W>(b)) >>
                                    64);
    } else {
      using W = std::conditional_t<L::kSigned, int64_t, uint64_t>;
      return static_cast<sem::V<T>>((static_cast<W>(a) * static_cast<W>(b)) >>
                                    L::kBits);
    })
template <>
struct AluSemantics<Opcode::kFma> {
  template <ScalarType T>
  static sem::V<T> Eval(sem::V<T> a, sem::V<T> b, sem::V<T> c) {
    if constexpr (T == ScalarType::kHalf || T == ScalarType::kBFloat) {
      return sem::CanonicalNaN(sem::FmaForNarrowFloat(a, b, c));
    } else if constexpr (LaneType<T>::kFloat) {
      return sem::CanonicalNaN(std::fma(a, b, c));
    } else {
      return sem::WrapAdd<T>(sem::WrapMul<T>(a, b), c);
    }
  }
};
template <>
struct AluSemantics<Opcode::kMad> {
  template <ScalarType T>
  static sem::V<T> Eval(sem::V<T> a, sem::V<T> b, sem::V<T> c) {
    if constexpr (LaneType<T>::kFloat) {
      return sem::CanonicalNaN(a * b + c);
    } else {
      return sem::WrapAdd<T>(sem::WrapMul<T>(a, b), c);
    }
  }
};
// fmin/fmax: a NaN operand gives the other operand (IEEE minNum/maxNum),
// signaling or quiet; otherwise a < b ? a : b (so min(-0, +0) is +0, as the
// vector version computes it too).
MTLEMU_BINARY(
    kMin,
    if constexpr (L::kFloat) {
      if (std::isnan(a)) return b;
      if (std::isnan(b)) return a;
      return a < b ? a : b;
    } else return a < b
        ? a
        : b;)
MTLEMU_BINARY(
    kMax,
    if constexpr (L::kFloat) {
      if (std::isnan(a)) return b;
      if (std::isnan(b)) return a;
      return a > b ? a : b;
    } else return a > b
        ? a
        : b;)
MTLEMU_UNARY(kAbs, if constexpr (L::kFloat) return std::fabs(a);
             else return a < 0 ? sem::WrapSub<T>(0, a) : a;)
MTLEMU_UNARY(kNeg, if constexpr (L::kFloat) return -a;
             else return sem::WrapSub<T>(0, a);)
MTLEMU_BINARY(kAbsDiff, if constexpr (L::kFloat) return std::fabs(a - b);
              else return a > b ? sem::WrapSub<T>(a, b)
                                : sem::WrapSub<T>(b, a);)
MTLEMU_BINARY(
    kAddSat, if constexpr (L::kFloat) { return a + b; } else {
      sem::V<T> r;
      if constexpr (L::kBits == 64) {
        if (!__builtin_add_overflow(a, b, &r)) return r;
        if constexpr (L::kSigned) {
          return b < 0 ? sem::TypeMin<T>() : sem::TypeMax<T>();
        }
        return sem::TypeMax<T>();
      } else {
        const int64_t s = static_cast<int64_t>(a) + static_cast<int64_t>(b);
        r = static_cast<sem::V<T>>(
            std::clamp<int64_t>(s, sem::TypeMin<T>(), sem::TypeMax<T>()));
        return r;
      }
    })
MTLEMU_BINARY(
    kSubSat, if constexpr (L::kFloat) { return a - b; } else {
      sem::V<T> r;
      if constexpr (L::kBits == 64) {
        if (!__builtin_sub_overflow(a, b, &r)) return r;
        if constexpr (L::kSigned) {
          return b > 0 ? sem::TypeMin<T>() : sem::TypeMax<T>();
        }
        return 0;
      } else {
        const int64_t s = static_cast<int64_t>(a) - static_cast<int64_t>(b);
        r = static_cast<sem::V<T>>(
            std::clamp<int64_t>(s, sem::TypeMin<T>(), sem::TypeMax<T>()));
        return r;
      }
    })
MTLEMU_BINARY(kHAdd, if constexpr (L::kFloat) return (a + b) * 0.5f;
              else return static_cast<sem::V<T>>((a >> 1) + (b >> 1) +
                                                 (a & b & 1));)
MTLEMU_BINARY(kRHAdd, if constexpr (L::kFloat) return (a + b) * 0.5f;
              else return static_cast<sem::V<T>>((a >> 1) + (b >> 1) +
                                                 ((a | b) & 1));)

// --- bit operations (integer types only; floats never reach these) ----------
#define MTLEMU_INT_BINARY(OP, ...) \
  MTLEMU_BINARY(OP, if constexpr (L::kFloat) return a; else return __VA_ARGS__;)
#define MTLEMU_INT_UNARY(OP, ...) \
  MTLEMU_UNARY(OP, if constexpr (L::kFloat) return a; else return __VA_ARGS__;)
MTLEMU_INT_BINARY(kAnd, static_cast<sem::V<T>>(a& b))
MTLEMU_INT_BINARY(kOr, static_cast<sem::V<T>>(a | b))
MTLEMU_INT_BINARY(kXor, static_cast<sem::V<T>>(a ^ b))
MTLEMU_INT_UNARY(kNot, static_cast<sem::V<T>>(~a))
// Shift amounts are taken modulo the type's width.
MTLEMU_INT_BINARY(
    kShl, static_cast<sem::V<T>>(static_cast<std::make_unsigned_t<sem::V<T>>>(a)
                                 << sem::ShiftAmount<T>(b)))
MTLEMU_INT_BINARY(kShr, static_cast<sem::V<T>>(a >> sem::ShiftAmount<T>(b)))
MTLEMU_INT_BINARY(kRotl, [&] {
  const uint64_t x = sem::Bits<T>(a);
  const uint32_t s = sem::ShiftAmount<T>(b);
  if (s == 0) return a;
  const uint64_t r = ((x << s) | (x >> (L::kBits - s))) & sem::kWidthMask<T>;
  return static_cast<sem::V<T>>(r);
}())
MTLEMU_INT_UNARY(kPopcount,
                 static_cast<sem::V<T>>(std::popcount(sem::Bits<T>(a))))
MTLEMU_INT_UNARY(kClz, static_cast<sem::V<T>>(L::kBits -
                                              std::bit_width(sem::Bits<T>(a))))
MTLEMU_INT_UNARY(kCtz,
                 static_cast<sem::V<T>>(
                     a == 0 ? L::kBits : std::countr_zero(sem::Bits<T>(a))))
MTLEMU_INT_UNARY(kBitReverse, [&] {
  const uint64_t x = sem::Bits<T>(a);
  uint64_t r = 0;
  for (int i = 0; i < L::kBits; ++i) r |= ((x >> i) & 1) << (L::kBits - 1 - i);
  return static_cast<sem::V<T>>(r);
}())

// --- rounding
// -----------------------------------------------------------------
#define MTLEMU_FLOAT_UNARY(OP, ...)                                            \
  MTLEMU_UNARY(OP,                                                             \
               if constexpr (L::kFloat) return sem::CanonicalNaN(__VA_ARGS__); \
               else return a;)
MTLEMU_FLOAT_UNARY(kFloor, std::floor(a))
MTLEMU_FLOAT_UNARY(kCeil, std::ceil(a))
MTLEMU_FLOAT_UNARY(kTrunc, std::trunc(a))
MTLEMU_FLOAT_UNARY(kRint, std::nearbyint(a))
MTLEMU_FLOAT_UNARY(kRound, std::round(a))
// fract: x - floor(x) kept below 1 by clamping to the largest value of the
// type under 1 (in half or bfloat, x - floor(x) of a tiny negative x rounds
// to 1 otherwise); NaN for NaN (fmin would drop it), 0 for infinities.
MTLEMU_UNARY(
    kFract, if constexpr (L::kFloat) {
      constexpr float kBelowOne = T == ScalarType::kHalf     ? 0x1.ffcp-1f
                                  : T == ScalarType::kBFloat ? 0x1.fep-1f
                                                             : 0x1.fffffep-1f;
      if (std::isnan(a)) return sem::CanonicalNaN(a);
      if (std::isinf(a)) return 0.0f;
      return std::fmin(a - std::floor(a), kBelowOne);
    } else return a;)

// --- math functions
// -----------------------------------------------------------
MTLEMU_FLOAT_UNARY(kSqrt, std::sqrt(a))
MTLEMU_MATH1(kRsqrt, 1.0 / std::sqrt(x))
MTLEMU_MATH1(kRcp, 1.0 / x)
MTLEMU_MATH1(kExp2, std::exp2(x))
MTLEMU_MATH1(kLog2, std::log2(x))
MTLEMU_MATH1(kExp, std::exp(x))
MTLEMU_MATH1(kLog, std::log(x))
MTLEMU_MATH1(kExp10, std::pow(10.0, x))
MTLEMU_MATH1(kLog10, std::log10(x))
MTLEMU_MATH1(kSin, std::sin(x))
MTLEMU_MATH1(kCos, std::cos(x))
MTLEMU_MATH1(kTan, std::tan(x))
MTLEMU_UNARY(
    kSinPi, if constexpr (L::kFloat) {
      if (!std::isfinite(a)) return std::numeric_limits<float>::quiet_NaN();
      const double r = sem::ReducePi(a);
      if (r == 0.0 || std::fabs(r) == 1.0) return std::copysign(0.0f, a);
      return static_cast<float>(std::sin(std::numbers::pi * r));
    } else return a;)
MTLEMU_UNARY(
    kCosPi, if constexpr (L::kFloat) {
      if (!std::isfinite(a)) return std::numeric_limits<float>::quiet_NaN();
      const double r = sem::ReducePi(a);
      if (std::fabs(r) == 0.5) return 0.0f;
      return static_cast<float>(std::cos(std::numbers::pi * r));
    } else return a;)
MTLEMU_UNARY(
    kTanPi, if constexpr (L::kFloat) {
      if (!std::isfinite(a)) return std::numeric_limits<float>::quiet_NaN();
      // tanpi(n) = sinpi(n) / cospi(n): +-0 as n for even n, the opposite
      // sign for odd n; the poles at n + 1/2 are +inf for even n, -inf for odd
      // n (as OpenCL C specifies; Metal does not say).
      const double r = sem::ReducePi(a);
      if (r == 0.0) return std::copysign(0.0f, a);
      if (std::fabs(r) == 1.0) return std::copysign(0.0f, -a);
      if (std::fabs(r) == 0.5) return r > 0 ? HUGE_VALF : -HUGE_VALF;
      return static_cast<float>(std::tan(std::numbers::pi * r));
    } else return a;)
MTLEMU_MATH1(kAsin, std::asin(x))
MTLEMU_MATH1(kAcos, std::acos(x))
MTLEMU_MATH1(kAtan, std::atan(x))
MTLEMU_MATH1(kSinh, std::sinh(x))
MTLEMU_MATH1(kCosh, std::cosh(x))
MTLEMU_MATH1(kTanh, std::tanh(x))
MTLEMU_MATH1(kAsinh, std::asinh(x))
MTLEMU_MATH1(kAcosh, std::acosh(x))
MTLEMU_MATH1(kAtanh, std::atanh(x))
MTLEMU_BINARY(kAtan2,
              if constexpr (L::kFloat) return sem::CanonicalNaN(
                  static_cast<float>(std::atan2(static_cast<double>(a),
                                                static_cast<double>(b))));
              else return a;)
MTLEMU_BINARY(kPow, if constexpr (L::kFloat) return sem::CanonicalNaN(
                        static_cast<float>(std::pow(static_cast<double>(a),
                                                    static_cast<double>(b))));
              else return a;)
MTLEMU_BINARY(kFmod,
              if constexpr (L::kFloat) return sem::CanonicalNaN(std::fmod(a,
                                                                          b));
              else return a;)
MTLEMU_BINARY(kCopySign, if constexpr (L::kFloat) return std::copysign(a, b);
              else return a;)

template <>
struct AluSemantics<Opcode::kLdexp> {
  template <ScalarType T>
  static sem::V<T> Eval(sem::V<T> a, int32_t exponent) {
    if constexpr (LaneType<T>::kFloat) {
      return sem::CanonicalNaN(
          static_cast<float>(std::ldexp(static_cast<double>(a), exponent)));
    } else {
      return a;
    }
  }
};

// --- comparisons and tests: results are 0 or 1
// ----------------------------------
#define MTLEMU_COMPARE(OP, ...)                      \
  template <>                                        \
  struct AluSemantics<Opcode::OP> {                  \
    template <ScalarType T>                          \
    static uint32_t Eval(sem::V<T> a, sem::V<T> b) { \
      return (__VA_ARGS__) ? 1u : 0u;                \
    }                                                \
  };
MTLEMU_COMPARE(kEq, a == b)
MTLEMU_COMPARE(kNe, !(a == b))  // true when either is NaN
MTLEMU_COMPARE(kLt, a < b)
MTLEMU_COMPARE(kLe, a <= b)
MTLEMU_COMPARE(kGt, a > b)
MTLEMU_COMPARE(kGe, a >= b)

#define MTLEMU_TEST(OP, ...)               \
  template <>                              \
  struct AluSemantics<Opcode::OP> {        \
    template <ScalarType T>                \
    static uint32_t Eval(sem::V<T> a) {    \
      if constexpr (LaneType<T>::kFloat) { \
        return (__VA_ARGS__) ? 1u : 0u;    \
      } else {                             \
        return 0u;                         \
      }                                    \
    }                                      \
  };
MTLEMU_TEST(kIsNan, std::isnan(a))
MTLEMU_TEST(kIsInf, std::isinf(a))
MTLEMU_TEST(kIsFinite, std::isfinite(a))
// Via the bits: GCC 12 fails to vectorize std::signbit (internal error).
MTLEMU_TEST(kSignBit, (std::bit_cast<uint32_t>(a) >> 31) != 0)

template <>
struct AluSemantics<Opcode::kSelect> {
  template <ScalarType T>
  static sem::V<T> Eval(uint32_t c, sem::V<T> a, sem::V<T> b) {
    return c != 0 ? a : b;
  }
};

#undef MTLEMU_UNARY
#undef MTLEMU_BINARY
#undef MTLEMU_MATH1
#undef MTLEMU_INT_BINARY
#undef MTLEMU_INT_UNARY
#undef MTLEMU_FLOAT_UNARY
#undef MTLEMU_COMPARE
#undef MTLEMU_TEST

}  // namespace mtlemu::emu
