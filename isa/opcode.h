// Opcodes and the facts about them, all derived from opcodes.def (their
// shapes from shapes.def, see shape.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "isa/scalar_type.h"
#include "isa/shape.h"

namespace mtlemu::isa {

enum class Opcode : uint16_t {
#define OP(e, mnemonic, shape, types, unit, float_unit, cluster, flops, \
           control)                                                     \
  e,
#include "isa/opcodes.def"
#undef OP
};

inline constexpr int kNumOpcodes = 0
#define OP(e, mnemonic, shape, types, unit, float_unit, cluster, flops, \
           control)                                                     \
  +1
#include "isa/opcodes.def"
#undef OP
    ;

// Execution unit classes; the timing model costs instructions by these.
enum class ExecUnit : uint8_t {
#define EXEC_UNIT(e, name) e,
#include "isa/exec_units.def"
#undef EXEC_UNIT
};
inline constexpr int kNumExecUnits = 0
#define EXEC_UNIT(e, name) +1
#include "isa/exec_units.def"
#undef EXEC_UNIT
    ;

// A set of ScalarTypes as a bit mask (bit i = ScalarType i).
using TypeSet = uint32_t;
constexpr TypeSet Bit(ScalarType t) { return 1u << static_cast<int>(t); }
namespace type_sets {
inline constexpr TypeSet kNoType = 0;
inline constexpr TypeSet kFloats =
    Bit(ScalarType::kHalf) | Bit(ScalarType::kBFloat) | Bit(ScalarType::kFloat);
inline constexpr TypeSet kSignedInts =
    Bit(ScalarType::kChar) | Bit(ScalarType::kShort) | Bit(ScalarType::kInt) |
    Bit(ScalarType::kLong);
inline constexpr TypeSet kUnsignedInts =
    Bit(ScalarType::kUChar) | Bit(ScalarType::kUShort) |
    Bit(ScalarType::kUInt) | Bit(ScalarType::kULong);
inline constexpr TypeSet kIntegers = kSignedInts | kUnsignedInts;
inline constexpr TypeSet kNumeric = kIntegers | kFloats;
inline constexpr TypeSet kSignedOrFloat = kSignedInts | kFloats;
inline constexpr TypeSet kAnyType = kNumeric | Bit(ScalarType::kBool);
// 64-bit integer atomics are mtlemu's extension: Metal has atomic_ulong
// min and max only (Apple8+, MSL 2.4).
inline constexpr TypeSet kAtomicInts =
    Bit(ScalarType::kInt) | Bit(ScalarType::kUInt) | Bit(ScalarType::kLong) |
    Bit(ScalarType::kULong);
inline constexpr TypeSet kAtomicTypes = kAtomicInts | Bit(ScalarType::kFloat);
inline constexpr TypeSet kMatrixTypes =
    Bit(ScalarType::kHalf) | Bit(ScalarType::kFloat);
}  // namespace type_sets

// How an instruction changes the flow of control (the Control column).
enum class Control : uint8_t {
  kNone,           // on to the next instruction
  kJump,           // br: to its target
  kJumpIfNonZero,  // bnz: lanes whose condition is non-zero to the first
                   // target, the others to the second
  kJumpIfZero,     // bz: the same for zero
  kExit,           // the lanes end
  kTrap,           // the dispatch stops with a fault
  kThreadgroupBarrier,
  kSimdgroupBarrier,
};

struct OpInfo {
  std::string_view mnemonic;
  OpShape shape;
  TypeSet types;
  ExecUnit unit;
  ExecUnit float_unit;  // the unit for a floating-point type
  int cluster;          // 32 for SIMD-group functions, 4 for quad-group, else 0
  int flops;            // per active lane, for a floating-point type
  Control control;
};

const OpInfo& GetOpInfo(Opcode op);
inline std::string_view Mnemonic(Opcode op) { return GetOpInfo(op).mnemonic; }
std::optional<Opcode> OpcodeFromMnemonic(std::string_view mnemonic);

bool IsTerminator(Opcode op);  // ends a path: br, exit, trap
bool IsBranch(Opcode op);      // br, bnz, bz
bool AccessesMemory(Opcode op);
std::string_view ExecUnitName(ExecUnit unit);

}  // namespace mtlemu::isa
