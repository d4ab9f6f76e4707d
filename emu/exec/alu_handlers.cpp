// Handlers for the arithmetic, bit, comparison, select and math opcodes:
// AluSemantics applied lane by lane under the execution mask.
#include <bit>

#include "emu/exec/alu_semantics.h"
#include "emu/exec/handlers.h"
#include "emu/exec/lane_loop.h"
#include "emu/exec/opcode_traits.h"

namespace mtlemu::emu {
namespace {

using isa::OpShape;

// half and bfloat registers hold 16-bit patterns that Get/Put pass through
// float, which quiets signaling NaNs. The opcodes that return an operand
// unchanged or only touch its sign bit (mov, select, abs, neg, min, max)
// work on the bits instead: moves copy bits and min/max return an operand
// unchanged (isa/README.md), whatever the NaN.
template <ScalarType T>
constexpr bool kIsFloat16 = T == ScalarType::kHalf || T == ScalarType::kBFloat;

template <Opcode op, ScalarType T>
void Unary(ExecContext& ctx, const DecodedInstruction& d) {
  using L = LaneType<T>;
  uint32_t* dst = ctx.Slot(d.slot[0]);
  const uint32_t* a = ctx.Slot(d.slot[1]);
  if constexpr (kIsFloat16<T> && (op == Opcode::kMov || op == Opcode::kAbs ||
                                  op == Opcode::kNeg)) {
    ForEachActiveLane(ctx.mask, [&](int l) {
      const uint32_t bits = a[l] & 0xffffu;
      if constexpr (op == Opcode::kMov) dst[l] = bits;
      if constexpr (op == Opcode::kAbs) dst[l] = bits & 0x7fffu;
      if constexpr (op == Opcode::kNeg) dst[l] = bits ^ 0x8000u;
    });
    return;
  }
  ForEachActiveLane(ctx.mask, [&](int l) {
    L::Put(dst, dst + kLanes, l,
           AluSemantics<op>::template Eval<T>(L::Get(a, a + kLanes, l)));
  });
}

template <Opcode op, ScalarType T>
void Binary(ExecContext& ctx, const DecodedInstruction& d) {
  using L = LaneType<T>;
  uint32_t* dst = ctx.Slot(d.slot[0]);
  const uint32_t* a = ctx.Slot(d.slot[1]);
  const uint32_t* b = ctx.Slot(d.slot[2]);
  if constexpr (kIsFloat16<T> && (op == Opcode::kMin || op == Opcode::kMax)) {
    // The operand whose value the reference picks, as its bits.
    ForEachActiveLane(ctx.mask, [&](int l) {
      const float x = L::Get(a, a + kLanes, l);
      const float r =
          AluSemantics<op>::template Eval<T>(x, L::Get(b, b + kLanes, l));
      const bool first =
          std::bit_cast<uint32_t>(r) == std::bit_cast<uint32_t>(x);
      dst[l] = (first ? a[l] : b[l]) & 0xffffu;
    });
    return;
  }
  ForEachActiveLane(ctx.mask, [&](int l) {
    L::Put(dst, dst + kLanes, l,
           AluSemantics<op>::template Eval<T>(L::Get(a, a + kLanes, l),
                                              L::Get(b, b + kLanes, l)));
  });
}

template <Opcode op, ScalarType T>
void BinaryInt(ExecContext& ctx, const DecodedInstruction& d) {
  using L = LaneType<T>;
  uint32_t* dst = ctx.Slot(d.slot[0]);
  const uint32_t* a = ctx.Slot(d.slot[1]);
  const uint32_t* b = ctx.Slot(d.slot[2]);
  ForEachActiveLane(ctx.mask, [&](int l) {
    L::Put(dst, dst + kLanes, l,
           AluSemantics<op>::template Eval<T>(L::Get(a, a + kLanes, l),
                                              static_cast<int32_t>(b[l])));
  });
}

template <Opcode op, ScalarType T>
void Ternary(ExecContext& ctx, const DecodedInstruction& d) {
  using L = LaneType<T>;
  uint32_t* dst = ctx.Slot(d.slot[0]);
  const uint32_t* a = ctx.Slot(d.slot[1]);
  const uint32_t* b = ctx.Slot(d.slot[2]);
  const uint32_t* c = ctx.Slot(d.slot[3]);
  ForEachActiveLane(ctx.mask, [&](int l) {
    L::Put(dst, dst + kLanes, l,
           AluSemantics<op>::template Eval<T>(L::Get(a, a + kLanes, l),
                                              L::Get(b, b + kLanes, l),
                                              L::Get(c, c + kLanes, l)));
  });
}

template <Opcode op, ScalarType T>
void Compare(ExecContext& ctx, const DecodedInstruction& d) {
  using L = LaneType<T>;
  uint32_t* dst = ctx.Slot(d.slot[0]);
  const uint32_t* a = ctx.Slot(d.slot[1]);
  const uint32_t* b = ctx.Slot(d.slot[2]);
  ForEachActiveLane(ctx.mask, [&](int l) {
    dst[l] = AluSemantics<op>::template Eval<T>(L::Get(a, a + kLanes, l),
                                                L::Get(b, b + kLanes, l));
  });
}

template <Opcode op, ScalarType T>
void Test(ExecContext& ctx, const DecodedInstruction& d) {
  using L = LaneType<T>;
  uint32_t* dst = ctx.Slot(d.slot[0]);
  const uint32_t* a = ctx.Slot(d.slot[1]);
  ForEachActiveLane(ctx.mask, [&](int l) {
    dst[l] = AluSemantics<op>::template Eval<T>(L::Get(a, a + kLanes, l));
  });
}

template <Opcode op, ScalarType T>
void Select(ExecContext& ctx, const DecodedInstruction& d) {
  using L = LaneType<T>;
  uint32_t* dst = ctx.Slot(d.slot[0]);
  const uint32_t* c = ctx.Slot(d.slot[1]);
  const uint32_t* a = ctx.Slot(d.slot[2]);
  const uint32_t* b = ctx.Slot(d.slot[3]);
  if constexpr (kIsFloat16<T>) {
    ForEachActiveLane(
        ctx.mask, [&](int l) { dst[l] = (c[l] != 0 ? a[l] : b[l]) & 0xffffu; });
    return;
  }
  ForEachActiveLane(ctx.mask, [&](int l) {
    L::Put(dst, dst + kLanes, l,
           AluSemantics<op>::template Eval<T>(c[l], L::Get(a, a + kLanes, l),
                                              L::Get(b, b + kLanes, l)));
  });
}

// The handler of opcode `op` at type `t`, or nullptr when the opcode is not
// an ALU opcode or does not take that type.
template <Opcode op>
Handler ForOpcode(ScalarType t) {
  constexpr OpShape shape = opcode_traits::ShapeOf(op);
  if constexpr (opcode_traits::ClusterOf(op) != 0) {
    return nullptr;
  } else if constexpr (shape == OpShape::kUnary || shape == OpShape::kBinary ||
                       shape == OpShape::kBinaryInt ||
                       shape == OpShape::kTernary ||
                       shape == OpShape::kCompare || shape == OpShape::kTest ||
                       shape == OpShape::kSelect) {
    return VisitScalarType(t, [&]<ScalarType T>() -> Handler {
      if constexpr (!opcode_traits::Accepts(op, T)) {
        return nullptr;
      } else if constexpr (shape == OpShape::kUnary) {
        return &Unary<op, T>;
      } else if constexpr (shape == OpShape::kBinary) {
        return &Binary<op, T>;
      } else if constexpr (shape == OpShape::kBinaryInt) {
        return &BinaryInt<op, T>;
      } else if constexpr (shape == OpShape::kTernary) {
        return &Ternary<op, T>;
      } else if constexpr (shape == OpShape::kCompare) {
        return &Compare<op, T>;
      } else if constexpr (shape == OpShape::kTest) {
        return &Test<op, T>;
      } else {
        return &Select<op, T>;
      }
    });
  } else {
    return nullptr;
  }
}

}  // namespace

Handler AluHandlerFor(const isa::Instruction& inst) {
  return opcode_traits::VisitOpcode(
      inst.op, [&]<Opcode op>() { return ForOpcode<op>(inst.type); });
}

}  // namespace mtlemu::emu
