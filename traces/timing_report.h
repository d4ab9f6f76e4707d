// The summary of a timed dispatch: how long it took on the chip, what it
// did, what it moved, and what limits it. Counter names follow Xcode's GPU
// counters where one exists (ALU Utilization, Occupancy, ...), so a Metal
// programmer recognizes them. traces/timing_report_format.h writes it out as
// text or JSON.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace mtlemu::emu {

struct TimingReport {
  std::string chip;       // "m2"
  std::string chip_name;  // "Apple M2"
  std::string kernel;
  double clock_mhz = 0;
  int cores = 0;

  uint64_t cycles = 0;
  double time_us = 0;

  uint64_t threadgroups = 0;
  uint64_t instructions = 0;       // SIMD-group instructions issued
  uint64_t lane_instructions = 0;  // summed over active lanes
  double simd_efficiency = 0;      // active lanes / 32
  // SIMD-group instructions per execution unit (opcode table names).
  std::vector<std::pair<std::string, uint64_t>> instructions_by_unit;

  // Occupancy: resident threadgroups per core by the chip's rule, and what
  // limits them ("threads", "registers", "threadgroup memory").
  uint32_t registers = 0;  // per thread, 32-bit: the kernel's allocation
  // What a thread holds on average as it runs (the registers live at each
  // instruction issued, over the first batch of threadgroups), and whether
  // the chip allocates by it (M3's Dynamic Caching) or by `registers`.
  double registers_in_use = 0;
  bool dynamic_caching = false;
  uint32_t threadgroup_memory = 0;  // bytes per threadgroup
  uint32_t threads_per_threadgroup = 0;
  uint32_t threadgroups_per_core = 0;
  uint32_t max_simd_groups_per_core = 0;  // resident by the limit
  std::string occupancy_limiter;
  double occupancy = 0;  // achieved: mean resident SIMD groups / hardware max

  // Memory traffic in bytes per level, and what DRAM achieved.
  uint64_t l1_bytes = 0;
  uint64_t l2_bytes = 0;
  uint64_t slc_bytes = 0;
  uint64_t dram_bytes = 0;  // read + written while the kernel ran
  // Writes the SLC still held when the kernel completed: they reach DRAM
  // after it, and are not in dram_bytes.
  uint64_t slc_held_write_bytes = 0;
  double l1_hit_rate = 0;
  double l2_hit_rate = 0;
  double achieved_dram_gbps = 0;
  double peak_dram_gbps = 0;
  uint64_t threadgroup_bank_conflict_cycles = 0;
  // Issue cycles spent reading ALU operands the operand cache did not hold
  // (ChipTiming::register_cache_miss_cycles), summed over schedulers.
  uint64_t register_cache_miss_cycles = 0;

  double flops = 0;
  double achieved_tflops = 0;
  double peak_tflops = 0;

  // Xcode-style utilizations, 0..1.
  double alu_utilization = 0;  // ALU issue slots used
  double dram_bandwidth_utilization = 0;
  uint64_t dram_read_bytes = 0;
  uint64_t dram_write_bytes = 0;
  // Xcode's GPU counters, as the model sees them (percent, or GB/s for the
  // bandwidths): "ALU Utilization", "F32 Utilization", "Kernel Occupancy",
  // "Buffer Read Limiter", "Buffer Write Limiter", "Threadgroup/Imageblock
  // Load Limiter", "Last Level Cache Limiter", "GPU Memory Read Limiter",
  // "GPU Memory Write Limiter", "GPU Read Bandwidth", "GPU Write
  // Bandwidth". The model's limiters are how busy each path is over the
  // dispatch, without the stalls Xcode's would add.
  std::vector<std::pair<std::string, double>> xcode_counters;
  // Fractions of scheduler cycles without an issue, by reason.
  std::vector<std::pair<std::string, double>> stalls;

  // "memory bandwidth", "threadgroup memory", "cache bandwidth", "ALU",
  // "occupancy" or "latency", and why (emu/timing/limiter.h).
  std::string limiter;
  std::string verdict;

  // What the model leaves out for this kernel (e.g. register spills), one
  // sentence each.
  std::vector<std::string> notes;
};

}  // namespace mtlemu::emu
