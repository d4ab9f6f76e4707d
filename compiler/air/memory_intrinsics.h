// Step 5 of the pipeline (pipeline.h): llvm.memcpy, memmove and memset
// become loads and stores of up to 32 bits, the register size.
// Straight-line code for a constant size up to 64 accesses, a loop beyond;
// a byte loop (LLVM's expansion) for a size known only at run time.
#pragma once

namespace llvm {
class Function;
class TargetTransformInfo;
}  // namespace llvm

namespace mtlemu::air {

// Lowers every memory intrinsic in `function`. Returns whether anything was
// lowered.
bool LowerMemIntrinsics(llvm::Function& function,
                        const llvm::TargetTransformInfo& tti);

}  // namespace mtlemu::air
