// Handler lookup: one function per family of opcodes, each covering every
// opcode of its shapes in isa/opcodes.def. HandlerFor picks the family.
#pragma once

#include "emu/exec/exec_context.h"
#include "isa/instruction.h"

namespace mtlemu::emu {

// nullptr for control-flow opcodes (the executor runs those itself); a
// verified instruction of any other opcode always gets a handler.
Handler HandlerFor(const isa::Instruction& inst);

// The families (one .cpp each).
Handler AluHandlerFor(const isa::Instruction& inst);
Handler ConvertHandlerFor(const isa::Instruction& inst);
Handler MemoryHandlerFor(const isa::Instruction& inst);
Handler SimdHandlerFor(const isa::Instruction& inst);

}  // namespace mtlemu::emu
