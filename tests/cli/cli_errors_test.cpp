// Bad input through the mtlemu executable: exit codes (cli/exit_codes.h) and
// what stderr says; and the asm / disasm / chips / --help commands. The bad
// kernels are in tests/cli/data/.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
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
using cli_test::WriteFile;
using isa::ScalarType;

std::string Example(const std::string& file) {
  return std::string(MTLEMU_SOURCE_DIR) + "/examples/" + file;
}

// The start of `mtlemu run examples/vector_add.s` with all its arguments
// bound but buffer 0; `extra` comes after.
std::vector<std::string> VectorAddRun(const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"run",      Example("vector_add.s"),
                                   "--kernel", "vector_add",
                                   "--grid",   "4",
                                   "--buffer", "1=float[4]:iota",
                                   "--buffer", "2=float[4]:zeros",
                                   "--bytes",  "3=uint:4"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

class CliErrorsTest : public ::testing::Test {
 protected:
  ProcessResult Run(const std::vector<std::string>& args) {
    return RunMtlemu(dir_, args);
  }

  // Runs `args`, expecting exit code 1 (bad input) and an error message
  // containing `part`; returns stderr.
  std::string ExpectBadInput(const std::vector<std::string>& args,
                             const std::string& part) {
    const ProcessResult r = Run(args);
    EXPECT_EQ(r.exit_code, kExitBadInput) << r.err;
    EXPECT_TRUE(Contains(r.err, "error: ")) << "stderr: " << r.err;
    EXPECT_TRUE(Contains(r.err, part));
    return r.err;
  }

  ScratchDir dir_;
};

// --- the kernel file ---------------------------------------------------------

struct MalformedCase {
  std::string file;
  std::string location;  // LINE:COL
  std::string message;   // part of the diagnostic after "error: "
};

void PrintTo(const MalformedCase& c, std::ostream* os) { *os << c.file; }

class MalformedFileTest : public CliErrorsTest,
                          public ::testing::WithParamInterface<MalformedCase> {
};

TEST_P(MalformedFileTest, RunAndAsmGiveFileLineColumn) {
  const MalformedCase& c = GetParam();
  const std::string path = DataFile(c.file);
  const std::string diagnostic = path + ":" + c.location + ": error: ";
  for (const std::string command : {"run", "asm", "disasm"}) {
    std::vector<std::string> args = {command, path};
    if (command == "run") {
      args.insert(args.end(), {"--kernel", "k", "--grid", "1"});
    }
    const std::string err = ExpectBadInput(args, diagnostic);
    EXPECT_TRUE(Contains(err, c.message)) << command;
  }
}

INSTANTIATE_TEST_SUITE_P(
    CliErrors, MalformedFileTest,
    ::testing::Values(MalformedCase{"syntax_error.s", "6:5",
                                    "unknown mnemonic 'bogus'"},
                      MalformedCase{"type_error.s", "5:5",
                                    "type f32 is not allowed for and"}));

TEST_F(CliErrorsTest, UnknownKernelNamesTheFileAndItsKernels) {
  const std::string path = DataFile("two_kernels.s");
  const std::string err =
      ExpectBadInput({"run", path, "--kernel", "fill_threes", "--grid", "1"},
                     "no kernel named 'fill_threes' in " + path);
  EXPECT_TRUE(Contains(err, "fill_ones, fill_twos"));
}

TEST_F(CliErrorsTest, PicksTheNamedKernelOfTwo) {
  const std::string out = dir_.Path("out.npy");
  const ProcessResult r =
      Run({"run", DataFile("two_kernels.s"), "--kernel", "fill_twos", "--grid",
           "5", "--buffer", "0=float[6]:zeros", "--out", "0=" + out});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_EQ(ReadNpyValues<float>(out, ScalarType::kFloat),
            (std::vector<float>{2, 2, 2, 2, 2, 0}));
}

TEST_F(CliErrorsTest, NonexistentFile) {
  const std::string path = dir_.Path("no_such_file.s");
  for (const std::string command : {"run", "asm", "disasm"}) {
    std::vector<std::string> args = {command, path};
    if (command == "run") args.insert(args.end(), {"--kernel", "k"});
    ExpectBadInput(args, path + ": cannot open file");
  }
}

TEST_F(CliErrorsTest, DirectoryInsteadOfFile) {
  const std::string path = dir_.Path("");
  for (const std::string command : {"run", "asm", "disasm"}) {
    std::vector<std::string> args = {command, path};
    if (command == "run") args.insert(args.end(), {"--kernel", "k"});
    ExpectBadInput(args, ": is a directory");
  }
}

// A device that never ends is refused past a bound, not read until memory
// runs out.
TEST_F(CliErrorsTest, EndlessFileIsRefused) {
  for (const std::string command : {"asm", "disasm"}) {
    ExpectBadInput({command, "/dev/zero"},
                   "/dev/zero: more than 256 MiB; not a kernel file");
  }
}

TEST_F(CliErrorsTest, UnsupportedFileType) {
  const std::string path = dir_.Path("kernel.txt");
  WriteFile(path, ReadFile(Example("vector_add.s")));
  ExpectBadInput({"run", path, "--kernel", "vector_add", "--grid", "1"},
                 "unsupported kernel file type '.txt'");
}

TEST_F(CliErrorsTest, CompileTakesMetalOrTritonFiles) {
  ExpectBadInput({"compile", Example("vector_add.s")},
                 "'compile' takes Metal Shading Language (.metal) or a "
                 "Triton kernel");
}

// --- run's arguments ---------------------------------------------------------

TEST_F(CliErrorsTest, UnknownChipListsTheKnownOnes) {
  const std::string err = ExpectBadInput(
      VectorAddRun({"--buffer", "0=float[4]:zeros", "--chip", "m9"}),
      "unknown chip 'm9'");
  EXPECT_TRUE(Contains(err, "m1"));
  EXPECT_TRUE(Contains(err, "m3-max"));
}

TEST_F(CliErrorsTest, MissingBufferNamesIndexAndName) {
  ExpectBadInput(VectorAddRun({}), "needs buffer(0) 'a' (device float)");
}

TEST_F(CliErrorsTest, IntDataForFloatArgument) {
  ExpectBadInput(VectorAddRun({"--buffer", "0=int[4]:iota"}),
                 "buffer(0) 'a' (device float) as float, but the data given "
                 "is int");
}

TEST_F(CliErrorsTest, IntNpyForFloatArgument) {
  const std::string path = dir_.Path("ints.npy");
  cli_test::WriteNpyValues(path, ScalarType::kInt,
                           std::vector<int32_t>{1, 2, 3, 4});
  ExpectBadInput(VectorAddRun({"--buffer", "0=" + path}),
                 "but the data given is int");
}

// A host's size_t into `constant uint&` (real hosts pass it so): the
// kernel reads the first 4 bytes, with a note; narrower data is an error.
TEST_F(CliErrorsTest, WiderBytesAreReadFromTheirFirstBytes) {
  const std::string kernel = dir_.Path("fill.metal");
  WriteFile(kernel, R"(#include <metal_stdlib>
using namespace metal;
kernel void fill(device uint* out [[buffer(0)]], constant uint& n [[buffer(1)]],
                 uint i [[thread_position_in_grid]]) {
  out[i] = n;
}
)");
  const std::string out = dir_.Path("out.npy");
  const ProcessResult r =
      Run({"run", kernel, "--kernel", "fill", "--grid", "4", "--threadgroup",
           "4", "--buffer", "0=uint[4]:zeros", "--bytes", "1=ulong:5", "--out",
           "0=" + out});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_TRUE(Contains(r.err, "note: --bytes '1=ulong:5'")) << r.err;
  EXPECT_TRUE(Contains(r.err, "the first 4 of the 8 bytes")) << r.err;
  EXPECT_EQ(ReadNpyValues<uint32_t>(out, ScalarType::kUInt),
            std::vector<uint32_t>(4, 5));
  ExpectBadInput({"run", kernel, "--kernel", "fill", "--grid", "4", "--buffer",
                  "0=uint[4]:zeros", "--bytes", "1=ushort:5"},
                 "but the data given is ushort");
}

// A file of helpers alone compiles to an empty library, as Metal's does.
TEST_F(CliErrorsTest, AFileWithoutKernelsCompilesEmpty) {
  const std::string helpers = dir_.Path("helpers.metal");
  WriteFile(helpers, "inline float twice(float x) { return 2.0f * x; }\n");
  const ProcessResult r = Run({"compile", helpers});
  EXPECT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_TRUE(Contains(r.err, "has no kernel: an empty library")) << r.err;
  ExpectBadInput({"run", helpers, "--kernel", "k", "--grid", "1"},
                 "no kernel named 'k'");
}

class BadBufferSpecTest : public CliErrorsTest,
                          public ::testing::WithParamInterface<
                              std::pair<std::string, std::string>> {};

TEST_P(BadBufferSpecTest, QuotesTheArgument) {
  const auto& [spec, message] = GetParam();
  ExpectBadInput(VectorAddRun({"--buffer", spec}),
                 "--buffer '" + spec + "': " + message);
}

INSTANTIATE_TEST_SUITE_P(
    CliErrors, BadBufferSpecTest,
    ::testing::Values(
        std::pair<std::string, std::string>{"0", "expected INDEX=SPEC"},
        std::pair<std::string, std::string>{"0=float[4]:bogus",
                                            "unknown generator 'bogus'"},
        std::pair<std::string, std::string>{"0=floaty[4]:zeros",
                                            "unknown type 'floaty'"},
        std::pair<std::string, std::string>{
            "31=float[4]:zeros", "buffer index '31' is out of range"},
        std::pair<std::string, std::string>{"0=float[0]:zeros",
                                            "count must be positive"},
        std::pair<std::string, std::string>{"0=float[4]:random(x)", "seed 'x'"},
        std::pair<std::string, std::string>{"0=float[4", "missing ']'"}));

TEST_F(CliErrorsTest, SameIndexGivenTwice) {
  ExpectBadInput(
      VectorAddRun({"--buffer", "0=float[4]:iota", "--bytes", "3=uint:5"}),
      "--bytes '3=uint:5': buffer index 3 is already given");
  ExpectBadInput(
      VectorAddRun({"--buffer", "0=float[4]:iota", "--bytes", "2=float:1"}),
      "--bytes '2=float:1': buffer index 2 is already given");
}

TEST_F(CliErrorsTest, MissingNpyFile) {
  const std::string path = dir_.Path("missing.npy");
  ExpectBadInput(VectorAddRun({"--buffer", "0=" + path}), path + ": ");
}

TEST_F(CliErrorsTest, ThreadgroupOver1024Threads) {
  for (const std::string size : {"2048", "32,33"}) {
    ExpectBadInput(
        VectorAddRun({"--buffer", "0=float[4]:zeros", "--threadgroup", size}),
        "exceeds the pipeline's maxTotalThreadsPerThreadgroup "
        "(1024)");
  }
}

TEST_F(CliErrorsTest, GridAndGroupsAreExclusive) {
  ExpectBadInput(
      VectorAddRun({"--buffer", "0=float[4]:zeros", "--groups", "1"}),
      "exactly one of --grid");
}

// --- faults and timeouts -----------------------------------------------------

// 32 threads read a 20-element buffer: thread 20 (lane 20 of SIMD group 0)
// faults first, at offset 80, after all 32 stored out[i] = i.
TEST_F(CliErrorsTest, OutOfBoundsReadIsGpuFaultAndKeepsOutputs) {
  const std::string path = DataFile("out_of_bounds.s");
  const std::string in = dir_.Path("in.npy");
  const std::string out = dir_.Path("out.npy");
  const ProcessResult r =
      Run({"run", path, "--kernel", "read_past_end", "--grid", "32",
           "--threadgroup", "32", "--buffer", "0=float[20]:iota", "--buffer",
           "1=float[32]:fill(-1)", "--out", "0=" + in, "--out", "1=" + out,
           "--oob", "fault"});
  EXPECT_EQ(r.exit_code, kExitGpuFault) << r.err;
  for (const std::string& part : std::vector<std::string>{
           path + ":12:5: ", "out-of-bounds", "kernel 'read_past_end'",
           "thread_position_in_grid (20, 0, 0)", "lane 20", "read of 4 bytes",
           "address 0x", "buffer(0) 'in'", "at offset 80"}) {
    EXPECT_TRUE(Contains(r.err, part));
  }
  std::vector<float> iota(20), computed(32);
  for (int i = 0; i < 20; ++i) iota[i] = static_cast<float>(i);
  for (int i = 0; i < 32; ++i) computed[i] = static_cast<float>(i);
  EXPECT_EQ(ReadNpyValues<float>(in, ScalarType::kFloat), iota);
  EXPECT_EQ(ReadNpyValues<float>(out, ScalarType::kFloat), computed);
}

// By default the same reads (within 16 KiB of the buffer) read zeros, as
// on a Mac the run goes on, and a warning names the line: exit code 0.
TEST_F(CliErrorsTest, ReadJustPastTheEndIsAWarningByDefault) {
  const std::string path = DataFile("out_of_bounds.s");
  const std::string out = dir_.Path("out.npy");
  const ProcessResult r =
      Run({"run", path, "--kernel", "read_past_end", "--grid", "32",
           "--threadgroup", "32", "--buffer", "0=float[20]:iota", "--buffer",
           "1=float[32]:fill(-1)", "--out", "1=" + out});
  EXPECT_EQ(r.exit_code, kExitOk) << r.err;
  for (const std::string& part : std::vector<std::string>{
           "warning: 1 access outside a buffer",
           path + ":12:5: ", "found 12 times", "lane 20", "buffer(0) 'in'",
           "at offset 80", "read as zero", "--oob fault"}) {
    EXPECT_TRUE(Contains(r.err, part)) << part << "\n" << r.err;
  }
  std::vector<float> want(32);
  for (int i = 0; i < 32; ++i) want[i] = i < 20 ? i + 1.0f : 1.0f;
  EXPECT_EQ(ReadNpyValues<float>(out, ScalarType::kFloat), want);
}

TEST_F(CliErrorsTest, InfiniteLoopTimesOutAndKeepsOutputs) {
  const std::string out = dir_.Path("out.npy");
  const ProcessResult r =
      Run({"run", DataFile("infinite_loop.s"), "--kernel", "spin", "--grid",
           "8", "--threadgroup", "8", "--buffer", "0=uint[8]:fill(99)", "--out",
           "0=" + out, "--timeout", "1"});
  EXPECT_EQ(r.exit_code, kExitTimeout) << r.err;
  EXPECT_TRUE(Contains(r.err, "timeout"));
  EXPECT_TRUE(Contains(r.err, "kernel 'spin'"));
  EXPECT_EQ(ReadNpyValues<uint32_t>(out, ScalarType::kUInt),
            (std::vector<uint32_t>{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST_F(CliErrorsTest, ArgumentErrorsReadLikeOtherErrors) {
  ExpectBadInput({"run", Example("vector_add.s"), "--grid", "4"},
                 "mtlemu: error: --kernel is required");
}

TEST_F(CliErrorsTest, NegativeHostThreadsAreRefused) {
  ExpectBadInput(
      VectorAddRun({"--buffer", "0=float[4]:iota", "--threads", "-1"}),
      "--threads must be 0 (all cores) or a number of host "
      "threads, not -1");
}

TEST_F(CliErrorsTest, InfiniteTimeoutIsNoLimit) {
  for (const std::string timeout : {"inf", "1e300"}) {
    const ProcessResult r = Run(
        VectorAddRun({"--buffer", "0=float[4]:iota", "--timeout", timeout}));
    EXPECT_EQ(r.exit_code, kExitOk) << timeout << ": " << r.err;
  }
}

// Each executor gives the same output; a bad name (flag or environment) is
// bad input.
TEST_F(CliErrorsTest, ExecutorsGiveTheSameOutputAndBadOnesAreRefused) {
  std::vector<std::vector<float>> outputs;
  for (const std::string executor : {"auto", "interpreter", "jit"}) {
    const std::string out = dir_.Path(executor + ".npy");
    const ProcessResult r =
        Run(VectorAddRun({"--buffer", "0=float[4]:iota", "--executor", executor,
                          "--out", "2=" + out}));
    ASSERT_EQ(r.exit_code, kExitOk) << executor << ": " << r.err;
    outputs.push_back(ReadNpyValues<float>(out, ScalarType::kFloat));
  }
  EXPECT_EQ(outputs[0], (std::vector<float>{0, 2, 4, 6}));
  EXPECT_EQ(outputs[1], outputs[0]);
  EXPECT_EQ(outputs[2], outputs[0]);
  ExpectBadInput(
      VectorAddRun({"--buffer", "0=float[4]:iota", "--executor", "fast"}),
      "--executor");
  // The variable is read by every Device; this process may run with it set
  // (ctest -L jit), so it is put back after.
  const char* before = std::getenv("MTLEMU_EXECUTOR");
  const std::string saved = before ? before : "";
  setenv("MTLEMU_EXECUTOR", "fast", 1);
  ExpectBadInput(
      VectorAddRun({"--buffer", "0=float[4]:iota"}),
      "MTLEMU_EXECUTOR is 'fast': it takes auto, interpreter or jit");
  if (before) {
    setenv("MTLEMU_EXECUTOR", saved.c_str(), 1);
  } else {
    unsetenv("MTLEMU_EXECUTOR");
  }
}

// --- outputs: checked before the run, kept after it --------------------------

// The run would have computed out = a + b; a wrong --expect size is found
// before it, not after (when it used to throw the outputs away).
TEST_F(CliErrorsTest, ExpectOfTheWrongSizeFailsBeforeTheRun) {
  const std::string expect = dir_.Path("short.npy");
  cli_test::WriteNpyValues(expect, ScalarType::kFloat,
                           std::vector<float>{0, 2, 4});
  const std::string err = ExpectBadInput(
      VectorAddRun({"--buffer", "0=float[4]:iota", "--expect", "2=" + expect}),
      "expected 3 elements, the buffer has 4");
  EXPECT_FALSE(Contains(err, "dispatched"));
}

TEST_F(CliErrorsTest, OutputPathsAreCheckedBeforeTheRun) {
  const std::string missing = dir_.Path("no/such/folder/x.npy");
  ExpectBadInput(
      VectorAddRun({"--buffer", "0=float[4]:iota", "--out", "2=" + missing}),
      "no folder");
  const std::string twice = dir_.Path("twice.npy");
  ExpectBadInput(VectorAddRun({"--buffer", "0=float[4]:iota", "--out",
                               "2=" + twice, "--out", "0=" + twice}),
                 "is written to " + twice + " already");
  EXPECT_FALSE(std::filesystem::exists(twice));
}

// An existing output is replaced whole (written beside it, then renamed).
TEST_F(CliErrorsTest, OutputReplacesAnExistingFileWhole) {
  const std::string out = dir_.Path("out.npy");
  cli_test::WriteNpyValues(out, ScalarType::kFloat,
                           std::vector<float>(100, 7.0f));
  const ProcessResult r =
      Run(VectorAddRun({"--buffer", "0=float[4]:iota", "--out", "2=" + out}));
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_EQ(ReadNpyValues<float>(out, ScalarType::kFloat),
            (std::vector<float>{0, 2, 4, 6}));
  EXPECT_FALSE(std::filesystem::exists(out + ".partial"));
}

// Threadgroup memory nobody wrote reads as the fill asked for.
TEST_F(CliErrorsTest, ThreadgroupMemoryFill) {
  const std::string kernel = dir_.Path("read_unwritten.s");
  WriteFile(kernel, R"(
.kernel read_unwritten
.buffer 0 u0 device uint out
.threadgroup_memory 64
    mov.u32 r0, %thread_position_in_threadgroup.x
    ld.threadgroup.u32 r1, [r0*4]
    st.device.u32 [u0 + r0*4], r1
    exit
.end
)");
  const std::string out = dir_.Path("out.npy");
  const ProcessResult r =
      Run({"run", kernel, "--kernel", "read_unwritten", "--grid", "16",
           "--threadgroup", "16", "--buffer", "0=uint[16]:zeros", "--out",
           "0=" + out, "--threadgroup-memory-fill", "poison"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_EQ(ReadNpyValues<uint32_t>(out, ScalarType::kUInt),
            std::vector<uint32_t>(16, 0xffffffffu));
  ExpectBadInput(
      {"run", kernel, "--kernel", "read_unwritten", "--grid", "16", "--buffer",
       "0=uint[16]:zeros", "--threadgroup-memory-fill", "nan"},
      "--threadgroup-memory-fill");
}

// --- asm, disasm, binary modules -------------------------------------------

class AsmRoundTripTest : public CliErrorsTest,
                         public ::testing::WithParamInterface<std::string> {};

// asm prints canonical text (no comments; printing it again changes
// nothing), asm -o writes a module that disasm prints as the same text.
TEST_P(AsmRoundTripTest, CanonicalTextSurvivesBinary) {
  const ProcessResult text = Run({"asm", Example(GetParam())});
  ASSERT_EQ(text.exit_code, kExitOk) << text.err;
  EXPECT_TRUE(Contains(text.out, ".kernel "));
  EXPECT_FALSE(Contains(text.out, ";"));

  const std::string canonical = dir_.Path("canonical.s");
  WriteFile(canonical, text.out);
  const ProcessResult again = Run({"asm", canonical});
  ASSERT_EQ(again.exit_code, kExitOk) << again.err;
  EXPECT_EQ(again.out, text.out);

  const std::string module = dir_.Path("x.mtlb");
  const ProcessResult assembled =
      Run({"asm", Example(GetParam()), "-o", module});
  ASSERT_EQ(assembled.exit_code, kExitOk) << assembled.err;
  EXPECT_EQ(assembled.out, "");
  const ProcessResult disassembled = Run({"disasm", module});
  ASSERT_EQ(disassembled.exit_code, kExitOk) << disassembled.err;
  EXPECT_EQ(disassembled.out, text.out);
}

INSTANTIATE_TEST_SUITE_P(CliErrors, AsmRoundTripTest,
                         ::testing::Values("vector_add.s", "reduction.s",
                                           "histogram.s", "matmul_tiled.s"));

TEST_F(CliErrorsTest, RunsBinaryModule) {
  const std::string module = dir_.Path("vector_add.mtlb");
  ASSERT_EQ(Run({"asm", Example("vector_add.s"), "-o", module}).exit_code,
            kExitOk);
  const std::string out = dir_.Path("out.npy");
  const ProcessResult r =
      Run({"run", module, "--kernel", "vector_add", "--grid", "5",
           "--threadgroup", "4", "--buffer", "0=float[6]:iota", "--buffer",
           "1=float[6]:fill(0.5)", "--buffer", "2=float[6]:fill(-1)", "--bytes",
           "3=uint:5", "--out", "2=" + out});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_EQ(ReadNpyValues<float>(out, ScalarType::kFloat),
            (std::vector<float>{0.5f, 1.5f, 2.5f, 3.5f, 4.5f, -1.0f}));
}

// A module cut anywhere is an error (exit 1), never a crash.
TEST_F(CliErrorsTest, TruncatedModuleIsAnError) {
  const std::string module = dir_.Path("vector_add.mtlb");
  ASSERT_EQ(Run({"asm", Example("vector_add.s"), "-o", module}).exit_code,
            kExitOk);
  const std::string bytes = ReadFile(module);
  ASSERT_GT(bytes.size(), 64u);
  const std::string cut = dir_.Path("cut.mtlb");
  // Every length through the magic and the header, then a sample.
  for (size_t length = 1; length < bytes.size();
       length += length < 64 ? 1 : 7) {
    WriteFile(cut, std::string_view(bytes).substr(0, length));
    const ProcessResult r = Run({"disasm", cut});
    EXPECT_EQ(r.exit_code, kExitBadInput) << "length " << length;
    EXPECT_TRUE(Contains(r.err, cut + ":")) << "length " << length;
  }
  WriteFile(cut, std::string_view(bytes).substr(0, bytes.size() - 1));
  const ProcessResult r =
      Run({"run", cut, "--kernel", "vector_add", "--grid", "1"});
  EXPECT_EQ(r.exit_code, kExitBadInput);
  EXPECT_TRUE(Contains(r.err, cut + ": binary module is truncated"));
}

// Disabled: DeserializeModule (isa/binary_module.cpp) calls
// ComputeResources on a kernel whose opcode it found out of range, which
// indexes the opcode table out of bounds and crashes (SIGSEGV). Enable when
// that is fixed.
TEST_F(CliErrorsTest, DamagedModuleIsAnError) {
  const std::string source = dir_.Path("tiny.s");
  WriteFile(source,
            ".kernel tiny\n.buffer 0 u0 device uint out\n"
            "    st.device.u32 [u0], 1\n    exit\n.end\n");
  const std::string module = dir_.Path("tiny.mtlb");
  ASSERT_EQ(Run({"asm", source, "-o", module}).exit_code, kExitOk);
  const std::string bytes = ReadFile(module);
  const std::string damaged = dir_.Path("damaged.mtlb");
  for (size_t i = 8; i < bytes.size(); ++i) {
    std::string copy = bytes;
    copy[i] = '\xff';
    WriteFile(damaged, copy);
    const ProcessResult r = Run({"disasm", damaged});
    EXPECT_TRUE(r.exit_code == kExitOk || r.exit_code == kExitBadInput)
        << "byte " << i << ": exit code " << r.exit_code;
  }
}

// --- chips and --help --------------------------------------------------------

TEST_F(CliErrorsTest, ChipsListsM1ToM3Max) {
  const ProcessResult r = Run({"chips"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  for (const std::string chip :
       {"m1", "m1-pro", "m1-max", "m1-ultra", "m2", "m2-pro", "m2-max", "m3",
        "m3-pro", "m3-max"}) {
    EXPECT_TRUE(Contains(r.out, "\n" + chip + " ")) << chip;
  }
}

TEST_F(CliErrorsTest, HelpForEachSubcommand) {
  for (const std::string command : {"run", "asm", "disasm", "chips"}) {
    const ProcessResult r = Run({command, "--help"});
    EXPECT_EQ(r.exit_code, kExitOk) << command << ": " << r.err;
    EXPECT_TRUE(Contains(r.out, "Usage:")) << command;
    EXPECT_TRUE(Contains(r.out, " " + command + " ")) << command;
  }
  const ProcessResult r = Run({"--help"});
  EXPECT_EQ(r.exit_code, kExitOk);
  for (const std::string command : {"run", "asm", "disasm", "chips"}) {
    EXPECT_TRUE(Contains(r.out, command));
  }
}

TEST_F(CliErrorsTest, MissingSubcommandOrArgumentIsBadInput) {
  EXPECT_EQ(Run({}).exit_code, kExitBadInput);
  EXPECT_EQ(Run({"run"}).exit_code, kExitBadInput);
  EXPECT_EQ(Run({"frobnicate"}).exit_code, kExitBadInput);
}

}  // namespace
}  // namespace mtlemu::cli
