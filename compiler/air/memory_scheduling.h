// A small scheduler for memory latency. Issue is in order, so a load whose
// value is used by the very next instruction (a tile copied from device to
// threadgroup memory: load, store, load, store...) waits its whole latency
// each time. Within a block, stores to threadgroup memory move down past
// instructions they do not depend on, and loads of device and constant
// memory move up, so a SIMD group issues its loads back to back and the
// latencies overlap; the register-only instructions computing a load's
// address move up ahead of it (a few deep). Nothing crosses a block boundary, a
// barrier, an atomic, a SIMD-group function, an instruction with a register
// dependency, or a memory access that may alias (a device load never passes a
// device store; a threadgroup store never passes another threadgroup access).
#pragma once

#include "compiler/air/register_parts.h"
#include "isa/module.h"

namespace mtlemu::air {

// On virtual registers, after dead-code removal, before allocation.
void ScheduleMemory(isa::Kernel& kernel, const RegisterParts& parts);

// The other way, for registers: each load moves down its block to just
// before the first instruction that uses what it loads (past
// register-only instructions only), so a value lives from its use's
// neighbourhood, not from the top of an unrolled loop body.
void SinkLoadsToUses(isa::Kernel& kernel, const RegisterParts& parts);

}  // namespace mtlemu::air
