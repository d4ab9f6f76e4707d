#include "isa/opcode.h"

#include <array>

namespace mtlemu::isa {
namespace {

using namespace type_sets;

// A row per opcode, in the enum's order (both from the same table).
constexpr OpInfo kOpInfo[] = {
#define OP(e, mnemonic, shape, types, unit, float_unit, cluster, flops, \
           control)                                                     \
  {mnemonic,       OpShape::shape,       types,                         \
   ExecUnit::unit, ExecUnit::float_unit, cluster,                       \
   flops,          Control::control},
#include "isa/opcodes.def"
#undef OP
};
static_assert(std::size(kOpInfo) == kNumOpcodes);

}  // namespace

const OpInfo& GetOpInfo(Opcode op) { return kOpInfo[static_cast<int>(op)]; }

std::optional<Opcode> OpcodeFromMnemonic(std::string_view mnemonic) {
  for (int i = 0; i < kNumOpcodes; ++i) {
    if (kOpInfo[i].mnemonic == mnemonic) return static_cast<Opcode>(i);
  }
  return std::nullopt;
}

bool IsTerminator(Opcode op) {
  const Control c = GetOpInfo(op).control;
  return c == Control::kJump || c == Control::kExit || c == Control::kTrap;
}

bool IsBranch(Opcode op) {
  const Control c = GetOpInfo(op).control;
  return c == Control::kJump || c == Control::kJumpIfNonZero ||
         c == Control::kJumpIfZero;
}

bool AccessesMemory(Opcode op) { return ShapeHasSpace(GetOpInfo(op).shape); }

std::string_view ExecUnitName(ExecUnit unit) {
  static constexpr std::string_view kNames[] = {
#define EXEC_UNIT(e, name) name,
#include "isa/exec_units.def"
#undef EXEC_UNIT
  };
  return kNames[static_cast<int>(unit)];
}

}  // namespace mtlemu::isa
