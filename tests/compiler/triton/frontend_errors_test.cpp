// Bad Triton kernels: each is an error naming the Python line and column
// with what Triton would say, never a crash.
#include <gtest/gtest.h>

#include "compiler/triton/frontend/frontend.h"

namespace mtlemu::triton::frontend {
namespace {

struct Case {
  const char* name;
  const char* body;     // the kernel's body, indented 4 spaces
  const char* where;    // "file:line:col"
  const char* message;  // a substring of the message
};

// The kernel file: k(x_ptr, n, BLOCK) with the body at line 6.
std::string Source(const char* body) {
  return std::string(
             "import triton\n"
             "import triton.language as tl\n"
             "\n"
             "@triton.jit\n"
             "def k(x_ptr, n, BLOCK: tl.constexpr):\n") +
         body;
}

class FrontendErrorTest : public ::testing::TestWithParam<Case> {};

TEST_P(FrontendErrorTest, SaysWhatAndWhere) {
  const Case& c = GetParam();
  FrontendRequest r;
  r.file = "bad.py";
  r.source = Source(c.body);
  r.kernel = "k";
  KernelArg ptr;
  ptr.kind = KernelArg::Kind::kPointer;
  ptr.dtype = DType::F32();
  r.args = {{"x_ptr", ptr},
            {"n", KernelArg::FromText("100")},
            {"BLOCK", KernelArg::FromText("64")}};
  Result<FrontendOutput> out = CompileKernel(r);
  ASSERT_FALSE(out.ok()) << c.name << " compiled";
  const std::string& m = out.error().message;
  EXPECT_NE(m.find(std::string(c.where) + ": error: "), std::string::npos) << m;
  EXPECT_NE(m.find(c.message), std::string::npos) << m;
}

const Case kCases[] = {
    {"pointer plus float", "    tl.store(x_ptr + 1.5, 0.0)\n", "bad.py:6:14",
     "invalid operands of type pointer<fp32> and fp32"},
    {"arange not a power of two", "    r = tl.arange(0, 100)\n", "bad.py:6:9",
     "arange's range must be a power of 2"},
    {"shape mismatch",
     "    a = tl.arange(0, 16)\n    b = tl.arange(0, 32)\n    c = a + b\n",
     "bad.py:8:9", "incompatible dimensions at index 0: 16 and 32"},
    {"unknown builtin", "    y = tl.frobnicate(1)\n", "bad.py:6:9",
     "module 'triton.language' has no attribute 'frobnicate'"},
    {"undefined name", "    y = z + 1\n", "bad.py:6:9",
     "name 'z' is not defined"},
    {"construct outside the subset", "    y = [i for i in range(4)]\n",
     "bad.py:6:9", "unsupported AST node type: ListComp"},
    {"with statement", "    with open('f') as f:\n        pass\n", "bad.py:6:5",
     "unsupported AST node type: With"},
    {"tensor item assignment",
     "    x = tl.zeros([16], tl.float32)\n    x[0] = 1\n", "bad.py:7:5",
     "Triton tensors are immutable"},
    {"constexpr from a tensor", "    r = tl.arange(0, n)\n", "bad.py:6:9",
     "'end' must be a compile-time integer"},
    {"loop-carried type change",
     "    acc = 0\n    for i in range(n):\n        acc += 0.5\n", "bad.py:7:5",
     "Loop-carried variable acc has initial type int32"},
    {"dot shape",
     "    a = tl.zeros([16, 32], tl.float32)\n"
     "    b = tl.zeros([16, 32], tl.float32)\n"
     "    c = tl.dot(a, b)\n",
     "bad.py:8:9", "are not compatible for matmul"},
    {"float64",
     "    a = tl.zeros([16, 16], tl.float64)\n"
     "    c = tl.dot(a, a)\n",
     "bad.py:7:9", "Apple GPUs have no float64"},
    {"static_assert", "    tl.static_assert(BLOCK < 32, 'too big')\n",
     "bad.py:6:5", "Static assertion failed: too big"},
    {"wrong keyword", "    tl.store(x_ptr, 1.0, maskk=None)\n", "bad.py:6:5",
     "got an unexpected keyword argument 'maskk'"},
    {"unresolvable import name", "    y = helper(1)\n", "bad.py:6:9",
     "name 'helper' is not defined"},
    {"exp on integers", "    y = tl.exp(tl.arange(0, 16))\n", "bad.py:6:9",
     "Expected dtype ['fp32', 'fp64'] but got int32"},
    {"return in a loop", "    for i in range(n):\n        return\n",
     "bad.py:7:9", "Cannot have `return` statements inside `while` or `for`"},
    {"python syntax", "    y = (1 +\n", "bad.py:6:9", "'(' was never closed"},
};

INSTANTIATE_TEST_SUITE_P(Kernels, FrontendErrorTest,
                         ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           std::string n;
                           for (const char* p = info.param.name; *p; ++p) {
                             n += std::isalnum(static_cast<unsigned char>(*p))
                                      ? *p
                                      : '_';
                           }
                           return n;
                         });

TEST(FrontendErrors, MissingArgumentAndUnknownKernel) {
  FrontendRequest r;
  r.file = "ok.py";
  r.source = Source("    pass\n");
  r.kernel = "k";
  Result<FrontendOutput> out = CompileKernel(r);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().message.find("missing a value for parameter 'x_ptr'"),
            std::string::npos)
      << out.error().message;
  r.kernel = "nope";
  out = CompileKernel(r);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().message.find(
                "no @triton.jit function named 'nope' in ok.py (it has: k)"),
            std::string::npos)
      << out.error().message;
}

TEST(FrontendErrors, UnresolvableImportIsReportedWhereUsed) {
  FrontendRequest r;
  r.file = "imp.py";
  r.source =
      "import triton\n"
      "import triton.language as tl\n"
      "from no_such_module import helper\n"
      "\n"
      "@triton.jit\n"
      "def k(x_ptr):\n"
      "    helper(x_ptr)\n";
  r.kernel = "k";
  KernelArg ptr;
  ptr.kind = KernelArg::Kind::kPointer;
  ptr.dtype = DType::F32();
  r.args = {{"x_ptr", ptr}};
  Result<FrontendOutput> out = CompileKernel(r);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().message.find(
                "imp.py:7:5: error: 'no_such_module.helper' cannot be used in "
                "a kernel: module 'no_such_module' was not found on the module "
                "path"),
            std::string::npos)
      << out.error().message;
}

TEST(FrontendErrors, AnErrorInAHelperNamesTheCall) {
  FrontendRequest r;
  r.file = "helper.py";
  r.source =
      "import triton\n"
      "import triton.language as tl\n"
      "\n"
      "@triton.jit\n"
      "def helper(p):\n"
      "    return p + 0.5\n"
      "\n"
      "@triton.jit\n"
      "def k(x_ptr):\n"
      "    helper(x_ptr)\n";
  r.kernel = "k";
  KernelArg ptr;
  ptr.kind = KernelArg::Kind::kPointer;
  ptr.dtype = DType::F32();
  r.args = {{"x_ptr", ptr}};
  Result<FrontendOutput> out = CompileKernel(r);
  ASSERT_FALSE(out.ok());
  const std::string& m = out.error().message;
  EXPECT_NE(m.find("helper.py:6:12: error: invalid operands"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("note: in 'helper' called from helper.py:10"),
            std::string::npos)
      << m;
}

}  // namespace
}  // namespace mtlemu::triton::frontend
