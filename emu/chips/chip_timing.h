// Everything the timing model knows about a chip: its row of chips.def
// (the host API's columns, the memory system and the core's features), the
// core all chips share (below, with sources) and instruction costs
// (unit_costs.def). Numbers the
// reference does not give are named assumptions here, never silent guesses.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "emu/chips/chip.h"
#include "isa/opcode.h"

namespace mtlemu {

struct UnitCost {
  double cycles_per_instruction = 1;  // per scheduler; 1 = 32 lanes/cycle
  double latency = 4;                 // cycles until a dependent may issue
};

inline constexpr int kNumExecUnits = isa::kNumExecUnits;

struct ChipTiming {
  ChipSpec spec;  // cores, clock

  // --- one GPU core ------------------------------------------------------
  // 4 schedulers x 32 lanes = 128 FP32 FMA lanes per core (M [T]).
  int schedulers_per_core = 4;
  // Register file ~208 KB (R/I from Mesa's occupancy table: 104 half-word
  // registers per thread -> 1024 threads).
  uint32_t register_file_bytes = 208 * 1024;
  // A thread addresses at most 128 32-bit registers: Mesa's occupancy table
  // ends at 256 half-word registers (384 threads). Metal's compiler spills
  // what a kernel needs beyond them to memory.
  uint32_t max_registers_per_thread = 128;
  // Resident threads 384..3072 per core (M [T]).
  uint32_t max_threads_per_core = 3072;
  // Threadgroup memory ~60 KB per core (M/I [T]).
  uint32_t threadgroup_memory_per_core = 60 * 1024;
  // 8 KB L1 data cache per core, 128-byte lines (M [T]).
  uint32_t l1_bytes = 8 * 1024;
  uint32_t line_bytes = 128;
  // Assumption (no published number): 8 ways in L1, 16 in L2 and SLC.
  int l1_ways = 8;
  int l2_ways = 16;

  // --- the memory system (chips.def) -------------------------------------
  // The SLC is a memory-side cache that the CPU sees too: a kernel's
  // stores are done when they reach it. Assumption (no published number):
  // it takes a kernel's last writes up to its whole size and writes them
  // back to DRAM after the kernel.
  uint32_t l2_bytes = 0;
  uint64_t slc_bytes = 0;
  double dram_gbps = 0;

  // Bandwidth per core per clock (M [T]): on-core 64 B, L2 ~32 B, SLC
  // ~15-20 B (17.5 taken).
  // Attainable fraction of the DRAM peak for streaming (M: copy kernels
  // reach 56 of 68.25 GB/s on M1 and 90 of 100 on M2 [CS], 317.6 of 409.6
  // on M1 Max (llama.cpp PR 1642), 318 of 400 on M3 Max [CS]; 0.82 taken).
  double dram_efficiency = 0.82;
  double l1_bytes_per_clock = 64;
  double l2_bytes_per_clock = 32;
  double slc_bytes_per_clock = 17.5;
  // Latency: SLC 234 ns, DRAM > 342 ns (M [CnC], M2 Pro). Assumptions (no
  // published number): L1 hit 20 cycles, L2 hit 80 cycles.
  double l1_latency_cycles = 20;
  double l2_latency_cycles = 80;
  double slc_latency_ns = 234;
  double dram_latency_ns = 342;

  // Operand cache: a full-rate ALU instruction reads its register sources
  // from a small per-scheduler cache that holds the registers the
  // scheduler's previous instruction read or wrote, if that instruction was
  // of the same SIMD group (G13 operands carry cache hints [DJ]). One with
  // two or more sources outside it reads them from the register file and
  // takes this many more cycles. (M [T] "ALU Bottlenecks", M1 Max: with the
  // latency hidden by 88 SIMD groups per core, back-to-back dependent FADD32
  // and FFMA32 at ILP 1 cost 1.84 and 1.99 cycles, "a 0.84-cycle throughput
  // penalty for a 32-bit register dependency", falling to 1.02 at ILP 4,
  // where one SIMD group issues on; `(x*x)+1` runs near peak where
  // `(x*y)+1` runs at half, "because only one operand is live inside the
  // register cache". One cycle taken.)
  double register_cache_miss_cycles = 1.0;
  // 16-bit ALU work (InstructionTiming::narrow) is quicker on both counts:
  // FADD16, FMUL16, FFMA16 and FCMPSEL16 take 2.97-3.35 cycles of latency
  // against 3.50-3.91 for 32-bit (M [T] instruction table; "later
  // benchmarks reduced the absolute latency to 3 cycles (FFMA16, ...)"),
  // and "for back-to-back dependent" instructions a 16-bit register costs
  // "a 0.56-cycle throughput penalty (1.56 total)" where a 32-bit one
  // costs 0.84 (M [T] "ALU Bottlenecks", 88 SIMD groups per core). With
  // two chains a SIMD group, 16-bit runs at 1.04-1.05 where 32-bit still
  // pays 1.73-1.87: so after a switch, a 16-bit instruction pays only if
  // it reads what its SIMD group's last instruction wrote. 3 and 0.56
  // taken; the rule is fitted to [T]'s 16-bit column (ILP 1 to 4).
  double alu16_latency = 3.0;
  double register_cache_miss_cycles_16 = 0.56;

  // --- unknown in the reference: named assumptions -------------------------
  // Threadgroup memory: 32 banks of 4 bytes, 16 cycles latency without bank
  // conflicts, one extra cycle per further access to the busiest bank.
  int threadgroup_banks = 32;
  double threadgroup_latency_cycles = 16;
  // A barrier releases this many cycles after the last SIMD group arrives.
  double barrier_cycles = 8;
  // A device atomic: an L2 round trip, and this many cycles per further
  // lane on the same address (they serialize).
  double atomic_cycles_per_conflict = 4;

  // --- core features (chips.def: the M3 family), V [TT] ------------------
  // Dynamic Caching: registers allocated by actual use, from one on-chip
  // pool shared with threadgroup memory. Modelled: a thread holds the
  // registers live at the instruction it runs, so occupancy counts their
  // mean over the instructions issued (emu/timing/registers_in_use.h), not
  // the kernel's peak. Assumption (no published number): allocation has no
  // granularity and costs nothing; a pool that runs short spills to the
  // next level in the hardware, which is not modelled (occupancy keeps the
  // mean within the pool).
  bool dynamic_caching = false;
  // FP32 can dual-issue with an FP16 or integer instruction. Modelled: FP32
  // arithmetic has a pipe of its own beside the ALU pipe (integer, FP16,
  // moves, compares), each at the ALU's cost, and a scheduler may issue to
  // both in one cycle from two SIMD groups. Assumption (not stated): a
  // SIMD group issues one instruction a cycle, and nothing else pairs.
  bool fp32_dual_issue = false;

  std::array<UnitCost, kNumExecUnits> unit_costs{};

  double clock_ghz() const { return spec.clock_mhz / 1000.0; }
  // What DRAM delivers per GPU clock (attainable, not the vendor peak).
  double dram_bytes_per_clock() const {
    return dram_gbps * dram_efficiency / clock_ghz();
  }
  // FP32 peak: cores x 128 lanes x 2 FLOPs per FMA x clock.
  double peak_flops() const {
    return spec.gpu_cores * 128.0 * 2.0 * spec.clock_mhz * 1e6;
  }
  const UnitCost& cost(isa::ExecUnit unit) const {
    return unit_costs[static_cast<int>(unit)];
  }
};

std::optional<ChipTiming> FindChipTiming(std::string_view name);

}  // namespace mtlemu
