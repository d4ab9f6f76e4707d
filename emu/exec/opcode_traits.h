// Compile-time views of the opcode table, for code that picks a template
// per opcode (the handler families).
#pragma once

#include <array>

#include "isa/opcode.h"

namespace mtlemu::emu::opcode_traits {

using namespace isa::type_sets;

inline constexpr std::array<isa::TypeSet, isa::kNumOpcodes> kTypes = {
#define OP(e, mnemonic, shape, types, unit, float_unit, cluster, flops, control) types,
#include "isa/opcodes.def"
#undef OP
};
inline constexpr std::array<isa::OpShape, isa::kNumOpcodes> kShapes = {
#define OP(e, mnemonic, shape, types, unit, float_unit, cluster, flops, control) \
  isa::OpShape::shape,
#include "isa/opcodes.def"
#undef OP
};
inline constexpr std::array<int, isa::kNumOpcodes> kClusters = {
#define OP(e, mnemonic, shape, types, unit, float_unit, cluster, flops, control) cluster,
#include "isa/opcodes.def"
#undef OP
};

inline constexpr std::array<isa::ExecUnit, isa::kNumOpcodes> kUnits = {
#define OP(e, mnemonic, shape, types, unit, float_unit, cluster, flops, control) \
  isa::ExecUnit::unit,
#include "isa/opcodes.def"
#undef OP
};

constexpr isa::ExecUnit UnitOf(isa::Opcode op) {
  return kUnits[static_cast<int>(op)];
}
// Calls f.template operator()<op>() with the Opcode as a template argument:
// turns a run-time opcode into a compile-time one.
template <typename F>
decltype(auto) VisitOpcode(isa::Opcode op, F&& f) {
  switch (op) {
#define OP(e, mnemonic, shape, types, unit, float_unit, cluster, flops, control) \
  case isa::Opcode::e:                                                  \
    return f.template operator()<isa::Opcode::e>();
#include "isa/opcodes.def"
#undef OP
  }
  return f.template operator()<isa::Opcode::kExit>();
}

constexpr isa::TypeSet TypesOf(isa::Opcode op) {
  return kTypes[static_cast<int>(op)];
}
constexpr isa::OpShape ShapeOf(isa::Opcode op) {
  return kShapes[static_cast<int>(op)];
}
constexpr int ClusterOf(isa::Opcode op) {
  return kClusters[static_cast<int>(op)];
}
constexpr bool Accepts(isa::Opcode op, isa::ScalarType t) {
  return (TypesOf(op) & isa::Bit(t)) != 0;
}

}  // namespace mtlemu::emu::opcode_traits
