#include "traces/timing_report_format.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

namespace mtlemu::traces {
namespace {

using emu::TimingReport;
using Json = nlohmann::ordered_json;

// JSON has no NaN or infinity.
double Finite(double v) { return std::isfinite(v) ? v : 0; }

// {"name": value, ...} of named counts, in the report's order.
Json JsonObject(const std::vector<std::pair<std::string, uint64_t>>& entries) {
  Json object = Json::object();
  for (const auto& [name, value] : entries) object[name] = value;
  return object;
}

// {"name": value, ...} of named fractions, in the report's order.
Json JsonObject(const std::vector<std::pair<std::string, double>>& entries) {
  Json object = Json::object();
  for (const auto& [name, value] : entries) object[name] = Finite(value);
  return object;
}

std::string Bytes(double b) {
  if (b >= 1e9) return fmt::format("{:.2f} GB", b / 1e9);
  if (b >= 1e6) return fmt::format("{:.2f} MB", b / 1e6);
  if (b >= 1e3) return fmt::format("{:.1f} KB", b / 1e3);
  return fmt::format("{:.0f} B", b);
}

}  // namespace

std::string FormatReportText(const TimingReport& r) {
  std::string s;
  s += fmt::format("timing: kernel '{}' on {} ({} GPU cores, {} MHz)\n",
                   r.kernel, r.chip_name, r.cores, r.clock_mhz);
  s += fmt::format("  time: {} cycles = {:.2f} us\n", r.cycles, r.time_us);
  s += fmt::format("  limiter: {} ({})\n", r.limiter, r.verdict);
  s += fmt::format(
      "  instructions: {} SIMD-group instructions, {} threadgroups; SIMD "
      "efficiency {:.1f}% (active lanes / 32)\n",
      r.instructions, r.threadgroups, 100 * r.simd_efficiency);
  std::string mix;
  for (const auto& [unit, n] : r.instructions_by_unit) {
    mix += fmt::format("{}{} {:.1f}%", mix.empty() ? "" : ", ", unit,
                       r.instructions ? 100.0 * n / r.instructions : 0.0);
  }
  s += "    by unit: " + mix + "\n";
  s += fmt::format(
      "  occupancy: {:.1f}% achieved (Occupancy); {} threadgroups of {} "
      "threads per core ({} SIMD groups) by the limit, limited by {} ({} "
      "registers per thread, {:.1f} live on average{}; {} bytes of "
      "threadgroup memory)\n",
      100 * r.occupancy, r.threadgroups_per_core, r.threads_per_threadgroup,
      r.max_simd_groups_per_core, r.occupancy_limiter, r.registers,
      r.registers_in_use,
      r.dynamic_caching ? ", allocated by use (Dynamic Caching)" : "",
      r.threadgroup_memory);
  s += fmt::format(
      "  memory: L1 {} (hit {:.1f}%), L2 {} (hit {:.1f}%), SLC {}, DRAM {}{}\n",
      Bytes(r.l1_bytes), 100 * r.l1_hit_rate, Bytes(r.l2_bytes),
      100 * r.l2_hit_rate, Bytes(r.slc_bytes), Bytes(r.dram_bytes),
      r.slc_held_write_bytes > 0
          ? " (and " + Bytes(r.slc_held_write_bytes) +
                " of writes the SLC holds at the end, for DRAM after it)"
          : "");
  s += fmt::format("  DRAM bandwidth: {:.1f} GB/s of {:.1f} GB/s ({:.1f}%)\n",
                   r.achieved_dram_gbps, r.peak_dram_gbps,
                   100 * r.dram_bandwidth_utilization);
  s += fmt::format(
      "  FP32: {:.3g} FLOPs, {:.3f} TFLOP/s of {:.2f} ({:.1f}%); ALU "
      "Utilization {:.1f}%\n",
      r.flops, r.achieved_tflops, r.peak_tflops,
      r.peak_tflops > 0 ? 100 * r.achieved_tflops / r.peak_tflops : 0.0,
      100 * r.alu_utilization);
  std::string xcode;
  for (const auto& [name, value] : r.xcode_counters) {
    xcode += fmt::format(
        "{}{} {:.1f}{}", xcode.empty() ? "" : ", ", name, value,
        name.find("Bandwidth") != std::string::npos ? " GB/s" : "%");
  }
  s += "  Xcode counters: " + xcode + "\n";
  if (r.threadgroup_bank_conflict_cycles > 0) {
    s += fmt::format("  threadgroup memory bank conflicts: {} extra cycles\n",
                     r.threadgroup_bank_conflict_cycles);
  }
  if (r.register_cache_miss_cycles > 0) {
    s += fmt::format(
        "  register cache misses: {} extra issue cycles (ALU operands read "
        "from the register file)\n",
        r.register_cache_miss_cycles);
  }
  if (!r.stalls.empty()) {
    std::string stalls;
    for (const auto& [why, share] : r.stalls) {
      if (share < 0.005) continue;
      stalls += fmt::format("{}{} {:.1f}%", stalls.empty() ? "" : ", ", why,
                            100 * share);
    }
    s += "  scheduler cycles without an issue: " + stalls + "\n";
  }
  for (const std::string& note : r.notes) s += "  note: " + note + "\n";
  return s;
}

std::string FormatReportJson(const TimingReport& r) {
  Json j = Json::object();
  j["chip"] = r.chip;
  j["chip_name"] = r.chip_name;
  j["kernel"] = r.kernel;
  j["clock_mhz"] = Finite(r.clock_mhz);
  j["cores"] = r.cores;
  j["cycles"] = r.cycles;
  j["time_us"] = Finite(r.time_us);
  j["threadgroups"] = r.threadgroups;
  j["instructions"] = r.instructions;
  j["lane_instructions"] = r.lane_instructions;
  j["simd_efficiency"] = Finite(r.simd_efficiency);
  j["instructions_by_unit"] = JsonObject(r.instructions_by_unit);
  j["registers"] = r.registers;
  j["registers_in_use"] = Finite(r.registers_in_use);
  j["dynamic_caching"] = r.dynamic_caching;
  j["threadgroup_memory"] = r.threadgroup_memory;
  j["threads_per_threadgroup"] = r.threads_per_threadgroup;
  j["threadgroups_per_core"] = r.threadgroups_per_core;
  j["max_simd_groups_per_core"] = r.max_simd_groups_per_core;
  j["occupancy_limiter"] = r.occupancy_limiter;
  j["occupancy"] = Finite(r.occupancy);
  j["l1_bytes"] = r.l1_bytes;
  j["l2_bytes"] = r.l2_bytes;
  j["slc_bytes"] = r.slc_bytes;
  j["dram_bytes"] = r.dram_bytes;
  j["slc_held_write_bytes"] = r.slc_held_write_bytes;
  j["l1_hit_rate"] = Finite(r.l1_hit_rate);
  j["l2_hit_rate"] = Finite(r.l2_hit_rate);
  j["achieved_dram_gbps"] = Finite(r.achieved_dram_gbps);
  j["peak_dram_gbps"] = Finite(r.peak_dram_gbps);
  j["threadgroup_bank_conflict_cycles"] = r.threadgroup_bank_conflict_cycles;
  j["register_cache_miss_cycles"] = r.register_cache_miss_cycles;
  j["dram_read_bytes"] = r.dram_read_bytes;
  j["dram_write_bytes"] = r.dram_write_bytes;
  j["xcode_counters"] = JsonObject(r.xcode_counters);
  j["flops"] = Finite(r.flops);
  j["achieved_tflops"] = Finite(r.achieved_tflops);
  j["peak_tflops"] = Finite(r.peak_tflops);
  j["alu_utilization"] = Finite(r.alu_utilization);
  j["dram_bandwidth_utilization"] = Finite(r.dram_bandwidth_utilization);
  j["stalls"] = JsonObject(r.stalls);
  j["limiter"] = r.limiter;
  j["verdict"] = r.verdict;
  j["notes"] = r.notes;
  // Names come from kernels and chips: bytes that are not UTF-8 become
  // U+FFFD instead of an exception.
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace mtlemu::traces
