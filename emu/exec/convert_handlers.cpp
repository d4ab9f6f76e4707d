// cvt and cvt_sat: conversions between every pair of scalar types.
//   float -> integer: toward zero, saturating to the destination's range,
//                     NaN -> 0 (what Apple GPUs do; C++ leaves it undefined)
//   integer -> integer: wraps (cvt) or saturates (cvt_sat)
//   anything -> float: nearest even
//   anything -> bool: nonzero -> 1
#include <bit>
#include <cmath>

#include "emu/exec/alu_semantics.h"
#include "emu/exec/handlers.h"
#include "emu/exec/lane_loop.h"

namespace mtlemu::emu {
namespace {

// A 32- or 64-bit integer (wider than float's 24-bit significand) as a
// float rounded to odd (truncated, lowest bit set if inexact). Put then
// rounds it to half or bfloat once: rounding to nearest float first would
// round twice and break halfway cases (cvt.bf16.i32 of 2^24 + 2^16 + 1 is
// 2^24 + 2^17, but the float nearest to it, 2^24 + 2^16, is a bfloat tie
// that goes to 2^24).
template <typename I>
float ToFloatRoundedToOdd(I v) {
  float f = static_cast<float>(v);
  const __int128 exact = v;
  const __int128 rounded = static_cast<__int128>(f);  // |f| <= 2^64
  if (rounded == exact) return f;
  if ((rounded > exact) == (exact > 0)) f = std::nextafter(f, 0.0f);
  return std::bit_cast<float>(std::bit_cast<uint32_t>(f) | 1u);
}

template <ScalarType D, ScalarType S, bool kSaturate>
typename LaneType<D>::V ConvertValue(typename LaneType<S>::V v) {
  using DL = LaneType<D>;
  using SL = LaneType<S>;
  using DV = typename DL::V;
  if constexpr (D == ScalarType::kBool) {
    return v != 0 ? 1u : 0u;
  } else if constexpr (DL::kFloat && D != ScalarType::kFloat && !SL::kFloat &&
                       SL::kBits > 16) {
    return ToFloatRoundedToOdd(v);  // Put rounds to half/bfloat once
  } else if constexpr (DL::kFloat) {
    return static_cast<float>(v);  // Put rounds to half/bfloat
  } else if constexpr (SL::kFloat) {
    if (std::isnan(v)) return 0;
    const double t = std::trunc(static_cast<double>(v));
    const double lo = static_cast<double>(sem::TypeMin<D>());
    const double hi = static_cast<double>(sem::TypeMax<D>());
    if (t <= lo) return sem::TypeMin<D>();
    if (t >= hi) return sem::TypeMax<D>();
    return static_cast<DV>(t);
  } else if constexpr (kSaturate) {
    // Integer to integer, clamped to the destination's range.
    if constexpr (SL::kSigned) {
      const int64_t x = static_cast<int64_t>(v);
      if constexpr (DL::kSigned) {
        if (x < static_cast<int64_t>(sem::TypeMin<D>()))
          return sem::TypeMin<D>();
        if (x > static_cast<int64_t>(sem::TypeMax<D>()))
          return sem::TypeMax<D>();
      } else {
        if (x < 0) return 0;
        if (static_cast<uint64_t>(x) > static_cast<uint64_t>(sem::TypeMax<D>()))
          return sem::TypeMax<D>();
      }
      return static_cast<DV>(x);
    } else {
      const uint64_t x = static_cast<uint64_t>(v);
      if (x > static_cast<uint64_t>(sem::TypeMax<D>()))
        return sem::TypeMax<D>();
      return static_cast<DV>(x);
    }
  } else {
    return static_cast<DV>(v);  // Put wraps to the destination's width
  }
}

template <ScalarType D, ScalarType S, bool kSaturate>
void Convert(ExecContext& ctx, const DecodedInstruction& d) {
  uint32_t* dst = ctx.Slot(d.slot[0]);
  const uint32_t* a = ctx.Slot(d.slot[1]);
  ForEachActiveLane(ctx.mask, [&](int l) {
    LaneType<D>::Put(
        dst, dst + kLanes, l,
        ConvertValue<D, S, kSaturate>(LaneType<S>::Get(a, a + kLanes, l)));
  });
}

template <bool kSaturate>
Handler ForTypes(ScalarType dst, ScalarType src) {
  return VisitScalarType(dst, [&]<ScalarType D>() -> Handler {
    return VisitScalarType(src, [&]<ScalarType S>() -> Handler {
      return &Convert<D, S, kSaturate>;
    });
  });
}

}  // namespace

Handler ConvertHandlerFor(const isa::Instruction& inst) {
  if (inst.op == Opcode::kCvt) return ForTypes<false>(inst.type, inst.type2);
  if (inst.op == Opcode::kCvtSat) return ForTypes<true>(inst.type, inst.type2);
  return nullptr;
}

}  // namespace mtlemu::emu
