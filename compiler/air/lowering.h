// Instruction selection's class, shared by the files that implement it:
// lower_kernel.cpp (the driver: blocks, branches, phis, calls),
// lower_interface.cpp (arguments, static memory, constant data),
// lower_arithmetic.cpp (binary, compare, cast and vector instructions) and
// lower_addressing.cpp (addresses and GEPs). Private to those files: nothing
// else includes it (LowerKernel in lower_kernel.h is the interface), which
// is why it may use the isa names unqualified in its own namespace.
#pragma once

#include <llvm/ADT/DenseMap.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DataLayout.h>
#include <llvm/IR/DebugInfoMetadata.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Operator.h>

#include <array>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "common/result.h"
#include "compiler/air/address_spaces.h"
#include "compiler/air/llvm_text.h"
#include "compiler/air/register_parts.h"
#include "compiler/msl/frontend.h"
#include "isa/instruction.h"
#include "isa/module.h"

namespace mtlemu::air::internal {

using isa::AddressSpace;
using isa::Instruction;
using isa::Opcode;
using isa::Operand;
using isa::ScalarType;
using isa::SpecialRegister;

inline AddressSpace SpaceOfPointer(const llvm::Type* t) {
  switch (t->getPointerAddressSpace()) {
    case kDeviceAddressSpace:
      return AddressSpace::kDevice;
    case kConstantAddressSpace:
      return AddressSpace::kConstant;
    case kThreadgroupAddressSpace:
      return AddressSpace::kThreadgroup;
    case kPrivateAddressSpace:
      return AddressSpace::kThread;
    default:
      return AddressSpace::kNone;
  }
}

class Lowering {
 public:
  Lowering(const llvm::Function& f, const msl::KernelDeclaration& decl)
      : f_(f), decl_(decl), layout_(f.getParent()->getDataLayout()) {}

  Result<isa::Kernel> Run();
  // `kernel` as the pass named `pass` left it verified (with virtual
  // registers before allocation), else an internal compiler error naming
  // the pass. After instruction selection (Run sets verify_files_).
  Status Verified(const isa::Kernel& kernel, std::string_view pass,
                  bool virtual_registers = true) const;

 private:
  // --- errors -------------------------------------------------------------
  void Unsupported(const std::string& what, const llvm::Value* at) {
    if (!error_.empty()) return;
    error_ = "unsupported: " + what + " in kernel '" + decl_.name + "'";
    if (const auto* inst = llvm::dyn_cast_or_null<llvm::Instruction>(at)) {
      const isa::SourceLocation loc = LocationOf(*inst);
      if (loc.line) error_ += " (line " + std::to_string(loc.line) + ")";
      error_ += ": " + LlvmText(*inst);
    }
  }

  // --- types and operands --------------------------------------------------
  std::optional<ScalarType> TypeOf(const llvm::Type* t, bool is_signed) {
    if (t->isIntegerTy(1)) return ScalarType::kUInt;
    if (t->isIntegerTy(8))
      return is_signed ? ScalarType::kChar : ScalarType::kUChar;
    if (t->isIntegerTy(16))
      return is_signed ? ScalarType::kShort : ScalarType::kUShort;
    if (t->isIntegerTy(32))
      return is_signed ? ScalarType::kInt : ScalarType::kUInt;
    if (t->isIntegerTy(64))
      return is_signed ? ScalarType::kLong : ScalarType::kULong;
    if (t->isHalfTy()) return ScalarType::kHalf;
    if (t->isBFloatTy()) return ScalarType::kBFloat;
    if (t->isFloatTy()) return ScalarType::kFloat;
    if (t->isPointerTy()) {
      return isa::IsWideAddressSpace(SpaceOfPointer(t)) ? ScalarType::kULong
                                                        : ScalarType::kUInt;
    }
    return std::nullopt;
  }
  ScalarType Type(const llvm::Value* v, bool is_signed = false) {
    const std::optional<ScalarType> t = TypeOf(v->getType(), is_signed);
    if (!t) {
      Unsupported("values of type " + LlvmText(*v->getType()), v);
      return ScalarType::kUInt;
    }
    return *t;
  }

