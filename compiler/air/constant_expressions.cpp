// Constant expressions expanded into instructions, but folded addresses.
#include "compiler/air/constant_expressions.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instruction.h>
#include <llvm/IR/Operator.h>
#include <llvm/IR/ReplaceConstant.h>

#include <utility>
#include <vector>

#include "compiler/air/address_spaces.h"

namespace mtlemu::air {
namespace {

bool IsFoldedAddress(const llvm::ConstantExpr& e) {
  const auto* gep = llvm::dyn_cast<llvm::GEPOperator>(&e);
  if (gep == nullptr || !gep->hasAllConstantIndices()) return false;
  const auto* g =
      llvm::dyn_cast<llvm::GlobalVariable>(gep->getPointerOperand());
  return g != nullptr && g->getAddressSpace() == kThreadgroupAddressSpace;
}

}  // namespace

void ExpandConstantExpressions(llvm::Function& function) {
  // Each round turns the outermost expressions into instructions, whose
  // operands the next round looks at.
  std::vector<std::pair<llvm::Instruction*, llvm::ConstantExpr*>> found;
  int rounds = 0;
  do {
    found.clear();
    for (llvm::Instruction& inst : llvm::instructions(function)) {
      for (llvm::Value* operand : inst.operands()) {
        auto* e = llvm::dyn_cast<llvm::ConstantExpr>(operand);
        if (e != nullptr && !IsFoldedAddress(*e)) found.push_back({&inst, e});
      }
    }
    for (auto [inst, e] : found) {
      llvm::convertConstantExprsToInstructions(inst, e);
    }
  } while (!found.empty() && ++rounds < 64);
}

}  // namespace mtlemu::air
