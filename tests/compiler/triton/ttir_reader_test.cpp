// The TTIR reader: the four kernels Triton 3.6 printed (shared/reference/
// ttir) read, verify and print back as Triton printed them; every op's
// syntax; MLIR's generic form; every loc(...) form; function bodies with
// blocks and cf branches, read as scf.if; errors with their positions; no
// crash on truncated or damaged text.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/triton/ir/printer.h"
#include "compiler/triton/ir/verifier.h"
#include "compiler/triton/ttir/reader.h"

namespace mtlemu::triton::ttir {
namespace {

using ir::OpCode;

const std::string kReferenceDir = MTLEMU_SOURCE_DIR "/../shared/reference/ttir";

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::unique_ptr<ir::Module> ReadOk(const std::string& text,
                                   const std::string& file = "test.ttir") {
  auto r = ReadTtir(text, file);
  EXPECT_TRUE(r.ok()) << r.error().message;
  if (!r.ok()) return nullptr;
  return std::move(r).value();
}

std::string Print(const ir::Module& m, bool locations = false,
                  bool aliases = true) {
  ir::PrintOptions o;
  o.locations = locations;
  o.location_aliases = aliases;
  return ir::PrintModule(m, o);
}

// The text without loc(...) annotations and #loc definitions: what the
// printer writes with locations off.
std::string StripLocations(const std::string& text) {
  std::string out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("#loc", 0) == 0) continue;
    std::string kept;
    for (size_t k = 0; k < line.size();) {
      if (line.compare(k, 5, " loc(") == 0) {
        int depth = 0;
        size_t j = k + 4;
        for (; j < line.size(); ++j) {
          if (line[j] == '(') ++depth;
          if (line[j] == ')' && --depth == 0) break;
        }
        k = j + 1;
        continue;
      }
      kept += line[k++];
    }
    out += kept + "\n";
  }
  return out;
}

std::vector<const ir::Operation*> OpsOf(const ir::Function& f, OpCode code) {
  std::vector<const ir::Operation*> ops;
  ir::Walk(*f.body(), [&](const ir::Operation* op) {
    if (op->code() == code) ops.push_back(op);
  });
  return ops;
}

int CountOps(const ir::Function& f) {
  int n = 0;
  ir::Walk(*f.body(), [&](const ir::Operation*) { ++n; });
  return n;
}

// The op whose first result is named `name`.
const ir::Operation* Named(const ir::Function& f, const std::string& name) {
  const ir::Operation* found = nullptr;
  ir::Walk(*f.body(), [&](const ir::Operation* op) {
    if (op->num_results() > 0 && op->result()->name() == name) found = op;
  });
  return found;
}

#define REQUIRE_REFERENCE()                                             \
  if (!std::filesystem::is_directory(kReferenceDir)) {                  \
    GTEST_SKIP() << "no reference TTIR at " << kReferenceDir            \
                 << " (shared/reference/ttir is not checked out here)"; \
  }

// --- the reference kernels ---------------------------------------------------

class ReferenceTest : public ::testing::TestWithParam<const char*> {};

TEST_P(ReferenceTest, ReadsVerifiesAndPrintsAsTritonDid) {
  REQUIRE_REFERENCE();
  const std::string path = kReferenceDir + "/" + GetParam() + ".ttir";
  const std::string text = ReadText(path);
  ASSERT_FALSE(text.empty()) << path;
  auto m = ReadOk(text, path);
  ASSERT_NE(m, nullptr);
  Status v = ir::Verify(*m, "reader");
  EXPECT_TRUE(v.ok()) << v.error().message;
  // Without locations, the printer writes what Triton wrote.
  EXPECT_EQ(Print(*m), StripLocations(text));
}

