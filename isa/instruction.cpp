#include "isa/instruction.h"

namespace mtlemu::isa {

std::string_view AddressSpaceName(AddressSpace space) {
  switch (space) {
    case AddressSpace::kNone:
      return "none";
    case AddressSpace::kDevice:
      return "device";
    case AddressSpace::kConstant:
      return "constant";
    case AddressSpace::kThreadgroup:
      return "threadgroup";
    case AddressSpace::kThread:
      return "thread";
  }
  return "?";
}

bool IsWideAddressSpace(AddressSpace space) {
  return space == AddressSpace::kDevice || space == AddressSpace::kConstant;
}

std::string_view MemFlagName(int bit_index) {
  switch (bit_index) {
    case 0:
      return "mem_device";
    case 1:
      return "mem_threadgroup";
    case 2:
      return "mem_texture";
    case 3:
      return "mem_threadgroup_imageblock";
  }
  return "?";
}

int OperandCount(OpShape shape) {
  switch (shape) {
    case OpShape::kNullary:
      return 0;
    case OpShape::kNullaryValue:
      return 1;
    case OpShape::kUnary:
      return 2;
    case OpShape::kBinary:
      return 3;
    case OpShape::kBinaryInt:
      return 3;
    case OpShape::kTernary:
      return 4;
    case OpShape::kCompare:
      return 3;
    case OpShape::kTest:
      return 2;
    case OpShape::kSelect:
      return 4;
    case OpShape::kConvert:
      return 2;
    case OpShape::kLoad:
      return 2;
    case OpShape::kStore:
      return 2;
    case OpShape::kAtomicLoad:
      return 2;
    case OpShape::kAtomicStore:
      return 2;
    case OpShape::kAtomic:
      return 3;
    case OpShape::kAtomicCas:
      return 4;
    case OpShape::kBranch:
      return 1;
    case OpShape::kCondBranch:
      return 3;
    case OpShape::kBarrier:
      return 0;
    case OpShape::kVote:
      return 2;
    case OpShape::kMatrixLoad:
      return 3;
    case OpShape::kMatrixStore:
      return 3;
  }
  return 0;
}

int Instruction::NumOperands() const { return OperandCount(info().shape); }

ScalarType OperandType(const Instruction& inst, int position) {
  switch (inst.info().shape) {
    case OpShape::kNullaryValue:
    case OpShape::kVote:
    case OpShape::kCondBranch:
      return ScalarType::kUInt;
    case OpShape::kBinaryInt:
      return position == 2 ? ScalarType::kInt : inst.type;
    case OpShape::kCompare:
    case OpShape::kTest:
      return position == 0 ? ScalarType::kUInt : inst.type;
    case OpShape::kSelect:
      return position == 1 ? ScalarType::kUInt : inst.type;
    case OpShape::kConvert:
      return position == 0 ? inst.type : inst.type2;
    case OpShape::kMatrixLoad:
    case OpShape::kMatrixStore:
      return position == 2 ? ScalarType::kUInt : inst.type;
    default:
      return inst.type;
  }
}

int OperandRegisterSpan(const Instruction& inst, int position) {
  const OpShape shape = inst.info().shape;
  const ScalarType type = OperandType(inst, position);
  const int width = IsWide(type) ? 2 : 1;
  switch (shape) {
    case OpShape::kLoad:
    case OpShape::kStore:
      return (shape == OpShape::kLoad ? position == 0 : position == 1)
                 ? width * inst.vector
                 : width;
    case OpShape::kTernary:
      return inst.op == Opcode::kSimdgroupMultiplyAccumulate ? 2 : width;
    case OpShape::kMatrixLoad:
    case OpShape::kMatrixStore:
      return (shape == OpShape::kMatrixLoad ? position == 0 : position == 1)
                 ? 2
                 : 1;
    default:
      return width;
  }
}

bool IsDestination(const Instruction& inst, int position) {
  return position == 0 && ShapeHasDestination(inst.info().shape);
}

}  // namespace mtlemu::isa
