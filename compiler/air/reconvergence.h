// Where the lanes of a SIMD group meet again after a divergent branch.
//
// The immediate post-dominator is the classic answer, but an early `return`
// spoils it: a loop with a `break` and a `return` (or a loop whose first test
// loop rotation moved in front of it) post-dominates only at the kernel's
// exit, so lanes that break out in different iterations would each run the
// code after the loop on their own, SIMD functions included. Metal meets
// them where the loop is left. So post-dominators are computed on the CFG
// without edges into blocks that finish a lane (straight-line code to a
// `ret` with no SIMD-group function or barrier): a lane that takes one waits
// for nobody and nobody needs it, and every other lane still reaches the
// meeting point or finishes. Where that graph gives no meeting point (every
// way on finishes), the plain post-dominator is used; so it is where one
// way skips a barrier that the other passes on its way into the same
// finishing block (`if (l < 40) threadgroup_barrier(...); out[l] = l;`):
// there the lanes must meet, so that the barrier is seen to be divergent.
#pragma once

#include <map>

namespace llvm {
class BasicBlock;
class Function;
}  // namespace llvm

namespace mtlemu::air {

// For every block ending in a conditional branch: the block where its lanes
// reconverge, or nullptr for the kernel's exit.
std::map<const llvm::BasicBlock*, const llvm::BasicBlock*> ReconvergencePoints(
    const llvm::Function& function);

}  // namespace mtlemu::air
