// `mtlemu run --check` through the executable: findings on stderr with
// their source lines, --check-report's JSON, exit code 5, outputs kept, and
// the errors for bad arguments (before the run).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "cli/exit_codes.h"
#include "tests/cli/cli_test_util.h"

namespace mtlemu::cli {
namespace {

using cli_test::Contains;
using cli_test::DataFile;
using cli_test::ProcessResult;
using cli_test::ReadFile;
using cli_test::ReadNpyValues;
using cli_test::RunMtlemu;
using cli_test::ScratchDir;

std::vector<std::string> Args(const std::string& kernel,
                              const std::vector<std::string>& extra) {
  std::vector<std::string> args = {
      "run", DataFile("checks.metal"), "--kernel", kernel, "--grid",
      "128", "--threadgroup",          "64"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(CheckCli, RaceIsReportedWithLinesAndExitCode5AndOutputsKept) {
  ScratchDir dir;
  const std::string report = dir.Path("report.json");
  const std::string out = dir.Path("out.npy");
  const ProcessResult r = RunMtlemu(
      dir,
      Args("neighbours", {"--buffer", "0=float[128]:zeros", "--check", "race",
                          "--check-report", report, "--out", "0=" + out}));
  EXPECT_EQ(r.exit_code, kExitCheckFound) << r.err;
  EXPECT_TRUE(Contains(r.err, "threadgroup-memory race in kernel"));
  EXPECT_TRUE(Contains(r.err, "checks.metal:9:"));   // the write
  EXPECT_TRUE(Contains(r.err, "checks.metal:10:"));  // the read
  EXPECT_TRUE(Contains(r.err, "  10 | out[gid] = t[(tid + 1) % 64];"));
  // What the kernel computed is written all the same: the SIMD groups take
  // turns before the read (the interleaved order), so every thread g reads
  // what thread g + 1 of its threadgroup wrote, as on the GPU.
  const std::vector<float> values =
      ReadNpyValues<float>(out, isa::ScalarType::kFloat);
  ASSERT_EQ(values.size(), 128u);
  for (int g = 0; g < 128; ++g) {
    EXPECT_EQ(values[g], static_cast<float>(g / 64 * 64 + (g + 1) % 64)) << g;
  }
  const std::string json = ReadFile(report);
  EXPECT_TRUE(
      Contains(json, "{\"dispatches\": [\n{\"kernel\": \"neighbours\""));
  EXPECT_TRUE(Contains(json, "\"kind\": \"threadgroup-memory race\""));
  EXPECT_TRUE(Contains(json, "\"line\": 9,"));
  EXPECT_TRUE(Contains(json, "\"checks\": \"race\""));
  EXPECT_EQ(json.substr(json.size() - 3), "]}\n");
}

// --check order: the dispatch in two orders, the output that differs and
// the lines no barrier orders; exit 5, and the buffer holds the default
// (interleaved) order's numbers, log(sum(exp(x))) of each 64 inputs in
// [0, 1) (their sums of exponentials exceed their maxima: the race shows).
TEST(CheckCli, OrderCheckNamesTheOutputAndTheLines) {
  ScratchDir dir;
  const std::string in = dir.Path("in.npy");
  const std::string out = dir.Path("out.npy");
  std::vector<std::string> args = {"run",           DataFile("checks.metal"),
                                   "--kernel",      "logsumexp",
                                   "--grid",        "128",
                                   "--threadgroup", "64",
                                   "--buffer",      "0=float[128]:random(3)",
                                   "--buffer",      "1=float[2]:zeros",
                                   "--out",         "0=" + in,
                                   "--out",         "1=" + out};
  ProcessResult r = RunMtlemu(dir, args);
  EXPECT_EQ(r.exit_code, kExitOk) << r.err;
  const std::vector<float> x =
      ReadNpyValues<float>(in, isa::ScalarType::kFloat);
  const std::vector<float> interleaved =
      ReadNpyValues<float>(out, isa::ScalarType::kFloat);
  ASSERT_EQ(x.size(), 128u);
  ASSERT_EQ(interleaved.size(), 2u);
  for (int g = 0; g < 2; ++g) {
    double sum = 0;
    for (int i = 0; i < 64; ++i) sum += std::exp(double{x[g * 64 + i]});
    EXPECT_NEAR(interleaved[g], std::log(sum), 1e-4) << g;
  }
  args.insert(args.end(), {"--check", "order"});
  r = RunMtlemu(dir, args);
  EXPECT_EQ(r.exit_code, kExitCheckFound) << r.err;
  EXPECT_TRUE(Contains(r.err, "result that depends on the order of SIMD"))
      << r.err;
  EXPECT_TRUE(Contains(r.err, "checks.metal:42 (read) and ")) << r.err;
  EXPECT_TRUE(Contains(r.err, "checks.metal:44 (write)")) << r.err;
  EXPECT_TRUE(Contains(r.err, "buffer(1)")) << r.err;
  EXPECT_EQ(ReadNpyValues<float>(out, isa::ScalarType::kFloat), interleaved);
  // Sequential order: SIMD group 0 overwrites a maximum before SIMD group 1
  // reads it.
  args.resize(args.size() - 2);
  args.insert(args.end(), {"--schedule", "sequential"});
  r = RunMtlemu(dir, args);
  EXPECT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_NE(ReadNpyValues<float>(out, isa::ScalarType::kFloat), interleaved);
  args.back() = "lockstep";
  r = RunMtlemu(dir, args);
  EXPECT_EQ(r.exit_code, kExitBadInput) << r.err;
}

TEST(CheckCli, NothingFoundExitsZero) {
  ScratchDir dir;
  const ProcessResult r = RunMtlemu(
      dir, Args("neighbours_barrier",
                {"--buffer", "0=float[128]:zeros", "--check", "all"}));
  EXPECT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_TRUE(Contains(r.out, "checks race,init,simd,order: nothing found"));
}

TEST(CheckCli, UninitBufferIsReadBeforeAnythingWroteIt) {
  ScratchDir dir;
  const ProcessResult r = RunMtlemu(
      dir, Args("accumulate",
                {"--buffer", "0=float[128]:uninit", "--check", "init"}));
  EXPECT_EQ(r.exit_code, kExitCheckFound) << r.err;
  EXPECT_TRUE(Contains(r.err, "read of an uninitialized buffer"));
  EXPECT_TRUE(Contains(r.err, "buffer(0)"));
  // Without --check an uninit buffer is zeros, and nothing is said.
  const ProcessResult plain =
      RunMtlemu(dir, Args("accumulate", {"--buffer", "0=float[128]:uninit"}));
  EXPECT_EQ(plain.exit_code, kExitOk) << plain.err;
}

TEST(CheckCli, BadArgumentsFailBeforeTheRun) {
  ScratchDir dir;
  ProcessResult r = RunMtlemu(
      dir, Args("accumulate",
                {"--buffer", "0=float[128]:zeros", "--check", "race,bogus"}));
  EXPECT_EQ(r.exit_code, kExitBadInput);
  EXPECT_TRUE(Contains(r.err,
                       "mtlemu: error: --check 'race,bogus': "
                       "unknown check 'bogus'"));
  r = RunMtlemu(dir,
                Args("accumulate", {"--buffer", "0=float[128]:zeros",
                                    "--check-report", dir.Path("r.json")}));
  EXPECT_EQ(r.exit_code, kExitBadInput);
  EXPECT_TRUE(Contains(r.err, "--check-report needs --check"));
  r = RunMtlemu(dir, Args("accumulate",
                          {"--buffer", "0=float[128]:zeros", "--check", "all",
                           "--check-report", dir.Path("missing/r.json")}));
  EXPECT_EQ(r.exit_code, kExitBadInput);
  EXPECT_TRUE(Contains(r.err, "--check-report: no folder"));
  EXPECT_FALSE(Contains(r.out, "dispatched"));
}

}  // namespace
}  // namespace mtlemu::cli
