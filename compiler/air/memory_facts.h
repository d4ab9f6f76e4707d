// What the LLVM optimizers may assume about Metal memory that the IR does
// not say by itself, so that GVN and LICM keep loads out of loops:
// - a buffer in the constant address space does not change during a
//   dispatch (Metal: constant memory is read-only), so its loads are
//   invariant and move across any call or store;
// - simdgroup_load reads and simdgroup_store writes only the memory their
//   pointer argument reaches. They stay convergent: LLVM still does not move
//   them across control flow.
#pragma once

#include <llvm/IR/PassManager.h>

namespace llvm {
class Function;
class Module;
}  // namespace llvm

namespace mtlemu::air {

// Gives the air.simdgroup_load.* and air.simdgroup_store.* declarations of
// `module` their memory effects.
void DescribeBuiltinMemoryEffects(llvm::Module& module);

// Tags every load from constant memory with !invariant.load: loads from
// the constant address space (program-scope constants) and from a kernel
// argument that carries msl::kConstantBufferAttribute (constant buffers).
// Run after InferAddressSpaces, which turns generic loads into constant
// ones.
struct MarkConstantLoadsInvariantPass
    : llvm::PassInfoMixin<MarkConstantLoadsInvariantPass> {
  llvm::PreservedAnalyses run(llvm::Function& function,
                              llvm::FunctionAnalysisManager& analyses);
};

}  // namespace mtlemu::air
