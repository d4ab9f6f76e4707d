#include "emu/timing/registers_in_use.h"

#include <algorithm>
#include <bitset>

#include "isa/control_flow.h"
#include "isa/instruction.h"

namespace mtlemu::emu {

std::vector<uint16_t> LiveRegisters(
    const isa::Kernel& kernel, const std::vector<InstructionTiming>& timings) {
  using Set = std::bitset<isa::kMaxRegisters>;
  const uint32_t n = static_cast<uint32_t>(kernel.code.size());
  auto set_of = [](const RegisterList& registers) {
    Set s;
    for (uint16_t r : registers) {
      if (r < isa::kMaxRegisters) s.set(r);
    }
    return s;
  };
  std::vector<Set> reads(n), writes(n), live_in(n);
  for (uint32_t pc = 0; pc < n; ++pc) {
    reads[pc] = set_of(timings[pc].reads);
    writes[pc] = set_of(timings[pc].writes);
  }
  // Backward dataflow to a fixed point; reverse order converges in a pass
  // or two more than the loop nesting depth.
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t pc = n; pc-- > 0;) {
      Set out;
      for (uint32_t s : isa::SuccessorsOf(kernel, pc)) {
        if (s < n) out |= live_in[s];
      }
      const Set in = reads[pc] | (out & ~writes[pc]);
      if (in != live_in[pc]) {
        live_in[pc] = in;
        changed = true;
      }
    }
  }
  std::vector<uint16_t> held(n);
  for (uint32_t pc = 0; pc < n; ++pc) {
    held[pc] = static_cast<uint16_t>((live_in[pc] | writes[pc]).count());
  }
  return held;
}

double MeanRegistersInUse(const std::vector<uint16_t>& live,
                          const std::vector<ThreadgroupTrace>& traces) {
  // prefix[pc] = live[0] + ... + live[pc - 1]: a run of instructions at
  // consecutive pcs sums in one subtraction.
  std::vector<uint64_t> prefix(live.size() + 1, 0);
  for (size_t pc = 0; pc < live.size(); ++pc) {
    prefix[pc + 1] = prefix[pc] + live[pc];
  }
  auto sum = [&](uint64_t first, uint64_t count) -> uint64_t {
    const uint64_t end = std::min<uint64_t>(first + count, live.size());
    return first < end ? prefix[end] - prefix[first] : 0;
  };
  uint64_t total = 0, instructions = 0;
  for (const ThreadgroupTrace& tg : traces) {
    for (const SimdGroupTrace& sg : tg.simd_groups) {
      for (const TraceRecord& r : sg.records) {
        const uint64_t count = r.run ? r.count : 1;
        total += sum(r.pc, count);
        instructions += count;
      }
    }
  }
  return instructions ? static_cast<double>(total) / instructions : 0;
}

}  // namespace mtlemu::emu
