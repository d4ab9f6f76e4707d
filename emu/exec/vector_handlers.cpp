// Highway versions of the hot 32-bit ALU opcodes. A SIMD group's 32 lanes
// are a few vectors; the operation runs on all lanes and the result is
// blended into the destination under the execution mask.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "emu/exec/vector_handlers.cpp"
#include "emu/exec/vector_handlers.h"

#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace mtlemu::emu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using isa::Opcode;
using isa::ScalarType;

// Stores `r` into lanes [i, i + Lanes(d)) of `dst`, only the active ones.
template <class D, class V>
HWY_INLINE void StoreActive(D d, V r, uint32_t mask, size_t i,
                            hn::TFromD<D>* dst) {
  if (mask == kAllLanes) {
    hn::StoreU(r, d, dst + i);
  } else {
    const uint64_t bits = static_cast<uint64_t>(mask) >> i;
    const auto m = hn::LoadMaskBits(d, reinterpret_cast<const uint8_t*>(&bits));
    hn::StoreU(hn::IfThenElse(m, r, hn::LoadU(d, dst + i)), d, dst + i);
  }
}

// Runs `op` over the 32 lanes, chunk by chunk; writes only active lanes.
template <class D, class Op>
HWY_INLINE void ForLanes(D d, ExecContext& ctx, const DecodedInstruction& di,
                         int num_sources, Op op) {
  using T = hn::TFromD<D>;
  T* dst = reinterpret_cast<T*>(ctx.Slot(di.slot[0]));
  const T* a = reinterpret_cast<const T*>(ctx.Slot(di.slot[1]));
  const T* b =
      num_sources > 1 ? reinterpret_cast<const T*>(ctx.Slot(di.slot[2])) : a;
  const T* c =
      num_sources > 2 ? reinterpret_cast<const T*>(ctx.Slot(di.slot[3])) : a;
  const size_t n = hn::Lanes(d);
  const uint32_t mask = ctx.mask;
  for (size_t i = 0; i < static_cast<size_t>(kLanes); i += n) {
    const auto r =
        op(hn::LoadU(d, a + i), hn::LoadU(d, b + i), hn::LoadU(d, c + i));
    StoreActive(d, r, mask, i, dst);
  }
}

// IEEE minNum/maxNum as the scalar reference defines them: a NaN operand
// yields the other one; otherwise a < b ? a : b (a > b ? a : b).
template <class V>
HWY_INLINE V MinNum(V a, V b) {
  const auto r = hn::IfThenElse(hn::Lt(a, b), a, b);
  return hn::IfThenElse(hn::IsNaN(a), b, hn::IfThenElse(hn::IsNaN(b), a, r));
}
template <class V>
HWY_INLINE V MaxNum(V a, V b) {
  const auto r = hn::IfThenElse(hn::Gt(a, b), a, b);
  return hn::IfThenElse(hn::IsNaN(a), b, hn::IfThenElse(hn::IsNaN(b), a, r));
}

// NaN results become the canonical quiet NaN, as in the scalar reference.
template <class V>
HWY_INLINE V CanonicalNaN(V r) {
  const hn::DFromV<V> d;
  const hn::RebindToUnsigned<decltype(d)> du;
  return hn::IfThenElse(hn::IsNaN(r), hn::BitCast(d, hn::Set(du, 0x7fc00000u)),
                        r);
}

template <Opcode op>
void Float32(ExecContext& ctx, const DecodedInstruction& di) {
  const hn::ScalableTag<float> d;
  ForLanes(d, ctx, di, op == Opcode::kFma ? 3 : 2, [](auto a, auto b, auto c) {
    if constexpr (op == Opcode::kAdd) return CanonicalNaN(hn::Add(a, b));
    if constexpr (op == Opcode::kSub) return CanonicalNaN(hn::Sub(a, b));
    if constexpr (op == Opcode::kMul) return CanonicalNaN(hn::Mul(a, b));
    if constexpr (op == Opcode::kMin) return MinNum(a, b);
    if constexpr (op == Opcode::kMax) return MaxNum(a, b);
    if constexpr (op == Opcode::kFma) {
      return CanonicalNaN(hn::MulAdd(a, b, c));
    }
  });
}

template <Opcode op, bool kSigned>
void Int32(ExecContext& ctx, const DecodedInstruction& di) {
  using T = std::conditional_t<kSigned, int32_t, uint32_t>;
  const hn::ScalableTag<T> d;
  ForLanes(d, ctx, di, 2, [d](auto a, auto b, auto) {
    if constexpr (op == Opcode::kAdd) return hn::Add(a, b);
    if constexpr (op == Opcode::kSub) return hn::Sub(a, b);
    if constexpr (op == Opcode::kMul) return hn::Mul(a, b);
    if constexpr (op == Opcode::kAnd) return hn::And(a, b);
    if constexpr (op == Opcode::kOr) return hn::Or(a, b);
    if constexpr (op == Opcode::kXor) return hn::Xor(a, b);
    if constexpr (op == Opcode::kShl) {
      return hn::Shl(a, hn::And(b, hn::Set(d, T{31})));
    }
    if constexpr (op == Opcode::kShr) {
      return hn::Shr(a, hn::And(b, hn::Set(d, T{31})));
    }
  });
}

