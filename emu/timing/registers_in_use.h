// What a SIMD group's threads hold in registers as they run, for M3's
// Dynamic Caching, which allocates registers by actual use rather than the
// kernel's peak for its whole run (V [TT], ../shared/reference/
// apple-gpu.md). M1 and M2 allocate the peak (isa::Kernel::registers).
#pragma once

#include <cstdint>
#include <vector>

#include "emu/exec/simd_trace.h"
#include "emu/timing/instruction_timing.h"
#include "isa/module.h"

namespace mtlemu::emu {

// Per instruction, the 32-bit registers a thread holds while it runs: those
// live into it (read on some path on from it before being written again)
// and those it writes. Liveness is per lane, which is right under SIMT
// execution: a write is masked, so a lane's register is only ever touched
// on that lane's path. `timings` gives each instruction's physical
// registers (InstructionTimings).
std::vector<uint16_t> LiveRegisters(
    const isa::Kernel& kernel, const std::vector<InstructionTiming>& timings);

// The mean of `live` over the instructions the traces issued: the
// registers a thread holds on average over its run, each instruction
// weighted by how often a SIMD group issued it. 0 when nothing was issued.
double MeanRegistersInUse(const std::vector<uint16_t>& live,
                          const std::vector<ThreadgroupTrace>& traces);

}  // namespace mtlemu::emu
