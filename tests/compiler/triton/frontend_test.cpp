// The Triton front end: what it makes of kernels (checked on the TTIR it
// prints), specialization, imports, autotune configs and heuristics.
#include "compiler/triton/frontend/frontend.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

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
    std::optional<std::string> source = {}, int autotune_config = 0) {
  FrontendRequest r;
  r.file = source ? "kernel.py" : kKernels;
  r.source = source;
  r.kernel = kernel;
  r.args = std::move(args);
  r.autotune_config = autotune_config;
  return CompileKernel(r);
}

std::string Ttir(const FrontendOutput& out) {
  return ir::PrintModule(*out.module, {.locations = false});
}

bool Has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

TEST(TritonFrontend, VectorAddAsTritonPrintsIt) {
  auto out = Compile("add_kernel", {{"x_ptr", Ptr("fp32")},
                                    {"y_ptr", Ptr("fp32")},
                                    {"output_ptr", Ptr("fp32")},
                                    {"n_elements", Text("98432")},
                                    {"BLOCK_SIZE", Text("1024")}});
  ASSERT_TRUE(out.ok()) << out.error().message;
  const std::string t = Ttir(out.value());
  // The lines of the reference TTIR (../shared/reference/ttir/add.ttir).
  EXPECT_TRUE(Has(t, "%pid = tt.get_program_id x : i32")) << t;
  EXPECT_TRUE(Has(t, "%block_start = arith.muli %pid, %c1024_i32 : i32")) << t;
  EXPECT_TRUE(Has(
      t,
      "tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>"));
  EXPECT_TRUE(Has(t, "%mask = arith.cmpi slt, %offsets, %"));
  EXPECT_TRUE(Has(t, "%x = tt.load %"));
  EXPECT_TRUE(Has(t, "%output = arith.addf %x, %y : tensor<1024xf32>"));
  EXPECT_TRUE(Has(t, "tt.store %"));
  // n_elements = 98432 is a multiple of 16.
  EXPECT_TRUE(Has(t, "%n_elements: i32 {tt.divisibility = 16 : i32}")) << t;
  // Every parameter: its IR argument, or none for the constexpr.
  ASSERT_EQ(out.value().params.size(), 5u);
  EXPECT_EQ(out.value().params[3].ir_arg, 3);
  EXPECT_EQ(out.value().params[4].ir_arg, -1);
  EXPECT_TRUE(out.value().params[4].is_constexpr);
}

TEST(TritonFrontend, SpecializesIntegersEqualToOne) {
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
  const std::string t = Ttir(out.value());
  // As the reference matmul.ttir: strides equal to 1 are not arguments.
  EXPECT_TRUE(
      Has(t,
          "%stride_am: i32 {tt.divisibility = 16 : i32}, %stride_bk: i32, "
          "%stride_cm: i32)"))
      << t;
  EXPECT_FALSE(Has(t, "%stride_ak"));
  EXPECT_TRUE(Has(t, "scf.for")) << t;
  EXPECT_TRUE(Has(t, "tt.dot")) << t;
  // acc.to(c_ptr.dtype.element_ty): fp32 -> fp16.
  EXPECT_TRUE(Has(t, "arith.truncf")) << t;
}

TEST(TritonFrontend, ReductionsHaveTheirCombinerRegions) {
  auto out = Compile("softmax_kernel", {{"out_ptr", Ptr("fp32")},
                                        {"in_ptr", Ptr("fp32")},
                                        {"in_row_stride", Text("781")},
                                        {"out_row_stride", Text("781")},
                                        {"n_cols", Text("781")},
                                        {"BLOCK_SIZE", Text("1024")}});
  ASSERT_TRUE(out.ok()) << out.error().message;
  const std::string t = Ttir(out.value());
  EXPECT_TRUE(Has(t, "arith.maxnumf")) << t;  // tl.max
  EXPECT_TRUE(Has(t, "\"tt.reduce\"")) << t;
  EXPECT_TRUE(Has(t, "tt.reduce.return")) << t;
  EXPECT_TRUE(Has(t, "math.exp")) << t;
  // other=-float("inf")
  EXPECT_TRUE(Has(t, "0xFF800000")) << t;
}

constexpr char kDecorated[] = R"(
import triton
import triton.language as tl

CONFIGS = [triton.Config({'BLOCK': 256}, num_warps=2),
           triton.Config({'BLOCK': 1024}, num_warps=8)]

@triton.autotune(configs=CONFIGS, key=['n'])
@triton.heuristics({'EVEN': lambda args: args['n'] % args['BLOCK'] == 0})
@triton.jit
def scale(x_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        tl.store(x_ptr + offs, tl.load(x_ptr + offs) * 2)
    else:
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
)";

TEST(TritonFrontend, AutotuneConfigsAndHeuristicsFillTheMetaParameters) {
  auto first = Compile("scale", {{"x_ptr", Ptr("fp32")}, {"n", Text("1000")}},
                       kDecorated, 0);
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(first.value().num_warps, 2);
  EXPECT_TRUE(Has(Ttir(first.value()), "end = 256 : i32"));
  // 1000 % 256 != 0: the masked branch.
  EXPECT_TRUE(Has(Ttir(first.value()), "arith.cmpi slt"));
  ASSERT_EQ(first.value().notes.size(), 2u);
  EXPECT_EQ(first.value().notes[0],
            "autotune: config 0 of 2: BLOCK=256 num_warps=2");
  EXPECT_EQ(first.value().notes[1], "heuristics: EVEN=False");

  auto second = Compile("scale", {{"x_ptr", Ptr("fp32")}, {"n", Text("2048")}},
                        kDecorated, 1);
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_EQ(second.value().num_warps, 8);
  EXPECT_TRUE(Has(Ttir(second.value()), "end = 1024 : i32"));
  EXPECT_FALSE(Has(Ttir(second.value()), "arith.cmpi"));  // EVEN: no mask

  FrontendRequest r;
  r.file = "kernel.py";
  r.source = kDecorated;
  r.kernel = "scale";
  auto params = ReadKernelParams(r);
  ASSERT_TRUE(params.ok());
  EXPECT_EQ(params.value()[2].provided_by, "autotune");
  EXPECT_EQ(params.value()[3].provided_by, "heuristics");
}

