// What a core of the timing model counts over a dispatch (core_model.h),
// and the sum of them over the cores.
#pragma once

#include <cstdint>
#include <vector>

#include "emu/chips/chip_timing.h"

namespace mtlemu::emu {

// A core's counts, summed over the dispatch.
struct CoreStats {
  uint64_t instructions = 0;
  uint64_t lane_instructions = 0;
  std::vector<uint64_t> by_unit = std::vector<uint64_t>(kNumExecUnits, 0);
  double flops = 0;
  // Scheduler cycles that issued: anything, and ALU work (M3 may issue
  // two instructions in one; a cycle counts once).
  uint64_t issue_cycles = 0;
  uint64_t alu_issue_cycles = 0;
  uint64_t l1_lines = 0, l1_hits = 0;
  uint64_t l2_lines = 0, l2_hits = 0;
  uint64_t slc_lines = 0;
  uint64_t dram_write_bytes = 0;  // reads are counted by the model
  uint64_t bank_conflict_cycles = 0;
  double operand_cycles = 0;  // register-file reads past the operand cache
  uint64_t threadgroup_cycles = 0;  // threadgroup memory port busy
  uint64_t store_lines = 0;         // device lines written
  // Scheduler cycles without an issue, by reason.
  uint64_t stall_memory = 0, stall_dependency = 0, stall_pipe = 0,
           stall_barrier = 0, stall_idle = 0;
  double resident_simd_group_cycles = 0;  // sum over cycles

  // Adds another core's counts (the model sums its cores).
  CoreStats& operator+=(const CoreStats& o);
};

}  // namespace mtlemu::emu