TEST_P(ReferenceTest, PrintReadPrintIsAFixedPoint) {
  REQUIRE_REFERENCE();
  auto m = ReadOk(ReadText(kReferenceDir + "/" + GetParam() + ".ttir"));
  ASSERT_NE(m, nullptr);
  for (bool locations : {false, true}) {
    for (bool aliases : {false, true}) {
      SCOPED_TRACE(std::string(locations ? "locations" : "no locations") +
                   (aliases ? ", aliases" : ", inline"));
      const std::string once = Print(*m, locations, aliases);
      auto again = ReadOk(once);
      ASSERT_NE(again, nullptr);
      EXPECT_EQ(Print(*again, locations, aliases), once);
      Status v = ir::Verify(*again);
      EXPECT_TRUE(v.ok()) << v.error().message;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, ReferenceTest,
                         ::testing::Values("add", "softmax", "matmul",
                                           "layernorm"));

TEST(ReferenceKernels, Add) {
  REQUIRE_REFERENCE();
  auto m = ReadOk(ReadText(kReferenceDir + "/add.ttir"), "add.ttir");
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(m->functions().size(), 1u);
  const ir::Function& f = *m->functions()[0];
  EXPECT_EQ(f.name(), "add_kernel");
  EXPECT_TRUE(f.is_public());
  EXPECT_FALSE(f.noinline());
  EXPECT_EQ(f.loc().file, "triton_corpus.py");
  EXPECT_EQ(f.loc().line, 26);
  // Arguments: names, types, divisibility, locations.
  ASSERT_EQ(f.body()->num_args(), 4);
  const char* names[] = {"x_ptr", "y_ptr", "out_ptr", "n_elements"};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(f.arg_info()[i].name, names[i]);
    EXPECT_EQ(f.body()->arg(i)->name(), names[i]);
    EXPECT_EQ(f.arg_info()[i].divisibility, 16);
    EXPECT_EQ(f.arg_info()[i].loc.line, 26);
  }
  EXPECT_EQ(f.body()->arg(0)->type()->ToString(), "!tt.ptr<f32>");
  EXPECT_EQ(f.body()->arg(3)->type(), ir::Type::I32());
  EXPECT_EQ(CountOps(f), 19);
  EXPECT_EQ(OpsOf(f, OpCode::kLoad).size(), 2u);
  EXPECT_EQ(OpsOf(f, OpCode::kStore).size(), 1u);
  EXPECT_EQ(OpsOf(f, OpCode::kAddPtr).size(), 3u);
  // %pid = tt.get_program_id x : i32 loc("pid"("triton_corpus.py":27:24))
  const ir::Operation* pid = Named(f, "pid");
  ASSERT_NE(pid, nullptr);
  EXPECT_EQ(pid->code(), OpCode::kGetProgramId);
  EXPECT_EQ(pid->int_attr("axis", -1), 0);
  EXPECT_EQ(pid->loc().line, 27);
  EXPECT_EQ(pid->loc().column, 24);
  // %mask_3 = arith.cmpi slt, ...: i1 of the offsets' shape.
  const ir::Operation* mask = Named(f, "mask_3");
  ASSERT_NE(mask, nullptr);
  EXPECT_EQ(mask->string_attr("predicate"), "slt");
  EXPECT_EQ(mask->result()->type()->ToString(), "tensor<1024xi1>");
  const ir::Operation* store = OpsOf(f, OpCode::kStore)[0];
  EXPECT_EQ(store->num_operands(), 3);
  EXPECT_EQ(store->operand(2), mask->result());
  EXPECT_EQ(store->loc().line, 32);
  EXPECT_EQ(store->loc().column, 29);
  // The unnamed add keeps no name.
  const ir::Operation* add = OpsOf(f, OpCode::kAddF)[0];
  EXPECT_EQ(add->result()->name(), "");
  EXPECT_EQ(add->loc().column, 33);
  // loc(unknown) on the constant.
  EXPECT_FALSE(Named(f, "c1024_i32")->loc().known());
}

TEST(ReferenceKernels, Softmax) {
  REQUIRE_REFERENCE();
  auto m = ReadOk(ReadText(kReferenceDir + "/softmax.ttir"));
  ASSERT_NE(m, nullptr);
  const ir::Function& f = *m->functions()[0];
  EXPECT_EQ(f.arg_info()[2].divisibility, 0);  // in_row_stride
  // other = -inf: dense<0xFF800000>.
  const ir::Operation* x = Named(f, "x");
  ASSERT_NE(x, nullptr);
  const auto* dense = std::get_if<ir::DenseAttr>(x->attr("value"));
  ASSERT_NE(dense, nullptr);
  ASSERT_EQ(dense->values.size(), 1u);
  EXPECT_EQ(std::get<double>(dense->values[0]), -INFINITY);
  // Two reductions, each with a two-argument combiner.
  auto reduces = OpsOf(f, OpCode::kReduce);
  ASSERT_EQ(reduces.size(), 2u);
  EXPECT_EQ(reduces[0]->int_attr("axis", -1), 0);
  EXPECT_EQ(reduces[0]->result()->type(), ir::Type::F32());
  const ir::Block& combiner = *reduces[0]->region(0);
  ASSERT_EQ(combiner.num_args(), 2);
  EXPECT_EQ(combiner.arg(0)->name(), "x_9");
  EXPECT_EQ(combiner.ops()[0]->code(), OpCode::kMaxNumF);
  EXPECT_EQ(combiner.ops()[1]->code(), OpCode::kReduceReturn);
  // tl.max is inlined from triton/language/standard.py: its ops point at
  // the kernel's call, "x = tl.max(x, axis=0)" (41:19), through the
  // callsite chain.
  EXPECT_EQ(reduces[0]->loc().line, 41);
  EXPECT_EQ(reduces[0]->loc().column, 19);
  EXPECT_EQ(combiner.ops()[0]->loc().line, 41);
  EXPECT_EQ(reduces[1]->loc().line, 43);
  EXPECT_EQ(reduces[1]->result()->name(), "den");
  EXPECT_EQ(OpsOf(f, OpCode::kExp).size(), 1u);
}

TEST(ReferenceKernels, Matmul) {
  REQUIRE_REFERENCE();
  auto m = ReadOk(ReadText(kReferenceDir + "/matmul.ttir"));
  ASSERT_NE(m, nullptr);
  const ir::Function& f = *m->functions()[0];
  // stride_ak, stride_bn and stride_cn were 1 and are not arguments.
  ASSERT_EQ(f.body()->num_args(), 9);
  EXPECT_EQ(f.arg_info()[8].name, "stride_cm");
  auto loops = OpsOf(f, OpCode::kFor);
  ASSERT_EQ(loops.size(), 1u);
  const ir::Operation& loop = *loops[0];
  EXPECT_EQ(loop.num_operands(), 4);  // lower, upper, step, one init
  EXPECT_EQ(loop.result()->name(), "acc");
  EXPECT_EQ(loop.result()->type()->ToString(), "tensor<32x32xf32>");
  // loc("acc"(#loc3)), #loc3 = 55:22.
  EXPECT_EQ(loop.loc().line, 55);
  EXPECT_EQ(loop.loc().column, 22);
  const ir::Block& body = *loop.region(0);
  EXPECT_EQ(body.arg(0)->name(), "k");
  EXPECT_EQ(body.arg(1)->name(), "acc_5");
  EXPECT_EQ(body.back()->code(), OpCode::kYield);
  auto dots = OpsOf(f, OpCode::kDot);
  ASSERT_EQ(dots.size(), 1u);
  EXPECT_EQ(dots[0]->parent_op(), &loop);
  EXPECT_EQ(dots[0]->operand(2), body.arg(1));
  EXPECT_EQ(dots[0]->loc().line, 61);
  EXPECT_EQ(dots[0]->loc().column, 25);
  EXPECT_EQ(OpsOf(f, OpCode::kLoad).size(), 2u);
  EXPECT_EQ(OpsOf(f, OpCode::kExpandDims).size(), 6u);
  // %0 = arith.addi %K, %c31_i32 (tl.cdiv, inlined from standard.py):
  // callsite(standard.py at 55:33) resolves to the kernel's line.
  const ir::Operation* cdiv = nullptr;
  for (const ir::Operation* op : OpsOf(f, OpCode::kAddI)) {
    if (op->operand(0) == f.body()->arg(5)) cdiv = op;  // %K
  }
  ASSERT_NE(cdiv, nullptr);
  EXPECT_EQ(cdiv->result()->name(), "");
  EXPECT_EQ(cdiv->loc().file, "triton_corpus.py");
  EXPECT_EQ(cdiv->loc().line, 55);
  EXPECT_EQ(cdiv->loc().column, 33);
  EXPECT_NE(Named(f, "offs_m_2"), nullptr);
  EXPECT_EQ(Named(f, "offs_m_2")->code(), OpCode::kAddI);
}

TEST(ReferenceKernels, Layernorm) {
  REQUIRE_REFERENCE();
  auto m = ReadOk(ReadText(kReferenceDir + "/layernorm.ttir"));
  ASSERT_NE(m, nullptr);
  const ir::Function& f = *m->functions()[0];
  EXPECT_EQ(f.body()->arg(6)->name(), "eps");
  EXPECT_EQ(f.body()->arg(6)->type(), ir::Type::F32());
  const ir::Operation* rstd = Named(f, "rstd");
  ASSERT_NE(rstd, nullptr);
  const auto* one = std::get_if<ir::FloatAttr>(rstd->attr("value"));
  ASSERT_NE(one, nullptr);
  EXPECT_EQ(one->value, 1.0);
  EXPECT_EQ(one->type, ir::Type::F32());
  EXPECT_EQ(OpsOf(f, OpCode::kReduce).size(), 2u);
  EXPECT_EQ(OpsOf(f, OpCode::kSelect).size(), 1u);
  EXPECT_EQ(OpsOf(f, OpCode::kSIToFP).size(), 1u);
  EXPECT_EQ(OpsOf(f, OpCode::kSqrt).size(), 1u);
  EXPECT_EQ(Named(f, "xc_8")->loc().line, 74);
  EXPECT_EQ(Named(f, "xc_8")->loc().column, 34);
}

// --- every op's syntax -------------------------------------------------------

// Every op of ops.def in Triton's syntax, as the printer writes it.
constexpr const char* kAllOps = R"(module {
  tt.func private @helper(%hx: f32, %hy: i32) -> f32 attributes {noinline = true} {
    tt.return %hx : f32
  }
  tt.func public @all_ops(%p: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %q: !tt.ptr<f16>, %n: i32, %f: f32, %l: i64, %b: i1, %a8: tensor<16x32xf8E4M3FN>, %s8: tensor<16x1xi8>, %b16: tensor<32x16xbf16>) attributes {noinline = false} {
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %c-1_i32 = arith.constant -1 : i32
    %c1_i64 = arith.constant 1 : i64
    %c16_i32 = arith.constant 16 : i32
    %c16_i64 = arith.constant 16 : i64
    %true = arith.constant true
    %cst = arith.constant 1.000000e+00 : f32
    %cst_0 = arith.constant 0x7FC00000 : f32
    %cst_1 = arith.constant dense<0xFF800000> : tensor<16xf32>
    %cst_2 = arith.constant dense<[1, 2, 3, 4]> : tensor<4xi32>
    %cst_3 = arith.constant dense<[[1.000000e+00, 2.500000e+00], [-3.000000e+00, 0.000000e+00]]> : tensor<2x2xf32>
    %cst_4 = arith.constant dense<true> : tensor<16xi1>
    %cst_5 = arith.constant 5.000000e-01 : f16
    %cst_6 = arith.constant 3.14159274 : f32
    %cst_7 = arith.constant 1.000980e-01 : bf16
    %zero = arith.constant dense<0.000000e+00> : tensor<16x16xf32>
    %addi = arith.addi %n, %c1_i32 : i32
    %subi = arith.subi %n, %c1_i32 : i32
    %muli = arith.muli %n, %c1_i32 : i32
    %divsi = arith.divsi %n, %c1_i32 : i32
    %divui = arith.divui %n, %c1_i32 : i32
    %remsi = arith.remsi %n, %c1_i32 : i32
    %remui = arith.remui %n, %c1_i32 : i32
    %andi = arith.andi %n, %c1_i32 : i32
    %ori = arith.ori %n, %c1_i32 : i32
    %xori = arith.xori %n, %c-1_i32 : i32
    %shli = arith.shli %n, %c1_i32 : i32
    %shrsi = arith.shrsi %n, %c1_i32 : i32
    %shrui = arith.shrui %n, %c1_i32 : i32
    %maxsi = arith.maxsi %n, %c1_i32 : i32
    %maxui = arith.maxui %n, %c1_i32 : i32
    %minsi = arith.minsi %n, %c1_i32 : i32
    %minui = arith.minui %n, %c1_i32 : i32
    %addf = arith.addf %f, %cst : f32
    %subf = arith.subf %f, %cst : f32
    %mulf = arith.mulf %f, %cst : f32
    %divf = arith.divf %f, %cst : f32
    %remf = arith.remf %f, %cst : f32
    %maximumf = arith.maximumf %f, %cst : f32
    %minimumf = arith.minimumf %f, %cst : f32
    %maxnumf = arith.maxnumf %f, %cst : f32
    %minnumf = arith.minnumf %f, %cst : f32
    %negf = arith.negf %f : f32
    %cmpi = arith.cmpi slt, %n, %c1_i32 : i32
    %cmpf = arith.cmpf olt, %f, %cst : f32
    %select = arith.select %cmpi, %f, %cst : f32
    %extsi = arith.extsi %n : i32 to i64
    %extui = arith.extui %n : i32 to i64
    %trunci = arith.trunci %l : i64 to i32
    %sitofp = arith.sitofp %n : i32 to f32
    %uitofp = arith.uitofp %n : i32 to f32
    %fptosi = arith.fptosi %f : f32 to i32
    %fptoui = arith.fptoui %f : f32 to i32
    %extf = arith.extf %cst_5 : f16 to f32
    %truncf = arith.truncf %f : f32 to f16
    %bitcast = arith.bitcast %f : f32 to i32
    %exp = math.exp %f : f32
    %exp2 = math.exp2 %f : f32
    %log = math.log %f : f32
    %log2 = math.log2 %f : f32
    %log1p = math.log1p %f : f32
    %expm1 = math.expm1 %f : f32
    %sqrt = math.sqrt %f : f32
    %rsqrt = math.rsqrt %f : f32
    %cbrt = math.cbrt %f : f32
    %sin = math.sin %f : f32
    %cos = math.cos %f : f32
    %tan = math.tan %f : f32
    %asin = math.asin %f : f32
    %acos = math.acos %f : f32
    %atan = math.atan %f : f32
    %sinh = math.sinh %f : f32
    %cosh = math.cosh %f : f32
    %tanh = math.tanh %f : f32
    %asinh = math.asinh %f : f32
    %acosh = math.acosh %f : f32
    %atanh = math.atanh %f : f32
    %erf = math.erf %f : f32
    %absf = math.absf %f : f32
    %absi = math.absi %n : i32
    %floor = math.floor %f : f32
    %ceil = math.ceil %f : f32
    %trunc = math.trunc %f : f32
    %round = math.round %f : f32
    %roundeven = math.roundeven %f : f32
    %ctpop = math.ctpop %n : i32
    %ctlz = math.ctlz %n : i32
    %cttz = math.cttz %n : i32
    %atan2 = math.atan2 %f, %cst : f32
    %powf = math.powf %f, %cst : f32
    %copysign = math.copysign %f, %cst : f32
    %fma = math.fma %f, %cst, %cst_6 : f32
    %pid = tt.get_program_id x : i32
    %nprog = tt.get_num_programs z : i32
    %range = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
    %splat = tt.splat %f : f32 -> tensor<16xf32>
    %ptrs = tt.splat %p : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>
    %addptr = tt.addptr %ptrs, %range : tensor<16x!tt.ptr<f32>>, tensor<16xi32>
    %mask = tt.splat %b : i1 -> tensor<16xi1>
    %load = tt.load %addptr, %mask, %splat cacheModifier = ca evictionPolicy = evict_last {isVolatile = true} : tensor<16x!tt.ptr<f32>>
    %load_s = tt.load %p : !tt.ptr<f32>
    tt.store %addptr, %load, %mask cacheModifier = wb : tensor<16x!tt.ptr<f32>>
    %expand = tt.expand_dims %load {axis = 0 : i32} : tensor<16xf32> -> tensor<1x16xf32>
    %bcast = tt.broadcast %expand : tensor<1x16xf32> -> tensor<16x16xf32>
    %reshape = tt.reshape %bcast allow_reorder : tensor<16x16xf32> -> tensor<256xf32>
    %trans = tt.trans %bcast {order = array<i32: 1, 0>} : tensor<16x16xf32> -> tensor<16x16xf32>
    %cat = tt.cat %load, %splat : tensor<16xf32> -> tensor<32xf32>
    %join = tt.join %load, %splat : tensor<16xf32> -> tensor<16x2xf32>
    %split:2 = tt.split %join : tensor<16x2xf32> -> tensor<16xf32>
    %gather = tt.gather %load[%range] {axis = 0 : i32} : (tensor<16xf32>, tensor<16xi32>) -> tensor<16xf32>
    %hist = tt.histogram %range : tensor<16xi32> -> tensor<8xi32>
    %hist_m = tt.histogram %range, %mask : tensor<16xi32> -> tensor<8xi32>
    %one = tt.make_range {end = 1 : i32, start = 0 : i32} : tensor<1xi32>
    %unsplat = tt.unsplat %one : tensor<1xi32>
    %i2p = tt.int_to_ptr %l : i64 -> !tt.ptr<f32>
    %p2i = tt.ptr_to_int %p : !tt.ptr<f32> -> i64
    %rmw = tt.atomic_rmw fadd, acq_rel, gpu, %addptr, %load, %mask : (tensor<16x!tt.ptr<f32>>, tensor<16xf32>, tensor<16xi1>) -> tensor<16xf32>
    %rmw_s = tt.atomic_rmw exch, relaxed, sys, %p, %f : (!tt.ptr<f32>, f32) -> f32
    %cas = tt.atomic_cas acquire, cta, %p, %f, %cst : (!tt.ptr<f32>, f32, f32) -> f32
    %bptr = tt.make_tensor_ptr %q, [%c16_i64, %c16_i64], [%c16_i64, %c1_i64], [%c0_i32, %c0_i32] {order = array<i32: 1, 0>} : <tensor<16x16xf16>>
    %adv = tt.advance %bptr, [%c1_i32, %c0_i32] : <tensor<16x16xf16>>
    %bload = tt.load %adv {boundaryCheck = array<i32: 0, 1>, padding = 1 : i32} : !tt.ptr<tensor<16x16xf16>>
    tt.store %adv, %bload {boundaryCheck = array<i32: 1>} : !tt.ptr<tensor<16x16xf16>>
    %desc = tt.make_tensor_descriptor %q, [%c16_i32, %c16_i32], [%c16_i64, %c1_i64] : <f16>, <tensor<16x16xf16>>
    %dload = tt.descriptor_load %desc[%c0_i32, %c0_i32] cacheModifier = cg : !tt.tensordesc<tensor<16x16xf16>> -> tensor<16x16xf16>
    tt.descriptor_store %desc[%c0_i32, %c0_i32], %dload : !tt.tensordesc<tensor<16x16xf16>>, tensor<16x16xf16>
    tt.descriptor_reduce add, %desc[%c0_i32, %c0_i32], %dload : !tt.tensordesc<tensor<16x16xf16>>, tensor<16x16xf16>
    %rowdesc = tt.make_tensor_descriptor %q, [%c16_i32, %c16_i32], [%c16_i64, %c1_i64] {padding = 2 : i32} : <f16>, <tensor<1x16xf16>>
    %gath = tt.descriptor_gather %rowdesc[%range, %c0_i32] : (!tt.tensordesc<tensor<1x16xf16>>, tensor<16xi32>, i32) -> tensor<16x16xf16>
    tt.descriptor_scatter %rowdesc[%range, %c0_i32], %gath : !tt.tensordesc<tensor<1x16xf16>>, tensor<16xi32>, i32, tensor<16x16xf16>
    %dot = tt.dot %bcast, %trans, %zero : tensor<16x16xf32> * tensor<16x16xf32> -> tensor<16x16xf32>
    %dot_tf32 = tt.dot %bcast, %trans, %dot, inputPrecision = tf32 {maxNumImpreciseAcc = 32 : i32} : tensor<16x16xf32> * tensor<16x16xf32> -> tensor<16x16xf32>
    %dscaled = tt.dot_scaled %a8 scale %s8, %b16, %zero lhs = e4m3 rhs = bf16 {fastMath = false} : tensor<16x32xf8E4M3FN>, tensor<16x1xi8> * tensor<32x16xbf16> -> tensor<16x16xf32>
    %red = "tt.reduce"(%load) <{axis = 0 : i32}> ({
    ^bb0(%ra: f32, %rb: f32):
      %rmax = arith.maxnumf %ra, %rb : f32
      tt.reduce.return %rmax : f32
    }) : (tensor<16xf32>) -> f32
    %red2:2 = "tt.reduce"(%load, %range) <{axis = 0 : i32}> ({
    ^bb0(%v0: f32, %i0: i32, %v1: f32, %i1: i32):
      %gt = arith.cmpf ogt, %v0, %v1 : f32
      %vm = arith.select %gt, %v0, %v1 : f32
      %im = arith.select %gt, %i0, %i1 : i32
      tt.reduce.return %vm, %im : f32, i32
    }) : (tensor<16xf32>, tensor<16xi32>) -> (f32, i32)
    %scan = "tt.scan"(%load) <{axis = 0 : i32, reverse = false}> ({
    ^bb0(%sa: f32, %sb: f32):
      %ssum = arith.addf %sa, %sb : f32
      tt.scan.return %ssum : f32
    }) : (tensor<16xf32>) -> tensor<16xf32>
    %mapped = "tt.map_elementwise"(%load) <{pack = 1 : i32}> ({
    ^bb0(%me: f32):
      %mneg = arith.negf %me : f32
      tt.map_elementwise.return %mneg : f32
    }) : (tensor<16xf32>) -> tensor<16xf32>
    %tbit = tt.bitcast %load : tensor<16xf32> -> tensor<16xi32>
    %fp8 = tt.fp_to_fp %load, rounding = rtne : tensor<16xf32> -> tensor<16xf8E5M2>
    %up = tt.fp_to_fp %fp8 : tensor<16xf8E5M2> -> tensor<16xf32>
    %psqrt = tt.precise_sqrt %load : tensor<16xf32>
    %pdiv = tt.precise_divf %load, %splat : tensor<16xf32>
    %mulhi = tt.mulhiui %range, %range : tensor<16xi32>
    %clamp = tt.clampf %load, %splat, %splat, propagateNan = all : tensor<16xf32>
    %ext = tt.extern_elementwise %load {libname = "", libpath = "", pure = true, symbol = "__nv_expf"} : (tensor<16xf32>) -> tensor<16xf32>
    %asm:2 = tt.elementwise_inline_asm "mov.b32 $0, $2; mov.b32 $1, $2;" {constraints = "=r,=r,r", packed_element = 1 : i32, pure = true} %range : tensor<16xi32> -> tensor<16xi32>, tensor<16xi32>
    tt.print " x: " {hex = false, isSigned = array<i32: 0, 1>} : %load, %range : tensor<16xf32>, tensor<16xi32>
    tt.print "done" {hex = true, isSigned = array<i32>}
    tt.assert %mask, "mask is \22off\22\0A" : tensor<16xi1>
    gpu.barrier
    llvm.intr.assume %b : i1
    %poison = ub.poison : i32
    %call = tt.call @helper(%f, %n) : (f32, i32) -> f32
    %for = scf.for %iv = %c0_i32 to %n step %c1_i32 iter_args(%acc = %f) -> (f32)  : i32 {
      %sum = arith.addf %acc, %cst : f32
      scf.yield %sum : f32
    } {tt.num_stages = 3 : i32}
    scf.for %iv2 = %c0_i32 to %n step %c1_i32  : i32 {
      tt.store %p, %f : !tt.ptr<f32>
    }
    %if = scf.if %b -> (f32) {
      scf.yield %f : f32
    } else {
      scf.yield %cst : f32
    }
    scf.if %b {
      tt.store %p, %cst : !tt.ptr<f32>
    }
    %while:2 = scf.while (%w0 = %n, %w1 = %f) : (i32, f32) -> (i32, f32) {
      %wc = arith.cmpi slt, %w0, %c16_i32 : i32
      scf.condition(%wc) %w0, %w1 : i32, f32
    } do {
    ^bb0(%w2: i32, %w3: f32):
      %w4 = arith.addi %w2, %c1_i32 : i32
      scf.yield %w4, %w3 : i32, f32
    }
    tt.return
  }
}
)";

