#include "compiler/air/generic_selects.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Operator.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>

#include <vector>

#include "compiler/air/address_spaces.h"

namespace mtlemu::air {
namespace {

// `v` when it is an address-space cast to generic of a pointer in one
// address space (instruction or constant expression): that pointer.
llvm::Value* CastSource(llvm::Value* v) {
  auto* cast = llvm::dyn_cast<llvm::AddrSpaceCastOperator>(v);
  if (cast == nullptr) return nullptr;
  if (cast->getDestAddressSpace() != kGenericAddressSpace) return nullptr;
  if (cast->getSrcAddressSpace() == kGenericAddressSpace) return nullptr;
  return cast->getPointerOperand();
}

bool IsSplittable(llvm::SelectInst* select) {
  auto* type = llvm::dyn_cast<llvm::PointerType>(select->getType());
  return type != nullptr && type->getAddressSpace() == kGenericAddressSpace &&
         CastSource(select->getTrueValue()) != nullptr &&
         CastSource(select->getFalseValue()) != nullptr;
}

llvm::Value* ToGeneric(llvm::IRBuilder<>& b, llvm::Value* pointer) {
  return b.CreateAddrSpaceCast(
      pointer, llvm::PointerType::get(b.getContext(), kGenericAddressSpace));
}

// gep(select c, cast a, cast b) -> select c, cast(gep a), cast(gep b).
llvm::SelectInst* MoveGepOntoSides(llvm::SelectInst* select,
                                   llvm::GetElementPtrInst* gep) {
  llvm::IRBuilder<> b(gep);
  std::vector<llvm::Value*> indices(gep->idx_begin(), gep->idx_end());
  llvm::Value* sides[2];
  llvm::Value* sources[2] = {CastSource(select->getTrueValue()),
                             CastSource(select->getFalseValue())};
  for (int i = 0; i < 2; ++i) {
    llvm::Value* moved = b.CreateGEP(gep->getSourceElementType(), sources[i],
                                     indices, "", gep->isInBounds());
    sides[i] = ToGeneric(b, moved);
  }
  auto* chosen = llvm::cast<llvm::SelectInst>(
      b.CreateSelect(select->getCondition(), sides[0], sides[1]));
  chosen->takeName(gep);
  gep->replaceAllUsesWith(chosen);
  gep->eraseFromParent();
  return chosen;
}

// A load or store through the choice: a branch on the condition, the
// access on each side to that side's own pointer.
void SplitAccess(llvm::SelectInst* select, llvm::Instruction* access) {
  llvm::Instruction* then_end = nullptr;
  llvm::Instruction* else_end = nullptr;
  llvm::SplitBlockAndInsertIfThenElse(select->getCondition(), access, &then_end,
                                      &else_end);
  llvm::Value* sources[2] = {CastSource(select->getTrueValue()),
                             CastSource(select->getFalseValue())};
  llvm::Instruction* ends[2] = {then_end, else_end};
  if (auto* load = llvm::dyn_cast<llvm::LoadInst>(access)) {
    llvm::PHINode* phi = llvm::PHINode::Create(load->getType(), 2, "", load);
    for (int i = 0; i < 2; ++i) {
      auto* side =
          new llvm::LoadInst(load->getType(), sources[i], "",
                             load->isVolatile(), load->getAlign(), ends[i]);
      side->setDebugLoc(load->getDebugLoc());
      phi->addIncoming(side, ends[i]->getParent());
    }
    phi->takeName(load);
    load->replaceAllUsesWith(phi);
    load->eraseFromParent();
    return;
  }
  auto* store = llvm::cast<llvm::StoreInst>(access);
  for (int i = 0; i < 2; ++i) {
    auto* side =
        new llvm::StoreInst(store->getValueOperand(), sources[i],
                            store->isVolatile(), store->getAlign(), ends[i]);
    side->setDebugLoc(store->getDebugLoc());
  }
  store->eraseFromParent();
}

}  // namespace

bool SplitGenericSelectAccesses(llvm::Function& function) {
  std::vector<llvm::SelectInst*> work;
  for (llvm::BasicBlock& block : function) {
    for (llvm::Instruction& i : block) {
      auto* select = llvm::dyn_cast<llvm::SelectInst>(&i);
      if (select != nullptr && IsSplittable(select)) work.push_back(select);
    }
  }
  bool changed = false;
  while (!work.empty()) {
    llvm::SelectInst* select = work.back();
    work.pop_back();
    std::vector<llvm::User*> users(select->user_begin(), select->user_end());
    for (llvm::User* user : users) {
      if (auto* gep = llvm::dyn_cast<llvm::GetElementPtrInst>(user);
          gep != nullptr && gep->getPointerOperand() == select) {
        work.push_back(MoveGepOntoSides(select, gep));
        changed = true;
      } else if (auto* load = llvm::dyn_cast<llvm::LoadInst>(user);
                 load != nullptr && !load->isAtomic()) {
        SplitAccess(select, load);
        changed = true;
      } else if (auto* store = llvm::dyn_cast<llvm::StoreInst>(user);
                 store != nullptr && !store->isAtomic() &&
                 store->getPointerOperand() == select &&
                 store->getValueOperand() != select) {
        SplitAccess(select, store);
        changed = true;
      }
    }
    // Any other use (a call, a comparison) keeps the choice; the back end
    // reports the generic pointer, by name.
    if (select->use_empty()) select->eraseFromParent();
  }
  return changed;
}

llvm::PreservedAnalyses SplitGenericSelectAccessesPass::run(
    llvm::Function& function, llvm::FunctionAnalysisManager&) {
  return SplitGenericSelectAccesses(function) ? llvm::PreservedAnalyses::none()
                                              : llvm::PreservedAnalyses::all();
}

}  // namespace mtlemu::air
