// Instruction selection (lowering.h): addresses. A GEP chain folds into one
// memory operand [base + index * scale + displacement]; a GEP whose value
// is used otherwise becomes adds and multiplies.
#include <llvm/ADT/APInt.h>
#include <llvm/ADT/MapVector.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DataLayout.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Operator.h>

#include <cstdint>

#include "compiler/air/lowering.h"
#include "isa/instruction.h"

namespace mtlemu::air::internal {

// An address as [base + index*scale + displacement] when the pointer is a
// GEP with one 32-bit variable index; else the pointer's value as base.
isa::MemoryRef Lowering::AddressOf(const llvm::Value* pointer,
                                   AddressSpace space) {
  isa::MemoryRef m;
  auto set_base = [&](const Operand& o) -> bool {
    if (o.kind == isa::OperandKind::kRegister ||
        o.kind == isa::OperandKind::kUniform) {
      m.base_kind = o.kind;
      m.base = o.reg;
      return true;
    }
    if (o.kind == isa::OperandKind::kImmediate &&
        !isa::IsWideAddressSpace(space) && o.imm <= 0x7fffffffu) {
      m.displacement = static_cast<int32_t>(o.imm);
      return true;
    }
    return false;
  };
  if (const auto* gep = llvm::dyn_cast<llvm::GEPOperator>(pointer)) {
    const unsigned bits = layout_.getIndexSizeInBits(
        gep->getPointerOperandType()->getPointerAddressSpace());
    llvm::MapVector<llvm::Value*, llvm::APInt> variables;
    llvm::APInt constant(bits, 0);
    // A constant step from another GEP (the lanes of a scalarized float4
    // access: &v[i] + 4, + 8, + 12) joins that GEP's displacement, so the
    // lanes share its index register instead of each holding an address.
    while (const auto* inner =
               llvm::dyn_cast<llvm::GEPOperator>(gep->getPointerOperand())) {
      llvm::MapVector<llvm::Value*, llvm::APInt> none;
      llvm::APInt step(bits, 0);
      if (!gep->collectOffset(layout_, bits, none, step) || !none.empty()) {
        break;
      }
      constant += step;
      gep = inner;
    }
    const bool offsets_fit =
        gep->collectOffset(layout_, bits, variables, constant) &&
        constant.getSExtValue() >= INT32_MIN &&
        constant.getSExtValue() <= INT32_MAX;
    Operand base = OperandFor(gep->getPointerOperand());
    // tile[row][k] in threadgroup memory: base + row*scale goes in a
    // register, k becomes the index; a lone index whose scale the memory
    // operand cannot take (tile[row][3]) goes in the register the same way.
    const auto encodable = [](uint64_t scale) {
      return scale == 1 || scale == 2 || scale == 4 || scale == 8 ||
             scale == 16;
    };
    if (offsets_fit && !isa::IsWideAddressSpace(space) &&
        (variables.size() == 2 ||
         (variables.size() == 1 &&
          !encodable(variables.front().second.getZExtValue())))) {
      const llvm::Value* v0 = variables.front().first;
      if (const auto* ext = llvm::dyn_cast<llvm::CastInst>(v0);
          ext != nullptr && ext->getSrcTy()->isIntegerTy(32) &&
          (ext->getOpcode() == llvm::Instruction::SExt ||
           ext->getOpcode() == llvm::Instruction::ZExt)) {
        v0 = ext->getOperand(0);
      }
      if (v0->getType()->isIntegerTy(32)) {
        const Operand row =
            ScaledInBlock(v0, variables.front().second.getZExtValue());
        if (base.kind == isa::OperandKind::kImmediate) {
          constant += base.imm;
          base = row;
        } else {
          const Operand sum = Operand::Reg(static_cast<int>(NewVReg()));
          Emit(Opcode::kAdd, ScalarType::kUInt, {sum, base, row});
          base = sum;
        }
        variables.erase(variables.begin());
      }
    }
    if (offsets_fit && variables.size() <= 1 &&
        constant.getSExtValue() >= INT32_MIN &&
        constant.getSExtValue() <= INT32_MAX) {
      isa::MemoryRef saved = m;
      bool ok = set_base(base);
      if (ok && variables.size() == 1) {
        llvm::Value* index = variables.front().first;
        const uint64_t scale = variables.front().second.getZExtValue();
        bool is_signed = false;
        if (const auto* ext = llvm::dyn_cast<llvm::CastInst>(index)) {
          if ((ext->getOpcode() == llvm::Instruction::SExt ||
               ext->getOpcode() == llvm::Instruction::ZExt) &&
              ext->getSrcTy()->isIntegerTy(32)) {
            is_signed = ext->getOpcode() == llvm::Instruction::SExt;
            index = ext->getOperand(0);
          }
        }
        Operand io = OperandFor(index);
        if (io.kind == isa::OperandKind::kSpecial) io = SpecialInRegister(io);
        if (index->getType()->isIntegerTy(32) &&
            io.kind == isa::OperandKind::kRegister &&
            (scale == 1 || scale == 2 || scale == 4 || scale == 8 ||
             scale == 16)) {
          m.has_index = true;
          m.index = io.reg;
          m.index_signed = is_signed;
          m.scale = static_cast<uint8_t>(scale);
        } else {
          ok = false;
        }
      }
      if (ok) {
        m.displacement += static_cast<int32_t>(constant.getSExtValue());
        return m;
      }
      m = saved;
    }
  }
  const Operand p = OperandFor(pointer);
  if (!set_base(p)) {
    const Operand r = Materialize(p, Type(pointer));
    set_base(r);
  }
  return m;
}

void Lowering::LowerGep(const llvm::GetElementPtrInst& g) {
  const AddressSpace space = SpaceOfPointer(g.getPointerOperandType());
  const bool wide = isa::IsWideAddressSpace(space);
  const ScalarType t = wide ? ScalarType::kULong : ScalarType::kUInt;
  const unsigned bits = layout_.getIndexSizeInBits(g.getPointerAddressSpace());
  llvm::MapVector<llvm::Value*, llvm::APInt> variables;
  llvm::APInt constant(bits, 0);
  if (!g.collectOffset(layout_, bits, variables, constant)) {
    return Unsupported("the address computation", &g);
  }
  // base + constant + sum(index * scale), each step a fresh register so
  // that unused steps (addresses folded into loads) are dead code; the last
  // step defines the GEP's value.
  Operand current = OperandFor(g.getPointerOperand());
  auto step = [&](Opcode op, Operand a, Operand b, bool last) {
    const Operand d =
        last ? Def(&g) : Operand::Reg(static_cast<int>(NewVReg()));
    Emit(op, t, {d, a, b});
    return d;
  };
  const uint64_t offset =
      wide ? constant.getZExtValue() : (constant.getZExtValue() & 0xffffffffu);
  if (offset != 0 || variables.empty()) {
    current = step(Opcode::kAdd, current, Immediate(offset), variables.empty());
  }
  size_t remaining = variables.size();
  for (auto& [value, scale] : variables) {
    const bool last = --remaining == 0;
    // A 32-bit address from an index widened to 64 bits: the narrow value
    // itself (the truncation would undo the extension).
    const llvm::Value* narrow = value;
    if (const auto* ext = llvm::dyn_cast<llvm::CastInst>(value);
        !wide && ext != nullptr &&
        (ext->getOpcode() == llvm::Instruction::ZExt ||
         ext->getOpcode() == llvm::Instruction::SExt) &&
        ext->getSrcTy()->isIntegerTy(32)) {
      narrow = ext->getOperand(0);
    }
    Operand index = OperandFor(narrow);
    const ScalarType it = Type(narrow, true);
    if (isa::IsWide(t) != isa::IsWide(it)) {
      const Operand converted = Operand::Reg(static_cast<int>(NewVReg()));
      Instruction& c = Emit(
          Opcode::kCvt, isa::IsWide(t) ? ScalarType::kLong : ScalarType::kUInt,
          {converted, index});
      c.type2 = it;
      index = converted;
    }
    const bool zero_base =
        current.kind == isa::OperandKind::kImmediate && current.imm == 0;
    const Operand scaled =
        scale == 1 && !(last && zero_base)
            ? index
            : step(Opcode::kMul, index, Immediate(scale.getZExtValue()),
                   last && zero_base);
    current = zero_base ? scaled : step(Opcode::kAdd, current, scaled, last);
  }
}

}  // namespace mtlemu::air::internal