TEST(ReaderSyntax, EveryOpReadsVerifiesAndPrintsBackUnchanged) {
  auto m = ReadOk(kAllOps);
  ASSERT_NE(m, nullptr);
  Status v = ir::Verify(*m);
  EXPECT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(Print(*m), kAllOps);
  std::set<OpCode> seen;
  for (const auto& f : m->functions()) {
    ir::Walk(*f->body(),
             [&](const ir::Operation* op) { seen.insert(op->code()); });
  }
  for (int c = 0; c < ir::kNumOpCodes; ++c) {
    EXPECT_TRUE(seen.count(static_cast<OpCode>(c)))
        << ir::OpName(static_cast<OpCode>(c)) << " is not in kAllOps";
  }
}

TEST(ReaderSyntax, WhatEachOpBecomes) {
  auto m = ReadOk(kAllOps);
  ASSERT_NE(m, nullptr);
  const ir::Function& f = *m->Find("all_ops");
  const ir::Operation* load = Named(f, "load");
  EXPECT_EQ(load->num_operands(), 3);
  EXPECT_EQ(load->string_attr("cache"), "ca");
  EXPECT_EQ(load->string_attr("evict"), "evict_last");
  EXPECT_TRUE(load->bool_attr("isVolatile"));
  EXPECT_EQ(load->result()->type()->ToString(), "tensor<16xf32>");
  const ir::Operation* bload = Named(f, "bload");
  EXPECT_EQ(bload->string_attr("padding"), "zero");  // written as 1 : i32
  EXPECT_EQ(bload->array_attr("boundaryCheck"), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(bload->result()->type()->ToString(), "tensor<16x16xf16>");
  EXPECT_EQ(Named(f, "bptr")->result()->type()->ToString(),
            "!tt.ptr<tensor<16x16xf16>>");
  EXPECT_EQ(Named(f, "desc")->result()->type()->ToString(),
            "!tt.tensordesc<tensor<16x16xf16>>");
  EXPECT_EQ(Named(f, "rmw")->string_attr("atomic_rmw_op"), "fadd");
  EXPECT_EQ(Named(f, "rmw_s")->string_attr("atomic_rmw_op"), "exch");
  EXPECT_EQ(Named(f, "cas")->string_attr("scope"), "cta");
  EXPECT_EQ(Named(f, "nprog")->int_attr("axis"), 2);
  EXPECT_EQ(Named(f, "dot_tf32")->string_attr("inputPrecision"), "tf32");
  EXPECT_EQ(Named(f, "dot")->attr("inputPrecision"), nullptr);
  EXPECT_EQ(Named(f, "dscaled")->array_attr("operandSegmentSizes"),
            (std::vector<int64_t>{1, 1, 1, 1, 0}));
  EXPECT_TRUE(Named(f, "reshape")->bool_attr("allow_reorder"));
  EXPECT_EQ(Named(f, "fp8")->string_attr("rounding"), "rtne");
  EXPECT_EQ(Named(f, "clamp")->string_attr("propagateNan"), "all");
  EXPECT_EQ(Named(f, "c-1_i32")->int_attr("value"), -1);
  EXPECT_EQ(Named(f, "cst_7")->result()->type()->ToString(), "bf16");
  const ir::Operation* split = Named(f, "split");
  EXPECT_EQ(split->num_results(), 2);
  EXPECT_EQ(split->result(1)->name(), "split");
  const ir::Operation* asserted = OpsOf(f, OpCode::kAssert)[0];
  EXPECT_EQ(asserted->string_attr("message"), "mask is \"off\"\n");
  // scf.for and scf.if without results got their scf.yield back.
  auto loops = OpsOf(f, OpCode::kFor);
  ASSERT_EQ(loops.size(), 2u);
  EXPECT_EQ(loops[1]->region(0)->back()->code(), OpCode::kYield);
  EXPECT_EQ(loops[0]->int_attr("tt.num_stages"), 3);
  auto ifs = OpsOf(f, OpCode::kIf);
  ASSERT_EQ(ifs.size(), 2u);
  EXPECT_EQ(ifs[1]->num_regions(), 2);
  EXPECT_EQ(ifs[1]->region(0)->back()->code(), OpCode::kYield);
  EXPECT_TRUE(ifs[1]->region(1)->empty());
  const ir::Function& helper = *m->Find("helper");
  EXPECT_FALSE(helper.is_public());
  EXPECT_TRUE(helper.noinline());
  ASSERT_EQ(helper.result_types().size(), 1u);
  EXPECT_EQ(helper.result_types()[0], ir::Type::F32());
}

TEST(ReaderSyntax, GenericFormOfAnyOp) {
  EXPECT_FALSE(ReadTtir("\"tt.func\"() ({}) : () -> ()", "g.ttir").ok())
      << "only module and tt.func at the top";
  auto m = ReadOk(R"(module {
  tt.func @f(%a: i32, %p: !tt.ptr<f32>, %m: tensor<4xi1>) {
    %0 = "arith.addi"(%a, %a) : (i32, i32) -> i32
    %1 = "arith.cmpi"(%a, %0) <{predicate = 2 : i64}> : (i32, i32) -> i1
    %2 = "tt.splat"(%p) : (!tt.ptr<f32>) -> tensor<4x!tt.ptr<f32>>
    %3 = "tt.load"(%2, %m) <{cache = 2 : i32, evict = 1 : i32, isVolatile = false, operandSegmentSizes = array<i32: 1, 1, 0>}> : (tensor<4x!tt.ptr<f32>>, tensor<4xi1>) -> tensor<4xf32>
    %4 = "arith.addf"(%3, %3) <{fastmath = #arith.fastmath<none>}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %5 = "tt.get_program_id"() <{axis = 1 : i32}> : () -> i32
    "tt.store"(%2, %4) <{cache = 1 : i32, evict = 1 : i32}> : (tensor<4x!tt.ptr<f32>>, tensor<4xf32>) -> ()
    %6 = "scf.for"(%a, %a, %a, %a) ({
    ^bb0(%i: i32, %acc: i32):
      %7 = "arith.muli"(%acc, %i) : (i32, i32) -> i32
      "scf.yield"(%7) : (i32) -> ()
    }) : (i32, i32, i32, i32) -> i32
    "tt.return"() : () -> ()
  }
}
)");
  ASSERT_NE(m, nullptr);
  Status v = ir::Verify(*m);
  EXPECT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(Print(*m), R"(module {
  tt.func public @f(%a: i32, %p: !tt.ptr<f32>, %m: tensor<4xi1>) attributes {noinline = false} {
    %0 = arith.addi %a, %a : i32
    %1 = arith.cmpi slt, %a, %0 : i32
    %2 = tt.splat %p : !tt.ptr<f32> -> tensor<4x!tt.ptr<f32>>
    %3 = tt.load %2, %m cacheModifier = ca : tensor<4x!tt.ptr<f32>>
    %4 = arith.addf %3, %3 : tensor<4xf32>
    %5 = tt.get_program_id y : i32
    tt.store %2, %4 : tensor<4x!tt.ptr<f32>>
    %6 = scf.for %i = %a to %a step %a iter_args(%acc = %a) -> (i32)  : i32 {
      %7 = arith.muli %acc, %i : i32
      scf.yield %7 : i32
    }
    tt.return
  }
}
)");
}

