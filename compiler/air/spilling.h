// Spill code: values that register allocation keeps in thread (private)
// memory instead of registers. Every read of a spilled register (or of a
// part of a spilled block) becomes a load from its slot into a fresh
// register just before the instruction, and every write a store from a fresh
// register just after it. Where the instruction before (in straight-line
// code) read or wrote the same place, the register that did is read again
// instead of loading. The fresh registers live for a few instructions at
// most, so allocation run again finds room for them.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "common/result.h"
#include "compiler/air/register_parts.h"
#include "isa/module.h"

namespace mtlemu::air {

// A spilled register's place: its byte offset in thread memory, or kNoSlot.
inline constexpr int64_t kNoSlot = -1;

// Rewrites `kernel` (virtual registers) so that every register (a block,
// for parts) with a slot in `slot_of` (indexed by register; registers past
// its end have none) lives in thread memory. A part of a spilled block is
// read from and written to the block's slot plus 4 bytes per register of
// offset; a write of a part leaves the rest of the slot as it was. A mov
// within one place of thread memory is dropped. Labels move to the first
// instruction inserted before the one they named, so a branch runs the
// loads. Returns the fresh registers (made by `new_vreg`, parts included);
// fails when virtual register numbers run out.
Result<std::vector<uint32_t>> SpillToThreadMemory(
    isa::Kernel& kernel, RegisterParts& parts,
    const std::vector<int64_t>& slot_of,
    const std::function<uint32_t()>& new_vreg);

}  // namespace mtlemu::air
