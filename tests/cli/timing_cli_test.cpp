// `mtlemu run --timing` through the executable: the JSON report and its
// keys, the Chrome trace, and bad --report values.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cli/exit_codes.h"
#include "tests/cli/cli_test_util.h"
#include "tests/traces/json_reader.h"

namespace mtlemu::cli {
namespace {

using cli_test::Contains;
using cli_test::ProcessResult;
using cli_test::ReadFile;
using cli_test::RunMtlemu;
using cli_test::ScratchDir;
using cli_test::ShellQuote;
using traces::testing::Json;
using traces::testing::JsonReader;

constexpr uint32_t kN = 4096;

std::string Example(const std::string& file) {
  return std::string(MTLEMU_SOURCE_DIR) + "/examples/" + file;
}

// `mtlemu run examples/vector_add.s` on kN floats, then `extra`.
std::vector<std::string> VectorAddRun(const std::vector<std::string>& extra) {
  const std::string n = std::to_string(kN);
  std::vector<std::string> args = {
      "run",           Example("vector_add.s"),
      "--kernel",      "vector_add",
      "--grid",        n,
      "--threadgroup", "256",
      "--buffer",      "0=float[" + n + "]:iota",
      "--buffer",      "1=float[" + n + "]:random(7)",
      "--buffer",      "2=float[" + n + "]:zeros",
      "--bytes",       "3=uint:" + n};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

bool HavePython() { return access("/usr/bin/python3", X_OK) == 0; }

// Exit status of python3 running `script` with `path` as sys.argv[1].
int Python(const std::string& script, const std::string& path) {
  const std::string command =
      "/usr/bin/python3 -c " + ShellQuote(script) + " " + ShellQuote(path);
  return std::system(command.c_str());
}

std::optional<Json> ParseJsonFile(const std::string& path) {
  std::string error;
  std::optional<Json> json = JsonReader::Parse(ReadFile(path), &error);
  EXPECT_TRUE(json.has_value()) << path << ": " << error;
  return json;
}

TEST(TimingCli, JsonReportAndTrace) {
  ScratchDir dir;
  const std::string report = dir.Path("report.json");
  const std::string trace = dir.Path("trace.json");
  const ProcessResult r =
      RunMtlemu(dir, VectorAddRun({"--timing", "--report", "json",
                                   "--report-file", report, "--trace", trace}));
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;

  // The report: one JSON object with the documented keys.
  ASSERT_TRUE(std::filesystem::exists(report));
  if (HavePython()) {
    EXPECT_EQ(
        Python("import json,sys\n"
               "r = json.load(open(sys.argv[1]))\n"
               "keys = ['chip', 'cycles', 'time_us', 'dram_bytes',\n"
               "        'achieved_dram_gbps', 'flops', 'achieved_tflops',\n"
               "        'occupancy', 'limiter']\n"
               "sys.exit(0 if all(k in r for k in keys) else 3)\n",
               report),
        0)
        << ReadFile(report);
  }
  const std::optional<Json> json = ParseJsonFile(report);
  ASSERT_TRUE(json.has_value());
  ASSERT_EQ(json->kind, Json::Kind::kObject);
  for (const char* key :
       {"chip", "cycles", "time_us", "dram_bytes", "achieved_dram_gbps",
        "flops", "achieved_tflops", "occupancy", "limiter"}) {
    EXPECT_NE(json->Find(key), nullptr) << "no " << key << " in the report";
  }
  ASSERT_NE(json->Find("chip"), nullptr);
  EXPECT_EQ(json->Find("chip")->text, "m1");  // the default chip
  ASSERT_NE(json->Find("cycles"), nullptr);
  EXPECT_GT(json->Find("cycles")->number, 0);
  ASSERT_NE(json->Find("time_us"), nullptr);
  EXPECT_GT(json->Find("time_us")->number, 0);
  // One add per element. a, b and out each cross DRAM once (cold caches,
  // 128-byte lines of 32 floats each read by one SIMD group); the line
  // holding n (setBytes) once, or once per core that reads it before the
  // shared L2 is updated at the end of the model's first epoch.
  ASSERT_NE(json->Find("flops"), nullptr);
  EXPECT_EQ(json->Find("flops")->number, kN);
  // Stores the SLC still holds at the end cross after the kernel.
  ASSERT_NE(json->Find("dram_bytes"), nullptr);
  ASSERT_NE(json->Find("slc_held_write_bytes"), nullptr);
  const double data_bytes = 3.0 * 4 * kN;
  const double dram_bytes = json->Find("dram_bytes")->number +
                            json->Find("slc_held_write_bytes")->number;
  EXPECT_GE(dram_bytes, data_bytes + 128);
  EXPECT_LE(dram_bytes, data_bytes + 128 * 8);
  ASSERT_NE(json->Find("occupancy"), nullptr);
  EXPECT_GE(json->Find("occupancy")->number, 0);
  EXPECT_LE(json->Find("occupancy")->number, 1);
  ASSERT_NE(json->Find("limiter"), nullptr);
  const std::set<std::string> limiters = {"ALU", "memory bandwidth", "latency",
                                          "occupancy"};
  EXPECT_EQ(limiters.count(json->Find("limiter")->text), 1u)
      << json->Find("limiter")->text;
  // With --report-file the report is not on stdout.
  EXPECT_FALSE(Contains(r.out, "\"limiter\"")) << r.out;

  // The trace: parses, with a thread per core and a slice per threadgroup.
  ASSERT_TRUE(std::filesystem::exists(trace));
  if (HavePython()) {
    EXPECT_EQ(Python("import json,sys; json.load(open(sys.argv[1]))", trace),
              0);
  }
  const std::optional<Json> events_doc = ParseJsonFile(trace);
  ASSERT_TRUE(events_doc.has_value());
  const Json* events = events_doc->Find("traceEvents");
  ASSERT_NE(events, nullptr);
  std::set<std::string> threads;
  size_t slices = 0;
  for (const Json& e : events->items) {
    const Json* ph = e.Find("ph");
    const Json* name = e.Find("name");
    if (ph == nullptr || name == nullptr) continue;
    if (ph->text == "X") ++slices;
    if (ph->text == "M" && name->text == "thread_name" &&
        e.Find("args") != nullptr && e.Find("args")->Find("name") != nullptr) {
      threads.insert(e.Find("args")->Find("name")->text);
    }
  }
  EXPECT_EQ(slices, kN / 256);  // --trace-detail threadgroup by default
  for (int core = 0; core < 8; ++core) {  // the M1's 8 cores
    EXPECT_EQ(threads.count("core " + std::to_string(core)), 1u) << core;
  }
}

TEST(TimingCli, ChipAndTextReport) {
  ScratchDir dir;
  const std::string report = dir.Path("report.json");
  ProcessResult r =
      RunMtlemu(dir, VectorAddRun({"--chip", "m2", "--report", "json",
                                   "--report-file", report}));
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  const std::optional<Json> json = ParseJsonFile(report);
  ASSERT_TRUE(json.has_value());
  ASSERT_NE(json->Find("chip"), nullptr);
  EXPECT_EQ(json->Find("chip")->text, "m2");

  // --timing alone: the text report on stdout.
  r = RunMtlemu(dir, VectorAddRun({"--timing"}));
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_TRUE(Contains(r.out, "limiter"));
  EXPECT_TRUE(Contains(r.out, "Apple M1"));
}

TEST(TimingCli, BadReportFormatIsBadInput) {
  ScratchDir dir;
  const ProcessResult r =
      RunMtlemu(dir, VectorAddRun({"--timing", "--report", "bogus"}));
  EXPECT_EQ(r.exit_code, kExitBadInput) << r.out << r.err;
  EXPECT_TRUE(Contains(r.err, "bogus"));

  const ProcessResult detail = RunMtlemu(
      dir,
      VectorAddRun({"--trace", dir.Path("t.json"), "--trace-detail", "bogus"}));
  EXPECT_EQ(detail.exit_code, kExitBadInput) << detail.out << detail.err;
}

}  // namespace
}  // namespace mtlemu::cli
