// Instruction selection: one prepared LLVM kernel (see pipeline.h) becomes
// an ISA kernel. Values get virtual registers, kernel parameters become
// uniforms (buffers, threadgroup blocks) or special registers (Metal's
// thread-position inputs), phis become copies, conditional branches carry
// their immediate post-dominator as reconvergence point, and every
// instruction keeps its source line. Registers are then allocated.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "compiler/msl/frontend.h"
#include "isa/module.h"

namespace llvm {
class Function;
}  // namespace llvm

namespace mtlemu::air {

// Source locations name files of `files` (the module's file table): file 0
// is the module's main source (the LLVM module's source file name); other
// files the kernel's code comes from (user headers) are appended.
// Constructs with no lowering give "unsupported: ..." naming the kernel and
// the construct, never a wrong kernel.
Result<isa::Kernel> LowerKernel(const llvm::Function& function,
                                const msl::KernelDeclaration& declaration,
                                std::vector<std::string>& files);

}  // namespace mtlemu::air
