// Element reads through a bitcast between integer vectors.
//
// InstCombine turns `trunc (extractelement <3 x i32> %v, 2) to i16` into
// `extractelement (bitcast %v to <6 x i16>), 4`: a vector the back end does
// not have (at most 4 elements, and after scalarization none at all). Where
// %v cannot be split (a kernel's uint3 argument), the bitcast stays. This
// turns each such read back into the read of the wide element, a shift and
// a truncation (little-endian, as the GPU is).
#pragma once

namespace llvm {
class Function;
}  // namespace llvm

namespace mtlemu::air {

// Returns whether anything changed.
bool ReadNarrowElementsThroughWideOnes(llvm::Function& function);

}  // namespace mtlemu::air
