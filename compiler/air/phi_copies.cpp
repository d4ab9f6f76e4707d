// Critical edges into phis split, and vector phis rebuilt from lanes.
#include "compiler/air/phi_copies.h"

#include <llvm/Analysis/CFG.h>
#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>

#include <algorithm>
#include <utility>
#include <vector>

namespace mtlemu::air {

// Instruction selection writes a phi's incoming value where the predecessor
// branches. On a critical edge (a predecessor with two successors into a
// block with two predecessors) that copy would run on the other path too:
// a loop's value used after the loop would be copied on every iteration.
// Such edges get a block of their own, laid out after the predecessor,
// except back edges (the loop's own phis are copied each iteration anyway,
// and a block there would add a branch per iteration).
void SplitCriticalEdgesIntoPhis(llvm::Function& function) {
  const llvm::DominatorTree dominators(function);
  std::vector<std::pair<llvm::Instruction*, unsigned>> edges;
  for (llvm::BasicBlock& block : function) {
    llvm::Instruction* branch = block.getTerminator();
    for (unsigned i = 0; i < branch->getNumSuccessors(); ++i) {
      llvm::BasicBlock* to = branch->getSuccessor(i);
      if (!to->phis().empty() && !dominators.dominates(to, &block) &&
          llvm::isCriticalEdge(branch, i)) {
        edges.emplace_back(branch, i);
      }
    }
  }
  for (const auto& [branch, i] : edges) {
    llvm::SplitCriticalEdge(branch, i);
  }
}

// After scalarization: a vector rebuilt lane by lane from phis of one block
// (a simdgroup_matrix accumulator carried around a loop: scalarized into a
// phi per element, then put back together for the next multiply) becomes a
// vector phi again, when every predecessor gives the lanes of one vector (or
// constants). Instruction selection keeps a vector in a register block, so
// the loop carries the block instead of copying elements in and out.
bool RevectorizePhis(llvm::Function& function) {
  bool changed = false;
  std::vector<llvm::InsertElementInst*> builds;
  for (llvm::Instruction& inst : llvm::instructions(function)) {
    auto* ie = llvm::dyn_cast<llvm::InsertElementInst>(&inst);
    if (ie == nullptr) continue;
    // The last insert of a chain.
    bool last = true;
    for (llvm::User* u : ie->users()) {
      if (llvm::isa<llvm::InsertElementInst>(u) && u->getOperand(0) == ie) {
        last = false;
      }
    }
    if (last) builds.push_back(ie);
  }
  for (llvm::InsertElementInst* ie : builds) {
    auto* type = llvm::dyn_cast<llvm::FixedVectorType>(ie->getType());
    if (type == nullptr) continue;
    const unsigned n = type->getNumElements();
    std::vector<llvm::PHINode*> lanes(n, nullptr);
    llvm::Value* v = ie;
    while (auto* step = llvm::dyn_cast<llvm::InsertElementInst>(v)) {
      auto* index = llvm::dyn_cast<llvm::ConstantInt>(step->getOperand(2));
      auto* phi = llvm::dyn_cast<llvm::PHINode>(step->getOperand(1));
      if (index == nullptr || phi == nullptr || index->getZExtValue() >= n) {
        v = nullptr;
        break;
      }
      if (lanes[index->getZExtValue()] == nullptr) {
        lanes[index->getZExtValue()] = phi;
      }
      v = step->getOperand(0);
    }
    if (v == nullptr || !llvm::isa<llvm::UndefValue>(v)) continue;
    llvm::BasicBlock* block = lanes[0] ? lanes[0]->getParent() : nullptr;
    if (block == nullptr ||
        std::any_of(lanes.begin(), lanes.end(), [&](llvm::PHINode* p) {
          return p == nullptr || p->getParent() != block;
        })) {
      continue;
    }
    // Per predecessor: one vector whose lanes these are, or constants.
    std::vector<std::pair<llvm::BasicBlock*, llvm::Value*>> incoming;
    bool ok = true;
    for (unsigned k = 0; ok && k < lanes[0]->getNumIncomingValues(); ++k) {
      llvm::BasicBlock* from = lanes[0]->getIncomingBlock(k);
      llvm::Value* source = nullptr;
      std::vector<llvm::Constant*> constants;
      for (unsigned lane = 0; ok && lane < n; ++lane) {
        llvm::Value* in = lanes[lane]->getIncomingValueForBlock(from);
        if (auto* c = llvm::dyn_cast<llvm::Constant>(in)) {
          constants.push_back(c);
          continue;
        }
        auto* ee = llvm::dyn_cast<llvm::ExtractElementInst>(in);
        auto* index =
            ee ? llvm::dyn_cast<llvm::ConstantInt>(ee->getIndexOperand())
               : nullptr;
        if (index == nullptr || index->getZExtValue() != lane ||
            ee->getVectorOperand()->getType() != type ||
            (source != nullptr && source != ee->getVectorOperand())) {
          ok = false;
          break;
        }
        source = ee->getVectorOperand();
      }
      if (!ok) break;
      if (source != nullptr && !constants.empty()) ok = false;
      if (source == nullptr) source = llvm::ConstantVector::get(constants);
      incoming.push_back({from, source});
    }
    if (!ok) continue;
    llvm::PHINode* vector_phi = llvm::PHINode::Create(
        type, static_cast<unsigned>(incoming.size()), "", &block->front());
    for (auto [from, source] : incoming) vector_phi->addIncoming(source, from);
    vector_phi->setDebugLoc(lanes[0]->getDebugLoc());
    ie->replaceAllUsesWith(vector_phi);
    changed = true;
  }
  return changed;
}

}  // namespace mtlemu::air
