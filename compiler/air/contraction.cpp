#include "compiler/air/contraction.h"

#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Intrinsics.h>

#include <vector>

namespace mtlemu::air {
namespace {

// The multiply an add or subtract can absorb: a contractable fmul. Like
// GPU back ends (LLVM's aggressive FMA fusion), a multiply with several
// uses is fused into each add; it stays only for its other uses.
llvm::BinaryOperator* FusableMultiply(llvm::Value* v) {
  auto* mul = llvm::dyn_cast<llvm::BinaryOperator>(v);
  if (mul == nullptr || mul->getOpcode() != llvm::Instruction::FMul ||
      !mul->hasAllowContract()) {
    return nullptr;
  }
  return mul;
}

}  // namespace

bool ContractMultiplyAdds(llvm::Function& function) {
  std::vector<llvm::BinaryOperator*> candidates;
  for (llvm::Instruction& inst : llvm::instructions(function)) {
    auto* op = llvm::dyn_cast<llvm::BinaryOperator>(&inst);
    if (op != nullptr &&
        (op->getOpcode() == llvm::Instruction::FAdd ||
         op->getOpcode() == llvm::Instruction::FSub) &&
        op->hasAllowContract()) {
      candidates.push_back(op);
    }
  }
  bool changed = false;
  for (llvm::BinaryOperator* op : candidates) {
    const bool sub = op->getOpcode() == llvm::Instruction::FSub;
    llvm::Value* lhs = op->getOperand(0);
    llvm::Value* rhs = op->getOperand(1);
    llvm::BinaryOperator* mul = FusableMultiply(lhs);
    bool negate_product = false;
    llvm::Value* addend = rhs;
    if (mul == nullptr) {
      mul = FusableMultiply(rhs);
      addend = lhs;
      negate_product = sub;  // c - a * b
    }
    if (mul == nullptr) continue;
    llvm::IRBuilder<> b(op);
    b.setFastMathFlags(op->getFastMathFlags());
    llvm::Value* a = mul->getOperand(0);
    if (negate_product) a = b.CreateFNeg(a);
    if (sub && !negate_product) addend = b.CreateFNeg(addend);  // a * b - c
    llvm::Value* fma = b.CreateIntrinsic(llvm::Intrinsic::fma, {op->getType()},
                                         {a, mul->getOperand(1), addend});
    fma->takeName(op);
    op->replaceAllUsesWith(fma);
    op->eraseFromParent();
    if (mul->use_empty()) mul->eraseFromParent();
    changed = true;
  }
  return changed;
}

}  // namespace mtlemu::air
