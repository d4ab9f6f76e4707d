// What a timed dispatch looked like over time, in GPU cycles: the input of
// the Chrome trace writer (chrome_trace.h). The timing model
// (emu/timing/) fills it in; nothing here knows how.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mtlemu::traces {

// A span of time on one track: a threadgroup on a GPU core, or a SIMD group
// on one of the core's SIMD-group slots (--trace-detail simd).
struct Slice {
  int core = 0;
  // The track within the core: -1 for the core's threadgroup track, else
  // the SIMD-group slot (0 .. resident SIMD groups per core - 1).
  int slot = -1;
  uint64_t start_cycle = 0;
  uint64_t end_cycle = 0;  // > start_cycle
  std::string name;        // "threadgroup (3,0,0)", "simdgroup 2 of tg (3,0,0)"
  // Shown as the slice's arguments: threadgroup index, SIMD group, counts.
  std::vector<std::pair<std::string, double>> args;
};

// A value over time: a sample holds from its cycle to the next sample's.
struct CounterSample {
  uint64_t cycle = 0;
  double value = 0;
};
struct Counter {
  std::string name;  // "resident SIMD groups", "ALU busy %", "DRAM GB/s"
  int core = -1;     // -1: the whole GPU
  std::vector<CounterSample> samples;  // by cycle
};

struct Timeline {
  std::string chip;    // "m2-max"
  std::string kernel;  // the kernel's name
  double clock_mhz = 0;
  int cores = 0;
  uint64_t total_cycles = 0;
  std::vector<Slice> slices;
  std::vector<Counter> counters;
};

}  // namespace mtlemu::traces
