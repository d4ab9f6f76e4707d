// Runs the kernels in examples/ through the mtlemu executable and checks
// their outputs against plain C++ computed here from the same inputs.
// Generated inputs (iota, random(SEED), fill) are rebuilt with
// MaterializeBuffer, the others are .npy files the test writes. Each run is
// made on one host thread and on the default number, which must give
// bit-identical outputs.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <map>
#include <ostream>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "cli/buffer_spec.h"
#include "cli/exit_codes.h"
#include "tests/cli/cli_test_util.h"

namespace mtlemu::cli {
namespace {

using cli_test::FromBytes;
using cli_test::ProcessResult;
using cli_test::ReadFile;
using cli_test::ReadNpyValues;
using cli_test::RunMtlemu;
using cli_test::ScratchDir;
using isa::ScalarType;

std::string Example(const std::string& file) {
  return std::string(MTLEMU_SOURCE_DIR) + "/examples/" + file;
}

// The elements the command line makes for the generated --buffer argument
// `arg` ("INDEX=TYPE[COUNT]:GEN").
template <class T>
std::vector<T> Generated(const std::string& arg) {
  Result<BufferSpec> spec = ParseBufferSpec(arg);
  EXPECT_TRUE(spec.ok()) << arg << ": " << spec.error().message;
  if (!spec.ok()) return {};
  const auto* gen = std::get_if<GeneratedBuffer>(&spec.value().source);
  EXPECT_NE(gen, nullptr) << arg;
  if (gen == nullptr) return {};
  EXPECT_EQ(static_cast<size_t>(isa::SizeOf(gen->type)), sizeof(T)) << arg;
  return FromBytes<T>(MaterializeBuffer(*gen));
}

// Writes `values` to DIR/NAME as a 1-D .npy of `type` and returns the
// --buffer argument "INDEX=PATH" that reads it.
template <class T>
std::string NpyArgument(const ScratchDir& dir, const std::string& name,
                        int index, ScalarType type,
                        const std::vector<T>& values) {
  const std::string path = dir.Path(name);
  cli_test::WriteNpyValues(path, type, values);
  return std::to_string(index) + "=" + path;
}

// The .npy files a run wrote, by buffer index.
using Outputs = std::map<int, std::string>;

// Runs `mtlemu run examples/EXAMPLE ARGS...` twice, with --threads 1 and
// with the default number of host threads, writing the buffers `outs` of
// each run to .npy files. Expects both runs to succeed with bit-identical
// outputs and returns the outputs of the default run.
Outputs RunExample(const ScratchDir& dir, const std::string& example,
                   const std::vector<std::string>& args,
                   const std::vector<int>& outs) {
  std::map<std::string, Outputs> runs;
  for (const std::string threads : {"1", "default"}) {
    std::vector<std::string> command = {"run", Example(example)};
    command.insert(command.end(), args.begin(), args.end());
    if (threads != "default") command.insert(command.end(), {"--threads", "1"});
    for (int index : outs) {
      const std::string path = dir.Path("out" + std::to_string(index) +
                                        "_threads_" + threads + ".npy");
      command.push_back("--out");
      command.push_back(std::to_string(index) + "=" + path);
      runs[threads][index] = path;
    }
    const ProcessResult r = RunMtlemu(dir, command);
    EXPECT_EQ(r.exit_code, kExitOk) << "threads " << threads << ": " << r.err;
  }
  for (int index : outs) {
    EXPECT_EQ(ReadFile(runs["1"][index]), ReadFile(runs["default"][index]))
        << "buffer " << index << " differs between --threads 1 and default";
  }
  return runs["default"];
}

// Compares floats by their bits (so -0 != +0) and reports the first
// mismatches by index.
::testing::AssertionResult BitsEqual(const std::vector<float>& actual,
                                     const std::vector<float>& expected) {
  return cli_test::ElementsMatch(actual, expected, [&](size_t i) {
    return std::bit_cast<uint32_t>(actual[i]) ==
           std::bit_cast<uint32_t>(expected[i]);
  });
}

// `count` floats spread over many exponents, both signs.
std::vector<float> RandomFloats(size_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> mantissa(1.0f, 2.0f);
  std::uniform_int_distribution<int> exponent(-20, 20);
  std::bernoulli_distribution negative(0.5);
  std::vector<float> v(count);
  for (float& x : v) {
    x = std::ldexp(mantissa(rng), exponent(rng)) * (negative(rng) ? -1 : 1);
  }
  return v;
}

// `count` integers in [-limit, limit] as floats: their sums are exact in any
// order while they stay below 2^24 in magnitude.
std::vector<float> RandomIntegerFloats(size_t count, int limit, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> value(-limit, limit);
  std::vector<float> v(count);
  for (float& x : v) x = static_cast<float>(value(rng));
  return v;
}

class ExamplesTest : public ::testing::Test {
 protected:
  ScratchDir dir_;
};

// --- vector_add.s -----------------------------------------------------------

std::vector<float> VectorAddReference(const std::vector<float>& a,
                                      const std::vector<float>& b,
                                      std::vector<float> out, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
  return out;
}

TEST_F(ExamplesTest, VectorAddGridNotMultipleOfThreadgroup) {
  const std::string a_arg = "0=float[1000]:random(1)";
  const std::vector<float> a = Generated<float>(a_arg);
  const std::vector<float> b = RandomFloats(1000, 2);
  const Outputs out =
      RunExample(dir_, "vector_add.s",
                 {"--kernel", "vector_add", "--grid", "1000", "--threadgroup",
                  "256", "--buffer", a_arg, "--buffer",
                  NpyArgument(dir_, "b.npy", 1, ScalarType::kFloat, b),
                  "--buffer", "2=float[1000]:zeros", "--bytes", "3=uint:1000"},
                 {2});
  EXPECT_TRUE(
      BitsEqual(ReadNpyValues<float>(out.at(2), ScalarType::kFloat),
                VectorAddReference(a, b, std::vector<float>(1000), 1000)));
}

// 4 whole threadgroups are 1024 threads for n = 1000: the kernel's bounds
// check must keep the last 24 from reading and writing.
TEST_F(ExamplesTest, VectorAddWholeThreadgroupsCheckBounds) {
  const std::string a_arg = "0=float[1000]:iota";
  const std::string b_arg = "1=float[1000]:random(42)";
  const std::string out_arg = "2=float[1024]:fill(-1.5)";
  const Outputs out =
      RunExample(dir_, "vector_add.s",
                 {"--kernel", "vector_add", "--groups", "4", "--threadgroup",
                  "256", "--buffer", a_arg, "--buffer", b_arg, "--buffer",
                  out_arg, "--bytes", "3=uint:1000"},
                 {2});
  EXPECT_TRUE(BitsEqual(
      ReadNpyValues<float>(out.at(2), ScalarType::kFloat),
      VectorAddReference(Generated<float>(a_arg), Generated<float>(b_arg),
                         Generated<float>(out_arg), 1000)));
}

// --- reduction.s -------------------------------------------------------------

struct ReductionReference {
  std::vector<double> sums;      // per threadgroup, exact in double
  std::vector<double> abs_sums;  // per threadgroup, of |x|
};

// What each threadgroup of `threadgroup` threads sums when the grid has
// `grid_threads` threads and thread t visits t, t + grid_threads, ... < n.
ReductionReference ReduceReference(const std::vector<float>& x,
                                   uint32_t grid_threads,
                                   uint32_t threadgroup) {
  const uint32_t groups = (grid_threads + threadgroup - 1) / threadgroup;
  ReductionReference ref{std::vector<double>(groups),
                         std::vector<double>(groups)};
  for (size_t i = 0; i < x.size(); ++i) {
    const uint32_t group =
        static_cast<uint32_t>(i % grid_threads) / threadgroup;
    ref.sums[group] += x[i];
    ref.abs_sums[group] += std::fabs(x[i]);
  }
  return ref;
}

struct ReductionCase {
  uint32_t n;
  std::string dispatch;  // "--grid" or "--groups"
  uint32_t size;         // of the grid (threads) or in threadgroups
  uint32_t threadgroup;
};

void PrintTo(const ReductionCase& c, std::ostream* os) {
  *os << "n=" << c.n << " " << c.dispatch << " " << c.size << " --threadgroup "
      << c.threadgroup;
}

class ReductionExactTest : public ExamplesTest,
                           public ::testing::WithParamInterface<ReductionCase> {
};

// Integer-valued data: every order of summation gives the exact sum.
TEST_P(ReductionExactTest, PartialSumsAreExact) {
  const ReductionCase& c = GetParam();
  const std::vector<float> x = RandomIntegerFloats(c.n, 1000, c.n);
  const bool groups = c.dispatch == "--groups";
  const uint32_t grid_threads = groups ? c.size * c.threadgroup : c.size;
  const ReductionReference ref =
      ReduceReference(x, grid_threads, c.threadgroup);
  const size_t count = ref.sums.size();
  const Outputs out = RunExample(
      dir_, "reduction.s",
      {"--kernel", "reduce_sum", c.dispatch, std::to_string(c.size),
       "--threadgroup", std::to_string(c.threadgroup), "--buffer",
       NpyArgument(dir_, "in.npy", 0, ScalarType::kFloat, x), "--buffer",
       "1=float[" + std::to_string(count) + "]:fill(12345)", "--bytes",
       "2=uint:" + std::to_string(c.n)},
      {1});
  const std::vector<float> partial =
      ReadNpyValues<float>(out.at(1), ScalarType::kFloat);
  std::vector<float> expected(ref.sums.begin(), ref.sums.end());
  EXPECT_TRUE(BitsEqual(partial, expected));
}

INSTANTIATE_TEST_SUITE_P(
    Examples, ReductionExactTest,
    ::testing::Values(
        // One element per thread; the last threadgroup has 136 threads.
        ReductionCase{5000, "--grid", 5000, 256},
        // Grid-stride: 768 threads over 10007 elements.
        ReductionCase{10007, "--groups", 3, 256},
        // 3 SIMD groups per threadgroup.
        ReductionCase{4000, "--groups", 5, 96},
        // 7 SIMD groups, the last one with 8 lanes; a smaller last group.
        ReductionCase{3001, "--grid", 1100, 200}));

// random(SEED) data: the sum depends on the order of additions, which is
// the emulator's to choose within a SIMD group; the error of any order with
// at most 64 roundings in a chain is below 64 * 2^-24 * sum |x|.
TEST_F(ExamplesTest, ReductionOfRandomDataIsAccurate) {
  const std::string in_arg = "0=float[100000]:random(7)";
  const std::vector<float> x = Generated<float>(in_arg);
  const ReductionReference ref = ReduceReference(x, 16 * 256, 256);
  const Outputs out =
      RunExample(dir_, "reduction.s",
                 {"--kernel", "reduce_sum", "--groups", "16", "--threadgroup",
                  "256", "--buffer", in_arg, "--buffer", "1=float[16]:zeros",
                  "--bytes", "2=uint:100000"},
                 {1});
  const std::vector<float> partial =
      ReadNpyValues<float>(out.at(1), ScalarType::kFloat);
  ASSERT_EQ(partial.size(), 16u);
  for (size_t g = 0; g < 16; ++g) {
    EXPECT_NEAR(partial[g], ref.sums[g], 64 * std::ldexp(ref.abs_sums[g], -24))
        << "threadgroup " << g;
  }
}

// --- histogram.s -------------------------------------------------------------

std::vector<uint32_t> HistogramReference(const std::vector<uint8_t>& data,
                                         std::vector<uint32_t> hist) {
  for (uint8_t v : data) ++hist[v];
  return hist;
}

TEST_F(ExamplesTest, HistogramOfRandomBytes) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<uint8_t> data(100003);
  for (uint8_t& v : data) v = static_cast<uint8_t>(byte(rng));
  const Outputs out = RunExample(
      dir_, "histogram.s",
      {"--kernel", "histogram", "--groups", "8", "--threadgroup", "256",
       "--buffer", NpyArgument(dir_, "data.npy", 0, ScalarType::kUChar, data),
       "--buffer", "1=uint[256]:zeros", "--bytes", "2=uint:100003"},
      {1});
  EXPECT_EQ(ReadNpyValues<uint32_t>(out.at(1), ScalarType::kUInt),
            HistogramReference(data, std::vector<uint32_t>(256)));
}

struct HistogramCase {
  std::string data;  // generated --buffer 0=... argument
  std::string hist;  // generated --buffer 1=... argument
  std::vector<std::string> dispatch;
};

void PrintTo(const HistogramCase& c, std::ostream* os) {
  *os << c.data << " " << c.hist;
}

class HistogramGeneratedTest
    : public ExamplesTest,
      public ::testing::WithParamInterface<HistogramCase> {};

// The kernel adds to what the hist buffer holds.
TEST_P(HistogramGeneratedTest, AddsCountsToHistogram) {
  const HistogramCase& c = GetParam();
  const std::vector<uint8_t> data = Generated<uint8_t>(c.data);
  std::vector<std::string> args = {
      "--kernel", "histogram",
      "--buffer", c.data,
      "--buffer", c.hist,
      "--bytes",  "2=uint:" + std::to_string(data.size())};
  args.insert(args.end(), c.dispatch.begin(), c.dispatch.end());
  const Outputs out = RunExample(dir_, "histogram.s", args, {1});
  EXPECT_EQ(ReadNpyValues<uint32_t>(out.at(1), ScalarType::kUInt),
            HistogramReference(data, Generated<uint32_t>(c.hist)));
}

INSTANTIATE_TEST_SUITE_P(
    Examples, HistogramGeneratedTest,
    ::testing::Values(
        // iota wraps modulo 256; a smaller last threadgroup.
        HistogramCase{"0=uchar[1000]:iota",
                      "1=uint[256]:fill(5)",
                      {"--grid", "1000", "--threadgroup", "256"}},
        HistogramCase{"0=uchar[4099]:random(3)",
                      "1=uint[256]:zeros",
                      {"--groups", "3", "--threadgroup", "64"}},
        // Threadgroups of 32 threads: each zeroes and flushes 8 bins.
        HistogramCase{"0=uchar[777]:fill(200)",
                      "1=uint[256]:iota",
                      {"--grid", "100", "--threadgroup", "32"}}));

// --- matmul_tiled.s ----------------------------------------------------------

// C = A * B with the kernel's order of operations: fma over k = 0..K-1.
std::vector<float> MatmulReference(const std::vector<float>& a,
                                   const std::vector<float>& b, uint32_t m,
                                   uint32_t n, uint32_t k) {
  std::vector<float> c(static_cast<size_t>(m) * n);
  for (uint32_t i = 0; i < m; ++i) {
    for (uint32_t j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (uint32_t p = 0; p < k; ++p) {
        acc = std::fma(a[i * k + p], b[p * n + j], acc);
      }
      c[i * n + j] = acc;
    }
  }
  return c;
}

struct MatmulCase {
  uint32_t m, n, k;
  bool groups;  // dispatchThreadgroups, else dispatchThreads
};

void PrintTo(const MatmulCase& c, std::ostream* os) {
  *os << c.m << "x" << c.n << "x" << c.k
      << (c.groups ? " --groups" : " --grid");
}

class MatmulTest : public ExamplesTest,
                   public ::testing::WithParamInterface<MatmulCase> {};

TEST_P(MatmulTest, MatchesFmaReference) {
  const MatmulCase& c = GetParam();
  const std::string a_arg =
      "0=float[" + std::to_string(c.m * c.k) + "]:random(11)";
  const std::vector<float> a = Generated<float>(a_arg);
  const std::vector<float> b = RandomFloats(c.n * c.k, c.m + c.n + c.k);
  const std::vector<std::string> dispatch =
      c.groups
          ? std::vector<std::string>{"--groups",
                                     std::to_string((c.n + 15) / 16) + "," +
                                         std::to_string((c.m + 15) / 16)}
          : std::vector<std::string>{
                "--grid", std::to_string(c.n) + "," + std::to_string(c.m)};
  std::vector<std::string> args = {
      "--kernel",
      "matmul_tiled",
      "--threadgroup",
      "16,16",
      "--buffer",
      a_arg,
      "--buffer",
      NpyArgument(dir_, "b.npy", 1, ScalarType::kFloat, b),
      "--buffer",
      "2=float[" + std::to_string(c.m * c.n) + "]:fill(-7)",
      "--bytes",
      "3=uint:" + std::to_string(c.m) + "," + std::to_string(c.n) + "," +
          std::to_string(c.k)};
  args.insert(args.end(), dispatch.begin(), dispatch.end());
  const Outputs out = RunExample(dir_, "matmul_tiled.s", args, {2});
  EXPECT_TRUE(BitsEqual(ReadNpyValues<float>(out.at(2), ScalarType::kFloat),
                        MatmulReference(a, b, c.m, c.n, c.k)));
}

INSTANTIATE_TEST_SUITE_P(Examples, MatmulTest,
                         ::testing::Values(MatmulCase{37, 29, 50, false},
                                           MatmulCase{37, 29, 50, true},
                                           MatmulCase{32, 48, 16, true},
                                           MatmulCase{5, 70, 33, false},
                                           MatmulCase{1, 1, 1, false}));

}  // namespace
}  // namespace mtlemu::cli
