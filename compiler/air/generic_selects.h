// Accesses through a choice between pointers of two address spaces.
//
// `c ? input[i] : init` on a class type, with `input` a device pointer and
// `init` a thread value (MLX's scans and reductions read their inputs so),
// is a conditional lvalue in clang: both operands become generic pointers,
// one is chosen, and the copy reads through it. InferAddressSpaces cannot
// give the chosen pointer one address space, and the ISA has no generic
// access. Metal's compiler reads the value the condition picks; so does
// this pass: a load or store through `select c, (cast a), (cast b)` becomes
// a branch, with an access to `a` on one side and to `b` on the other (only
// the side the condition picks runs: the other pointer may be out of
// bounds). Address arithmetic on the choice is moved onto both sides first.
#pragma once

#include <llvm/IR/PassManager.h>

namespace llvm {
class Function;
}  // namespace llvm

namespace mtlemu::air {

// Returns whether anything changed.
bool SplitGenericSelectAccesses(llvm::Function& function);

struct SplitGenericSelectAccessesPass
    : llvm::PassInfoMixin<SplitGenericSelectAccessesPass> {
  llvm::PreservedAnalyses run(llvm::Function& function,
                              llvm::FunctionAnalysisManager& analyses);
};

}  // namespace mtlemu::air
