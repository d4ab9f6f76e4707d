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
#include "tests/traces/strict_json.h"

namespace mtlemu::cli {
namespace {

using cli_test::Contains;
using cli_test::ProcessResult;
using cli_test::ReadFile;
using cli_test::RunMtlemu;
using cli_test::ScratchDir;
using cli_test::ShellQuote;
using traces::testing::Json;
using traces::testing::ParseStrictJson;

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
  std::optional<Json> json = ParseStrictJson(ReadFile(path), &error);
  EXPECT_TRUE(json.has_value()) << path << ": " << error;
  return json;
}

// The member `key` of `object`, or nullptr.
const Json* Find(const Json& object, const std::string& key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  return it != object.end() ? &*it : nullptr;
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
  ASSERT_TRUE(json->is_object());
  for (const char* key :
       {"chip", "cycles", "time_us", "dram_bytes", "achieved_dram_gbps",
        "flops", "achieved_tflops", "occupancy", "limiter"}) {
    EXPECT_NE(Find(*json, key), nullptr) << "no " << key << " in the report";
  }
  ASSERT_NE(Find(*json, "chip"), nullptr);
  EXPECT_EQ(Find(*json, "chip")->get<std::string>(), "m1");  // the default chip
  ASSERT_NE(Find(*json, "cycles"), nullptr);
  EXPECT_GT(Find(*json, "cycles")->get<double>(), 0);
  ASSERT_NE(Find(*json, "time_us"), nullptr);
  EXPECT_GT(Find(*json, "time_us")->get<double>(), 0);
  // One add per element. a, b and out each cross DRAM once (cold caches,
  // 128-byte lines of 32 floats each read by one SIMD group); the line
  // holding n (setBytes) once, or once per core that reads it before the
  // shared L2 is updated at the end of the model's first epoch.
  ASSERT_NE(Find(*json, "flops"), nullptr);
  EXPECT_EQ(Find(*json, "flops")->get<double>(), kN);
  // Stores the SLC still holds at the end cross after the kernel.
  ASSERT_NE(Find(*json, "dram_bytes"), nullptr);
  ASSERT_NE(Find(*json, "slc_held_write_bytes"), nullptr);
  const double data_bytes = 3.0 * 4 * kN;
  const double dram_bytes = Find(*json, "dram_bytes")->get<double>() +
                            Find(*json, "slc_held_write_bytes")->get<double>();
  EXPECT_GE(dram_bytes, data_bytes + 128);
  EXPECT_LE(dram_bytes, data_bytes + 128 * 8);
  ASSERT_NE(Find(*json, "occupancy"), nullptr);
  EXPECT_GE(Find(*json, "occupancy")->get<double>(), 0);
  EXPECT_LE(Find(*json, "occupancy")->get<double>(), 1);
  ASSERT_NE(Find(*json, "limiter"), nullptr);
  const std::set<std::string> limiters = {
      "ALU",     "memory bandwidth", "threadgroup memory", "cache bandwidth",
      "latency", "occupancy"};
  EXPECT_EQ(limiters.count(Find(*json, "limiter")->get<std::string>()), 1u)
      << Find(*json, "limiter")->get<std::string>();
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
  const Json* events = Find(*events_doc, "traceEvents");
  ASSERT_NE(events, nullptr);
  std::set<std::string> threads;
  size_t slices = 0;
  for (const Json& e : *events) {
    const Json* ph = Find(e, "ph");
    const Json* name = Find(e, "name");
    if (ph == nullptr || name == nullptr) continue;
    if (ph->get<std::string>() == "X") ++slices;
    if (ph->get<std::string>() == "M" &&
        name->get<std::string>() == "thread_name" &&
        Find(e, "args") != nullptr &&
        Find(*Find(e, "args"), "name") != nullptr) {
      threads.insert(Find(*Find(e, "args"), "name")->get<std::string>());
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
  ASSERT_NE(Find(*json, "chip"), nullptr);
  EXPECT_EQ(Find(*json, "chip")->get<std::string>(), "m2");

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
