// Instruction selection (lowering.h): scalar arithmetic (binary operators,
// compares, casts) and the vector instructions scalarization leaves
// (insertelement, extractelement, shufflevector, vector bitcasts).
#include <llvm/IR/Constants.h>
#include <llvm/IR/InstrTypes.h>
#include <llvm/IR/Instructions.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "compiler/air/lowering.h"

namespace mtlemu::air::internal {

bool Lowering::LowerVectorInstruction(const llvm::Instruction& inst) {
  if (const auto* ie = llvm::dyn_cast<llvm::InsertElementInst>(&inst)) {
    const auto* index = llvm::dyn_cast<llvm::ConstantInt>(ie->getOperand(2));
    if (index == nullptr) {
      Unsupported("insertelement with a variable index", &inst);
      return true;
    }
    const unsigned k = static_cast<unsigned>(index->getZExtValue());
    const llvm::Value* vector = ie->getOperand(0);
    const ScalarType t = ElementType(ie);
    for (unsigned i = 0; i < NumElements(ie); ++i) {
      if (i == k) {
        Emit(Opcode::kMov, t,
             {ElementDef(ie, i), OperandFor(ie->getOperand(1))});
      } else if (!IsUndefElement(vector, i)) {
        Emit(Opcode::kMov, t, {ElementDef(ie, i), ElementOf(vector, i)});
      }
    }
    return true;
  }
  if (const auto* e = llvm::dyn_cast<llvm::ExtractElementInst>(&inst)) {
    const llvm::Value* vector = e->getVectorOperand();
    const auto* arg = llvm::dyn_cast<llvm::Argument>(vector);
    if (arg != nullptr && specials_.count(arg)) return false;
    const auto* index = llvm::dyn_cast<llvm::ConstantInt>(e->getIndexOperand());
    if (index == nullptr) {
      Unsupported("extractelement with a variable index", &inst);
      return true;
    }
    Emit(Opcode::kMov, ElementType(vector),
         {Def(e),
          ElementOf(vector, static_cast<unsigned>(index->getZExtValue()))});
    return true;
  }
  if (const auto* sv = llvm::dyn_cast<llvm::ShuffleVectorInst>(&inst)) {
    const llvm::Value* a = sv->getOperand(0);
    const llvm::Value* b = sv->getOperand(1);
    const int n = static_cast<int>(NumElements(a));
    const ScalarType t = ElementType(sv);
    llvm::SmallVector<int, 16> mask;
    sv->getShuffleMask(mask);
    for (unsigned i = 0; i < mask.size(); ++i) {
      const int m = mask[i];
      if (m < 0) continue;
      const llvm::Value* from = m < n ? a : b;
      const unsigned at = static_cast<unsigned>(m < n ? m : m - n);
      if (IsUndefElement(from, at)) continue;
      Emit(Opcode::kMov, t, {ElementDef(sv, i), ElementOf(from, at)});
    }
    return true;
  }
  if (!IsVector(&inst)) return false;
  if (const auto* s = llvm::dyn_cast<llvm::SelectInst>(&inst)) {
    const llvm::Value* c = s->getCondition();
    const ScalarType t = ElementType(s);
    for (unsigned i = 0; i < NumElements(s); ++i) {
      Emit(Opcode::kSelect, t,
           {ElementDef(s, i), Piece(c, i), ElementOf(s->getTrueValue(), i),
            ElementOf(s->getFalseValue(), i)});
    }
    return true;
  }
  if (const auto* f = llvm::dyn_cast<llvm::FreezeInst>(&inst)) {
    CopyElements(VRegFor(f), f->getOperand(0));
    return true;
  }
  if (const auto* c = llvm::dyn_cast<llvm::CastInst>(&inst);
      c != nullptr && c->getOpcode() == llvm::Instruction::BitCast) {
    LowerVectorBitcast(*c);
    return true;
  }
  // Calls (builtins taking and returning vectors) and phis are lowered
  // where all calls and phis are; anything else with a vector result is
  // left for the generic path to report.
  return false;
}

// A bitcast with a vector on either side: the bits go through 32-bit words
// (or one narrower word when the whole value is narrower), packed from
// elements narrower than a word with and/shl/or and unpacked with shr/and.
void Lowering::LowerVectorBitcast(const llvm::CastInst& c) {
  const llvm::Value* src = c.getOperand(0);
  const unsigned sb = src->getType()->getScalarSizeInBits();
  const unsigned db = c.getType()->getScalarSizeInBits();
  const unsigned ns = IsVector(src) ? NumElements(src) : 1;
  const unsigned nd = IsVector(&c) ? NumElements(&c) : 1;
  if (sb == db) {
    const ScalarType t = IsVector(&c) ? ElementType(&c) : Type(&c);
    for (unsigned i = 0; i < nd; ++i) {
      Emit(Opcode::kMov, t, {PieceDef(&c, i), Piece(src, i)});
    }
    return;
  }
  const unsigned total = sb * ns;
  const unsigned word_bits = std::min(total, 32u);
  if (total % word_bits != 0 || sb > 64 || db > 64 || sb % 8 || db % 8) {
    Unsupported("a bitcast of " + LlvmText(*src->getType()) + " to " +
                    LlvmText(*c.getType()),
                &c);
    return;
  }
  auto mask_of = [](unsigned bits) -> uint64_t {
    return bits >= 32 ? 0xffffffffull : (1ull << bits) - 1;
  };
  auto temp = [this] { return Operand::Reg(static_cast<int>(NewVReg())); };
  // Half `h` (0 low, 1 high) of a 64-bit operand.
  auto half_of = [&](const Operand& o, int h) {
    if (o.kind == isa::OperandKind::kImmediate) {
      return Immediate((o.imm >> (32 * h)) & 0xffffffffull);
    }
    return Part(o.reg, h);
  };
  std::vector<Operand> words(total / word_bits);
  for (unsigned w = 0; w < words.size(); ++w) {
    if (sb == 64) {
      words[w] = half_of(Piece(src, w / 2), static_cast<int>(w % 2));
    } else if (sb == 32) {
      words[w] = Piece(src, w);
    } else {
      const unsigned per_word = word_bits / sb;
      Operand acc;
      uint64_t constant_bits = 0;
      for (unsigned j = 0; j < per_word; ++j) {
        const unsigned e = w * per_word + j;
        if (IsVector(src) && IsUndefElement(src, e)) continue;
        const Operand piece = Piece(src, e);
        if (piece.kind == isa::OperandKind::kImmediate) {
          constant_bits |= (piece.imm & mask_of(sb)) << (j * sb);
          continue;
        }
        const Operand t = temp();
        Emit(Opcode::kAnd, ScalarType::kUInt,
             {t, piece, Immediate(mask_of(sb))});
        if (j > 0) {
          Emit(Opcode::kShl, ScalarType::kUInt, {t, t, Immediate(j * sb)});
        }
        if (acc.kind == isa::OperandKind::kNone) {
          acc = t;
        } else {
          Emit(Opcode::kOr, ScalarType::kUInt, {t, acc, t});
          acc = t;
        }
      }
      if (acc.kind == isa::OperandKind::kNone) {
        acc = Immediate(constant_bits);
      } else if (constant_bits != 0) {
        Emit(Opcode::kOr, ScalarType::kUInt,
             {acc, acc, Immediate(constant_bits)});
      }
      words[w] = acc;
    }
  }
  for (unsigned e = 0; e < nd; ++e) {
    const Operand d = PieceDef(&c, e);
    if (db == 64) {
      Emit(Opcode::kMov, ScalarType::kUInt, {Part(d.reg, 0), words[2 * e]});
      Emit(Opcode::kMov, ScalarType::kUInt, {Part(d.reg, 1), words[2 * e + 1]});
    } else if (db == 32) {
      Emit(Opcode::kMov, ScalarType::kUInt, {d, words[e]});
    } else {
      const unsigned per_word = word_bits / db;
      const Operand word = words[e / per_word];
      const unsigned shift = (e % per_word) * db;
      if (word.kind == isa::OperandKind::kImmediate) {
        Emit(Opcode::kMov, ScalarType::kUInt,
             {d, Immediate((word.imm >> shift) & mask_of(db))});
        continue;
      }
      Operand bits = word;
      if (shift != 0) {
        bits = temp();
        Emit(Opcode::kShr, ScalarType::kUInt, {bits, word, Immediate(shift)});
      }
      Emit(Opcode::kAnd, ScalarType::kUInt, {d, bits, Immediate(mask_of(db))});
    }
  }
}

void Lowering::LowerBinary(const llvm::BinaryOperator& b) {
  using I = llvm::Instruction;
  Opcode op;
  bool is_signed = false;
  switch (b.getOpcode()) {
    case I::Add:
    case I::FAdd:
      op = Opcode::kAdd;
      break;
    case I::Sub:
    case I::FSub:
      op = Opcode::kSub;
      break;
    case I::Mul:
    case I::FMul:
      op = Opcode::kMul;
      break;
    case I::UDiv:
    case I::FDiv:
      op = Opcode::kDiv;
      break;
    case I::SDiv:
      op = Opcode::kDiv;
      is_signed = true;
      break;
    case I::URem:
      op = Opcode::kRem;
      break;
    case I::SRem:
      op = Opcode::kRem;
      is_signed = true;
      break;
    case I::FRem:
      op = Opcode::kFmod;
      break;
    case I::Shl:
      op = Opcode::kShl;
      break;
    case I::LShr:
      op = Opcode::kShr;
      break;
    case I::AShr:
      op = Opcode::kShr;
      is_signed = true;
      break;
    case I::And:
      op = Opcode::kAnd;
      break;
    case I::Or:
      op = Opcode::kOr;
      break;
    case I::Xor:
      op = Opcode::kXor;
      break;
    default:
      return Unsupported("the operator", &b);
  }
  ScalarType t = Type(&b, is_signed);
  // i1 arithmetic other than logic is 1-bit: keep it to and/or/xor.
  Emit(op, t,
       {Def(&b), OperandFor(b.getOperand(0)), OperandFor(b.getOperand(1))});
}

void Lowering::LowerCompare(const llvm::CmpInst& c) {
  using P = llvm::CmpInst::Predicate;
  const llvm::Value* a = c.getOperand(0);
  const llvm::Value* b = c.getOperand(1);
  const Operand d = Def(&c);
  auto emit = [&](Opcode op, ScalarType t, Operand dst) {
    Emit(op, t, {dst, OperandFor(a), OperandFor(b)});
  };
  if (c.isIntPredicate()) {
    const bool s = c.isSigned();
    const ScalarType t = Type(a, s);
    switch (c.getPredicate()) {
      case P::ICMP_EQ:
        return emit(Opcode::kEq, t, d);
      case P::ICMP_NE:
        return emit(Opcode::kNe, t, d);
      case P::ICMP_SLT:
      case P::ICMP_ULT:
        return emit(Opcode::kLt, t, d);
      case P::ICMP_SLE:
      case P::ICMP_ULE:
        return emit(Opcode::kLe, t, d);
      case P::ICMP_SGT:
      case P::ICMP_UGT:
        return emit(Opcode::kGt, t, d);
      case P::ICMP_SGE:
      case P::ICMP_UGE:
        return emit(Opcode::kGe, t, d);
      default:
        return Unsupported("the comparison", &c);
    }
  }
  const ScalarType t = Type(a);
  // Ordered comparisons are the ISA's; an unordered one is the negation of
  // the opposite ordered one.
  auto ordered = [&](P p) -> std::optional<Opcode> {
    switch (p) {
      case P::FCMP_OEQ:
        return Opcode::kEq;
      case P::FCMP_OLT:
        return Opcode::kLt;
      case P::FCMP_OLE:
        return Opcode::kLe;
      case P::FCMP_OGT:
        return Opcode::kGt;
      case P::FCMP_OGE:
        return Opcode::kGe;
      default:
        return std::nullopt;
    }
  };
  const P p = c.getPredicate();
  if (auto op = ordered(p)) return emit(*op, t, d);
  if (p == P::FCMP_UNE) return emit(Opcode::kNe, t, d);
  if (p == P::FCMP_TRUE || p == P::FCMP_FALSE) {
    Emit(Opcode::kMov, ScalarType::kUInt,
         {d, Immediate(p == P::FCMP_TRUE ? 1 : 0)});
    return;
  }
  if (p == P::FCMP_ORD || p == P::FCMP_UNO) {
    const Operand na = Operand::Reg(static_cast<int>(NewVReg()));
    const Operand nb = Operand::Reg(static_cast<int>(NewVReg()));
    Emit(Opcode::kIsNan, t, {na, OperandFor(a)});
    Emit(Opcode::kIsNan, t, {nb, OperandFor(b)});
    if (p == P::FCMP_UNO) {
      Emit(Opcode::kOr, ScalarType::kUInt, {d, na, nb});
    } else {
      const Operand any = Operand::Reg(static_cast<int>(NewVReg()));
      Emit(Opcode::kOr, ScalarType::kUInt, {any, na, nb});
      Emit(Opcode::kXor, ScalarType::kUInt, {d, any, Immediate(1)});
    }
    return;
  }
  if (p == P::FCMP_ONE || p == P::FCMP_UEQ) {
    const Operand lt = Operand::Reg(static_cast<int>(NewVReg()));
    const Operand gt = Operand::Reg(static_cast<int>(NewVReg()));
    emit(Opcode::kLt, t, lt);
    emit(Opcode::kGt, t, gt);
    if (p == P::FCMP_ONE) {
      Emit(Opcode::kOr, ScalarType::kUInt, {d, lt, gt});
    } else {
      const Operand one = Operand::Reg(static_cast<int>(NewVReg()));
      Emit(Opcode::kOr, ScalarType::kUInt, {one, lt, gt});
      Emit(Opcode::kXor, ScalarType::kUInt, {d, one, Immediate(1)});
    }
    return;
  }
  // ULT = !OGE, ULE = !OGT, UGT = !OLE, UGE = !OLT.
  std::optional<Opcode> inverse;
  switch (p) {
    case P::FCMP_ULT:
      inverse = Opcode::kGe;
      break;
    case P::FCMP_ULE:
      inverse = Opcode::kGt;
      break;
    case P::FCMP_UGT:
      inverse = Opcode::kLe;
      break;
    case P::FCMP_UGE:
      inverse = Opcode::kLt;
      break;
    default:
      return Unsupported("the comparison", &c);
  }
  const Operand r = Operand::Reg(static_cast<int>(NewVReg()));
  emit(*inverse, t, r);
  Emit(Opcode::kXor, ScalarType::kUInt, {d, r, Immediate(1)});
}

void Lowering::LowerCast(const llvm::CastInst& c) {
  using I = llvm::Instruction;
  const llvm::Value* src = c.getOperand(0);
  const Operand d = Def(&c);
  const bool from_bool = src->getType()->isIntegerTy(1);
  switch (c.getOpcode()) {
    case I::ZExt:
      if (from_bool && !c.getType()->isIntegerTy(64)) {
        Emit(Opcode::kMov, ScalarType::kUInt, {d, OperandFor(src)});
        return;
      }
      break;
    case I::SExt:
      if (from_bool) {
        const ScalarType t = Type(&c, true);
        Instruction& i = Emit(Opcode::kCvt, t, {d, OperandFor(src)});
        i.type2 = ScalarType::kUInt;
        // 0/1 -> 0/-1
        Emit(Opcode::kNeg, t, {d, d});
        return;
      }
      break;
    case I::Trunc:
      if (c.getType()->isIntegerTy(1)) {
        Emit(Opcode::kAnd, Type(src), {d, OperandFor(src), Immediate(1)});
        return;
      }
      break;
    case I::BitCast:
    case I::PtrToInt:
    case I::IntToPtr:
      if (layout_.getTypeSizeInBits(c.getType()) ==
          layout_.getTypeSizeInBits(src->getType())) {
        Emit(Opcode::kMov, Type(&c), {d, OperandFor(src)});
        return;
      }
      break;
    default:
      break;
  }
  const bool signed_dst =
      c.getOpcode() == I::SExt || c.getOpcode() == I::FPToSI;
  const bool signed_src =
      c.getOpcode() == I::SExt || c.getOpcode() == I::SIToFP;
  const ScalarType to = Type(&c, signed_dst);
  const ScalarType from = Type(src, signed_src);
  switch (c.getOpcode()) {
    case I::ZExt:
    case I::SExt:
    case I::Trunc:
    case I::FPToSI:
    case I::FPToUI:
    case I::SIToFP:
    case I::UIToFP:
    case I::FPExt:
    case I::FPTrunc:
    case I::PtrToInt:
    case I::IntToPtr: {
      Instruction& i = Emit(Opcode::kCvt, to, {d, OperandFor(src)});
      i.type2 = from;
      return;
    }
    default:
      return Unsupported("the conversion", &c);
  }
}

}  // namespace mtlemu::air::internal
