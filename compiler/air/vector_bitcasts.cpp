#include "compiler/air/vector_bitcasts.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>

#include <vector>

namespace mtlemu::air {

bool ReadNarrowElementsThroughWideOnes(llvm::Function& function) {
  std::vector<llvm::ExtractElementInst*> reads;
  for (llvm::Instruction& i : llvm::instructions(function)) {
    auto* read = llvm::dyn_cast<llvm::ExtractElementInst>(&i);
    if (read == nullptr) continue;
    auto* cast = llvm::dyn_cast<llvm::BitCastInst>(read->getVectorOperand());
    if (cast == nullptr ||
        !llvm::isa<llvm::ConstantInt>(read->getIndexOperand())) {
      continue;
    }
    auto* from = llvm::dyn_cast<llvm::FixedVectorType>(cast->getSrcTy());
    auto* to = llvm::dyn_cast<llvm::FixedVectorType>(cast->getDestTy());
    if (from == nullptr || to == nullptr ||
        !from->getElementType()->isIntegerTy() ||
        !to->getElementType()->isIntegerTy()) {
      continue;
    }
    const unsigned wide = from->getScalarSizeInBits();
    const unsigned narrow = to->getScalarSizeInBits();
    if (narrow >= wide || wide % narrow != 0) continue;
    reads.push_back(read);
  }
  for (llvm::ExtractElementInst* read : reads) {
    auto* cast = llvm::cast<llvm::BitCastInst>(read->getVectorOperand());
    const unsigned wide = cast->getSrcTy()->getScalarSizeInBits();
    const unsigned narrow = cast->getDestTy()->getScalarSizeInBits();
    const uint64_t index =
        llvm::cast<llvm::ConstantInt>(read->getIndexOperand())->getZExtValue();
    const uint64_t bit = index * narrow;
    llvm::IRBuilder<> b(read);
    llvm::Value* element =
        b.CreateExtractElement(cast->getOperand(0), bit / wide);
    if (bit % wide != 0) element = b.CreateLShr(element, bit % wide);
    llvm::Value* value = b.CreateTrunc(element, read->getType());
    value->takeName(read);
    read->replaceAllUsesWith(value);
    read->eraseFromParent();
    if (cast->use_empty()) cast->eraseFromParent();
  }
  return !reads.empty();
}

}  // namespace mtlemu::air
