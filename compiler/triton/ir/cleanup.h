// Clean-ups on the block IR that Triton's pipeline also does before its
// TTIR is printed: ops without side effects whose results nobody uses are
// removed (constants made for a folded branch, a dry run's leftovers).
#pragma once

#include "compiler/triton/ir/ir.h"

namespace mtlemu::triton::ir {

// Removes pure ops (ops.def's kPure) whose results are all unused, until
// none is left. Returns how many were removed.
int RemoveUnusedOps(Function& function);

}  // namespace mtlemu::triton::ir
