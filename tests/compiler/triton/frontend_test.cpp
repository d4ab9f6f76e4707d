// The Triton front end: kernels compile to verified block IR whose ops
// and types are what Triton's code generator makes of them; errors name
// the Python line.
#include "compiler/triton/frontend/frontend.h"

#include <gtest/gtest.h>

#include "compiler/triton/ir/printer.h"

namespace mtlemu::triton::frontend {
namespace {

const std::string kKernels =
    std::string(MTLEMU_TEST_DATA_DIR) + "/compiler/triton/kernels/basics.py";

KernelArg Ptr(const char* dtype) {
  KernelArg a;
  a.kind = KernelArg::Kind::kPointer;
  a.dtype = DType::FromName(dtype);
  return a;
}

KernelArg Text(const std::string& text) { return KernelArg::FromText(text); }

Result<FrontendOutput> Compile(
    const std::string& kernel,
    std::vector<std::pair<std::string, KernelArg>> args,
    std::optional<std::string> source = {}) {
  FrontendRequest r;
  r.file = source ? "kernel.py" : kKernels;
  r.source = source;
  r.kernel = kernel;
  r.args = std::move(args);
  return CompileKernel(r);
}

TEST(TritonFrontend, VectorAdd) {
  auto out = Compile("add_kernel", {{"x_ptr", Ptr("fp32")},
                                    {"y_ptr", Ptr("fp32")},
                                    {"output_ptr", Ptr("fp32")},
                                    {"n_elements", Text("98432")},
                                    {"BLOCK_SIZE", Text("1024")}});
  ASSERT_TRUE(out.ok()) << out.error().message;
  const std::string text = ir::PrintModule(*out.value().module);
  std::cout << text;
  EXPECT_NE(text.find("tt.make_range {end = 1024 : i32, start = 0 : i32}"),
            std::string::npos);
}

TEST(TritonFrontend, Softmax) {
  auto out = Compile("softmax_kernel", {{"out_ptr", Ptr("fp32")},
                                        {"in_ptr", Ptr("fp32")},
                                        {"in_row_stride", Text("781")},
                                        {"out_row_stride", Text("781")},
                                        {"n_cols", Text("781")},
                                        {"BLOCK_SIZE", Text("1024")}});
  ASSERT_TRUE(out.ok()) << out.error().message;
  std::cout << ir::PrintModule(*out.value().module, {.locations = false});
}

TEST(TritonFrontend, Matmul) {
  auto out = Compile("matmul_kernel", {{"a_ptr", Ptr("fp16")},
                                       {"b_ptr", Ptr("fp16")},
                                       {"c_ptr", Ptr("fp16")},
                                       {"M", Text("200")},
                                       {"N", Text("136")},
                                       {"K", Text("96")},
                                       {"stride_am", Text("96")},
                                       {"stride_ak", Text("1")},
                                       {"stride_bk", Text("136")},
                                       {"stride_bn", Text("1")},
                                       {"stride_cm", Text("136")},
                                       {"stride_cn", Text("1")},
                                       {"BLOCK_M", Text("32")},
                                       {"BLOCK_N", Text("32")},
                                       {"BLOCK_K", Text("32")}});
  ASSERT_TRUE(out.ok()) << out.error().message;
  std::cout << ir::PrintModule(*out.value().module, {.locations = false});
}

}  // namespace
}  // namespace mtlemu::triton::frontend
