// SIMD-group and quad-group functions, and simdgroup_matrix. Cross-lane
// operations read every source lane before writing any destination, and
// read only active lanes (a shuffle from an inactive lane returns what that
// lane's register holds, as the hardware does; Metal leaves it undefined).
#include <algorithm>
#include <array>
#include <bit>
#include <cstring>

#include "emu/check/kernel_checker.h"
#include "emu/exec/alu_semantics.h"
#include "emu/exec/handlers.h"
#include "emu/exec/lane_loop.h"
#include "emu/exec/memory_access.h"
#include "emu/exec/opcode_traits.h"
#include "isa/simdgroup_matrix_layout.h"

namespace mtlemu::emu {
namespace {

using isa::OpShape;

// Lanes of the cluster (SIMD group or quad) that lane `l` belongs to.
template <int kCluster>
constexpr uint32_t ClusterMask(int l) {
  if constexpr (kCluster == 32) {
    return kAllLanes;
  } else {
    return ((1u << kCluster) - 1) << (l & ~(kCluster - 1));
  }
}

// --- shuffles and broadcasts
// ------------------------------------------------------

// For a static_assert that fails only where it is instantiated.
template <Opcode>
constexpr bool kNotListed = false;

// The lane each lane reads; an opcode of the shuffle unit that is not
// listed here is a compile error.
template <Opcode op, int kCluster>
int SourceLane(int l, int32_t operand, uint32_t mask) {
  using enum Opcode;
  const int base = l & ~(kCluster - 1);
  const int i = l & (kCluster - 1);
  const int c = kCluster;
  if constexpr (op == kSimdShuffle || op == kQuadShuffle ||
                op == kSimdBroadcast || op == kQuadBroadcast) {
    return base + (operand & (c - 1));
  } else if constexpr (op == kSimdShuffleXor || op == kQuadShuffleXor) {
    return base + ((i ^ operand) & (c - 1));
  } else if constexpr (op == kSimdShuffleUp || op == kQuadShuffleUp) {
    return (operand < 0 || operand > i) ? l : l - operand;
  } else if constexpr (op == kSimdShuffleDown || op == kQuadShuffleDown) {
    return (operand < 0 || i + operand >= c) ? l : l + operand;
  } else if constexpr (op == kSimdShuffleRotateUp ||
                       op == kQuadShuffleRotateUp) {
    return base + ((i - operand) & (c - 1));
  } else if constexpr (op == kSimdShuffleRotateDown ||
                       op == kQuadShuffleRotateDown) {
    return base + ((i + operand) & (c - 1));
  } else if constexpr (op == kSimdBroadcastFirst || op == kQuadBroadcastFirst) {
    // The cluster's first active lane.
    const uint32_t m = mask & ClusterMask<kCluster>(l);
    return m ? std::countr_zero(m) : l;
  } else {
    static_assert(kNotListed<op>, "a shuffle opcode without its source lane");
  }
}

template <Opcode op, int kCluster>
void Shuffle(ExecContext& ctx, const DecodedInstruction& d) {
  const int span = isa::IsWide(d.inst->type) ? 2 : 1;
  const bool has_operand = opcode_traits::ShapeOf(op) == OpShape::kBinaryInt;
  std::array<uint32_t, 2 * kLanes> src;
  std::memcpy(src.data(), ctx.Slot(d.slot[1]), 4 * kLanes * span);
  const uint32_t* operand = has_operand ? ctx.Slot(d.slot[2]) : nullptr;
  uint32_t* dst = ctx.Slot(d.slot[0]);
  const uint32_t mask = ctx.mask;
  ForEachActiveLane(mask, [&](int l) {
    const int from = SourceLane<op, kCluster>(
        l, operand ? static_cast<int32_t>(operand[l]) : 0, mask);
    if (ctx.checker != nullptr && !((mask >> from) & 1)) [[unlikely]] {
      ctx.checker->InactiveLaneRead(d, l, from);
    }
    for (int s = 0; s < span; ++s) {
      dst[s * kLanes + l] = src[s * kLanes + from];
    }
  });
}

// --- votes and lane queries
// -----------------------------------------------------------

template <Opcode op, int kCluster>
void Vote(ExecContext& ctx, const DecodedInstruction& d) {
  uint32_t* dst = ctx.Slot(d.slot[0]);
  const uint32_t mask = ctx.mask;
  uint32_t set = 0;  // active lanes whose condition holds
  if constexpr (opcode_traits::ShapeOf(op) == OpShape::kVote) {
    set = NonZeroLanes(ctx.Slot(d.slot[1])) & mask;
  }
  ForEachActiveLane(mask, [&](int l) {
    using enum Opcode;
    const uint32_t cluster = ClusterMask<kCluster>(l);
    const int shift = kCluster == 32 ? 0 : (l & ~(kCluster - 1));
    if constexpr (op == kSimdBallot || op == kQuadBallot) {
      dst[l] = (set & cluster) >> shift;
    } else if constexpr (op == kSimdAll || op == kQuadAll) {
      dst[l] = (set & cluster) == (mask & cluster) ? 1u : 0u;
    } else if constexpr (op == kSimdAny || op == kQuadAny) {
      dst[l] = (set & cluster) != 0 ? 1u : 0u;
    } else if constexpr (op == kSimdIsFirst || op == kQuadIsFirst) {
      dst[l] = std::countr_zero(mask & cluster) == l ? 1u : 0u;
    } else if constexpr (op == kSimdActiveThreadsMask ||
                         op == kQuadActiveThreadsMask) {
      dst[l] = (mask & cluster) >> shift;
    } else {
      static_assert(kNotListed<op>, "a vote or lane query without its value");
    }
  });
}

// --- reductions and prefix operations
// -------------------------------------------------

// Not constexpr: reached while the compiler evaluates CombinerOf, it makes
// the build fail.
Opcode ReductionWithoutCombiner(Opcode op) { return op; }

// The binary operation a reduction or prefix opcode folds with; called for
// one that is not listed here, in a constant expression, it fails the
// build.
constexpr Opcode CombinerOf(Opcode op) {
  switch (op) {
    case Opcode::kSimdSum:
    case Opcode::kQuadSum:
    case Opcode::kSimdPrefixInclusiveSum:
    case Opcode::kSimdPrefixExclusiveSum:
    case Opcode::kQuadPrefixInclusiveSum:
    case Opcode::kQuadPrefixExclusiveSum:
      return Opcode::kAdd;
    case Opcode::kSimdProduct:
    case Opcode::kQuadProduct:
    case Opcode::kSimdPrefixInclusiveProduct:
    case Opcode::kSimdPrefixExclusiveProduct:
    case Opcode::kQuadPrefixInclusiveProduct:
    case Opcode::kQuadPrefixExclusiveProduct:
      return Opcode::kMul;
    case Opcode::kSimdMin:
    case Opcode::kQuadMin:
      return Opcode::kMin;
    case Opcode::kSimdMax:
    case Opcode::kQuadMax:
      return Opcode::kMax;
    case Opcode::kSimdAnd:
    case Opcode::kQuadAnd:
      return Opcode::kAnd;
    case Opcode::kSimdOr:
    case Opcode::kQuadOr:
      return Opcode::kOr;
    case Opcode::kSimdXor:
    case Opcode::kQuadXor:
      return Opcode::kXor;
    default:
      return ReductionWithoutCombiner(op);
  }
}

constexpr bool IsPrefix(Opcode op) {
  return opcode_traits::UnitOf(op) == isa::ExecUnit::kSimdPrefix;
}

template <Opcode op, ScalarType T, int kCluster>
void Reduce(ExecContext& ctx, const DecodedInstruction& d) {
  using L = LaneType<T>;
  using V = typename L::V;
  constexpr Opcode kCombiner = CombinerOf(op);
  constexpr bool kExclusive = op == Opcode::kSimdPrefixExclusiveSum ||
                              op == Opcode::kSimdPrefixExclusiveProduct ||
                              op == Opcode::kQuadPrefixExclusiveSum ||
                              op == Opcode::kQuadPrefixExclusiveProduct;
  const uint32_t* a = ctx.Slot(d.slot[1]);
  uint32_t* dst = ctx.Slot(d.slot[0]);
  std::array<V, kLanes> in{};
  ForEachActiveLane(ctx.mask, [&](int l) { in[l] = L::Get(a, a + kLanes, l); });
  std::array<V, kLanes> out{};
  for (int base = 0; base < kLanes; base += kCluster) {
    const uint32_t active = ctx.mask & ClusterMask<kCluster>(base);
    if (active == 0) continue;
    V acc{};
    bool first = true;
    for (int l = base; l < base + kCluster; ++l) {
      if (!(active >> l & 1)) continue;
      if constexpr (kExclusive) {
        out[l] = first ? (kCombiner == Opcode::kMul ? V(1) : V(0)) : acc;
      }
      acc =
          first ? in[l] : AluSemantics<kCombiner>::template Eval<T>(acc, in[l]);
      first = false;
      if constexpr (IsPrefix(op) && !kExclusive) out[l] = acc;
    }
    if constexpr (!IsPrefix(op)) {
      for (int l = base; l < base + kCluster; ++l) out[l] = acc;
    }
  }
  ForEachActiveLane(ctx.mask,
                    [&](int l) { L::Put(dst, dst + kLanes, l, out[l]); });
}

// --- simdgroup_matrix 8x8 --------------------------------------------------
// Register e of lane l holds element (SimdgroupMatrixRow(l),
// SimdgroupMatrixCol(l, e)), in Apple's layout (isa/simdgroup_matrix_layout.h).

using isa::kSimdgroupMatrixElementsPerLane;
using isa::SimdgroupMatrixCol;
using isa::SimdgroupMatrixRow;

template <ScalarType T>
void MatrixLoad(ExecContext& ctx, const DecodedInstruction& d) {
  constexpr uint32_t kSize = LaneType<T>::kBits / 8;
  const isa::AddressSpace space = d.inst->space;
  const bool wide = isa::IsWideAddressSpace(space);
  const uint32_t* stride = ctx.Slot(d.slot[2]);
  uint32_t* dst = ctx.Slot(d.slot[0]);
  const MemoryRegion* cache = nullptr;
  ForEachActiveLane(ctx.mask, [&](int l) {
    if (ctx.faulted) return;
    // Both read before the first element is written: the destination may be
    // the base or the stride register.
    const uint64_t base = LaneAddress(ctx, d.mem, wide, l);
    const uint64_t row_stride = stride[l];
    for (int e = 0; e < kSimdgroupMatrixElementsPerLane; ++e) {
      const uint64_t r = SimdgroupMatrixRow(l), c = SimdgroupMatrixCol(l, e);
      const uint64_t index =
          d.inst->transpose ? c * row_stride + r : r * row_stride + c;
      const uint64_t address = base + index * kSize;
      const uint8_t* p =
          Translate(ctx, d, space, address, kSize, false, l, cache);
      if (p == nullptr) return;
      if (ctx.memory_checker != nullptr) [[unlikely]] {
        ctx.memory_checker->MemoryAccess(d, space, l, address, kSize,
                                         AccessType::kRead);
      }
      uint32_t v = 0;
      std::memcpy(&v, p, kSize);
      dst[e * kLanes + l] = v;
    }
  });
}

template <ScalarType T>
void MatrixStore(ExecContext& ctx, const DecodedInstruction& d) {
  constexpr uint32_t kSize = LaneType<T>::kBits / 8;
  const isa::AddressSpace space = d.inst->space;
  const bool wide = isa::IsWideAddressSpace(space);
  const uint32_t* src = ctx.Slot(d.slot[1]);
  const uint32_t* stride = ctx.Slot(d.slot[2]);
  const MemoryRegion* cache = nullptr;
  ForEachActiveLane(ctx.mask, [&](int l) {
    if (ctx.faulted) return;
    const uint64_t base = LaneAddress(ctx, d.mem, wide, l);
    for (int e = 0; e < kSimdgroupMatrixElementsPerLane; ++e) {
      const uint64_t r = SimdgroupMatrixRow(l), c = SimdgroupMatrixCol(l, e);
      const uint64_t index =
          d.inst->transpose ? c * stride[l] + r : r * stride[l] + c;
      const uint64_t address = base + index * kSize;
      uint8_t* p = Translate(ctx, d, space, address, kSize, true, l, cache);
      if (p == nullptr) return;
      const uint32_t v = src[e * kLanes + l];
      std::memcpy(p, &v, kSize);
      if (ctx.memory_checker != nullptr) [[unlikely]] {
        ctx.memory_checker->MemoryAccess(d, space, l, address, kSize,
                                         AccessType::kWrite, p);
      }
    }
  });
}

// D = A * B + C, accumulated in float with one fma per product term, in
// order k = 0..7, and rounded to T once at the end.
template <ScalarType T>
void MatrixMultiplyAccumulate(ExecContext& ctx, const DecodedInstruction& d) {
  using L = LaneType<T>;
  float m[3][8][8];
  for (int which = 0; which < 3; ++which) {
    const uint32_t* s = ctx.Slot(d.slot[which + 1]);
    for (int l = 0; l < kLanes; ++l) {
      for (int e = 0; e < kSimdgroupMatrixElementsPerLane; ++e) {
        m[which][SimdgroupMatrixRow(l)][SimdgroupMatrixCol(l, e)] =
            L::Get(s + e * kLanes, nullptr, l);
      }
    }
  }
  uint32_t* dst = ctx.Slot(d.slot[0]);
  ForEachActiveLane(ctx.mask, [&](int l) {
    for (int e = 0; e < kSimdgroupMatrixElementsPerLane; ++e) {
      const int r = SimdgroupMatrixRow(l), c = SimdgroupMatrixCol(l, e);
      float acc = m[2][r][c];
      for (int k = 0; k < 8; ++k) acc = std::fma(m[0][r][k], m[1][k][c], acc);
      L::Put(dst + e * kLanes, nullptr, l, acc);
    }
  });
}

template <Opcode op>
Handler ForOpcode(ScalarType t) {
  constexpr int kCluster = opcode_traits::ClusterOf(op);
  constexpr OpShape shape = opcode_traits::ShapeOf(op);
  if constexpr (kCluster == 0) {
    return nullptr;
  } else if constexpr (shape == OpShape::kMatrixLoad ||
                       shape == OpShape::kMatrixStore ||
                       shape == OpShape::kMatrixMultiply) {
    auto pick = [&]<ScalarType T>() -> Handler {
      if constexpr (shape == OpShape::kMatrixLoad) return &MatrixLoad<T>;
      if constexpr (shape == OpShape::kMatrixStore) return &MatrixStore<T>;
      return &MatrixMultiplyAccumulate<T>;
    };
    if (t == ScalarType::kFloat) {
      return pick.template operator()<ScalarType::kFloat>();
    }
    if (t == ScalarType::kHalf) {
      return pick.template operator()<ScalarType::kHalf>();
    }
    return nullptr;
  } else if constexpr (shape == OpShape::kVote ||
                       shape == OpShape::kNullaryValue) {
    return &Vote<op, kCluster>;
  } else if constexpr (opcode_traits::UnitOf(op) ==
                           isa::ExecUnit::kSimdReduce ||
                       IsPrefix(op)) {
    return VisitScalarType(t, [&]<ScalarType T>() -> Handler {
      if constexpr (opcode_traits::Accepts(op, T)) {
        return &Reduce<op, T, kCluster>;
      } else {
        return nullptr;
      }
    });
  } else if constexpr (opcode_traits::UnitOf(op) ==
                       isa::ExecUnit::kSimdShuffle) {
    return &Shuffle<op, kCluster>;
  } else {
    static_assert(kNotListed<op>, "a cross-lane opcode without a handler");
  }
}

}  // namespace

Handler SimdHandlerFor(const isa::Instruction& inst) {
  return opcode_traits::VisitOpcode(
      inst.op, [&]<Opcode op>() { return ForOpcode<op>(inst.type); });
}

}  // namespace mtlemu::emu
