// Pure builtins that are LLVM intrinsics with the same meaning (air.fma,
// sqrt, fabs, floor, ceil, trunc, rint, copysign on f32 and f16) become the
// intrinsics: the optimizers know what they cost (a loop of fma calls is
// unrolled like a loop of a * b + c) and fold them. Instruction selection
// maps both spellings to the same opcode.
#pragma once

namespace llvm {
class Module;
}  // namespace llvm

namespace mtlemu::air {

// Replaces every call of such a builtin in `module` with the intrinsic,
// keeping its name, debug location and fast-math flags.
void UseIntrinsicsForPureBuiltins(llvm::Module& module);

}  // namespace mtlemu::air