TEST(TritonFrontend, ImportsFromOtherModulesAndLibdevice) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "mtlemu_frontend_imports";
  std::filesystem::create_directories(dir / "pkg");
  std::ofstream(dir / "pkg" / "__init__.py") << "";
  std::ofstream(dir / "pkg" / "helpers.py")
      << "import triton\nimport triton.language as tl\n"
         "SCALE: tl.constexpr = 3\n"
         "@triton.jit\ndef triple(x):\n    return x * SCALE\n";
  std::ofstream(dir / "kernel.py")
      << "import torch\nimport triton\nimport triton.language as tl\n"
         "from pkg.helpers import triple, SCALE\n"
         "try:\n    from triton.language.extra.libdevice import tanh\n"
         "except ModuleNotFoundError:\n    from "
         "triton.language.extra.cuda.libdevice import tanh\n"
         "class Unused:\n    pass\n"
         "@triton.jit\ndef k(x_ptr, BLOCK: tl.constexpr):\n"
         "    offs = tl.arange(0, BLOCK)\n"
         "    tl.static_print('scale is', SCALE)\n"
         "    tl.store(x_ptr + offs, tanh(triple(tl.load(x_ptr + offs))))\n";
  FrontendRequest r;
  r.file = (dir / "kernel.py").string();
  r.kernel = "k";
  r.args = {{"x_ptr", Ptr("fp32")}, {"BLOCK", Text("64")}};
  auto out = CompileKernel(r);
  ASSERT_TRUE(out.ok()) << out.error().message;
  const std::string t = Ttir(out.value());
  EXPECT_TRUE(Has(t, "math.tanh")) << t;
  EXPECT_TRUE(Has(t, "arith.mulf")) << t;
  ASSERT_EQ(out.value().messages.size(), 1u);
  EXPECT_EQ(out.value().messages[0], "scale is 3");
  std::filesystem::remove_all(dir);
}

TEST(TritonFrontend, ConstexprIfFoldsAndDynamicIfYields) {
  constexpr char kSource[] = R"(
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, flag, MODE: tl.constexpr):
    x = tl.load(x_ptr)
    if MODE == "double":
        x = x * 2
    else:
        x = x * 3
    if flag > 0:
        y = x + 1
    else:
        y = x - 1
    tl.store(x_ptr, y)
)";
  auto out = Compile(
      "k",
      {{"x_ptr", Ptr("fp32")},
       {"flag", Text("5")},
       {"MODE", KernelArg{KernelArg::Kind::kString, nullptr, 0, 0, "double"}}},
      kSource);
  ASSERT_TRUE(out.ok()) << out.error().message;
  const std::string t = Ttir(out.value());
  EXPECT_TRUE(Has(t, "2.000000e+00")) << t;
  EXPECT_FALSE(Has(t, "3.000000e+00")) << t;
  EXPECT_TRUE(Has(t, "scf.if")) << t;
  EXPECT_TRUE(Has(t, "scf.yield")) << t;
}

// A Python caller's globals: names the file leaves undefined or defines
// otherwise (computed at run time, closure variables) take their values.
TEST(TritonFrontend, GlobalsFromTheHostOverTheFile) {
  FrontendRequest r;
  r.file = "kernel.py";
  r.source =
      "import triton\nimport triton.language as tl\n"
      "SCALE = 2.0\n"
      "@triton.jit\n"
      "def k(x_ptr):\n"
      "    offs = tl.arange(0, BLOCK)\n"
      "    tl.store(x_ptr + offs, tl.load(x_ptr + offs) * SCALE + BIAS)\n";
  r.kernel = "k";
  r.args = {{"x_ptr", Ptr("fp32")}};
  KernelArg scale, bias, block;
  scale.kind = bias.kind = KernelArg::Kind::kFloat;
  scale.float_value = 3.5;
  bias.float_value = -1.0;
  block.kind = KernelArg::Kind::kInt;
  block.int_value = 64;
  r.globals = {{"SCALE", scale}, {"BIAS", bias}, {"BLOCK", block}};
  auto out = CompileKernel(r);
  ASSERT_TRUE(out.ok()) << out.error().message;
  const std::string t = Ttir(out.value());
  EXPECT_TRUE(Has(t, "tt.make_range {end = 64 : i32, start = 0 : i32}")) << t;
  EXPECT_TRUE(Has(t, "3.500000e+00")) << t;
  EXPECT_TRUE(Has(t, "-1.000000e+00")) << t;
  EXPECT_FALSE(Has(t, "2.000000e+00")) << t;

  // Without them BLOCK is unknown, as Python would say.
  r.globals.clear();
  auto missing = CompileKernel(r);
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(Has(missing.error().message, "BLOCK")) << missing.error().message;
}

}  // namespace
}  // namespace mtlemu::triton::frontend
