// Where instruction selection's phi copies run (lower_kernel.h: a phi's
// incoming value is copied where the predecessor branches), shaped in the
// IR as the last step of the pipeline (pipeline.h): critical edges into
// phis get a block of their own, so that a loop's value used after the loop
// is copied once; a vector rebuilt lane by lane from phis becomes a vector
// phi again, so that a loop carries a register block instead of copying
// its elements in and out.
#pragma once

namespace llvm {
class Function;
}  // namespace llvm

namespace mtlemu::air {

// Splits the critical edges into blocks with phis, except back edges (the
// loop's own phis are copied each iteration anyway, and a block there would
// add a branch per iteration). Each new block is laid out after its
// predecessor.
void SplitCriticalEdgesIntoPhis(llvm::Function& function);

// After scalarization: when every predecessor gives the lanes of one vector
// (or constants). Returns whether anything changed.
bool RevectorizePhis(llvm::Function& function);

}  // namespace mtlemu::air
