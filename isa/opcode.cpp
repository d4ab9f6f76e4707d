#include "isa/opcode.h"

#include <array>

namespace mtlemu::isa {
namespace {

using namespace type_sets;

constexpr std::array<OpInfo, kNumOpcodes> kOpInfo = {{
#define OP(e, mnemonic, shape, types, unit, cluster) \
  {mnemonic, OpShape::shape, types, ExecUnit::unit, cluster},
#include "isa/opcodes.def"
#undef OP
}};
static_assert(std::size(kOpInfo) == kNumOpcodes);

}  // namespace

const OpInfo& GetOpInfo(Opcode op) { return kOpInfo[static_cast<int>(op)]; }

std::optional<Opcode> OpcodeFromMnemonic(std::string_view mnemonic) {
  for (int i = 0; i < kNumOpcodes; ++i) {
    if (kOpInfo[i].mnemonic == mnemonic) return static_cast<Opcode>(i);
  }
  return std::nullopt;
}

bool ShapeHasType(OpShape shape) {
  switch (shape) {
    case OpShape::kNullary:
    case OpShape::kNullaryValue:
    case OpShape::kBranch:
    case OpShape::kCondBranch:
    case OpShape::kBarrier:
    case OpShape::kVote:
      return false;
    default:
      return true;
  }
}

bool ShapeHasSpace(OpShape shape) {
  switch (shape) {
    case OpShape::kLoad:
    case OpShape::kStore:
    case OpShape::kAtomicLoad:
    case OpShape::kAtomicStore:
    case OpShape::kAtomic:
    case OpShape::kAtomicCas:
    case OpShape::kMatrixLoad:
    case OpShape::kMatrixStore:
      return true;
    default:
      return false;
  }
}

bool ShapeHasDestination(OpShape shape) {
  switch (shape) {
    case OpShape::kNullary:
    case OpShape::kStore:
    case OpShape::kAtomicStore:
    case OpShape::kBranch:
    case OpShape::kCondBranch:
    case OpShape::kBarrier:
    case OpShape::kMatrixStore:
      return false;
    default:
      return true;
  }
}

bool IsTerminator(Opcode op) {
  return op == Opcode::kBranch || op == Opcode::kExit || op == Opcode::kTrap;
}

bool IsBranch(Opcode op) {
  return op == Opcode::kBranch || op == Opcode::kBranchNonZero ||
         op == Opcode::kBranchZero;
}

bool AccessesMemory(Opcode op) { return ShapeHasSpace(GetOpInfo(op).shape); }

std::string_view ExecUnitName(ExecUnit unit) {
  switch (unit) {
    case ExecUnit::kAlu:
      return "alu";
    case ExecUnit::kMul:
      return "mul";
    case ExecUnit::kShift:
      return "shift";
    case ExecUnit::kDiv:
      return "div";
    case ExecUnit::kConvert:
      return "convert";
    case ExecUnit::kSqrt:
      return "sqrt";
    case ExecUnit::kRecip:
      return "recip";
    case ExecUnit::kTranscendental:
      return "transcendental";
    case ExecUnit::kTrig:
      return "trig";
    case ExecUnit::kLoad:
      return "load";
    case ExecUnit::kStore:
      return "store";
    case ExecUnit::kAtomic:
      return "atomic";
    case ExecUnit::kBranch:
      return "branch";
    case ExecUnit::kBarrier:
      return "barrier";
    case ExecUnit::kSimdShuffle:
      return "simd_shuffle";
    case ExecUnit::kSimdReduce:
      return "simd_reduce";
    case ExecUnit::kSimdPrefix:
      return "simd_prefix";
    case ExecUnit::kMatrix:
      return "matrix";
  }
  return "?";
}

}  // namespace mtlemu::isa