  uint32_t NewVReg() { return next_vreg_++; }

  uint32_t VRegFor(const llvm::Value* v) {
    auto [it, inserted] = vregs_.try_emplace(v, 0);
    if (inserted) it->second = NewVReg();
    return it->second;
  }

  Operand Immediate(uint64_t bits) { return Operand::Imm(bits); }

  Operand OperandFor(const llvm::Value* v) {
    if (const auto* c = llvm::dyn_cast<llvm::ConstantInt>(v)) {
      return Immediate(c->getValue().getZExtValue());
    }
    if (const auto* c = llvm::dyn_cast<llvm::ConstantFP>(v)) {
      return Immediate(c->getValueAPF().bitcastToAPInt().getZExtValue());
    }
    if (IsVector(v) && llvm::isa<llvm::Constant>(v)) {
      // A constant vector where a block is needed (a builtin's argument).
      const uint32_t block = NewVReg();
      CopyElements(block, v);
      return Operand::Reg(static_cast<int>(block));
    }
    if (llvm::isa<llvm::UndefValue>(v) ||
        llvm::isa<llvm::ConstantPointerNull>(v)) {
      return Immediate(0);
    }
    if (const auto* g = llvm::dyn_cast<llvm::GlobalVariable>(v)) {
      auto it = threadgroup_globals_.find(g);
      if (it != threadgroup_globals_.end()) return Immediate(it->second);
      auto c = constant_globals_.find(g);
      if (c != constant_globals_.end()) return c->second;
      Unsupported("program-scope data '" + g->getName().str() + "'", nullptr);
      return Immediate(0);
    }
    if (const auto* e = llvm::dyn_cast<llvm::ConstantExpr>(v)) {
      // A constant address inside a threadgroup global.
      if (const auto* gep = llvm::dyn_cast<llvm::GEPOperator>(e)) {
        llvm::APInt offset(32, 0);
        if (gep->accumulateConstantOffset(layout_, offset)) {
          const Operand base = OperandFor(gep->getPointerOperand());
          if (base.kind == isa::OperandKind::kImmediate) {
            return Immediate(base.imm + offset.getZExtValue());
          }
        }
      }
      Unsupported("constant expression " + LlvmText(*e), nullptr);
      return Immediate(0);
    }
    if (const auto* a = llvm::dyn_cast<llvm::Argument>(v)) {
      auto it = arguments_.find(a);
      if (it != arguments_.end()) return it->second;
    }
    auto it = vregs_.find(v);
    if (it == vregs_.end()) {
      // A use before its definition in layout order (a phi's incoming value
      // from a later block): the vreg is created now.
      return Operand::Reg(static_cast<int>(VRegFor(v)));
    }
    return Operand::Reg(static_cast<int>(it->second));
  }

  // --- emission --------------------------------------------------------------
  isa::SourceLocation LocationOf(const llvm::Instruction& inst) {
    const llvm::DILocation* loc = inst.getDebugLoc().get();
    // Inlined helpers from the metal_stdlib shims report the caller's line.
    while (loc != nullptr && loc->getInlinedAt() != nullptr &&
           loc->getFilename().startswith("/__mtlemu/")) {
      loc = loc->getInlinedAt();
    }
    if (loc == nullptr || loc->getLine() == 0) return {};
    isa::SourceLocation out;
    std::string name = loc->getFilename().str();
    if (!name.empty() && name[0] != '/' && !loc->getDirectory().empty()) {
      name = loc->getDirectory().str() + "/" + name;
    }
    out.file = FileIndex(name);
    out.line = loc->getLine();
    out.column = loc->getColumn();
    return out;
  }
  uint16_t FileIndex(const std::string& name) {
    if (name.empty() || name == main_file_) return 0;
    for (size_t i = 1; i < files_->size(); ++i) {
      if ((*files_)[i] == name) return static_cast<uint16_t>(i);
    }
    files_->push_back(name);
    return static_cast<uint16_t>(files_->size() - 1);
  }