// Comparisons write 0 or 1 into a 32-bit register.
template <Opcode op, typename T>
void Compare32(ExecContext& ctx, const DecodedInstruction& di) {
  const hn::ScalableTag<T> d;
  const hn::RebindToUnsigned<decltype(d)> du;
  uint32_t* dst = ctx.Slot(di.slot[0]);
  const T* a = reinterpret_cast<const T*>(ctx.Slot(di.slot[1]));
  const T* b = reinterpret_cast<const T*>(ctx.Slot(di.slot[2]));
  const size_t n = hn::Lanes(d);
  const uint32_t mask = ctx.mask;
  for (size_t i = 0; i < static_cast<size_t>(kLanes); i += n) {
    const auto va = hn::LoadU(d, a + i);
    const auto vb = hn::LoadU(d, b + i);
    auto m = hn::Eq(va, vb);
    if constexpr (op == Opcode::kNe) m = hn::Not(hn::Eq(va, vb));
    if constexpr (op == Opcode::kLt) m = hn::Lt(va, vb);
    if constexpr (op == Opcode::kGt) m = hn::Gt(va, vb);
    // Highway 1.0 has Le/Ge for floats only; for integers they are the
    // negated Gt/Lt (no NaN to worry about).
    if constexpr (op == Opcode::kLe) {
      if constexpr (std::is_floating_point_v<T>) {
        m = hn::Le(va, vb);
      } else {
        m = hn::Not(hn::Gt(va, vb));
      }
    }
    if constexpr (op == Opcode::kGe) {
      if constexpr (std::is_floating_point_v<T>) {
        m = hn::Ge(va, vb);
      } else {
        m = hn::Not(hn::Lt(va, vb));
      }
    }
    const auto r = hn::IfThenElseZero(hn::RebindMask(du, m), hn::Set(du, 1u));
    StoreActive(du, r, mask, i, dst);
  }
}

// select.T d, c, a, b on 32-bit types: c != 0 picks a.
void Select32(ExecContext& ctx, const DecodedInstruction& di) {
  const hn::ScalableTag<uint32_t> d;
  uint32_t* dst = ctx.Slot(di.slot[0]);
  const uint32_t* c = ctx.Slot(di.slot[1]);
  const uint32_t* a = ctx.Slot(di.slot[2]);
  const uint32_t* b = ctx.Slot(di.slot[3]);
  const size_t n = hn::Lanes(d);
  const uint32_t mask = ctx.mask;
  for (size_t i = 0; i < static_cast<size_t>(kLanes); i += n) {
    const auto pick = hn::Ne(hn::LoadU(d, c + i), hn::Zero(d));
    const auto r =
        hn::IfThenElse(pick, hn::LoadU(d, a + i), hn::LoadU(d, b + i));
    StoreActive(d, r, mask, i, dst);
  }
}

template <Opcode op>
Handler IntegerFor(ScalarType t) {
  if (t == ScalarType::kInt) return &Int32<op, true>;
  if (t == ScalarType::kUInt) return &Int32<op, false>;
  return nullptr;
}

template <Opcode op>
Handler CompareFor(ScalarType t) {
  if (t == ScalarType::kFloat) return &Compare32<op, float>;
  if (t == ScalarType::kInt) return &Compare32<op, int32_t>;
  return nullptr;  // unsigned compares stay scalar
}

Handler HighwayHandlerFor(const isa::Instruction& inst) {
  const ScalarType t = inst.type;
  if (t == ScalarType::kFloat) {
    switch (inst.op) {
      case Opcode::kAdd:
        return &Float32<Opcode::kAdd>;
      case Opcode::kSub:
        return &Float32<Opcode::kSub>;
      case Opcode::kMul:
        return &Float32<Opcode::kMul>;
      case Opcode::kMin:
        return &Float32<Opcode::kMin>;
      case Opcode::kMax:
        return &Float32<Opcode::kMax>;
      case Opcode::kFma:
        // Only where fma is one rounding, as the reference computes it.
        return HWY_NATIVE_FMA ? &Float32<Opcode::kFma> : nullptr;
      default:
        break;
    }
  }
  switch (inst.op) {
    case Opcode::kAdd:
      return IntegerFor<Opcode::kAdd>(t);
    case Opcode::kSub:
      return IntegerFor<Opcode::kSub>(t);
    case Opcode::kMul:
      return IntegerFor<Opcode::kMul>(t);
    case Opcode::kAnd:
      return IntegerFor<Opcode::kAnd>(t);
    case Opcode::kOr:
      return IntegerFor<Opcode::kOr>(t);
    case Opcode::kXor:
      return IntegerFor<Opcode::kXor>(t);
    case Opcode::kShl:
      return IntegerFor<Opcode::kShl>(t);
    case Opcode::kShr:
      return IntegerFor<Opcode::kShr>(t);
    case Opcode::kEq:
      return CompareFor<Opcode::kEq>(t);
    case Opcode::kNe:
      return CompareFor<Opcode::kNe>(t);
    case Opcode::kLt:
      return CompareFor<Opcode::kLt>(t);
    case Opcode::kLe:
      return CompareFor<Opcode::kLe>(t);
    case Opcode::kGt:
      return CompareFor<Opcode::kGt>(t);
    case Opcode::kGe:
      return CompareFor<Opcode::kGe>(t);
    case Opcode::kSelect:
      return isa::SizeOf(t) == 4 ? &Select32 : nullptr;
    default:
      return nullptr;
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace mtlemu::emu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mtlemu::emu {

HWY_EXPORT(HighwayHandlerFor);

Handler VectorHandlerFor(const isa::Instruction& inst) {
  return HWY_DYNAMIC_DISPATCH(HighwayHandlerFor)(inst);
}

}  // namespace mtlemu::emu
#endif
