#include "traces/timing_report_format.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "tests/traces/strict_json.h"

namespace mtlemu::traces {
namespace {

using emu::TimingReport;
using testing::Json;
using testing::ParseStrictJson;

Json Parse(const std::string& text) {
  std::string error;
  std::optional<Json> doc = ParseStrictJson(text, &error);
  if (!doc) {
    ADD_FAILURE() << "not JSON: " << error << "\n" << text;
    return Json{};
  }
  return *doc;
}

TimingReport Sample() {
  TimingReport r;
  r.chip = "m3";
  r.chip_name = "Apple M3";
  r.kernel = "vector_add";
  r.clock_mhz = 1338;
  r.cores = 10;
  r.cycles = 123456789012ull;
  r.time_us = 92.26;
  r.threadgroups = 40;
  r.instructions = 5000;
  r.lane_instructions = 160000;
  r.simd_efficiency = 0.75;
  r.instructions_by_unit = {{"load", 2000}, {"alu", 3000}};
  r.registers = 12;
  r.registers_in_use = 1.25;
  r.dynamic_caching = true;
  r.threadgroup_memory = 1024;
  r.threads_per_threadgroup = 256;
  r.threadgroups_per_core = 6;
  r.max_simd_groups_per_core = 48;
  r.occupancy_limiter = "threads";
  r.occupancy = 0.5;
  r.l1_bytes = 1;
  r.l2_bytes = 2;
  r.slc_bytes = 3;
  r.dram_bytes = 4;
  r.slc_held_write_bytes = 5;
  r.l1_hit_rate = 0.25;
  r.l2_hit_rate = 0.125;
  r.achieved_dram_gbps = 61.5;
  r.peak_dram_gbps = 100;
  r.threadgroup_bank_conflict_cycles = 6;
  r.register_cache_miss_cycles = 7;
  r.flops = 1e10;
  r.achieved_tflops = 0.0001;
  r.peak_tflops = 3.5;
  r.alu_utilization = 0.03;
  r.dram_bandwidth_utilization = 0.615;
  r.dram_read_bytes = 8;
  r.dram_write_bytes = 9;
  r.xcode_counters = {{"ALU Utilization", 3.0}, {"GPU Read Bandwidth", 61.5}};
  r.stalls = {{"waiting for memory", 0.5}, {"at a barrier", 0.25}};
  r.limiter = "memory bandwidth";
  r.verdict = "DRAM is 61% busy";
  r.notes = {"one", "two"};
  return r;
}

TEST(TimingReportJson, EveryFieldInTheStructsOrder) {
  const TimingReport r = Sample();
  const std::string text = FormatReportJson(r);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  const Json doc = Parse(text);
  ASSERT_TRUE(doc.is_object());
  std::vector<std::string> keys;
  for (const auto& [key, value] : doc.items()) keys.push_back(key);
  const std::vector<std::string> expected = {
      "chip",
      "chip_name",
      "kernel",
      "clock_mhz",
      "cores",
      "cycles",
      "time_us",
      "threadgroups",
      "instructions",
      "lane_instructions",
      "simd_efficiency",
      "instructions_by_unit",
      "registers",
      "registers_in_use",
      "dynamic_caching",
      "threadgroup_memory",
      "threads_per_threadgroup",
      "threadgroups_per_core",
      "max_simd_groups_per_core",
      "occupancy_limiter",
      "occupancy",
      "l1_bytes",
      "l2_bytes",
      "slc_bytes",
      "dram_bytes",
      "slc_held_write_bytes",
      "l1_hit_rate",
      "l2_hit_rate",
      "achieved_dram_gbps",
      "peak_dram_gbps",
      "threadgroup_bank_conflict_cycles",
      "register_cache_miss_cycles",
      "dram_read_bytes",
      "dram_write_bytes",
      "xcode_counters",
      "flops",
      "achieved_tflops",
      "peak_tflops",
      "alu_utilization",
      "dram_bandwidth_utilization",
      "stalls",
      "limiter",
      "verdict",
      "notes",
  };
  EXPECT_EQ(keys, expected);
}

TEST(TimingReportJson, ValuesReadBackExactly) {
  const TimingReport r = Sample();
  const Json doc = Parse(FormatReportJson(r));
  ASSERT_TRUE(doc.is_object());
  EXPECT_EQ(doc.at("chip"), r.chip);
  EXPECT_EQ(doc.at("chip_name"), r.chip_name);
  EXPECT_EQ(doc.at("kernel"), r.kernel);
  EXPECT_EQ(doc.at("clock_mhz").get<double>(), r.clock_mhz);
  EXPECT_EQ(doc.at("cores").get<int>(), r.cores);
  // Counts are integers, exact beyond 2^53 too.
  ASSERT_TRUE(doc.at("cycles").is_number_integer());
  EXPECT_EQ(doc.at("cycles").get<uint64_t>(), r.cycles);
  EXPECT_EQ(doc.at("time_us").get<double>(), r.time_us);
  EXPECT_EQ(doc.at("simd_efficiency").get<double>(), r.simd_efficiency);
  EXPECT_EQ(doc.at("registers_in_use").get<double>(), r.registers_in_use);
  EXPECT_EQ(doc.at("dynamic_caching"), true);
  EXPECT_EQ(doc.at("threadgroups_per_core").get<uint32_t>(),
            r.threadgroups_per_core);
  EXPECT_EQ(doc.at("occupancy_limiter"), r.occupancy_limiter);
  EXPECT_EQ(doc.at("slc_held_write_bytes").get<uint64_t>(),
            r.slc_held_write_bytes);
  EXPECT_EQ(doc.at("flops").get<double>(), r.flops);
  EXPECT_EQ(doc.at("achieved_tflops").get<double>(), r.achieved_tflops);
  EXPECT_EQ(doc.at("limiter"), r.limiter);
  EXPECT_EQ(doc.at("verdict"), r.verdict);
  // Named values keep the report's order (not sorted by name).
  const Json& units = doc.at("instructions_by_unit");
  ASSERT_TRUE(units.is_object());
  ASSERT_EQ(units.size(), 2u);
  EXPECT_EQ(units.begin().key(), "load");
  EXPECT_EQ(units.at("load").get<uint64_t>(), 2000u);
  EXPECT_EQ(units.at("alu").get<uint64_t>(), 3000u);
  const Json& xcode = doc.at("xcode_counters");
  ASSERT_EQ(xcode.size(), 2u);
  EXPECT_EQ(xcode.begin().key(), "ALU Utilization");
  EXPECT_EQ(xcode.at("GPU Read Bandwidth").get<double>(), 61.5);
  const Json& stalls = doc.at("stalls");
  ASSERT_EQ(stalls.size(), 2u);
  EXPECT_EQ(stalls.begin().key(), "waiting for memory");
  EXPECT_EQ(stalls.at("at a barrier").get<double>(), 0.25);
  ASSERT_TRUE(doc.at("notes").is_array());
  EXPECT_EQ(doc.at("notes").get<std::vector<std::string>>(), r.notes);
}

TEST(TimingReportJson, EmptyReportIsStillAnObject) {
  const Json doc = Parse(FormatReportJson(TimingReport{}));
  ASSERT_TRUE(doc.is_object());
  EXPECT_EQ(doc.size(), 44u);
  EXPECT_TRUE(doc.at("instructions_by_unit").is_object());
  EXPECT_TRUE(doc.at("instructions_by_unit").empty());
  EXPECT_TRUE(doc.at("notes").is_array());
  EXPECT_TRUE(doc.at("notes").empty());
}

TEST(TimingReportJson, NonFiniteNumbersAreWrittenAsZero) {
  TimingReport r = Sample();
  r.time_us = std::numeric_limits<double>::quiet_NaN();
  r.occupancy = std::numeric_limits<double>::infinity();
  r.flops = -std::numeric_limits<double>::infinity();
  r.stalls = {{"nan", std::numeric_limits<double>::quiet_NaN()}};
  const Json doc = Parse(FormatReportJson(r));  // JSON has no NaN or Infinity
  ASSERT_TRUE(doc.is_object());
  for (const char* key : {"time_us", "occupancy", "flops"}) {
    ASSERT_TRUE(doc.at(key).is_number()) << key;
    EXPECT_EQ(doc.at(key).get<double>(), 0) << key;
  }
  EXPECT_EQ(doc.at("stalls").at("nan").get<double>(), 0);
}

TEST(TimingReportJson, StringsAreEscapedAndInvalidUtf8Replaced) {
  TimingReport r = Sample();
  r.kernel = "say \"hi\" C:\\dir\\ \n\t\x01 end";
  r.chip_name = "k\xff\xc3\xa9";  // a stray byte, then a well-formed e-acute
  r.notes = {"a \"quoted\" note", "bad \xc3"};
  r.instructions_by_unit = {{"odd \"unit\"\n", 1}};
  const Json doc = Parse(FormatReportJson(r));
  ASSERT_TRUE(doc.is_object());
  EXPECT_EQ(doc.at("kernel"), r.kernel);
  EXPECT_EQ(doc.at("chip_name"), "k\xEF\xBF\xBD\xc3\xa9");
  EXPECT_EQ(doc.at("notes").at(0), r.notes[0]);
  EXPECT_EQ(doc.at("notes").at(1), "bad \xEF\xBF\xBD");
  EXPECT_EQ(doc.at("instructions_by_unit").at("odd \"unit\"\n"), 1);
}

TEST(TimingReportText, NamesTheKernelChipAndLimiter) {
  const TimingReport r = Sample();
  const std::string text = FormatReportText(r);
  EXPECT_NE(text.find("timing: kernel 'vector_add' on Apple M3 (10 GPU cores, "
                      "1338 MHz)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("limiter: memory bandwidth (DRAM is 61% busy)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("note: one\n"), std::string::npos) << text;
  EXPECT_NE(text.find("note: two\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace mtlemu::traces
