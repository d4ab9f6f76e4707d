// Step 2 of the pipeline (pipeline.h): the intrinsics that only carry
// information for optimizers or debuggers (annotations, lifetimes, assume,
// noalias scopes, expect, invariant groups, debug values) are removed; the
// instructions keep their !dbg locations.
#pragma once

#include <llvm/IR/Intrinsics.h>

namespace llvm {
class Module;
}  // namespace llvm

namespace mtlemu::air {

// What stripping does with a call of an intrinsic: keeps it, erases it,
// replaces it with its first operand, or with poison (invariant.start,
// whose token only invariant.end reads).
enum class StripAction { kKeep, kErase, kForwardOperand, kPoison };

StripAction StripActionFor(llvm::Intrinsic::ID id);

// Removes every call whose StripActionFor is not kKeep.
void StripIntrinsics(llvm::Module& module);

}  // namespace mtlemu::air
