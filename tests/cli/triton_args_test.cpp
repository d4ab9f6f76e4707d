#include "cli/triton_args.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/cli/cli_test_util.h"

namespace mtlemu::cli {
namespace {

using isa::ScalarType;
using triton::frontend::KernelArg;

// The one argument `text` resolves to; fails the test if it does not.
TritonArg Resolve(const std::string& text, bool with_data = true) {
  Result<std::vector<TritonArg>> r = ResolveTritonArgs({text}, with_data);
  EXPECT_TRUE(r.ok()) << text << ": " << r.error().message;
  if (!r.ok() || r.value().size() != 1) return {};
  return r.value()[0];
}

std::string ResolveError(const std::vector<std::string>& texts,
                         bool with_data = true) {
  Result<std::vector<TritonArg>> r = ResolveTritonArgs(texts, with_data);
  return r.ok() ? "" : r.error().message;
}

TEST(TritonDTypeTest, EachMetalTypeHasTritonsName) {
  const std::vector<std::pair<ScalarType, std::string>> names = {
      {ScalarType::kFloat, "fp32"},    {ScalarType::kHalf, "fp16"},
      {ScalarType::kBFloat, "bf16"},   {ScalarType::kInt, "int32"},
      {ScalarType::kUInt, "uint32"},   {ScalarType::kShort, "int16"},
      {ScalarType::kUShort, "uint16"}, {ScalarType::kChar, "int8"},
      {ScalarType::kUChar, "uint8"},   {ScalarType::kLong, "int64"},
      {ScalarType::kULong, "uint64"},  {ScalarType::kBool, "int1"}};
  ASSERT_EQ(names.size(), static_cast<size_t>(isa::kNumScalarTypes));
  for (const auto& [type, name] : names) {
    ASSERT_NE(TritonDType(type), nullptr) << name;
    EXPECT_EQ(TritonDType(type)->Name(), name);
  }
}

TEST(ResolveTritonArgsTest, BuffersArePointersToTheirElements) {
  TritonArg a = Resolve("x_ptr=half[4]:iota");
  EXPECT_EQ(a.name, "x_ptr");
  EXPECT_EQ(a.value.kind, KernelArg::Kind::kPointer);
  EXPECT_EQ(a.value.Describe(), "pointer<fp16>");
  ASSERT_TRUE(a.data.has_value());
  EXPECT_EQ(a.data->bytes.size(), 8u);
  // Without data (compile) only the type is found.
  a = Resolve("x_ptr=int[1000000]:random(1)", /*with_data=*/false);
  EXPECT_EQ(a.value.Describe(), "pointer<int32>");
  EXPECT_FALSE(a.data.has_value());
}

TEST(ResolveTritonArgsTest, NpyBufferTakesItsDType) {
  cli_test::ScratchDir dir;
  const std::string path = dir.Path("u.npy");
  cli_test::WriteNpyValues(path, ScalarType::kUShort,
                           std::vector<uint16_t>{1, 2, 3});
  for (bool with_data : {true, false}) {
    const TritonArg a = Resolve("p=" + path, with_data);
    EXPECT_EQ(a.value.Describe(), "pointer<uint16>");
    EXPECT_EQ(a.data.has_value(), with_data);
  }
}

TEST(ResolveTritonArgsTest, PointerTypeWithoutData) {
  EXPECT_EQ(Resolve("x=*fp32", /*with_data=*/false).value.Describe(),
            "pointer<fp32>");
  EXPECT_EQ(Resolve("x=*tl.bfloat16", /*with_data=*/false).value.Describe(),
            "pointer<bf16>");
  EXPECT_EQ(ResolveError({"x=*fp32"}),
            "--arg 'x=*fp32': a pointer type has no data; a run needs a "
            "buffer (FILE.npy or TYPE[COUNT]:GEN)");
  EXPECT_EQ(ResolveError({"x=*f32"}, false),
            "--arg 'x=*f32': '*f32' is not a pointer type (expected *DTYPE: "
            "*fp32, *fp16, *bf16, *int32 ...)");
}

TEST(ResolveTritonArgsTest, Values) {
  EXPECT_EQ(Resolve("n=128").value.Describe(), "int 128");
  EXPECT_EQ(Resolve("eps=1e-5").value.kind, KernelArg::Kind::kFloat);
  EXPECT_EQ(Resolve("b=True").value.Describe(), "True");
  EXPECT_EQ(Resolve("o=None").value.Describe(), "None");
  EXPECT_EQ(Resolve("d=tl.float16").value.Describe(), "fp16");
  EXPECT_EQ(Resolve("s=relu").value.Describe(), "'relu'");
  const TritonArg empty = Resolve("s=");
  EXPECT_EQ(empty.value.kind, KernelArg::Kind::kString);
  EXPECT_EQ(empty.value.text, "");
  // The name ends at the first '='.
  EXPECT_EQ(Resolve("s=a=b").value.text, "a=b");
}

TEST(ResolveTritonArgsTest, Errors) {
  EXPECT_TRUE(
      cli_test::Contains(ResolveError({"x"}), "--arg 'x': expected NAME=SPEC"));
  EXPECT_TRUE(cli_test::Contains(ResolveError({"=1"}),
                                 "--arg '=1': expected NAME=SPEC"));
  EXPECT_EQ(ResolveError({"p=float[4]:ones"}),
            "--arg 'p=float[4]:ones': unknown generator 'ones' (expected "
            "zeros, uninit, iota, fill(V) or random(SEED))");
  EXPECT_EQ(ResolveError({"p=floot[4]:zeros"}).substr(0, 50),
            "--arg 'p=floot[4]:zeros': unknown type 'floot' (ex");
  EXPECT_EQ(ResolveError({"n=1", "n=2"}), "--arg 'n=2': 'n' is given twice");
}

TEST(CheckOptionsApplyTest, EachKindOfFileItsOwnOptions) {
  const OptionUse metal[] = {{"--buffer", true}};
  const OptionUse triton[] = {{"--arg", true}};
  const OptionUse none[] = {{"--arg", false}};
  EXPECT_TRUE(cli_test::Contains(
      CheckOptionsApply("k.py", metal, triton).error().message,
      "--buffer is for Metal and ISA kernels; k.py is a Triton kernel"));
  EXPECT_TRUE(cli_test::Contains(
      CheckOptionsApply("k.ttir", metal, triton).error().message,
      "--buffer is for Metal"));
  EXPECT_EQ(CheckOptionsApply("k.metal", metal, triton).error().message,
            "--arg is for Triton kernels (.py, .ttir, .mlir); k.metal is not "
            "one");
  EXPECT_TRUE(CheckOptionsApply("k.s", metal, none).ok());
}

}  // namespace
}  // namespace mtlemu::cli
