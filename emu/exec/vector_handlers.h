// Highway (SIMD) versions of the hottest handlers, compiled for every
// target Highway supports here (SSE4, AVX2, AVX-512, ...) and chosen at run
// time. Each must match the scalar reference in alu_semantics.h bit for bit
// (tests/emu/vector_handlers_test.cpp checks it on every compiled target).
#pragma once

#include "emu/exec/exec_context.h"
#include "isa/instruction.h"

namespace mtlemu::emu {

// The vector handler for `inst` on the best target of this machine, or
// nullptr when the instruction has no vector version. Looked up once per
// instruction at decode time, never in the hot loop.
Handler VectorHandlerFor(const isa::Instruction& inst);

}  // namespace mtlemu::emu
