// The MSL front end: source -> LLVM IR and the kernels' argument tables;
// diagnostics with the user's file, line, column and source line.
#include <gtest/gtest.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>

#include "compiler/msl/attribute_rewriter.h"
#include "compiler/msl/frontend.h"
#include "compiler/msl/precompiled_shims.h"
#include "compiler/msl/source_scan.h"
#include "tests/support/test_kernels.h"

namespace mtlemu::msl {
namespace {

TEST(MslFrontend, CompilesAKernelAndReadsItsArgumentTable) {
  FrontendResult r =
      CompileMsl(testing::kVectorAddOpenClSpelling, "add.metal", {});
  ASSERT_TRUE(r.ok()) << isa::FormatDiagnostics(r.errors);
  ASSERT_EQ(r.kernels.size(), 1u);
  const KernelDeclaration& k = r.kernels[0];
  EXPECT_EQ(k.name, "vector_add");
  EXPECT_NE(r.module->getFunction(k.ir_name), nullptr) << k.ir_name;
  ASSERT_EQ(k.parameters.size(), 5u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(k.parameters[i].kind, ParameterKind::kBuffer);
    EXPECT_EQ(k.parameters[i].index, i);
  }
  EXPECT_EQ(k.parameters[0].name, "a");
  EXPECT_EQ(k.parameters[0].space, isa::AddressSpace::kDevice);
  EXPECT_EQ(k.parameters[0].element, isa::ScalarType::kFloat);
  EXPECT_EQ(k.parameters[3].space, isa::AddressSpace::kConstant);
  EXPECT_EQ(k.parameters[3].element, isa::ScalarType::kUInt);
  EXPECT_EQ(k.parameters[4].kind, ParameterKind::kBuiltin);
  EXPECT_EQ(k.parameters[4].attribute, "thread_position_in_grid");
  // No annotation survives into the IR as a call.
  EXPECT_EQ(PrintModule(*r.module).find("llvm.var.annotation"),
            std::string::npos);
}

TEST(MslFrontend, ErrorsNameTheUsersLineAndColumn) {
  // The attribute before the error is rewritten to a longer text; the
  // column must still be the user's.
  const char* source =
      "kernel void k(__global float* a [[buffer(0)]], unsigned i "
      "[[thread_position_in_grid]]) {\n"
      "  a[i] = undeclared_name;\n"
      "}\n";
  FrontendResult r = CompileMsl(source, "bad.metal", {});
  ASSERT_FALSE(r.ok());
  ASSERT_FALSE(r.errors.empty());
  const isa::Diagnostic& d = r.errors[0];
  EXPECT_EQ(d.file, "bad.metal");
  EXPECT_EQ(d.line, 2);
  EXPECT_EQ(d.column, 10);
  EXPECT_NE(d.message.find("undeclared_name"), std::string::npos) << d.message;
  EXPECT_NE(d.message.find("  a[i] = undeclared_name;"), std::string::npos)
      << d.message;
}

TEST(MslFrontend, ColumnsAfterARewrittenAttributeMapBack) {
  const char* source =
      "kernel void k(__global float* a [[buffer(0)]], unsigned i "
      "[[thread_position_in_grid]]) { a[i] = nope; }\n";
  FrontendResult r = CompileMsl(source, "bad.metal", {});
  ASSERT_FALSE(r.errors.empty());
  const std::string line(source, std::string_view(source).find('\n'));
  EXPECT_EQ(r.errors[0].line, 1);
  EXPECT_EQ(r.errors[0].column, static_cast<int>(line.find("nope")) + 1);
}

TEST(MslFrontend, UnknownParameterAttributeIsAnError) {
  const char* source =
      "kernel void k(__global float* a [[bufer(0)]]) { a[0] = 1.0f; }\n";
  FrontendResult r = CompileMsl(source, "typo.metal", {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.errors[0].message.find("unknown attribute [[bufer]]"),
            std::string::npos)
      << r.errors[0].message;
  EXPECT_EQ(r.errors[0].line, 1);
}

TEST(MslFrontend, MacrosFromCompileOptions) {
  const char* source =
      "kernel void k(__global float* a [[buffer(0)]]) { a[0] = VALUE; }\n";
  CompileOptions options;
  options.macros.push_back({"VALUE", "2.5f"});
  FrontendResult r = CompileMsl(source, "m.metal", options);
  ASSERT_TRUE(r.ok()) << isa::FormatDiagnostics(r.errors);
  EXPECT_NE(PrintModule(*r.module).find("2.5"), std::string::npos);
  FrontendResult missing = CompileMsl(source, "m.metal", {});
  EXPECT_FALSE(missing.ok());
}

TEST(AttributeRewriter, KeepsStandardAttributesCommentsAndStrings) {
  const std::string source =
      "[[maybe_unused]] int x; // [[buffer(0)]]\n"
      "const char* s = \"[[buffer(1)]]\";\n"
      "float* p [[buffer(2)]];\n";
  const RewrittenSource r = RewriteMetalAttributes(source);
  EXPECT_NE(r.text.find("[[maybe_unused]]"), std::string::npos);
  EXPECT_NE(r.text.find("// [[buffer(0)]]"), std::string::npos);
  EXPECT_NE(r.text.find("\"[[buffer(1)]]\""), std::string::npos);
  EXPECT_NE(r.text.find("__attribute__((annotate(\"metal.buffer\", 2)))"),
            std::string::npos)
      << r.text;
  // Every original line is still there, in order.
  EXPECT_EQ(std::count(r.text.begin(), r.text.end(), '\n'), 3);
}

// Function constant indices are what the preprocessor leaves of a macro
// (llama.cpp: `[[function_constant(FC_UNARY + 1)]]` is `1200 + 1`).
TEST(SourceScan, IntegerConstantsOfLiteralsAndOperators) {
  EXPECT_EQ(IntegerConstant("1200 + 1"), 1201);
  EXPECT_EQ(IntegerConstant(" (1300+2) "), 1302);
  EXPECT_EQ(IntegerConstant("2 + 3 * 4"), 14);
  EXPECT_EQ(IntegerConstant("(2 + 3) * 4"), 20);
  EXPECT_EQ(IntegerConstant("1 << 4 | 1"), 17);
  EXPECT_EQ(IntegerConstant("0x10 - 1u"), 15);
  EXPECT_EQ(IntegerConstant("-3 + 10 % 4"), -1);
  EXPECT_EQ(IntegerConstant("7"), 7);
  EXPECT_EQ(IntegerConstant("N + 1"), std::nullopt);
  EXPECT_EQ(IntegerConstant("1 / 0"), std::nullopt);
  EXPECT_EQ(IntegerConstant("1 +"), std::nullopt);
  EXPECT_EQ(IntegerConstant("1 && 2"), std::nullopt);
  EXPECT_EQ(IntegerConstant(""), std::nullopt);
}

TEST(AttributeRewriter, FunctionConstantIndicesFromMacros) {
  const RewrittenSource r = RewriteMetalAttributes(
      "constant short op [[function_constant(1200 + 0)]];\n"
      "constant bool cnt [[function_constant((1200) + 1)]];\n");
  ASSERT_EQ(r.function_constants.size(), 2u);
  EXPECT_EQ(r.function_constants[0].name, "op");
  EXPECT_EQ(r.function_constants[0].index, 1200);
  EXPECT_EQ(r.function_constants[1].name, "cnt");
  EXPECT_EQ(r.function_constants[1].index, 1201);
}

TEST(AttributeRewriter, FunctionPointerTemplateParametersBecomeReferences) {
  const std::string source =
      "template <typename T, float (*F)(float), int N = 3,\n"
      "          T (* G )(T, int) >\n"
      "float f(float x) { return F(x); }\n"
      "template <int (*)(int)> struct Unnamed {};\n"
      "void g(float (*p)(float));\n";
  const RewrittenSource r = RewriteMetalAttributes(source);
  EXPECT_NE(r.text.find("template <typename T, float (&F)(float), int N = 3,\n"
                        "          T (& G )(T, int) >"),
            std::string::npos)
      << r.text;
  // Unnamed parameters and ordinary function pointers stay as written.
  EXPECT_NE(r.text.find("template <int (*)(int)> struct"), std::string::npos);
  EXPECT_NE(r.text.find("void g(float (*p)(float));"), std::string::npos);
  EXPECT_EQ(std::count(r.text.begin(), r.text.end(), '\n'), 5);
  // A diagnostic after the rewrite points at the user's column.
  const size_t at = r.text.find("int N");
  EXPECT_EQ(r.OriginalOffset(at), source.find("int N"));
}

// MSL's `constant` is read-only device memory in the IR, but the argument
// table still says constant; helpers may take constant pointers too.
TEST(MslFrontend, ConstantParametersKeepTheirAddressSpace) {
  FrontendResult r = CompileMsl(R"(
#include <metal_stdlib>
using namespace metal;
struct P { float a; uint n; };
float get(constant P& p, constant float* t, uint i) { return p.a * t[i % 4]; }
kernel void k(device float* out [[buffer(0)]], constant P& p [[buffer(1)]],
              const constant float* t [[buffer(2)]], device const float* d [[buffer(3)]],
              uint i [[thread_position_in_grid]]) {
  if (i < p.n) out[i] = get(p, t, i) + d[i] + float((constant float*)t == t);
}
)",
                                "k.metal", {});
  ASSERT_TRUE(r.ok()) << isa::FormatDiagnostics(r.errors);
  ASSERT_EQ(r.kernels.size(), 1u);
  const auto& params = r.kernels[0].parameters;
  ASSERT_EQ(params.size(), 5u);
  EXPECT_EQ(params[0].space, isa::AddressSpace::kDevice);
  EXPECT_EQ(params[1].space, isa::AddressSpace::kConstant);
  EXPECT_EQ(params[2].space, isa::AddressSpace::kConstant);
  EXPECT_EQ(params[3].space, isa::AddressSpace::kDevice);
  EXPECT_TRUE(r.warnings.empty()) << r.warnings.front();
}

// A function constant without a value is zero: the divisions by it and the
// switch over it are not the user's warnings (llama.cpp's whole file had
// 1,249 of them); with every value given, they are.
TEST(MslFrontend, FunctionConstantsWithoutValuesMakeNoZeroWarnings) {
  auto warnings = [](const char* divisor, const CompileOptions& options) {
    const std::string source = std::string(R"(
constant short FC_n [[function_constant(7)]];
kernel void k(device int* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  switch (FC_n) { case 1: out[i] = 1; break; }
  out[i] += int(i) % )") + divisor +
                               R"(;
}
)";
    FrontendResult r = CompileMsl(source, "k.metal", options);
    EXPECT_TRUE(r.ok()) << isa::FormatDiagnostics(r.errors);
    return r.warnings;
  };
  EXPECT_TRUE(warnings("FC_n", {}).empty()) << warnings("FC_n", {}).front();
  CompileOptions zero;
  zero.function_constants = {{"7", "0"}};
  EXPECT_EQ(warnings("FC_n", zero).size(), 2u);  // the switch, the division
  CompileOptions one;
  one.function_constants = {{"7", "1"}};
  EXPECT_EQ(warnings("0", one).size(), 1u);  // the division by a literal
}

// The embedded precompiled shims change nothing but the speed: the same
// source compiles to the same LLVM IR with them and without (a macro the
// shims read turns them off).
TEST(MslFrontend, PrecompiledShimsGiveTheSameModule) {
  constexpr char kSource[] = R"(
#include <metal_stdlib>
using namespace metal;
kernel void k(device float4* v [[buffer(0)]], device atomic_uint* n [[buffer(1)]],
              uint i [[thread_position_in_grid]]) {
  float4 x = v[i];
  v[i] = select(x, normalize(x) * simd_sum(x.w), x.yzwx > 0.5f);
  atomic_fetch_add_explicit(n, popcount(i), memory_order_relaxed);
}
)";
  for (const bool fast : {true, false}) {
    CompileOptions with;
    with.fast_math = fast;
    CompileOptions without = with;
    without.macros.push_back({"MTLEMU_TEST_WITHOUT_PCH", "1"});
    EXPECT_FALSE(EmbeddedShimPch(fast).empty());
    EXPECT_TRUE(CanUseShimPch(with));
    EXPECT_FALSE(CanUseShimPch(without));
    FrontendResult a = CompileMsl(kSource, "k.metal", with);
    FrontendResult b = CompileMsl(kSource, "k.metal", without);
    ASSERT_TRUE(a.ok()) << isa::FormatDiagnostics(a.errors);
    ASSERT_TRUE(b.ok()) << isa::FormatDiagnostics(b.errors);
    const llvm::Function* fa = a.module->getFunction(a.kernels[0].ir_name);
    const llvm::Function* fb = b.module->getFunction(b.kernels[0].ir_name);
    ASSERT_NE(fa, nullptr);
    ASSERT_NE(fb, nullptr);
    EXPECT_EQ(fa->getInstructionCount(), fb->getInstructionCount());
    EXPECT_EQ(a.module->size(), b.module->size());
    std::string ta, tb;
    llvm::raw_string_ostream(ta) << *fa;
    llvm::raw_string_ostream(tb) << *fb;
    EXPECT_EQ(ta, tb);
  }
}