  Instruction& Emit(Opcode op, ScalarType type,
                    std::initializer_list<Operand> operands) {
    Instruction inst;
    inst.op = op;
    inst.type = type;
    int i = 0;
    for (const Operand& o : operands) inst.operands[i++] = o;
    inst.location = location_;
    kernel_.code.push_back(inst);
    return kernel_.code.back();
  }
  Operand Def(const llvm::Value* v) {
    return Operand::Reg(static_cast<int>(VRegFor(v)));
  }

  // --- vector values (register_parts.h) --------------------------------------
  // What scalarization leaves as vectors (builtin arguments and results such
  // as simdgroup_matrix's <2 x T>, bitcasts between vectors and scalars, and
  // the insertelement, extractelement, shufflevector, select and phi that
  // connect them) lives in a block of registers: the value's vreg is the
  // block, element i the part at offset i * RegistersPerElement.
  static bool IsVector(const llvm::Value* v) {
    return v->getType()->isVectorTy();
  }
  static unsigned NumElements(const llvm::Value* v) {
    return llvm::cast<llvm::FixedVectorType>(v->getType())->getNumElements();
  }
  static int RegistersPerElement(const llvm::Value* v) {
    return v->getType()->getScalarSizeInBits() > 32 ? 2 : 1;
  }
  // Two 32-bit registers in all: copied whole with one mov.u64.
  static bool IsPairBlock(const llvm::Value* v) {
    return NumElements(v) * RegistersPerElement(v) == 2 &&
           v->getType()->getScalarSizeInBits() == 32;
  }
  ScalarType ElementType(const llvm::Value* v) {
    const std::optional<ScalarType> t =
        TypeOf(v->getType()->getScalarType(), false);
    if (!t) {
      Unsupported("vectors of type " + LlvmText(*v->getType()), v);
      return ScalarType::kUInt;
    }
    return *t;
  }
  Operand Part(uint32_t whole, int offset) {
    return Operand::Reg(static_cast<int>(
        parts_.Part(whole, offset, [this] { return NewVReg(); })));
  }
  static bool IsUndefElement(const llvm::Value* v, unsigned i) {
    if (llvm::isa<llvm::UndefValue>(v)) return true;
    const auto* c = llvm::dyn_cast<llvm::Constant>(v);
    return c != nullptr &&
           llvm::isa_and_nonnull<llvm::UndefValue>(c->getAggregateElement(i));
  }
  Operand ElementOf(const llvm::Value* v, unsigned i) {
    if (const auto* c = llvm::dyn_cast<llvm::Constant>(v)) {
      const llvm::Constant* e = c->getAggregateElement(i);
      if (e == nullptr) {
        Unsupported("the vector constant " + LlvmText(*c), nullptr);
        return Immediate(0);
      }
      return OperandFor(e);
    }
    return Part(VRegFor(v), static_cast<int>(i) * RegistersPerElement(v));
  }
  Operand ElementDef(const llvm::Value* v, unsigned i) {
    return Part(VRegFor(v), static_cast<int>(i) * RegistersPerElement(v));
  }
  // Element i of `v` (a vector) or `v` itself (a scalar, i == 0).
  Operand Piece(const llvm::Value* v, unsigned i) {
    return IsVector(v) ? ElementOf(v, i) : OperandFor(v);
  }
  Operand PieceDef(const llvm::Value* v, unsigned i) {
    return IsVector(v) ? ElementDef(v, i) : Def(v);
  }
  // Copies every defined element of `from` into the block `to`.
  void CopyElements(uint32_t to, const llvm::Value* from) {
    const ScalarType t = ElementType(from);
    for (unsigned i = 0; i < NumElements(from); ++i) {
      if (IsUndefElement(from, i)) continue;
      Emit(Opcode::kMov, t,
           {Part(to, static_cast<int>(i) * RegistersPerElement(from)),
            ElementOf(from, i)});
    }
  }
  bool LowerVectorInstruction(const llvm::Instruction& inst);
  void LowerVectorBitcast(const llvm::CastInst& c);

