// lower::StrengthReduceLoopPointers: a loop-carried tensor of pointers
// stepped by a scalar becomes its initial offsets plus a carried scalar.
// What the rewritten IR computes is checked by every kernel test that has
// such a loop (corpus_test's matmuls, the replays of Triton's tutorial 03);
// here, the shape of the rewrite.
#include "compiler/triton/lower/loop_pointers.h"

#include <gtest/gtest.h>

#include "compiler/triton/frontend/frontend.h"
#include "compiler/triton/ir/cleanup.h"
#include "compiler/triton/ir/printer.h"
#include "compiler/triton/ir/verifier.h"
#include "tests/compiler/triton/triton_harness.h"

namespace mtlemu::triton::lower {
namespace {

using frontend::KernelArg;

std::unique_ptr<ir::Module> Compile(const std::string& body,
                                    const std::vector<std::string>& ptrs,
                                    const std::vector<std::string>& ints) {
  frontend::FrontendRequest r;
  r.file = "kernel.py";
  r.source =
      "import triton\nimport triton.language as tl\n@triton.jit\n" + body;
  r.kernel = "k";
  for (const auto& p : ptrs) {
    KernelArg a;
    a.kind = KernelArg::Kind::kPointer;
    a.dtype = frontend::DType::FromName("fp32");
    r.args.emplace_back(p, a);
  }
  for (const auto& i : ints) r.args.emplace_back(i, KernelArg::FromText("7"));
  auto out = frontend::CompileKernel(r);
  EXPECT_TRUE(out.ok()) << out.error().message;
  return out.ok() ? std::move(out.value().module) : nullptr;
}

std::string Text(const ir::Module& m) {
  return ir::PrintModule(m, {.locations = false});
}

TEST(LoopPointers, SteppedPointersBecomeOffsetsPlusACarriedScalar) {
  auto m = Compile(
      "def k(x_ptr, out_ptr, n, step):\n"
      "    ptrs = x_ptr + tl.arange(0, 16)\n"
      "    acc = tl.zeros([16], dtype=tl.float32)\n"
      "    for i in range(n):\n"
      "        acc += tl.load(ptrs)\n"
      "        ptrs += step\n"
      "    tl.store(out_ptr + tl.arange(0, 16), acc)\n",
      {"x_ptr", "out_ptr"}, {"n", "step"});
  ASSERT_NE(m, nullptr);
  ir::Function& f = *m->functions()[0];
  EXPECT_EQ(StrengthReduceLoopPointers(f), 1);
  ir::RemoveUnusedOps(f);
  ASSERT_TRUE(ir::Verify(*m, "test").ok()) << ir::Verify(*m).error().message;
  const std::string t = Text(*m);
  auto has = [&](const char* text) {
    EXPECT_NE(t.find(text), std::string::npos) << text << "\n" << t;
  };
  // A third iteration argument: an i32 from 0, stepped by `step`.
  has("iter_args(%acc_1 = %acc, %ptrs_2 = %ptrs, %arg7 = %c0_i32_0)");
  has("%10 = arith.addi %arg7, %step : i32");
  // The load reads splat(x_ptr) + (offsets + splat(carried)); the pointer
  // tensor is yielded unchanged (nothing carries it any more).
  has("%6 = tt.splat %arg7 : i32 -> tensor<16xi32>");
  has("%7 = arith.addi %0, %6 : tensor<16xi32>");
  has("%8 = tt.addptr %1, %7 : tensor<16x!tt.ptr<f32>>, tensor<16xi32>");
  has("%9 = tt.load %8");
  has("scf.yield %acc_3, %ptrs_2, %10");
}

TEST(LoopPointers, OtherLoopsAreLeftAlone) {
  // Stepped by a tensor (each element its own step): not rewritten.
  auto m = Compile(
      "def k(x_ptr, out_ptr, n, step):\n"
      "    ptrs = x_ptr + tl.arange(0, 16)\n"
      "    acc = tl.zeros([16], dtype=tl.float32)\n"
      "    for i in range(n):\n"
      "        acc += tl.load(ptrs)\n"
      "        ptrs += tl.arange(0, 16)\n"
      "    tl.store(out_ptr + tl.arange(0, 16), acc)\n",
      {"x_ptr", "out_ptr"}, {"n", "step"});
  ASSERT_NE(m, nullptr);
  const std::string before = Text(*m);
  EXPECT_EQ(StrengthReduceLoopPointers(*m->functions()[0]), 0);
  EXPECT_EQ(Text(*m), before);
}

// What the rewritten loops compute: the pointers inside the loop and the
// ones the loop leaves, with 32- and 64-bit offsets, against a C++ loop.
TEST(LoopPointers, RewrittenLoopsComputeTheSame) {
  for (const char* kernel : {"stepped_sum", "stepped_sum_i64"}) {
    const int n = 5, step = 24, block = 32;
    testing::TritonHarness h(testing::TritonKernelFile("loops.py"));
    std::vector<float> x(block + n * step);
    for (size_t i = 0; i < x.size(); ++i) x[i] = 0.25f * (i % 13);
    h.Buffer("x_ptr", "fp32", x);
    auto out = h.Buffer("out_ptr", "fp32", std::vector<float>(block));
    h.Arg("n", n);
    h.Arg("step", step);
    h.Arg("BLOCK", block);
    ASSERT_EQ(h.Run(kernel, {1, 1, 1}), "") << kernel;
    const std::vector<float> got = testing::Read<float>(out);
    for (int j = 0; j < block; ++j) {
      float want = 0;
      for (int i = 0; i < n; ++i) want += x[j + i * step];
      want += x[j + n * step];
      EXPECT_EQ(got[j], want) << kernel << " " << j;
    }
  }
}

}  // namespace
}  // namespace mtlemu::triton::lower