// A vector cast clang names brings every C-style cast spelled like it in
// its function into the rewrite (clang names one per statement of an
// instantiation, and an error can hide one), and every one-argument
// functional cast through the same identifier; not a call of that name's,
// sizeof's, a cast of a comparison, a declarator, nor a cast in a function
// without sites.
TEST(AttributeRewriter, WrapsTheCastsSpelledLikeANamedOne) {
  const std::string source =
      "namespace n {\n"
      "void f() {\n"
      "a = (float4) x + (float4) y[i] + (float4)(p * q) + (float4)(m > n);\n"
      "b = sizeof(float4) * k + g(float4) + o.t2(u) + t2(v) + t2(w, 1);\n"
      "}\n"
      "void h() { c = (float4) z + t2(z); }\n"
      "}\n";
  const size_t first = source.find("(float4) x");
  const size_t functional = source.find("t2(v)");
  RetrySites sites;
  sites.vector_casts = {first, functional};
  const RewrittenSource r = RewriteMetalAttributes(source, sites);
  EXPECT_EQ(r.text,
            "namespace n {\n"
            "void f() {\n"
            "a = (float4)(__mtl_vector_cast<float4>) x + "
            "(float4)(__mtl_vector_cast<float4>) y[i] + "
            "(float4)(__mtl_vector_cast<float4>)(p * q) + (float4)(m > n);\n"
            "b = sizeof(float4) * k + g(float4) + o.t2(u) + "
            "t2(__mtl_vector_cast<t2>(v)) + t2(w, 1);\n"
            "}\n"
            "void h() { c = (float4) z + t2(__mtl_vector_cast<t2>(z)); }\n"
            "}\n");
}

