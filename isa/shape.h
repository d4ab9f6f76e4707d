// Instruction shapes: the operand signature and modifiers of an opcode,
// all derived from shapes.def.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "isa/address_space.h"

namespace mtlemu::isa {

// The X-macro leaves out the columns the enum does not need; the variadic
// form lets the parenthesized operand list pass through as one argument.
enum class OpShape : uint8_t {
#define SHAPE(e, ...) e,
#include "isa/shapes.def"
#undef SHAPE
};

inline constexpr int kNumShapes = 0
#define SHAPE(e, ...) +1
#include "isa/shapes.def"
#undef SHAPE
    ;

inline constexpr int kMaxOperands = 4;

// What an operand position holds.
enum class OperandRole : uint8_t {
  kDestination,  // a register the instruction writes
  kSource,       // a register, uniform, immediate or special register
  kLabel,        // a branch target or reconvergence point
  kMemory,       // a memory reference
};

// The type an operand position holds (for immediates and register widths).
enum class OperandTypeRule : uint8_t {
  kType,   // the instruction's type (.T)
  kType2,  // its second type (cvt's source)
  kUInt,   // a 32-bit unsigned integer (a condition, a 0-or-1 result, ...)
  kInt,    // a 32-bit signed integer (a lane, a delta, an exponent)
};

// How many consecutive 32-bit registers an operand position spans.
enum class OperandSpan : uint8_t {
  kOne,     // one value of its type: two registers when 64-bit
  kVector,  // ld/st data: the instruction's vector count of values
  kMatrix,  // an 8x8 simdgroup_matrix: two registers per lane
};

struct OperandSpec {
  OperandRole role = OperandRole::kSource;
  OperandTypeRule type = OperandTypeRule::kType;
  OperandSpan span = OperandSpan::kOne;
};

// The modifiers of the text form, in the order they follow the mnemonic.
enum class Modifier : uint8_t {
  kSpace,      // .device, .constant, .threadgroup, .thread
  kVector,     // .v2, .v3, .v4
  kType,       // .T
  kType2,      // a second type: cvt's source
  kTranspose,  // .transpose
  kMemFlags,   // .mem_none, .mem_device, ...
};
inline constexpr int kNumModifiers = 6;
using ModifierSet = uint8_t;
constexpr ModifierSet Bit(Modifier m) {
  return static_cast<ModifierSet>(1u << static_cast<int>(m));
}

struct ShapeInfo {
  OpShape shape;               // its own enum value (checks the row order)
  std::string_view signature;  // "d, a, b": for messages
  int num_operands;
  std::array<OperandSpec, kMaxOperands> operands;
  ModifierSet modifiers;
  AddressSpaceSet spaces;        // none: it does not access memory
  AddressSpaceSet float_spaces;  // the same for a floating-point type
};

const ShapeInfo& GetShapeInfo(OpShape shape);

// How many operands a shape takes in text order.
inline int OperandCount(OpShape shape) {
  return GetShapeInfo(shape).num_operands;
}
// The operand signature as the assembler's messages name it ("d, [mem]").
inline std::string_view OperandSignature(OpShape shape) {
  return GetShapeInfo(shape).signature;
}
// What operand `position` holds (kSource past the shape's operands).
OperandRole GetOperandRole(OpShape shape, int position);
inline bool ShapeHasModifier(OpShape shape, Modifier m) {
  return (GetShapeInfo(shape).modifiers & Bit(m)) != 0;
}
inline bool ShapeHasType(OpShape shape) {  // takes a .T suffix
  return ShapeHasModifier(shape, Modifier::kType);
}
inline bool ShapeHasSpace(OpShape shape) {  // takes a .SPACE suffix
  return ShapeHasModifier(shape, Modifier::kSpace);
}
inline bool ShapeHasDestination(OpShape shape) {  // operand 0 is written
  return GetOperandRole(shape, 0) == OperandRole::kDestination;
}

}  // namespace mtlemu::isa