  // --- pieces ---------------------------------------------------------------
  void SetUpArguments();
  void AllocateStaticMemory();
  void LayOutConstantData();
  void LowerBlock(const llvm::BasicBlock& block);
  void LowerInstruction(const llvm::Instruction& inst);
  void LowerBinary(const llvm::BinaryOperator& b);
  void LowerCompare(const llvm::CmpInst& c);
  void LowerCast(const llvm::CastInst& c);
  void LowerGep(const llvm::GetElementPtrInst& g);
  isa::MemoryRef AddressOf(const llvm::Value* pointer, AddressSpace space);
  void LowerCall(const llvm::CallInst& call);
  void LowerBranch(const llvm::BranchInst& br);
  void EmitPhiCopies(const llvm::BasicBlock& from, const llvm::BasicBlock& to);
  Operand Materialize(const Operand& o, ScalarType type);
  // v * scale (32-bit) in a register, computed once per block.
  Operand ScaledInBlock(const llvm::Value* v, uint64_t scale) {
    auto [it, inserted] = scaled_in_block_.try_emplace({v, scale});
    if (inserted) {
      it->second = Operand::Reg(static_cast<int>(NewVReg()));
      Emit(Opcode::kMul, ScalarType::kUInt,
           {it->second, OperandFor(v), Immediate(scale)});
    }
    return it->second;
  }
  // A register holding a special register's value, copied once in the
  // kernel's prologue (which dominates every use).
  Operand SpecialInRegister(const Operand& special) {
    auto [it, inserted] = special_registers_.try_emplace(special.special, 0);
    if (inserted) {
      it->second = NewVReg();
      Instruction mov;
      mov.op = Opcode::kMov;
      mov.type = ScalarType::kUInt;
      mov.operands[0] = Operand::Reg(static_cast<int>(it->second));
      mov.operands[1] = special;
      prologue_.push_back(mov);
    }
    return Operand::Reg(static_cast<int>(it->second));
  }

  const llvm::Function& f_;
  const msl::KernelDeclaration& decl_;
  const llvm::DataLayout& layout_;
  isa::Kernel kernel_;
  std::string error_;
  std::string main_file_;
  std::vector<std::string>* files_ = nullptr;
  // The source files once selection has named them all, for the verifier's
  // messages after each pass (a copy made once, not once per pass).
  isa::Module verify_files_;
  isa::SourceLocation location_;
  uint32_t next_vreg_ = 0;
  llvm::DenseMap<const llvm::Value*, uint32_t> vregs_;
  llvm::DenseMap<const llvm::Argument*, Operand> arguments_;
  // Builtin vector arguments: one special register per component.
  llvm::DenseMap<const llvm::Argument*, std::array<SpecialRegister, 3>>
      specials_;
  llvm::DenseMap<const llvm::GlobalVariable*, uint32_t> threadgroup_globals_;
  // Program-scope constant data: a register holding each global's address.
  llvm::DenseMap<const llvm::GlobalVariable*, Operand> constant_globals_;
  int next_uniform_ = 0;
  std::map<SpecialRegister, uint32_t> special_registers_;
  std::vector<Instruction> prologue_;
  llvm::DenseMap<const llvm::AllocaInst*, uint32_t> allocas_;
  llvm::DenseMap<const llvm::PHINode*, uint32_t> phi_temps_;
  RegisterParts parts_;
  // ScaledInBlock's products in the block being lowered.
  std::map<std::pair<const llvm::Value*, uint64_t>, Operand> scaled_in_block_;
  llvm::DenseMap<const llvm::BasicBlock*, uint32_t> block_start_;
  // Branch operands to patch with block start indices: (pc, operand, block).
  std::vector<std::tuple<size_t, int, const llvm::BasicBlock*>> fixups_;
  std::vector<size_t> exit_branches_;  // `br` to the kernel's exit
  // Conditional branches' reconvergence points (reconvergence.h).
  std::map<const llvm::BasicBlock*, const llvm::BasicBlock*> joins_;
  const llvm::BasicBlock* next_block_ = nullptr;

 public:
  void SetFiles(std::string main_file, std::vector<std::string>* files) {
    main_file_ = std::move(main_file);
    files_ = files;
  }
};

}  // namespace mtlemu::air::internal
