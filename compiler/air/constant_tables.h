// Program-scope constant tables that the code reaches through casts to the
// device address space are read there, from a read-only copy (where the
// shims' `constant` data lives too); a table with no other use moves. Clang
// makes such a table from a constexpr static member array
// (`wt_transform.const`, MLX's Winograd transforms) in OpenCL's __constant and
// casts it where it is read as `constant T*`.
#pragma once

namespace llvm {
class Module;
}  // namespace llvm

namespace mtlemu::air {

// Gives each such table of `module` a read-only copy in the device address
// space ("NAME.device") that the casts' users read, and drops the casts
// (and the table, when nothing else reads it).
void MoveCastConstantTablesToDevice(llvm::Module& module);

}  // namespace mtlemu::air