// A mixed operator named in a way of a conditional makes the conditional
// mixed in the same round (its value is a vector); one in the condition,
// or past an assignment, does not.
TEST(AttributeRewriter, MixedOperatorsInAConditionalMixItsWays) {
  const std::string source =
      "x = p ? s*m[i] : 0.0f;\n"
      "y = s*v > 0 ? a : b;\n";
  RetrySites sites;
  sites.mixed_operators = {source.find("*m"), source.find("*v")};
  EXPECT_EQ(RewriteMetalAttributes(source, sites).text,
            "x = p ? __mtl_mixed_arm(__mtl_mixed(s)*m[i]) : "
            "__mtl_mixed_arm(0.0f);\n"
            "y = __mtl_mixed(s)*v > 0 ? a : b;\n");
}

// The operands of a conditional the front end names are wrapped whole:
// nested conditionals, calls with commas, brackets, qualified names; the
// condition and what follows the expression stay as they were.
TEST(AttributeRewriter, WrapsTheOperandsOfNamedConditionals) {
  const std::string source =
      "x = c ? a[i] : f(b, c2 ? d : e), y = 1;\n"
      "z = p ? q ? metal::r : s : t;\n";
  const size_t first = source.find('?');
  const size_t second = source.find("? q");
  const RewrittenSource r =
      RewriteMetalAttributes(source, RetrySites{{first, second}, {}});
  // Each way takes the type of the conditional from the other's.
  EXPECT_EQ(r.text,
            "x = c ? __mtl_cond_arm<decltype((f(b, c2 ? d : e)))>(a[i]) : "
            "__mtl_cond_arm<decltype((a[i]))>(f(b, c2 ? d : e)), y = 1;\n"
            "z = p ? __mtl_cond_arm<decltype((t))>(q ? metal::r : s) : "
            "__mtl_cond_arm<decltype((q ? metal::r : s))>(t);\n");
  // Offsets after an insertion still map back to the source.
  const size_t t = r.text.rfind("t)");
  EXPECT_EQ(source[r.OriginalOffset(t)], 't');
}

}  // namespace
}  // namespace mtlemu::msl
