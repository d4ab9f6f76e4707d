#include "compiler/air/memory_facts.h"

#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/Argument.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Metadata.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/ModRef.h>

#include "compiler/air/address_spaces.h"
#include "compiler/msl/frontend.h"

namespace mtlemu::air {

void DescribeBuiltinMemoryEffects(llvm::Module& module) {
  for (llvm::Function& f : module) {
    if (!f.isDeclaration()) continue;
    if (f.getName().startswith("air.simdgroup_load.")) {
      f.setMemoryEffects(
          llvm::MemoryEffects::argMemOnly(llvm::ModRefInfo::Ref));
    } else if (f.getName().startswith("air.simdgroup_store.")) {
      f.setMemoryEffects(
          llvm::MemoryEffects::argMemOnly(llvm::ModRefInfo::Mod));
    } else {
      continue;
    }
    f.setDoesNotThrow();
    f.setWillReturn();
  }
}

namespace {

// Program-scope constants live in the constant address space; constant
// buffers are device pointers whose kernel argument the front end tagged.
bool InConstantMemory(const llvm::Value* pointer) {
  if (pointer->getType()->getPointerAddressSpace() == kConstantAddressSpace) {
    return true;
  }
  const auto* argument = llvm::dyn_cast<llvm::Argument>(
      llvm::getUnderlyingObject(pointer, /*MaxLookup=*/0));
  return argument != nullptr &&
         argument->getParent()->getAttributes().hasParamAttr(
             argument->getArgNo(), msl::kConstantBufferAttribute);
}

}  // namespace

llvm::PreservedAnalyses MarkConstantLoadsInvariantPass::run(
    llvm::Function& function, llvm::FunctionAnalysisManager&) {
  bool changed = false;
  llvm::MDNode* empty = llvm::MDNode::get(function.getContext(), {});
  for (llvm::Instruction& inst : llvm::instructions(function)) {
    auto* load = llvm::dyn_cast<llvm::LoadInst>(&inst);
    if (load == nullptr || !load->isUnordered() ||
        load->hasMetadata(llvm::LLVMContext::MD_invariant_load) ||
        !InConstantMemory(load->getPointerOperand())) {
      continue;
    }
    load->setMetadata(llvm::LLVMContext::MD_invariant_load, empty);
    changed = true;
  }
  if (!changed) return llvm::PreservedAnalyses::all();
  // Metadata only: the CFG and every analysis but memory's stay valid.
  llvm::PreservedAnalyses kept;
  kept.preserveSet<llvm::CFGAnalyses>();
  return kept;
}

}  // namespace mtlemu::air
