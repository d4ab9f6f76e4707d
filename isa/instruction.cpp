#include "isa/instruction.h"

namespace mtlemu::isa {

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

namespace {

// What shapes.def says about operand `position` (past the shape's operands,
// a source of the instruction's type).
OperandSpec SpecAt(const Instruction& inst, int position) {
  if (position < 0 || position >= inst.NumOperands()) return OperandSpec{};
  return GetShapeInfo(inst.info().shape).operands[position];
}

}  // namespace

int Instruction::NumOperands() const { return OperandCount(info().shape); }

ScalarType OperandType(const Instruction& inst, int position) {
  switch (SpecAt(inst, position).type) {
    case OperandTypeRule::kType:
      return inst.type;
    case OperandTypeRule::kType2:
      return inst.type2;
    case OperandTypeRule::kUInt:
      return ScalarType::kUInt;
    case OperandTypeRule::kInt:
      return ScalarType::kInt;
  }
  return inst.type;
}

int OperandRegisterSpan(const Instruction& inst, int position) {
  const int width = IsWide(OperandType(inst, position)) ? 2 : 1;
  switch (SpecAt(inst, position).span) {
    case OperandSpan::kOne:
      return width;
    case OperandSpan::kVector:
      return width * inst.vector;
    case OperandSpan::kMatrix:
      return 2;
  }
  return width;
}

bool IsDestination(const Instruction& inst, int position) {
  return GetOperandRole(inst.info().shape, position) ==
         OperandRole::kDestination;
}

}  // namespace mtlemu::isa