TEST(ReaderSyntax, ResultGroupsAndNumbers) {
  auto m = ReadOk(R"(module {
  tt.func @f(%arg0: tensor<8x2xf32>) {
    %0:2 = tt.split %arg0 : tensor<8x2xf32> -> tensor<8xf32>
    %1 = arith.addf %0#0, %0#1 : tensor<8xf32>
    %x:2 = tt.split %arg0 : tensor<8x2xf32> -> tensor<8xf32>
    %2 = arith.addf %x#1, %1 : tensor<8xf32>
    tt.return
  }
}
)");
  ASSERT_NE(m, nullptr);
  const ir::Function& f = *m->functions()[0];
  EXPECT_EQ(f.body()->arg(0)->name(), "");  // %arg0 is made up
  EXPECT_EQ(f.arg_info()[0].name, "");
  const auto& ops = f.body()->ops();
  EXPECT_EQ(ops[1]->operand(0), ops[0]->result(0));
  EXPECT_EQ(ops[1]->operand(1), ops[0]->result(1));
  EXPECT_EQ(ops[2]->result(1)->name(), "x");
  EXPECT_EQ(ops[3]->operand(0), ops[2]->result(1));
  EXPECT_EQ(Print(*m), R"(module {
  tt.func public @f(%arg0: tensor<8x2xf32>) attributes {noinline = false} {
    %0:2 = tt.split %arg0 : tensor<8x2xf32> -> tensor<8xf32>
    %1 = arith.addf %0#0, %0#1 : tensor<8xf32>
    %x:2 = tt.split %arg0 : tensor<8x2xf32> -> tensor<8xf32>
    %2 = arith.addf %x#1, %1 : tensor<8xf32>
    tt.return
  }
}
)");
}

