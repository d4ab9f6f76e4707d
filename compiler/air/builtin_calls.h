// Calls in prepared IR: LLVM intrinsics (llvm.fmuladd, llvm.sqrt, ...) and
// the metal_stdlib shims' builtins (air.NAME[.SPACE][.TYPE], see
// compiler/msl/BUILTINS.md), each lowered to ISA instructions.
#pragma once

#include <functional>
#include <string>

#include "isa/instruction.h"

namespace llvm {
class CallInst;
class Value;
}  // namespace llvm

namespace mtlemu::air {

// What instruction selection lends the builtin lowering.
struct BuiltinEmitter {
  std::function<isa::Operand(const llvm::Value*)> operand;  // a use
  std::function<isa::Operand(const llvm::Value*)> def;      // a result
  std::function<isa::Operand()> temporary;                  // a new vreg
  std::function<void(const isa::Instruction&)> emit;
  std::function<isa::ScalarType(const llvm::Value*, bool)> type;  // signed?
  std::function<isa::MemoryRef(const llvm::Value*, isa::AddressSpace)> address;
};

// False when the call has no lowering; `error` then says why (or is empty
// for an unknown function).
bool LowerBuiltinCall(const llvm::CallInst& call, const BuiltinEmitter& emit,
                      std::string& error);

}  // namespace mtlemu::air
