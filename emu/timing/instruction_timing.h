// What the timing model needs to know about each instruction of a kernel,
// worked out once per dispatch from the ISA and the opcode table: its unit
// (FloatUnit for a float type), the registers it reads and writes, the
// memory it goes to, and the FLOPs per lane.
#pragma once

#include <boost/container/static_vector.hpp>
#include <cstdint>
#include <vector>

#include "isa/instruction.h"
#include "isa/module.h"
#include "isa/opcode.h"

namespace mtlemu::emu {

enum class MemoryKind : uint8_t {
  kNone,
  kDeviceLoad,  // device and constant memory
  kDeviceStore,
  kDeviceAtomic,
  kThreadgroup,  // loads, stores and atomics of threadgroup memory
  kThread,       // private arrays (on-core, L1 latency)
};

// An instruction's registers read or written: at most kMaxOperands
// operands of a 4-vector of 64-bit values (8 registers) each; a memory
// operand reads 3 at most (a 64-bit base and an index).
inline constexpr size_t kMaxRegistersPerList = isa::kMaxOperands * 4 * 2;
using RegisterList =
    boost::container::static_vector<uint16_t, kMaxRegistersPerList>;

struct InstructionTiming {
  isa::ExecUnit unit = isa::ExecUnit::kAlu;
  MemoryKind memory = MemoryKind::kNone;
  bool fp32 = false;  // FP32 arithmetic (M3 dual-issues it with the rest)
  // 16-bit ALU work (half, bfloat, short, ushort; 8-bit integers too, which
  // live in 16-bit registers on the hardware [DJ]): a shorter latency and
  // a cheaper operand-cache miss (ChipTiming).
  bool narrow = false;
  bool barrier = false;  // threadgroup_barrier
  // FLOPs per active lane (the opcode table's Flops for a float type).
  uint32_t flops_per_lane = 0;
  // Physical registers, in place (the scheduler reads them for every
  // instruction it issues).
  RegisterList reads;
  RegisterList writes;
};

std::vector<InstructionTiming> InstructionTimings(const isa::Kernel& kernel);

}  // namespace mtlemu::emu
