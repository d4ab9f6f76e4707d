// The IR legality check: what a module prepared by the pipeline
// (pipeline.h) still holds that the back end does not lower. The back end
// reports those findings with the kernel's name.
#pragma once

#include <string>
#include <vector>

namespace llvm {
class Module;
}  // namespace llvm

namespace mtlemu::air {

// What a prepared module still holds that the back end does not expect, one
// line per finding: "FUNCTION: WHAT: INSTRUCTION" (or "@GLOBAL: WHAT"):
// allocas of dynamic size or outside the entry block, calls to functions
// that are neither intrinsics nor air.* builtins, indirect calls, invoke and
// other exception or indirect-branch instructions, switch, memory
// intrinsics and the intrinsics step 2 strips, generic (addrspace 4)
// pointers, vectors of more than 4 elements, integers wider than 64 bits,
// double and other unsupported floating-point types, and global variables
// outside the constant and threadgroup address spaces. Empty when the
// module is fine.
std::vector<std::string> UnexpectedConstructs(const llvm::Module& module);

// The integer widths the back end has registers for: 1, 8, 16, 32, 64.
bool IsRegisterIntegerWidth(unsigned bits);

}  // namespace mtlemu::air
