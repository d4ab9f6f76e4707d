// Removes instructions whose only effect is a register nobody reads (an
// address computed for a load that folded it, a copy left unused), before
// register allocation.
#pragma once

#include "isa/module.h"

namespace mtlemu::air {

// Works on virtual registers; keeps branches, memory writes, atomics,
// barriers and SIMD-group functions (they are convergent). Branch targets
// and labels are renumbered.
void RemoveDeadCode(isa::Kernel& kernel);

}  // namespace mtlemu::air
