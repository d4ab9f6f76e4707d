// Program-scope constant tables that the code reaches only through casts to
// the device address space move there, read-only (where the shims'
// `constant` data lives too). Clang makes such a table from a constexpr
// static member array (`wt_transform.const`, MLX's Winograd transforms) in
// OpenCL's __constant and casts it where it is read as `constant T*`.
#pragma once

namespace llvm {
class Module;
}  // namespace llvm

namespace mtlemu::air {

// Moves each such table of `module` to a read-only global in the device
// address space ("NAME.device") and drops the casts.
void MoveCastConstantTablesToDevice(llvm::Module& module);

}  // namespace mtlemu::air
