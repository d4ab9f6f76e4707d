#include "compiler/air/convergence.h"

#include <llvm/IR/Attributes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/InstrTypes.h>
#include <llvm/IR/Module.h>

#include <algorithm>
#include <iterator>

namespace mtlemu::air {

bool IsCrossLaneBuiltin(llvm::StringRef name) {
  // msl/BUILTINS.md: simd_* and quad_* (shuffles, reductions, ballots,
  // broadcasts), simdgroup_* (matrices, simdgroup_barrier),
  // threadgroup_barrier.
  static constexpr llvm::StringLiteral kCrossLane[] = {
      "air.simd_", "air.quad_", "air.simdgroup_", "air.threadgroup_barrier"};
  return std::any_of(
      std::begin(kCrossLane), std::end(kCrossLane),
      [&](llvm::StringRef prefix) { return name.startswith(prefix); });
}

bool RemoveConvergenceFromPureBuiltins(llvm::Module& module) {
  bool changed = false;
  for (llvm::Function& f : module) {
    if (!f.isDeclaration() || !f.doesNotAccessMemory() ||
        IsCrossLaneBuiltin(f.getName())) {
      continue;
    }
    if (f.isConvergent()) {
      f.removeFnAttr(llvm::Attribute::Convergent);
      changed = true;
    }
    for (llvm::User* u : f.users()) {
      auto* call = llvm::dyn_cast<llvm::CallBase>(u);
      if (call != nullptr && call->getCalledFunction() == &f &&
          call->isConvergent()) {
        call->removeFnAttr(llvm::Attribute::Convergent);
        changed = true;
      }
    }
  }
  return changed;
}

}  // namespace mtlemu::air
