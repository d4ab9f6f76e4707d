// Step 6 of the pipeline (pipeline.h), second part: constant expressions
// become instructions, except a constant offset into a threadgroup
// variable, which instruction selection folds into an address. The others
// are address arithmetic the optimizers folded into constants:
// `atomic_bool` in threadgroup memory, for one, rounds its variable's
// address down to a word with ptrtoint, and, inttoptr.
#pragma once

namespace llvm {
class Function;
}  // namespace llvm

namespace mtlemu::air {

void ExpandConstantExpressions(llvm::Function& function);

}  // namespace mtlemu::air
