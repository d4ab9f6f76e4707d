#include "compiler/air/builtin_calls.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>

#include <map>
#include <optional>
#include <vector>

#include "isa/special_register.h"

namespace mtlemu::air {
namespace {

using isa::AddressSpace;
using isa::Instruction;
using isa::Opcode;
using isa::Operand;
using isa::ScalarType;

// LLVM intrinsics (by base name, without the type suffix) and the opcode
// they become; `is_signed` picks the signed integer type.
struct IntrinsicInfo {
  Opcode op;
  bool is_signed;
};
std::optional<IntrinsicInfo> IntrinsicOpcode(llvm::StringRef name) {
  static const std::map<std::string, IntrinsicInfo, std::less<>> kTable = {
      {"llvm.fmuladd", {Opcode::kFma, false}},
      {"llvm.fma", {Opcode::kFma, false}},
      {"llvm.fabs", {Opcode::kAbs, false}},
      {"llvm.sqrt", {Opcode::kSqrt, false}},
      {"llvm.minnum", {Opcode::kMin, false}},
      {"llvm.maxnum", {Opcode::kMax, false}},
      {"llvm.minimum", {Opcode::kMin, false}},
      {"llvm.maximum", {Opcode::kMax, false}},
      {"llvm.smin", {Opcode::kMin, true}},
      {"llvm.smax", {Opcode::kMax, true}},
      {"llvm.umin", {Opcode::kMin, false}},
      {"llvm.umax", {Opcode::kMax, false}},
      {"llvm.abs", {Opcode::kAbs, true}},
      {"llvm.floor", {Opcode::kFloor, false}},
      {"llvm.ceil", {Opcode::kCeil, false}},
      {"llvm.trunc", {Opcode::kTrunc, false}},
      {"llvm.rint", {Opcode::kRint, false}},
      {"llvm.nearbyint", {Opcode::kRint, false}},
      {"llvm.roundeven", {Opcode::kRint, false}},
      {"llvm.round", {Opcode::kRound, false}},
      {"llvm.copysign", {Opcode::kCopySign, false}},
      {"llvm.ctpop", {Opcode::kPopcount, false}},
      {"llvm.ctlz", {Opcode::kClz, false}},
      {"llvm.cttz", {Opcode::kCtz, false}},
      {"llvm.bitreverse", {Opcode::kBitReverse, false}},
      {"llvm.exp2", {Opcode::kExp2, false}},
      {"llvm.log2", {Opcode::kLog2, false}},
      {"llvm.exp", {Opcode::kExp, false}},
      {"llvm.log", {Opcode::kLog, false}},
      {"llvm.log10", {Opcode::kLog10, false}},
      {"llvm.sin", {Opcode::kSin, false}},
      {"llvm.cos", {Opcode::kCos, false}},
      {"llvm.pow", {Opcode::kPow, false}},
      {"llvm.ldexp", {Opcode::kLdexp, false}},
  };
  // "llvm.fmuladd.f32" -> "llvm.fmuladd"
  const size_t dot = name.find('.', 5);
  auto it = kTable.find(name.substr(0, dot).str());
  if (it == kTable.end()) return std::nullopt;
  return it->second;
}

// Shim builtin names whose ISA mnemonic differs.
std::string_view IsaMnemonic(std::string_view name) {
  static const std::map<std::string_view, std::string_view> kRenames = {
      {"fabs", "abs"},
      {"fmin", "min"},
      {"fmax", "max"},
      {"rotate", "rotl"},
      {"atomic_fetch_add", "atomic_add"},
      {"atomic_fetch_sub", "atomic_sub"},
      {"atomic_fetch_and", "atomic_and"},
      {"atomic_fetch_or", "atomic_or"},
      {"atomic_fetch_xor", "atomic_xor"},
      {"atomic_fetch_min", "atomic_min"},
      {"atomic_fetch_max", "atomic_max"},
  };
  auto it = kRenames.find(name);
  return it == kRenames.end() ? name : it->second;
}

std::vector<std::string> Split(llvm::StringRef s) {
  llvm::SmallVector<llvm::StringRef, 4> parts;
  s.split(parts, '.');
  return {parts.begin(), parts.end()};
}

}  // namespace

bool LowerBuiltinCall(const llvm::CallInst& call, const BuiltinEmitter& e,
                      std::string& error) {
  const llvm::Function* callee = call.getCalledFunction();
  const llvm::StringRef name = callee->getName();
  const bool has_result = !call.getType()->isVoidTy();

  if (name.startswith("llvm.")) {
    if (name == "llvm.trap" || name == "llvm.debugtrap" ||
        name == "llvm.ubsantrap") {
      Instruction i;
      i.op = Opcode::kTrap;
      i.type = ScalarType::kUInt;
      e.emit(i);
      return true;
    }
    if (name.startswith("llvm.fshl") &&
        call.getArgOperand(0) == call.getArgOperand(1)) {
      Instruction i;
      i.op = Opcode::kRotl;
      i.type = e.type(&call, false);
      i.operands[0] = e.def(&call);
      i.operands[1] = e.operand(call.getArgOperand(0));
      i.operands[2] = e.operand(call.getArgOperand(2));
      e.emit(i);
      return true;
    }
    const std::optional<IntrinsicInfo> info = IntrinsicOpcode(name);
    if (!info) return false;
    Instruction i;
    i.op = info->op;
    i.type = e.type(&call, info->is_signed);
    i.operands[0] = e.def(&call);
    // ctlz/cttz/abs carry an i1 flag as the last argument: not an operand.
    const int sources = isa::OperandCount(i.info().shape) - 1;
    for (int k = 0; k < sources; ++k) {
      i.operands[k + 1] = e.operand(call.getArgOperand(k));
    }
    e.emit(i);
    return true;
  }

  if (!name.startswith("air.")) return false;
  // A special register read as a function (air.thread_index_in_simdgroup).
  if (const auto sr = isa::SpecialRegisterFromName(name.drop_front(4).str());
      sr && call.arg_size() == 0 && has_result) {
    Instruction i;
    i.op = Opcode::kMov;
    i.type = ScalarType::kUInt;
    i.operands[0] = e.def(&call);
    i.operands[1] = Operand::Special(*sr);
    e.emit(i);
    return true;
  }
  std::vector<std::string> parts = Split(name.drop_front(4));
  // The ISA has no fence: the emulator's memory operations take effect in
  // program order, and its atomics are sequentially consistent.
  if (parts.size() == 1 && parts[0] == "atomic_thread_fence") return true;
  // air.convert.DST.SRC: a conversion (bfloat values travel as i16 bits).
  if (parts.size() == 3 && parts[0] == "convert" && has_result &&
      call.arg_size() == 1) {
    const auto to = isa::ScalarTypeFromIsaSuffix(parts[1]);
    const auto from = isa::ScalarTypeFromIsaSuffix(parts[2]);
    if (to && from) {
      Instruction i;
      i.op = Opcode::kCvt;
      i.type = *to;
      i.type2 = *from;
      i.operands[0] = e.def(&call);
      i.operands[1] = e.operand(call.getArgOperand(0));
      e.emit(i);
      return true;
    }
  }
  const std::string_view mnemonic = IsaMnemonic(parts[0]);
  const std::optional<Opcode> op = isa::OpcodeFromMnemonic(mnemonic);
  if (!op) {
    error = "the Metal function behind builtin '" + name.str() + "'";
    return false;
  }
  Instruction i;
  i.op = *op;
  size_t next = 1;
  if (isa::ShapeHasSpace(i.info().shape) && next < parts.size()) {
    i.space = parts[next] == "local"      ? AddressSpace::kThreadgroup
              : parts[next] == "constant" ? AddressSpace::kConstant
                                          : AddressSpace::kDevice;
    ++next;
  }
  if (next < parts.size()) {
    const auto t = isa::ScalarTypeFromIsaSuffix(parts[next]);
    if (!t) {
      error = "builtin '" + name.str() + "' (unknown type suffix)";
      return false;
    }
    i.type = *t;
    ++next;
  }
  if (next < parts.size() && parts[next] == "transpose") {
    i.transpose = true;
    ++next;
  }
  if (next != parts.size()) {
    error = "builtin '" + name.str() + "' (unknown suffix)";
    return false;
  }
  switch (i.info().shape) {
    case isa::OpShape::kBarrier: {
      const auto* flags =
          llvm::dyn_cast<llvm::ConstantInt>(call.getArgOperand(0));
      if (!flags) {
        error = "a barrier whose mem_flags are not a constant";
        return false;
      }
      i.mem_flags = static_cast<uint8_t>(flags->getZExtValue());
      e.emit(i);
      return true;
    }
    case isa::OpShape::kAtomic:
    case isa::OpShape::kAtomicCas:
    case isa::OpShape::kAtomicLoad:
    case isa::OpShape::kAtomicStore: {
      int k = 0;
      if (has_result) i.operands[k++] = e.def(&call);
      i.operands[k++] =
          Operand::Memory(e.address(call.getArgOperand(0), i.space));
      for (unsigned a = 1; a < call.arg_size(); ++a) {
        Operand o = e.operand(call.getArgOperand(a));
        i.operands[k++] = o;
      }
      if (!has_result && i.info().shape != isa::OpShape::kAtomicStore) {
        // The old value is unused: write it to a scratch register.
        for (int m = k; m > 0; --m) i.operands[m] = i.operands[m - 1];
        i.operands[0] = e.temporary();
      }
      e.emit(i);
      return true;
    }
    case isa::OpShape::kUnary:
    case isa::OpShape::kBinary:
    case isa::OpShape::kBinaryInt:
    case isa::OpShape::kTernary:
    case isa::OpShape::kMatrixMultiply:
    case isa::OpShape::kTest:
    case isa::OpShape::kCompare:
    case isa::OpShape::kNullaryValue:
    case isa::OpShape::kVote: {
      const int count = isa::OperandCount(i.info().shape);
      if (!has_result || static_cast<int>(call.arg_size()) != count - 1) {
        error = "builtin '" + name.str() + "' (unexpected signature)";
        return false;
      }
      i.operands[0] = e.def(&call);
      for (int k = 1; k < count; ++k) {
        Operand o = e.operand(call.getArgOperand(k - 1));
        // Shuffles and votes take registers for their data.
        if (o.kind == isa::OperandKind::kImmediate && (i.info().cluster != 0) &&
            k == 1) {
          const Operand r = e.temporary();
          Instruction mov;
          mov.op = Opcode::kMov;
          mov.type =
              isa::ShapeHasType(i.info().shape) ? i.type : ScalarType::kUInt;
          mov.operands[0] = r;
          mov.operands[1] = o;
          e.emit(mov);
          o = r;
        }
        i.operands[k] = o;
      }
      e.emit(i);
      return true;
    }
    case isa::OpShape::kMatrixLoad:
    case isa::OpShape::kMatrixStore: {
      // A matrix is a <2 x T> value: a block of two registers.
      const bool load = i.info().shape == isa::OpShape::kMatrixLoad;
      if (call.arg_size() != (load ? 2u : 3u) || load != has_result) {
        error = "builtin '" + name.str() + "' (unexpected signature)";
        return false;
      }
      const Operand mem =
          Operand::Memory(e.address(call.getArgOperand(0), i.space));
      const Operand stride = e.operand(call.getArgOperand(load ? 1 : 2));
      if (load) {
        i.operands[0] = e.def(&call);
        i.operands[1] = mem;
      } else {
        i.operands[0] = mem;
        i.operands[1] = e.operand(call.getArgOperand(1));
      }
      i.operands[2] = stride;
      e.emit(i);
      return true;
    }
    // No Metal builtin lowers to these (conversions, loads, stores, select
    // and branches come from LLVM instructions, not calls).
    case isa::OpShape::kNullary:
    case isa::OpShape::kSelect:
    case isa::OpShape::kConvert:
    case isa::OpShape::kLoad:
    case isa::OpShape::kStore:
    case isa::OpShape::kBranch:
    case isa::OpShape::kCondBranch:
      break;
  }
  error = "builtin '" + name.str() + "'";
  return false;
}

}  // namespace mtlemu::air
