#include "compiler/air/reconvergence.h"

#include <llvm/IR/CFG.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Instructions.h>

#include <set>
#include <vector>

namespace mtlemu::air {
namespace {

// A block whose lanes are finished: straight-line code to a `ret` with no
// convergent operation (SIMD-group function, barrier) on the way, so it does
// not matter which other lanes run it with them.
bool Finishes(const llvm::BasicBlock& block) {
  const llvm::BasicBlock* b = &block;
  for (int steps = 0; steps < 64; ++steps) {
    for (const llvm::Instruction& inst : *b) {
      const auto* call = llvm::dyn_cast<llvm::CallBase>(&inst);
      if (call != nullptr && call->isConvergent()) return false;
    }
    const llvm::Instruction* end = b->getTerminator();
    if (llvm::isa<llvm::ReturnInst>(end)) return true;
    const auto* br = llvm::dyn_cast<llvm::BranchInst>(end);
    if (br == nullptr || br->isConditional()) return false;
    b = br->getSuccessor(0);
  }
  return false;
}

// Immediate post-dominators (index into `blocks`; -1 for none or the exit),
// ignoring edges into finishing blocks if `skip_finishing`.
std::vector<int> PostDominators(
    const std::vector<const llvm::BasicBlock*>& blocks,
    const std::map<const llvm::BasicBlock*, int>& index, bool skip_finishing) {
  // Nodes: the blocks, then a virtual exit every sink leads to.
  const int n = static_cast<int>(blocks.size());
  const int exit = n;
  std::vector<std::vector<int>> successors(n + 1), predecessors(n + 1);
  for (int i = 0; i < n; ++i) {
    for (const llvm::BasicBlock* s : llvm::successors(blocks[i])) {
      if (!skip_finishing || !Finishes(*s)) {
        successors[i].push_back(index.at(s));
      }
    }
    // A return, or a block from which every way on finishes.
    if (successors[i].empty()) successors[i].push_back(exit);
    for (int s : successors[i]) predecessors[s].push_back(i);
  }

  // Dominators of the reversed graph from the exit (Cooper, Harvey and
  // Kennedy's iteration in reverse post-order).
  std::vector<int> order;  // post-order of the reversed graph
  std::vector<int> number(n + 1, -1);
  std::vector<bool> seen(n + 1, false);
  std::vector<std::pair<int, size_t>> stack = {{exit, 0}};
  seen[exit] = true;
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    if (next < predecessors[node].size()) {
      const int p = predecessors[node][next++];
      if (!seen[p]) {
        seen[p] = true;
        stack.push_back({p, 0});
      }
    } else {
      number[node] = static_cast<int>(order.size());
      order.push_back(node);
      stack.pop_back();
    }
  }
  std::vector<int> idom(n + 1, -1);
  idom[exit] = exit;
  auto intersect = [&](int a, int b) {
    while (a != b) {
      while (number[a] < number[b]) a = idom[a];
      while (number[b] < number[a]) b = idom[b];
    }
    return a;
  };
  bool changed = true;
  while (changed) {
    changed = false;
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const int node = *it;
      if (node == exit) continue;
      int d = -1;
      for (int s : successors[node]) {
        if (idom[s] < 0) continue;
        d = d < 0 ? s : intersect(s, d);
      }
      if (d != idom[node]) {
        idom[node] = d;
        changed = true;
      }
    }
  }
  idom.pop_back();
  for (int& d : idom) {
    if (d == exit) d = -1;
  }
  return idom;
}

bool HasBarrier(const llvm::BasicBlock& block) {
  for (const llvm::Instruction& inst : block) {
    const auto* call = llvm::dyn_cast<llvm::CallBase>(&inst);
    const llvm::Function* callee =
        call != nullptr ? call->getCalledFunction() : nullptr;
    if (callee != nullptr && (callee->getName() == "air.threadgroup_barrier" ||
                              callee->getName() == "air.simdgroup_barrier")) {
      return true;
    }
  }
  return false;
}

// Whether the branch's lanes would pass a barrier apart if the finishing
// paths were left out: one successor finishes, and the other reaches that
// same block (a shared tail, not an early return) through a barrier.
bool SkipsABarrierToASharedTail(const llvm::BasicBlock* branch) {
  for (const llvm::BasicBlock* tail : llvm::successors(branch)) {
    if (!Finishes(*tail)) continue;
    for (const llvm::BasicBlock* other : llvm::successors(branch)) {
      if (other == tail) continue;
      // The blocks from `other` up to `tail`: a barrier among them, and
      // `tail` reached.
      std::vector<const llvm::BasicBlock*> work = {other};
      std::set<const llvm::BasicBlock*> seen;
      bool barrier = false, reaches = false;
      while (!work.empty()) {
        const llvm::BasicBlock* b = work.back();
        work.pop_back();
        if (b == tail) {
          reaches = true;
          continue;
        }
        if (!seen.insert(b).second) continue;
        barrier = barrier || HasBarrier(*b);
        for (const llvm::BasicBlock* s : llvm::successors(b)) {
          work.push_back(s);
        }
      }
      if (barrier && reaches) return true;
    }
  }
  return false;
}

}  // namespace

std::map<const llvm::BasicBlock*, const llvm::BasicBlock*> ReconvergencePoints(
    const llvm::Function& function) {
  std::vector<const llvm::BasicBlock*> blocks;
  std::map<const llvm::BasicBlock*, int> index;
  for (const llvm::BasicBlock& b : function) {
    index[&b] = static_cast<int>(blocks.size());
    blocks.push_back(&b);
  }
  const std::vector<int> plain = PostDominators(blocks, index, false);
  const std::vector<int> tight = PostDominators(blocks, index, true);
  std::map<const llvm::BasicBlock*, const llvm::BasicBlock*> out;
  for (size_t i = 0; i < blocks.size(); ++i) {
    const auto* br =
        llvm::dyn_cast<llvm::BranchInst>(blocks[i]->getTerminator());
    if (br == nullptr || !br->isConditional()) continue;
    // Without the finishing paths the lanes may meet earlier; where they do
    // not meet at all that way, the plain post-dominator (nullptr: the
    // kernel's exit).
    int join = tight[i] >= 0 ? tight[i] : plain[i];
    // But `if (l < 40) threadgroup_barrier(...);` before a tail all lanes
    // run: the tail finishes, and without it the lanes that skip the
    // barrier would leave before it. They wait at the plain post-dominator,
    // and the barrier is seen to be divergent. (An early return is not a
    // shared tail: those lanes finish without meeting the others.)
    if (join != plain[i] && SkipsABarrierToASharedTail(blocks[i])) {
      join = plain[i];
    }
    out[blocks[i]] = join >= 0 ? blocks[join] : nullptr;
  }
  return out;
}

}  // namespace mtlemu::air
