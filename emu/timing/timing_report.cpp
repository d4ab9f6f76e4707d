#include "emu/timing/timing_report.h"

#include <fmt/format.h>

#include <cmath>

#include "traces/escape.h"

namespace mtlemu::emu {
namespace {

std::string JsonString(std::string_view s) {
  std::string out = "\"";
  traces::AppendJsonEscaped(s, out);
  return out + "\"";
}

std::string JsonNumber(double v) {
  if (!std::isfinite(v)) return "0";
  return fmt::format("{}", v);
}

std::string JsonNumber(uint64_t v) { return std::to_string(v); }

// {"name": value, ...} of named counts or fractions.
template <class T>
std::string JsonObject(const std::vector<std::pair<std::string, T>>& entries) {
  std::string s = "{";
  for (size_t i = 0; i < entries.size(); ++i) {
    s += fmt::format("{}{}: {}", i ? ", " : "", JsonString(entries[i].first),
                     JsonNumber(entries[i].second));
  }
  return s + "}";
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
  std::string s = "{\n";
  auto field = [&](std::string_view key, const std::string& value,
                   bool last = false) {
    s += fmt::format("  {}: {}{}\n", JsonString(key), value, last ? "" : ",");
  };
  field("chip", JsonString(r.chip));
  field("chip_name", JsonString(r.chip_name));
  field("kernel", JsonString(r.kernel));
  field("clock_mhz", JsonNumber(r.clock_mhz));
  field("cores", std::to_string(r.cores));
  field("cycles", std::to_string(r.cycles));
  field("time_us", JsonNumber(r.time_us));
  field("threadgroups", std::to_string(r.threadgroups));
  field("instructions", std::to_string(r.instructions));
  field("lane_instructions", std::to_string(r.lane_instructions));
  field("simd_efficiency", JsonNumber(r.simd_efficiency));
  field("instructions_by_unit", JsonObject(r.instructions_by_unit));
  field("registers", std::to_string(r.registers));
  field("registers_in_use", JsonNumber(r.registers_in_use));
  field("dynamic_caching", r.dynamic_caching ? "true" : "false");
  field("threadgroup_memory", std::to_string(r.threadgroup_memory));
  field("threads_per_threadgroup", std::to_string(r.threads_per_threadgroup));
  field("threadgroups_per_core", std::to_string(r.threadgroups_per_core));
  field("max_simd_groups_per_core", std::to_string(r.max_simd_groups_per_core));
  field("occupancy_limiter", JsonString(r.occupancy_limiter));
  field("occupancy", JsonNumber(r.occupancy));
  field("l1_bytes", std::to_string(r.l1_bytes));
  field("l2_bytes", std::to_string(r.l2_bytes));
  field("slc_bytes", std::to_string(r.slc_bytes));
  field("dram_bytes", std::to_string(r.dram_bytes));
  field("slc_held_write_bytes", std::to_string(r.slc_held_write_bytes));
  field("l1_hit_rate", JsonNumber(r.l1_hit_rate));
  field("l2_hit_rate", JsonNumber(r.l2_hit_rate));
  field("achieved_dram_gbps", JsonNumber(r.achieved_dram_gbps));
  field("peak_dram_gbps", JsonNumber(r.peak_dram_gbps));
  field("threadgroup_bank_conflict_cycles",
        std::to_string(r.threadgroup_bank_conflict_cycles));
  field("register_cache_miss_cycles",
        std::to_string(r.register_cache_miss_cycles));
  field("dram_read_bytes", std::to_string(r.dram_read_bytes));
  field("dram_write_bytes", std::to_string(r.dram_write_bytes));
  field("xcode_counters", JsonObject(r.xcode_counters));
  field("flops", JsonNumber(r.flops));
  field("achieved_tflops", JsonNumber(r.achieved_tflops));
  field("peak_tflops", JsonNumber(r.peak_tflops));
  field("alu_utilization", JsonNumber(r.alu_utilization));
  field("dram_bandwidth_utilization", JsonNumber(r.dram_bandwidth_utilization));
  field("stalls", JsonObject(r.stalls));
  field("limiter", JsonString(r.limiter));
  field("verdict", JsonString(r.verdict));
  std::string notes = "[";
  for (size_t i = 0; i < r.notes.size(); ++i) {
    notes += fmt::format("{}{}", i ? ", " : "", JsonString(r.notes[i]));
  }
  field("notes", notes + "]", true);
  return s + "}\n";
}

}  // namespace mtlemu::emu
