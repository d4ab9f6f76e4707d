// Register allocation for a kernel whose register operands are virtual
// (numbers 0..65535, any count): liveness on the ISA's control flow, then
// linear scan onto r0..r255, keeping 64-bit values in consecutive pairs and
// spilling to thread memory what does not fit.
#pragma once

#include <cstdint>
#include <functional>

#include "common/result.h"
#include "compiler/air/register_parts.h"
#include "isa/instruction.h"
#include "isa/module.h"

namespace mtlemu::air {

// The registers a thread may use: 128 32-bit registers, what an Apple GPU
// thread has at most (Mesa src/asahi/compiler/agx_occupancy.c: 256 16-bit
// registers; ../shared/reference/apple-gpu.md), and the chips' own
// ChipTiming::max_registers_per_thread. Metal's compiler spills the rest,
// and so does this one, so that the timing model sees the spill traffic.
// Hand-written ISA may use all isa::kMaxRegisters.
inline constexpr int kAllocatableRegisters = 128;
static_assert(kAllocatableRegisters <= isa::kMaxRegisters);

// Rewrites every register operand of `kernel` to a physical register and
// sets kernel.registers. Per-lane liveness is correct under SIMT execution:
// writes are masked, so a lane's register is only ever touched on that
// lane's path. A part (register_parts.h) lands at its whole's register plus
// its offset; writing a part does not end the whole's earlier life. Where
// more than kAllocatableRegisters would be live at once, values move to
// thread memory past the kernel's own (kernel.thread_memory grows), with
// loads and stores around their uses and definitions; the registers those
// use are made by `new_vreg` (parts of them added to `parts`). Fails only
// when virtual register numbers run out or spilling does not settle.
// `max_registers` (at most kAllocatableRegisters) lowers the budget: a
// kernel that must launch with n threads gets
// isa::MaxRegistersForThreads(n), and spills to fit it, as Apple's
// compiler does for [[max_total_threads_per_threadgroup]].
Status AllocateRegisters(isa::Kernel& kernel, RegisterParts& parts,
                         const std::function<uint32_t()>& new_vreg,
                         int max_registers = kAllocatableRegisters);

}  // namespace mtlemu::air