TEST(ReaderSyntax, CommentsModuleAttributesAndOldForms) {
  auto m = ReadOk(R"(// a comment
module attributes {"ttg.num-warps" = 4 : i32, tt.target = "cuda:90"} {
  // a function
  tt.func @f(%a: tensor<512xi32>) {
    %r = tt.reshape %a {allow_reorder = true} : tensor<512xi32> -> tensor<16x32xi32>  // old form
    %u = ub.poison : tensor<4xf32>
    tt.return
  }
}
)");
  ASSERT_NE(m, nullptr);
  const ir::Function& f = *m->functions()[0];
  EXPECT_TRUE(Named(f, "r")->bool_attr("allow_reorder"));
  // Nothing at all is an empty module, as in MLIR.
  auto empty = ReadOk("  // nothing\n");
  ASSERT_NE(empty, nullptr);
  EXPECT_TRUE(empty->functions().empty());
}

// --- locations ---------------------------------------------------------------

TEST(ReaderLocations, EveryForm) {
  auto m = ReadOk(R"(#user = loc("/home/me/kernel.py":7:4)
#lib = loc("/venv/lib/python3.12/site-packages/triton/language/standard.py":43:17)
module {
  tt.func @f(%arg0: i32 loc("n"(#fn)), %b: i32 loc(unknown)) {
    %0 = arith.addi %arg0, %arg0 : i32 loc(#named)
    %1 = arith.addi %0, %0 : i32 loc(callsite(#lib at #user))
    %2 = arith.addi %1, %1 : i32 loc(callsite(#helper at #user))
    %3 = arith.addi %2, %2 : i32 loc(callsite(unknown at "k.py":3:2))
    %4 = arith.addi %3, %3 : i32 loc(fused["k.py":9:1, "k.py":10:2])
    %5 = arith.addi %4, %4 : i32 loc(fused<"meta">[unknown, "k.py":11:3])
    %6 = arith.addi %5, %5 : i32 loc("k.py":12:4 to 12:9)
    %7 = arith.addi %6, %6 : i32 loc("k.py":13:4 to :9)
    %8 = arith.addi %7, %7 : i32 loc("just_a_name")
    %9 = arith.addi %8, %8 : i32 loc(callsite("tmp"(#lib) at "wrapped"(#user)))
    %10 = arith.addi %9, %9 : i32
    %11 = "tt.reduce"(%arg0) <{axis = 0 : i32}> ({
    ^bb0(%arg2: i32 loc("lhs"(#user)), %arg3: i32 loc(#user)):
      tt.reduce.return %arg2 : i32 loc(#user)
    }) : (i32) -> i32 loc(unknown)
    tt.return loc(#fn)
  } loc(#fn)
} loc(#fn)
#fn = loc("k.py":1:0)
#named = loc("total"(#user))
#helper = loc("/home/me/helpers.py":20:8)
)");
  ASSERT_NE(m, nullptr);
  const ir::Function& f = *m->functions()[0];
  EXPECT_EQ(f.loc().file, "k.py");
  EXPECT_EQ(f.loc().line, 1);
  // A made-up argument name takes its location's name.
  EXPECT_EQ(f.body()->arg(0)->name(), "n");
  EXPECT_EQ(f.arg_info()[0].name, "n");
  EXPECT_EQ(f.arg_info()[0].loc.line, 1);
  EXPECT_EQ(f.arg_info()[1].name, "b");
  EXPECT_FALSE(f.arg_info()[1].loc.known());
  const auto& ops = f.body()->ops();
  auto at = [&](int k, const char* file, int line, int column) {
    SCOPED_TRACE(k);
    EXPECT_EQ(ops[k]->loc().file, file);
    EXPECT_EQ(ops[k]->loc().line, line);
    EXPECT_EQ(ops[k]->loc().column, column);
  };
  at(0, "/home/me/kernel.py", 7, 4);  // named, defined after its use
  EXPECT_EQ(ops[0]->result()->name(), "total");
  at(1, "/home/me/kernel.py", 7, 4);    // callee in triton/language: caller
  at(2, "/home/me/helpers.py", 20, 8);  // a user's callee: the callee
  at(3, "k.py", 3, 2);                  // unknown callee: the caller
  at(4, "k.py", 9, 1);                  // fused: the first known
  at(5, "k.py", 11, 3);
  at(6, "k.py", 12, 4);  // ranges: their start
  at(7, "k.py", 13, 4);
  EXPECT_FALSE(ops[8]->loc().known());
  EXPECT_EQ(ops[8]->result()->name(), "just_a_name");
  at(9, "/home/me/kernel.py", 7, 4);
  EXPECT_EQ(ops[9]->result()->name(), "tmp");  // the first name, callee first
  EXPECT_FALSE(ops[10]->loc().known());
  EXPECT_EQ(ops[10]->result()->name(), "");
  const ir::Block& combiner = *ops[11]->region(0);
  EXPECT_EQ(combiner.arg(0)->name(), "lhs");
  EXPECT_EQ(combiner.arg(1)->name(), "");
}

// --- branches (cf.br, cf.cond_br)
// ---------------------------------------------

// Reads `text`, which must verify; its printed form.
std::string ReadVerifyPrint(const std::string& text, bool locations = false) {
  auto m = ReadOk(text);
  if (m == nullptr) return "";
  Status v = ir::Verify(*m, "reader");
  EXPECT_TRUE(v.ok()) << v.error().message;
  return Print(*m, locations);
}

// What Triton 3.x prints for `if pid * 256 >= n: return` (the corpus's
// early_exit_kernel).
const char* const kEarlyExit = R"(#loc = loc("k.py":1:0)
module {
  tt.func public @early_exit(%x_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32} loc("x_ptr"(#loc)), %n: i32 loc("n"(#loc))) attributes {noinline = false} {
    %c256_i32 = arith.constant 256 : i32 loc(#loc1)
    %pid = tt.get_program_id x : i32 loc(#loc2)
    %0 = arith.muli %pid, %c256_i32 : i32 loc(#loc3)
    %1 = arith.cmpi sge, %0, %n : i32 loc(#loc4)
    cf.cond_br %1, ^bb1, ^bb2 loc(#loc4)
  ^bb1:  // pred: ^bb0
    tt.return loc(#loc5)
  ^bb2:  // pred: ^bb0
    %offs = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32> loc(#loc6)
    %offs_0 = tt.splat %0 : i32 -> tensor<256xi32> loc(#loc6)
    %offs_1 = arith.addi %offs_0, %offs : tensor<256xi32> loc(#loc6)
    %2 = tt.splat %n : i32 -> tensor<256xi32> loc(#loc7)
    %3 = arith.cmpi slt, %offs_1, %2 : tensor<256xi32> loc(#loc7)
    %4 = tt.splat %x_ptr : !tt.ptr<f32> -> tensor<256x!tt.ptr<f32>> loc(#loc7)
    %5 = tt.addptr %4, %offs_1 : tensor<256x!tt.ptr<f32>>, tensor<256xi32> loc(#loc7)
    %6 = arith.sitofp %offs_1 : tensor<256xi32> to tensor<256xf32> loc(#loc7)
    tt.store %5, %6, %3 : tensor<256x!tt.ptr<f32>> loc(#loc7)
    tt.return loc(#loc8)
  } loc(#loc)
} loc(#loc)
#loc1 = loc(unknown)
#loc2 = loc("k.py":2:24)
#loc3 = loc("k.py":3:13)
#loc4 = loc("k.py":3:22)
#loc5 = loc("k.py":4:8)
#loc6 = loc("offs"("k.py":5:25))
#loc7 = loc("k.py":6:21)
#loc8 = loc("k.py":6:4)
)";

TEST(ReaderBranches, AnEarlyReturnBecomesAnIf) {
  auto m = ReadOk(kEarlyExit);
  ASSERT_NE(m, nullptr);
  Status v = ir::Verify(*m, "reader");
  EXPECT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(Print(*m), R"(module {
  tt.func public @early_exit(%x_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n: i32) attributes {noinline = false} {
    %c256_i32 = arith.constant 256 : i32
    %pid = tt.get_program_id x : i32
    %0 = arith.muli %pid, %c256_i32 : i32
    %1 = arith.cmpi sge, %0, %n : i32
    scf.if %1 {
    } else {
      %offs = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
      %offs_0 = tt.splat %0 : i32 -> tensor<256xi32>
      %offs_1 = arith.addi %offs_0, %offs : tensor<256xi32>
      %2 = tt.splat %n : i32 -> tensor<256xi32>
      %3 = arith.cmpi slt, %offs_1, %2 : tensor<256xi32>
      %4 = tt.splat %x_ptr : !tt.ptr<f32> -> tensor<256x!tt.ptr<f32>>
      %5 = tt.addptr %4, %offs_1 : tensor<256x!tt.ptr<f32>>, tensor<256xi32>
      %6 = arith.sitofp %offs_1 : tensor<256xi32> to tensor<256xf32>
      tt.store %5, %6, %3 : tensor<256x!tt.ptr<f32>>
    }
    tt.return
  }
}
)");
  // The scf.if and the tt.return after it are at the branch; the ops keep
  // their own locations.
  const ir::Function& f = *m->functions()[0];
  const auto& ops = f.body()->ops();
  ASSERT_EQ(ops.size(), 6u);
  EXPECT_EQ(ops[4]->code(), OpCode::kIf);
  EXPECT_EQ(ops[4]->loc().line, 3);
  EXPECT_EQ(ops[4]->loc().column, 22);
  EXPECT_EQ(ops[5]->code(), OpCode::kReturn);
  EXPECT_EQ(ops[5]->loc().line, 3);
  const ir::Block& then_block = *ops[4]->region(0);
  ASSERT_EQ(then_block.ops().size(), 1u);
  EXPECT_EQ(then_block.back()->code(), OpCode::kYield);
  EXPECT_EQ(then_block.back()->loc().line, 4);  // the tt.return's
  const ir::Block& else_block = *ops[4]->region(1);
  EXPECT_EQ(else_block.back()->code(), OpCode::kYield);
  EXPECT_EQ(else_block.back()->loc().line, 6);
  EXPECT_EQ(else_block.ops()[0]->result()->name(), "offs");
  EXPECT_EQ(else_block.ops()[0]->loc().line, 5);
  // Printed and read again, it is the same.
  const std::string printed = Print(*m, true);
  auto again = ReadOk(printed);
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(Print(*again, true), printed);
}

TEST(ReaderBranches, BranchOperandsStandForBlockArguments) {
  EXPECT_EQ(ReadVerifyPrint(R"(#loc = loc("k.py":1:0)
module {
  tt.func public @f(%p: !tt.ptr<f32>, %a: f32, %n: i32) {
    %c0_i32 = arith.constant 0 : i32
    %0 = arith.cmpi sgt, %n, %c0_i32 : i32
    cf.cond_br %0, ^bb1(%a, %n : f32, i32), ^bb2
  ^bb1(%x: f32 loc("x"(#loc)), %m: i32):  // pred: ^bb0
    %1 = arith.sitofp %m : i32 to f32
    %2 = arith.addf %x, %1 : f32
    cf.br ^bb3(%2 : f32) loc(#loc)
  ^bb2:  // pred: ^bb0
    tt.return
  ^bb3(%y: f32):  // pred: ^bb1
    tt.store %p, %y : !tt.ptr<f32>
    tt.return
  }
}
)"),
            R"(module {
  tt.func public @f(%p: !tt.ptr<f32>, %a: f32, %n: i32) attributes {noinline = false} {
    %c0_i32 = arith.constant 0 : i32
    %0 = arith.cmpi sgt, %n, %c0_i32 : i32
    scf.if %0 {
      %1 = arith.sitofp %n : i32 to f32
      %2 = arith.addf %a, %1 : f32
      tt.store %p, %2 : !tt.ptr<f32>
    }
    tt.return
  }
}
)");
  // A cf.br at the top level just goes on: no scf.if.
  EXPECT_EQ(ReadVerifyPrint(R"(module {
  tt.func @f(%p: !tt.ptr<i32>, %a: i32) {
    %0 = arith.addi %a, %a : i32
    cf.br ^next(%0, %a : i32, i32)
  ^next(%b: i32, %c: i32):
    %1 = arith.muli %b, %c : i32
    cf.br ^bb9
  ^bb9:
    tt.store %p, %1 : !tt.ptr<i32>
    tt.return
  }
}
)"),
            R"(module {
  tt.func public @f(%p: !tt.ptr<i32>, %a: i32) attributes {noinline = false} {
    %0 = arith.addi %a, %a : i32
    %1 = arith.muli %0, %a : i32
    tt.store %p, %1 : !tt.ptr<i32>
    tt.return
  }
}
)");
}

TEST(ReaderBranches, TwoEarlyReturnsNest) {
  EXPECT_EQ(ReadVerifyPrint(R"(module {
  tt.func @f(%p: !tt.ptr<i32>, %a: i32, %b: i32) {
    %c0_i32 = arith.constant 0 : i32
    %0 = arith.cmpi eq, %a, %c0_i32 : i32
    cf.cond_br %0, ^bb1, ^bb2
  ^bb1:
    tt.return
  ^bb2:
    %1 = arith.cmpi eq, %b, %c0_i32 : i32
    cf.cond_br %1, ^bb3, ^bb4
  ^bb3:
    tt.store %p, %a : !tt.ptr<i32>
    tt.return
  ^bb4:
    %2 = arith.divsi %a, %b : i32
    tt.store %p, %2 : !tt.ptr<i32>
    tt.return
  }
}
)"),
            R"(module {
  tt.func public @f(%p: !tt.ptr<i32>, %a: i32, %b: i32) attributes {noinline = false} {
    %c0_i32 = arith.constant 0 : i32
    %0 = arith.cmpi eq, %a, %c0_i32 : i32
    scf.if %0 {
    } else {
      %1 = arith.cmpi eq, %b, %c0_i32 : i32
      scf.if %1 {
        tt.store %p, %a : !tt.ptr<i32>
      } else {
        %2 = arith.divsi %a, %b : i32
        tt.store %p, %2 : !tt.ptr<i32>
      }
    }
    tt.return
  }
}
)");
}

TEST(ReaderBranches, ABlockReachedTwiceIsCopied) {
  // ^bb3 is reached from ^bb0 and from ^bb1: each path gets its own copy,
  // with its own operands.
  auto m = ReadOk(R"(module {
  tt.func @f(%p: !tt.ptr<i32>, %a: i1, %b: i1) {
    %c1_i32 = arith.constant 1 : i32
    cf.cond_br %a, ^bb1, ^bb3(%c1_i32 : i32)
  ^bb1:
    %c2_i32 = arith.constant 2 : i32
    cf.cond_br %b, ^bb2, ^bb3(%c2_i32 : i32)
  ^bb2:
    tt.return
  ^bb3(%v: i32):
    %0 = arith.addi %v, %v : i32
    tt.store %p, %0 : !tt.ptr<i32>
    tt.return
  }
}
)");
  ASSERT_NE(m, nullptr);
  Status v = ir::Verify(*m, "reader");
  EXPECT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(Print(*m), R"(module {
  tt.func public @f(%p: !tt.ptr<i32>, %a: i1, %b: i1) attributes {noinline = false} {
    %c1_i32 = arith.constant 1 : i32
    scf.if %a {
      %c2_i32 = arith.constant 2 : i32
      scf.if %b {
      } else {
        %0 = arith.addi %c2_i32, %c2_i32 : i32
        tt.store %p, %0 : !tt.ptr<i32>
      }
    } else {
      %0 = arith.addi %c1_i32, %c1_i32 : i32
      tt.store %p, %0 : !tt.ptr<i32>
    }
    tt.return
  }
}
)");
  const auto stores = OpsOf(*m->functions()[0], OpCode::kStore);
  ASSERT_EQ(stores.size(), 2u);
  EXPECT_NE(stores[0], stores[1]);
  EXPECT_NE(stores[0]->operand(1), stores[1]->operand(1));
  EXPECT_EQ(stores[0]->operand(1)->defining_op()->parent_block(),
            stores[0]->parent_block());
  EXPECT_EQ(stores[1]->operand(1)->defining_op()->parent_block(),
            stores[1]->parent_block());
}

TEST(ReaderBranches, ReturnedValuesBecomeTheIfsResults) {
  EXPECT_EQ(ReadVerifyPrint(R"(module {
  tt.func private @pick(%x: f32, %c: i1) -> f32 {
    cf.cond_br %c, ^bb1, ^bb2
  ^bb1:
    tt.return %x : f32
  ^bb2:
    %0 = arith.mulf %x, %x : f32
    tt.return %0 : f32
  }
}
)"),
            R"(module {
  tt.func private @pick(%x: f32, %c: i1) -> f32 attributes {noinline = false} {
    %0 = scf.if %c -> (f32) {
      scf.yield %x : f32
    } else {
      %1 = arith.mulf %x, %x : f32
      scf.yield %1 : f32
    }
    tt.return %0 : f32
  }
}
)");
}

TEST(ReaderBranches, DeepOrBushyBranchesAreErrorsNotCrashes) {
  // Each ^bbK joins both ways: 2^40 paths.
  std::string joins = "module { tt.func @f(%c: i1) {\n";
  for (int k = 0; k < 40; ++k) {
    if (k > 0) joins += "^bb" + std::to_string(k) + ":\n";
    joins += "  cf.cond_br %c, ^bb" + std::to_string(k + 1) + ", ^bb" +
             std::to_string(k + 1) + "\n";
  }
  joins += "^bb40:\n  tt.return\n} }\n";
  auto r = ReadTtir(joins, "joins.ttir");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("the branches join too often"),
            std::string::npos)
      << r.error().message;
  // A chain of 5000 early returns nests too deep.
  std::string chain = "module { tt.func @f(%c: i1) {\n";
  for (int k = 0; k < 5000; ++k) {
    if (k > 0) chain += "^b" + std::to_string(k) + ":\n";
    chain += "  cf.cond_br %c, ^r, ^b" + std::to_string(k + 1) + "\n";
  }
  chain += "^b5000:\n  tt.return\n^r:\n  tt.return\n} }\n";
  r = ReadTtir(chain, "chain.ttir");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("branches nested too deep"),
            std::string::npos)
      << r.error().message;
}

// --- errors ------------------------------------------------------------------

struct BadText {
  const char* text;
  const char* message;  // the whole message, at "bad.ttir"
};

class ReaderErrorTest : public ::testing::TestWithParam<BadText> {};

TEST_P(ReaderErrorTest, SaysWhatAndWhere) {
  auto r = ReadTtir(GetParam().text, "bad.ttir");
  ASSERT_FALSE(r.ok()) << GetParam().text;
  EXPECT_EQ(r.error().message, GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(
    Errors, ReaderErrorTest,
    ::testing::Values(
        BadText{"module {} junk",
                "bad.ttir:1:11: error: expected 'module', 'tt.func' or a "
                "#loc definition, found 'junk'"},
        BadText{"module {",
                "bad.ttir:1:9: error: the module opened at 1:1 has no "
                "closing '}'"},
        BadText{"module {\n  tt.func @f() {\n    tt.return\n",
                "bad.ttir:4:1: error: unterminated region: no '}' for the "
                "'{' at 2:16"},
        BadText{"module {\n  tt.func @f(%a: i32) {\n    %0 = arith.addi %a, "
                "%a",
                "bad.ttir:3:27: error: expected ':' before arith.addi's "
                "type, found the end of the text"},
        BadText{"module { tt.func @f() { tt.bogus\n tt.return } }",
                "bad.ttir:1:25: error: unknown operation 'tt.bogus'"},
        BadText{"module { tt.func @f() {\n  %0 = arith.addi %a, %a : i32\n"
                "  tt.return } }",
                "bad.ttir:2:19: error: use of undefined value '%a'"},
        BadText{"module { tt.func @f(%a: i32) {\n  %0 = arith.addi %a, %a : "
                "f32\n  tt.return } }",
                "bad.ttir:2:19: error: '%a' has type i32, but is used as "
                "f32"},
        BadText{"module { tt.func @f(%a: i33) { tt.return } }",
                "bad.ttir:1:25: error: unsupported integer type 'i33'"},
        BadText{"module { tt.func @f(%a: tensor<4xf32, #blocked>) { "
                "tt.return } }",
                "bad.ttir:1:37: error: tensor encodings (layouts) are not "
                "supported: this reads TTIR, not TTGIR"},
        BadText{"module { tt.func @f(%a: i32) {\n  %0 = arith.addi %a, %a : "
                "i32\n  %0 = arith.addi %a, %a : i32\n  tt.return } }",
                "bad.ttir:3:3: error: redefinition of value '%0'"},
        BadText{"module { tt.func @f(%a: i32) {\n  %0:2 = arith.addi %a, %a "
                ": i32\n  tt.return } }",
                "bad.ttir:2:10: error: arith.addi has 1 result, but 2 are "
                "named"},
        BadText{"module { tt.func @f(%a: i32) {\n  %0 = arith.addi %a : i32\n"
                "  tt.return } }",
                "bad.ttir:2:8: error: arith.addi takes 2 operands, found 1"},
        BadText{"module { tt.func @f(%a: i32) {\n  %0 = arith.cmpi lt, %a, %a "
                ": i32\n  tt.return } }",
                "bad.ttir:2:19: error: unknown predicate 'lt' (expected one "
                "of eq, ne, slt, sle, sgt, sge, ult, ule, ugt, uge)"},
        BadText{"module { tt.func @f(%a: i32) {\n  %0 = tt.load %a : i32\n"
                "  tt.return } }",
                "bad.ttir:2:21: error: tt.load needs a pointer or a tensor "
                "of pointers, not i32"},
        BadText{"module { tt.func @f() {\n  %0 = arith.constant "
                "dense<[1, 2]> : tensor<4xi32>\n  tt.return } }",
                "bad.ttir:2:29: error: dense<...> does not have the shape "
                "of tensor<4xi32>"},
        BadText{"module { tt.func @f() {\n  %0 = arith.constant 300 : i8\n"
                "  tt.return } }",
                "bad.ttir:2:23: error: integer 300 does not fit in i8"},
        BadText{"module { tt.func @f() { tt.return } loc(#nope) }",
                "bad.ttir:1:41: error: undefined location alias #nope"},
        BadText{"#a = loc(#b)\n#b = loc(#a)\nmodule { tt.func @f() { "
                "tt.return } loc(#a) }",
                "bad.ttir:1:1: error: location alias #a refers to itself"},
        BadText{"#a = loc(unknown)\n#a = loc(unknown)\n",
                "bad.ttir:2:1: error: redefinition of #a"},
        BadText{"#blocked = #ttg.blocked<{}>\n",
                "bad.ttir:1:12: error: only location aliases (#blocked = "
                "loc(...)) are supported, found '#ttg.blocked'"},
        BadText{"module { tt.func @f() { tt.print \"oops }",
                "bad.ttir:1:34: error: unterminated string"},
        BadText{"module { tt.func @f(i32) }",
                "bad.ttir:1:21: error: function declarations (argument "
                "types without names) are not supported"},
        BadText{"module { tt.func @f(%a: i32) {\n  %b = \"tt.reduce\"(%a) "
                "({\n  ^bb0(%x: i32, %y: i32):\n    tt.reduce.return %x : "
                "i32\n  ^bb1:\n    tt.reduce.return %x : i32\n  }) : (i32) "
                "-> i32\n  tt.return } }",
                "bad.ttir:5:3: error: regions with more than one block are "
                "not supported"},
        BadText{"module { tt.func @f(%a: i32) {\n  scf.for %i = %a to %a "
                "step %a {\n  }\n  tt.return } }",
                "bad.ttir:2:33: error: scf.for without ': type' counts in "
                "index, which is not supported"},
        // Branches.
        BadText{"module { tt.func @f(%c: i1) {\n  cf.br ^bb1\n^bb1:\n  "
                "cf.cond_br %c, ^bb2, ^bb1\n^bb2:\n  tt.return } }",
                "bad.ttir:4:24: error: the branch to ^bb1 closes a loop: "
                "unstructured loops are not supported"},
        BadText{"module { tt.func @f(%c: i1) {\n  cf.cond_br %c, ^bb1, "
                "^bb7\n^bb1:\n  tt.return } }",
                "bad.ttir:2:24: error: branch to an undefined block '^bb7'"},
        BadText{"module { tt.func @f(%c: i1) {\n  cf.cond_br %c, ^bb1, "
                "^bb1\n^bb1:\n  tt.return\n^bb1:\n  tt.return } }",
                "bad.ttir:5:1: error: redefinition of block '^bb1'"},
        BadText{"module { tt.func @f(%a: i32) {\n  cf.br ^bb1(%a : i32)\n"
                "^bb1(%x: i32, %y: i32):\n  tt.return } }",
                "bad.ttir:2:9: error: ^bb1 takes 2 arguments, but the "
                "branch passes 1"},
        BadText{"module { tt.func @f(%a: i32) {\n  cf.br ^bb1(%a : i32)\n"
                "^bb1(%x: f32):\n  tt.return } }",
                "bad.ttir:2:14: error: '%a' is passed as i32 to ^bb1's "
                "argument of type f32"},
        BadText{"module { tt.func @f(%a: i32) {\n  cf.br ^bb1(%a : f32)\n"
                "^bb1(%x: f32):\n  tt.return } }",
                "bad.ttir:2:14: error: '%a' has type i32, but is used as "
                "f32"},
        BadText{"module { tt.func @f(%a: i32) {\n  cf.br ^bb1(%a, %a : "
                "i32)\n^bb1(%x: i32):\n  tt.return } }",
                "bad.ttir:2:9: error: the branch to ^bb1 has 2 operands but "
                "1 types"},
        BadText{"module { tt.func @f(%a: i32) {\n  cf.cond_br %a, ^bb1, "
                "^bb1\n^bb1:\n  tt.return } }",
                "bad.ttir:2:14: error: '%a' has type i32, but is used as "
                "i1"},
        BadText{"module { tt.func @f(%c: i1) {\n  cf.cond_br %c, ^bb1, "
                "^bb2\n^bb1:\n  %0 = arith.constant 1 : i32\n  tt.return\n"
                "^bb2:\n  %1 = arith.addi %0, %0 : i32\n  tt.return } }",
                "bad.ttir:7:19: error: '%0' is not defined on every path "
                "that reaches this use (its block does not dominate it)"},
        BadText{"module { tt.func @f(%c: i1) {\n  cf.cond_br %c, ^bb1, "
                "^bb2\n^bb1:\n  %0 = arith.constant 1 : i32\n^bb2:\n  "
                "tt.return } }",
                "bad.ttir:5:1: error: ^bb1 does not end in tt.return, cf.br "
                "or cf.cond_br"},
        BadText{"module { tt.func @f(%c: i1) {\n  tt.return\n  tt.return\n"
                "} }",
                "bad.ttir:3:3: error: an operation after the terminator of "
                "the entry block"},
        BadText{"module { tt.func @f(%c: i1) {\n  cf.cond_br %c, ^bb1, "
                "^bb1\n^bb1:\n  cf.br ^bb2 junk\n^bb2:\n  tt.return } }",
                "bad.ttir:4:14: error: an operation after the terminator of "
                "^bb1"},
        BadText{"module { tt.func @f(%c: i1) {\n  scf.if %c {\n    cf.br "
                "^bb1\n  }\n  tt.return } }",
                "bad.ttir:3:5: error: cf.br inside an operation's region is "
                "not supported (only a function body may branch)"},
        BadText{"module { tt.func @f(%c: i1, %x: f32) -> f32 {\n  cf.cond_br "
                "%c, ^bb1, ^bb1\n^bb1:\n  tt.return\n} }",
                "bad.ttir:4:3: error: tt.return does not return what @f "
                "returns (f32)"}));

TEST(ReaderErrors, DeepNestingIsAnErrorNotACrash) {
  std::string types = "module { tt.func @f(%a: ";
  for (int i = 0; i < 5000; ++i) types += "!tt.ptr<";
  auto r = ReadTtir(types, "deep.ttir");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("nesting too deep"), std::string::npos)
      << r.error().message;

  std::string regions = "module { tt.func @f(%c: i1) {\n";
  for (int i = 0; i < 5000; ++i) regions += "scf.if %c {\n";
  r = ReadTtir(regions, "deep.ttir");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("regions nested too deep"),
            std::string::npos)
      << r.error().message;

  std::string locs = "#l = loc(";
  for (int i = 0; i < 5000; ++i) locs += "callsite(";
  r = ReadTtir(locs, "deep.ttir");
  ASSERT_FALSE(r.ok());

  // A long alias chain is fine (and resolved once per alias).
  std::string chain = "#l0 = loc(\"k.py\":1:2)\n";
  for (int i = 1; i < 100; ++i) {
    chain += "#l" + std::to_string(i) + " = loc(callsite(#l" +
             std::to_string(i - 1) + " at #l" + std::to_string(i - 1) + "))\n";
  }
  chain += "module { tt.func @f() { tt.return loc(#l99) } }\n";
  auto ok = ReadOk(chain);
  ASSERT_NE(ok, nullptr);
  EXPECT_EQ(ok->functions()[0]->body()->back()->loc().line, 1);
}

// Every prefix of a real kernel, and copies with bytes changed, read to a
// module or to an error; never a crash.
TEST(ReaderErrors, DamagedTextNeverCrashes) {
  const std::string text = kAllOps;
  for (size_t n = 0; n < text.size(); n += 3) {
    auto r = ReadTtir(text.substr(0, n), "cut.ttir");
    if (!r.ok()) {
      EXPECT_EQ(r.error().message.rfind("cut.ttir:", 0), 0u)
          << r.error().message;
    }
  }
  std::mt19937 rng(12345);
  const std::string alphabet = "%#@!:,=(){}[]<>\"-x0123456789abcdefi \n^";
  for (int trial = 0; trial < 4000; ++trial) {
    // Mostly the kernel with every op, also one with branches.
    std::string damaged = trial % 4 == 3 ? std::string(kEarlyExit) : text;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t at = rng() % damaged.size();
      switch (rng() % 3) {
        case 0:
          damaged[at] = alphabet[rng() % alphabet.size()];
          break;
        case 1:
          damaged.erase(at, 1 + rng() % 8);
          break;
        default:
          damaged.insert(at, 1, alphabet[rng() % alphabet.size()]);
      }
    }
    auto r = ReadTtir(damaged, "fuzz.ttir");
    if (r.ok()) {
      // Whatever reads must print and verify without crashing.
      (void)ir::PrintModule(*r.value());
      (void)ir::Verify(*r.value());
    }
  }
}

}  // namespace
}  // namespace mtlemu::triton::ttir
