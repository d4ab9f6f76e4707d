// Constants that a loop needs in registers are put there once, before the
// loop. Instruction selection copies a constant into a fresh register where
// an operand must be a register (the value a store writes, a builtin's
// argument); in a loop that copy ran every iteration. Here such a copy
// moves in front of the outermost loop it sits in, and copies of one
// constant there share one register.
#pragma once

#include "compiler/air/register_parts.h"
#include "isa/module.h"

namespace mtlemu::air {

// At most this many constants are hoisted in front of one loop; the rest
// stay where they are (each hoisted one holds a register for the whole
// loop).
inline constexpr int kMaxHoistedConstantsPerLoop = 16;

// Works on virtual registers: a `mov r, immediate` is hoisted when `r`
// stands alone (not a block or a part) and has no other definition. A loop
// is a backward branch and the code from its target to it; its constants go
// in front of its first instruction when that is reached only by falling
// through from the instruction before or by the loop's own branches.
// Returns whether anything moved.
bool HoistLoopConstants(isa::Kernel& kernel, const RegisterParts& parts);

}  // namespace mtlemu::air
