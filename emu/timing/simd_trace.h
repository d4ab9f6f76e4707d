// What the functional executor tells the timing model: per SIMD group, the
// instructions it issued in order, with their active lanes and the memory
// they touched. Recorded only in timed mode (timing never changes a
// result, and costs nothing when off).
#pragma once

#include <cstdint>
#include <vector>

namespace mtlemu::emu {

struct TraceEvent {
  uint32_t pc = 0;
  uint8_t lanes = 0;  // active lanes
  // Threadgroup memory: accesses to the busiest bank (1 = no conflict).
  // Device atomics: lanes on the busiest address.
  uint8_t conflict = 1;
  uint16_t line_count = 0;  // device and constant memory: lines touched
};

struct SimdGroupTrace {
  std::vector<TraceEvent> events;
  // Line numbers (address / line size): each event's line_count, in the
  // order of the events (so an event needs no index into them).
  std::vector<uint64_t> lines;
  void Clear() {
    events.clear();
    lines.clear();
  }
};

struct ThreadgroupTrace {
  uint64_t index = 0;  // linear threadgroup index in the grid
  uint32_t threads = 0;
  std::vector<SimdGroupTrace> simd_groups;
};

}  // namespace mtlemu::emu
