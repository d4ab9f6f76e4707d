// The LLVM IR pipeline between the MSL front end and the AIR back end: it
// takes the module msl::CompileMsl produced (spir64 address spaces: 0
// private, 1 device, 2 constant, 3 threadgroup, 4 generic) and leaves only
// what the back end lowers to mtlemu's ISA:
//
//   1. only the kernels asked for and what they use (the rest is deleted
//      before anything is optimized, so a file of hundreds of kernels costs
//      only the kernels compiled);
//   2. no annotation, lifetime, assume, noalias-scope, expect or debug
//      intrinsics (the instructions keep their !dbg locations);
//   3. every helper inlined, then SROA, mem2reg, instcombine, simplifycfg,
//      GVN, loop rotation, LICM, full unrolling of loops with a small
//      constant trip count (and as #pragma unroll / unroll N / nounroll
//      ask), SROA, GVN, LICM, partial and runtime unrolling of the rest
//      (target_info.h's thresholds), instcombine, simplifycfg, ADCE, with
//      no library function known and no vectorizer (the SIMD group is the
//      vector); pure builtins are not convergent (convergence.h); loop
//      strength reduction comes last, after step 6's scalarization;
//   4. no generic pointers where the address space can be inferred;
//   5. no llvm.memcpy / memmove / memset: copies become loads and stores of
//      up to 32 bits (straight-line up to 64 accesses for a constant size,
//      a loop beyond; a byte loop for a size known only at run time);
//   6. no switch: only br; no constant expression but a constant offset
//      into a threadgroup variable (the rest become instructions);
//   7. a module that passes llvm::verifyModule.
//
// What is left that the back end should refuse (a call to an undefined
// function, a dynamic alloca, ...) is listed by UnexpectedConstructs
// (ir_legality.h); the back end reports those with the kernel's name.
// Private arrays indexed by a runtime value stay as allocas: they go to
// thread memory.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"

namespace llvm {
class Module;
}  // namespace llvm

namespace mtlemu::air {

// Prepares `module` for the back end, keeping the kernels whose LLVM
// function names (KernelDeclaration::ir_name) are given; every other
// function and unused global is deleted. Fails if a name is not a function
// defined in the module, or if the result does not verify (the message is
// the verifier's); the message is also stored in *error when `error` is not
// null. On failure the module may be half transformed.
Status PrepareModule(llvm::Module& module,
                     const std::vector<std::string>& kernel_ir_names,
                     std::string* error = nullptr);

}  // namespace mtlemu::air
