// Metal files with headers through the command line: -I on `run` and
// `compile`, `compile --kernel` given more than once, and fault reports
// that name the header's own line.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli/exit_codes.h"
#include "isa/scalar_type.h"
#include "tests/cli/cli_test_util.h"

namespace mtlemu::cli {
namespace {

using cli_test::Contains;
using cli_test::ProcessResult;
using cli_test::RunMtlemu;
using cli_test::ScratchDir;
using cli_test::WriteFile;

class MetalIncludeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(dir_.Path("inc/ops"));
    // Line 5 reads in[i + 4]: out of bounds for the last four threads.
    WriteFile(dir_.Path("inc/ops/shift.h"),
              "#pragma once\n"
              "template <typename T>\n"
              "[[kernel]] void shift(const device T* in, device T* out,\n"
              "                      uint i [[thread_position_in_grid]]) {\n"
              "  out[i] = in[i + 4];\n"
              "}\n");
    WriteFile(dir_.Path("k.metal"),
              "#include <metal_stdlib>\n"
              "using namespace metal;\n"
              "#include \"ops/shift.h\"\n"
              "#define INSTANTIATE(name, T) \\\n"
              "  template [[host_name(name)]] [[kernel]] "
              "decltype(shift<T>) shift<T>;\n"
              "INSTANTIATE(\"shift_f32\", float)\n"
              "INSTANTIATE(\"shift_i32\", int)\n"
              "INSTANTIATE(\"shift_u16\", ushort)\n");
  }
  ProcessResult Run(const std::vector<std::string>& args) {
    return RunMtlemu(dir_, args);
  }
  ScratchDir dir_;
};

TEST_F(MetalIncludeTest, CompileLowersOnlyTheKernelsNamed) {
  const ProcessResult r =
      Run({"compile", dir_.Path("k.metal"), "-I", dir_.Path("inc"), "--kernel",
           "shift_f32", "--kernel", "shift_u16"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_TRUE(Contains(r.out, ".kernel shift_f32"));
  EXPECT_TRUE(Contains(r.out, ".kernel shift_u16"));
  EXPECT_FALSE(Contains(r.out, ".kernel shift_i32"));
}

TEST_F(MetalIncludeTest, WithoutTheIncludeFolderTheHeaderIsNotFound) {
  const ProcessResult r = Run({"compile", dir_.Path("k.metal")});
  EXPECT_EQ(r.exit_code, kExitBadInput);
  EXPECT_TRUE(Contains(r.err,
                       "k.metal:3:10: error: 'ops/shift.h' file not "
                       "found"))
      << r.err;
}

// The reads past the end of `in` (within a page of it: zeros, a warning).
TEST_F(MetalIncludeTest, RunReportsTheReadAtTheHeadersLine) {
  const ProcessResult r =
      Run({"run", dir_.Path("k.metal"), "-I", dir_.Path("inc"), "--kernel",
           "shift_f32", "--grid", "32", "--threadgroup", "32", "--buffer",
           "0=float[32]:iota", "--buffer", "1=float[32]:zeros"});
  EXPECT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_TRUE(Contains(r.err, "access outside a buffer")) << r.err;
  EXPECT_TRUE(Contains(r.err, "inc/ops/shift.h:5:")) << r.err;
  EXPECT_TRUE(Contains(r.err, "out[i] = in[i + 4];")) << r.err;
  EXPECT_TRUE(Contains(r.err, "kernel 'shift_f32'")) << r.err;
}

TEST_F(MetalIncludeTest, IncludeFoldersAreForMetalFilesOnly) {
  const ProcessResult r =
      Run({"compile",
           std::string(MTLEMU_SOURCE_DIR) + "/examples/triton/vector_add.py",
           "-I", dir_.Path("inc"), "--kernel", "add_kernel"});
  EXPECT_EQ(r.exit_code, kExitBadInput);
  EXPECT_TRUE(Contains(r.err, "-I")) << r.err;
}

}  // namespace
}  // namespace mtlemu::cli
