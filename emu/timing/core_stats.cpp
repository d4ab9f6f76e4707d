#include "emu/timing/core_stats.h"

namespace mtlemu::emu {

// A field added to CoreStats must be summed below: this size changes with
// it, and then needs the same change.
static_assert(sizeof(CoreStats) == 192 && sizeof(std::vector<uint64_t>) == 24,
              "CoreStats changed: sum the new field in operator+=");

CoreStats& CoreStats::operator+=(const CoreStats& o) {
  instructions += o.instructions;
  lane_instructions += o.lane_instructions;
  for (size_t u = 0; u < by_unit.size() && u < o.by_unit.size(); ++u) {
    by_unit[u] += o.by_unit[u];
  }
  flops += o.flops;
  issue_cycles += o.issue_cycles;
  alu_issue_cycles += o.alu_issue_cycles;
  l1_lines += o.l1_lines;
  l1_hits += o.l1_hits;
  l2_lines += o.l2_lines;
  l2_hits += o.l2_hits;
  slc_lines += o.slc_lines;
  dram_write_bytes += o.dram_write_bytes;
  bank_conflict_cycles += o.bank_conflict_cycles;
  operand_cycles += o.operand_cycles;
  threadgroup_cycles += o.threadgroup_cycles;
  store_lines += o.store_lines;
  stall_memory += o.stall_memory;
  stall_dependency += o.stall_dependency;
  stall_pipe += o.stall_pipe;
  stall_barrier += o.stall_barrier;
  stall_idle += o.stall_idle;
  resident_simd_group_cycles += o.resident_simd_group_cycles;
  return *this;
}

}  // namespace mtlemu::emu
