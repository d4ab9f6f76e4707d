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

// The rows and the enum come from one list, so the table is complete by
// construction; what the compiler can still catch is a row that
// contradicts itself or another.
constexpr bool IsMnemonicChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

constexpr bool RowIsConsistent(const OpInfo& row) {
  if (row.mnemonic.empty() || row.mnemonic[0] < 'a' || row.mnemonic[0] > 'z') {
    return false;
  }
  for (char c : row.mnemonic) {
    if (!IsMnemonicChar(c)) return false;  // "op.T" splits at the first '.'
  }
  const bool floats = (row.types & kFloats) != 0;
  // Only floating-point types count FLOPs or pick a float unit.
  if (row.flops < 0 || (row.flops > 0 && !floats)) return false;
  if (row.float_unit != row.unit && !floats) return false;
  // SIMD-group (32 lanes) and quad-group (4) functions, or neither.
  return row.cluster == 0 || row.cluster == 4 || row.cluster == 32;
}

constexpr bool MnemonicsAreDistinct() {
  for (size_t i = 0; i < std::size(kOpInfo); ++i) {
    for (size_t j = i + 1; j < std::size(kOpInfo); ++j) {
      if (kOpInfo[i].mnemonic == kOpInfo[j].mnemonic) return false;
    }
  }
  return true;
}

constexpr bool RowsAreConsistent() {
  for (const OpInfo& row : kOpInfo) {
    if (!RowIsConsistent(row)) return false;
  }
  return true;
}

static_assert(RowsAreConsistent(),
              "an opcodes.def row: its mnemonic is not lower-case letters, "
              "digits and '_', it counts FLOPs or names a float unit without "
              "a floating-point type, or its cluster is not 0, 4 or 32");
static_assert(MnemonicsAreDistinct(), "two opcodes.def rows share a mnemonic");

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
