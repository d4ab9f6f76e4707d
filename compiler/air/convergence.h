// Which calls LLVM must keep convergent. C++ for OpenCL marks every
// function and call `convergent`, so LLVM will not hoist, sink, unroll with
// a remainder or duplicate them across control flow. Only what lanes of a
// SIMD group (or a threadgroup) do together needs that: SIMD-group and
// quad-group functions, simdgroup_matrix operations and barriers. A pure
// builtin (sqrt, fma, exp: no memory touched) computes each lane on its own
// and is arithmetic to the optimizers: LICM hoists it out of loops and the
// unroller copies it freely.
#pragma once

#include <llvm/ADT/StringRef.h>

namespace llvm {
class Module;
}  // namespace llvm

namespace mtlemu::air {

// Whether the builtin `name` (air.*) is computed by several lanes together.
bool IsCrossLaneBuiltin(llvm::StringRef name);

// Drops `convergent` from every declaration of `module` that touches no
// memory and is not a cross-lane builtin, and from every call to one.
// Returns whether anything changed.
bool RemoveConvergenceFromPureBuiltins(llvm::Module& module);

}  // namespace mtlemu::air
