// Before lowering: a tensor of pointers carried around an scf.for and
// stepped by a scalar each iteration (`a_ptrs += BLOCK_K * stride_ak`, in
// every matmul) becomes its initial value plus a carried scalar offset.
// The pointers are then cheap to recompute where they are used (the
// layouts' rematerialization) instead of living in registers through the
// loop, 64 bits per element: what keeps a matmul's registers, and so the
// threads its threadgroup may have, within Apple's limits.
#pragma once

#include "compiler/triton/ir/ir.h"

namespace mtlemu::triton::lower {

// For each scf.for iteration argument `p` (a tensor of pointers) that the
// body yields as tt.addptr(p, tt.splat(s)) with s a scalar integer: adds an
// i64 iteration argument `acc` (initially 0, yielded as acc + s), makes
// every use of p in the body a use of addptr(p_init, splat(acc)), yields p
// unchanged, and makes every use of the loop's p result one of
// addptr(p_init, splat(acc_result)). The same pointers, computed another
// way; ops that became unused stay for RemoveUnusedOps. Returns how many
// arguments were rewritten.
int StrengthReduceLoopPointers(ir::Function& function);

}  // namespace mtlemu::triton::lower
