// Register allocation for a kernel whose register operands are virtual
// (numbers 0..65535, any count): liveness on the ISA's control flow, then
// linear scan onto r0..r255, keeping 64-bit values in consecutive pairs.
#pragma once

#include <string>

#include "common/result.h"
#include "compiler/air/register_parts.h"
#include "isa/module.h"

namespace mtlemu::air {

// Rewrites every register operand of `kernel` to a physical register and
// sets kernel.registers. Fails when more than 256 registers would be live
// at once. Per-lane liveness is correct under SIMT execution: writes are
// masked, so a lane's register is only ever touched on that lane's path.
// A part (register_parts.h) lands at its whole's register plus its offset;
// writing a part does not end the whole's earlier life.
Status AllocateRegisters(isa::Kernel& kernel, const RegisterParts& parts = {});

}  // namespace mtlemu::air
