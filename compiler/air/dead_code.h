// Removes instructions whose only effect is a register nobody reads (an
// address computed for a load that folded it, a copy left unused), before
// register allocation.
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/air/register_parts.h"
#include "isa/module.h"

namespace mtlemu::air {

// Works on virtual registers; keeps branches, memory writes, atomics,
// barriers and SIMD-group functions (they are convergent). Branch targets
// and labels are renumbered. A write to a part of a register block is live
// when any part of the block is read.
void RemoveDeadCode(isa::Kernel& kernel, const RegisterParts& parts = {});

// Drops the instructions whose `keep` is false; branch targets and labels
// move to the next kept instruction.
void RemoveInstructions(isa::Kernel& kernel, const std::vector<bool>& keep);

// Makes `code` the kernel's code. `new_index` (one entry per old instruction
// and one for the end) maps an old instruction index to the new one;
// branch targets in `code` and the kernel's labels are old indices.
void ReplaceCode(isa::Kernel& kernel, std::vector<isa::Instruction> code,
                 const std::vector<uint32_t>& new_index);

}  // namespace mtlemu::air
