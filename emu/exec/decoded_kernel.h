// A kernel decoded once (per pipeline) into the dense form the executor
// runs: handlers looked up, operands turned into lane-file slots.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "emu/exec/exec_context.h"
#include "emu/exec/unordered_accesses.h"
#include "isa/module.h"

namespace mtlemu::emu {

// The lane file of a SIMD group: [registers | uniforms | specials |
// immediates], each slot 32 lanes of 32 bits.
struct SlotLayout {
  uint16_t uniform_base = 0;
  uint16_t special_base = 0;
  uint16_t immediate_base = 0;
  uint16_t total = 0;
  // Special registers the kernel reads, in slot order.
  std::vector<isa::SpecialRegister> specials;
  // The 32-bit value splatted into each immediate slot.
  std::vector<uint32_t> immediates;
};

struct DecodedKernel {
  const isa::Kernel* kernel = nullptr;
  std::vector<DecodedInstruction> code;
  SlotLayout layout;
  // Keeps the native code of the runs alive (emu/jit/); null when the
  // kernel is interpreted only.
  std::shared_ptr<const void> jit;
  // The whole kernel compiled, where it is one straight run and then
  // `exit` (JitGroups), else null.
  JitGroupRun groups = nullptr;
  // Where threadgroup barriers cut the kernel into phases that are each a
  // run and maybe an if-then (JitPhase), the phases in order, the last
  // ending at `exit`; else empty.
  struct Phase {
    uint32_t begin = 0;
    uint32_t end = 0;           // the barrier or `exit` it ends at
    JitPhaseRun run = nullptr;  // null: no instruction before `end`
  };
  std::vector<Phase> phases;
  // Threadgroup reads and writes that share a barrier interval
  // (unordered_accesses.h): where there are any, the order of the SIMD
  // groups can change a result, and the dispatch interleaves them.
  std::vector<UnorderedAccesses> unordered_accesses;
  // Why the JIT was asked for and not used (its compile failed), else
  // empty: the kernel then runs on the interpreter alone.
  std::string jit_note;
};

// Decodes a verified kernel. Returns false with `error` set when an
// instruction has no handler (an opcode/type pair the executor lacks).
bool DecodeKernel(const isa::Kernel& kernel, DecodedKernel& out,
                  std::string& error);

}  // namespace mtlemu::emu
