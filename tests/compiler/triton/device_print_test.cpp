// tl.device_print against real Triton: the kernels of kernels/device_print.py
// run with the arguments that file's main() gives them on a CUDA GPU, whose
// output (`sort -u`: one copy of each line, GPU threads print in no fixed
// order, replicated elements once per thread) is in
// reference/device_print/CASE.txt. mtlemu prints each element once, in a
// fixed order; its lines, sorted, must be the reference's.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "tests/compiler/triton/triton_harness.h"

namespace mtlemu::testing {
namespace {

std::vector<std::string> ReferenceLines(const std::string& name) {
  std::ifstream in(std::string(MTLEMU_TEST_DATA_DIR) +
                   "/compiler/triton/reference/device_print/" + name + ".txt");
  EXPECT_TRUE(in) << name;
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  // Sorted here byte by byte (the file is in its machine's collation).
  std::sort(lines.begin(), lines.end());
  return lines;
}

std::vector<uint16_t> Halfs(const std::vector<float>& v, bool bfloat) {
  std::vector<uint16_t> out;
  for (float f : v) {
    out.push_back(bfloat ? isa::FloatToBFloatBits(f) : isa::FloatToHalfBits(f));
  }
  return out;
}

struct Case {
  std::string name;
  std::string kernel;
  MTLSize grid;
  int num_warps;
  std::function<void(TritonHarness&)> args;
};

std::vector<Case> Cases() {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  return {
      {"block8",
       "print_block",
       {1, 1, 1},
       1,
       [](TritonHarness& h) {
         std::vector<float> x;
         for (int i = 0; i < 8; ++i) x.push_back(i * 0.5f - 1);
         h.Buffer("x_ptr", "fp32", x);
         h.Arg("BLOCK", 8);
       }},
      {"block128",
       "print_block",
       {1, 1, 1},
       4,
       [](TritonHarness& h) {
         std::vector<float> x;
         for (int i = 0; i < 128; ++i) x.push_back(static_cast<float>(i));
         h.Buffer("x_ptr", "fp32", x);
         h.Arg("BLOCK", 128);
       }},
      {"two",
       "print_two",
       {1, 1, 1},
       1,
       [](TritonHarness& h) {
         std::vector<int32_t> x;
         std::vector<int64_t> y;
         for (int i = 0; i < 8; ++i) {
           x.push_back(i - 3);
           y.push_back(i * int64_t{1000000000000});
         }
         h.Buffer("x_ptr", "int32", x);
         h.Buffer("y_ptr", "int64", y);
       }},
      {"scalars",
       "print_scalars",
       {2, 1, 1},
       1,
       [](TritonHarness& h) {
         h.Buffer("x_ptr", "int32", std::vector<int32_t>{-2, -1, 0, 1});
         h.Arg("n", 7);
       }},
      {"fp16",
       "print_four",
       {1, 1, 1},
       4,
       [](TritonHarness& h) {
         h.Buffer("x_ptr", "fp16",
                  Halfs({1.5f, -2.25f, 65504.0f, 1e-3f}, false));
       }},
      {"bf16",
       "print_four",
       {1, 1, 1},
       4,
       [](TritonHarness& h) {
         h.Buffer("x_ptr", "bf16", Halfs({1.5f, -2.25f, 3e38f, 1e-3f}, true));
       }},
      {"bool",
       "print_four",
       {1, 1, 1},
       4,
       [](TritonHarness& h) {
         h.Buffer("x_ptr", "int1", std::vector<uint8_t>{1, 0, 1, 1});
       }},
      {"uint8",
       "print_four",
       {1, 1, 1},
       4,
       [](TritonHarness& h) {
         h.Buffer("x_ptr", "uint8", std::vector<uint8_t>{1, 200, 255, 0});
       }},
      {"fp32",
       "print_four",
       {1, 1, 1},
       4,
       [inf, nan](TritonHarness& h) {
         h.Buffer("x_ptr", "fp32",
                  std::vector<float>{1.0f, nan, -inf, 123456789.0f});
       }},
      {"loop",
       "print_loop",
       {3, 1, 1},
       4,
       [](TritonHarness& h) {
         h.Buffer("x_ptr", "int8", std::vector<int8_t>{-2, -1, 0, 127});
         h.Arg("n", 3);
       }},
  };
}

class DevicePrintTest : public ::testing::TestWithParam<Case> {};

TEST_P(DevicePrintTest, PrintsWhatTritonPrints) {
  const Case& c = GetParam();
  TritonHarness h(TritonKernelFile("device_print.py"));
  c.args(h);
  ASSERT_EQ(h.Run(c.kernel, c.grid, c.num_warps), "");
  const std::vector<std::string>& got = h.printed();
  std::vector<std::string> sorted = got;
  std::sort(sorted.begin(), sorted.end());
  // Each element once.
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end());
  EXPECT_EQ(sorted, ReferenceLines(c.name));
}

INSTANTIATE_TEST_SUITE_P(Kernels, DevicePrintTest, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return info.param.name; });

// The order is fixed: program by program (x fastest), each program's
// prints in the order it ran them, then operand and element.
TEST(DevicePrintOrder, ProgramsThenPrintsThenElements) {
  TritonHarness h(TritonKernelFile("device_print.py"));
  h.Buffer("x_ptr", "int8", std::vector<int8_t>{-2, -1, 0, 127});
  h.Arg("n", 2);
  ASSERT_EQ(h.Run("print_loop", {2, 1, 1}), "");
  std::vector<std::string> want;
  const int x[] = {-2, -1, 0, 127};
  const char* bits[] = {"0xfffffffe", "0xffffffff", "0x00", "0x7f"};
  for (int pid = 0; pid < 2; ++pid) {
    const std::string p = "pid (" + std::to_string(pid) + ", 0, 0) idx (";
    for (int i = 0; i < 2; ++i) {
      for (int e = 0; e < 4; ++e) {
        want.push_back(p + std::to_string(e) +
                       ") it: " + std::to_string(x[e] + i));
      }
    }
    for (int e = 0; e < 4; ++e) {
      want.push_back(p + std::to_string(e) + ") bits: " + bits[e]);
    }
  }
  EXPECT_EQ(h.printed(), want);
}

}  // namespace
}  // namespace mtlemu::testing
