// The TTIR printer: IR built with the Builder, covering every op of
// ops.def, prints, reads back (ttir/reader.h) and prints the same; values
// are named as MLIR names them; floats are written as MLIR writes them;
// broken IR still prints.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <string>

#include "compiler/triton/ir/printer.h"
#include "compiler/triton/ir/ttir_syntax.h"
#include "compiler/triton/ir/verifier.h"
#include "compiler/triton/ttir/reader.h"

namespace mtlemu::triton::ir {
namespace {

SourceLocation Loc(int line, int column = 4) {
  return {"kernel.py", line, column};
}

const Type* I32() { return Type::I32(); }
const Type* I64() { return Type::I64(); }
const Type* F32() { return Type::F32(); }
const Type* F16() { return Type::Float(FloatFormat::kF16); }
const Type* T(std::vector<int64_t> shape, const Type* e) {
  return Type::Tensor(std::move(shape), e);
}

// One function using every op of ops.def (and a helper it calls), built
// the way the front end builds IR.
std::unique_ptr<Module> BuildEveryOp() {
  auto m = std::make_unique<Module>();
  const Type* i1 = Type::I1();
  const Type* ptr_f32 = Type::Pointer(F32());
  const Type* ptr_f16 = Type::Pointer(F16());

  Function* helper =
      m->AddFunction(std::make_unique<Function>("helper", Loc(1, 0)));
  helper->set_public(false);
  helper->set_noinline(true);
  Value* hx = helper->AddArgument(F32(), {"hx", Loc(1, 0), 0});
  helper->add_result_type(F32());
  Builder hb(helper->body());
  hb.set_loc(Loc(2));
  hb.Create(OpCode::kReturn, {hx}, {});

  Function* f =
      m->AddFunction(std::make_unique<Function>("every_op", Loc(10, 0)));
  Value* p = f->AddArgument(ptr_f32, {"p", Loc(10, 0), 16});
  Value* q = f->AddArgument(ptr_f16, {"q", Loc(10, 0), 16});
  Value* n = f->AddArgument(I32(), {"n", Loc(10, 0), 0});
  Value* x = f->AddArgument(F32(), {"x", Loc(10, 0), 0});
  Value* l = f->AddArgument(I64(), {"", Loc(10, 0), 0});
  Value* b = f->AddArgument(i1, {"", Loc(10, 0), 0});
  Value* a8 = f->AddArgument(T({16, 32}, Type::Float(FloatFormat::kF8E4M3FN)),
                             {"a8", Loc(10, 0), 0});
  Value* s8 = f->AddArgument(T({16, 1}, Type::Int(8)), {"s8", Loc(10, 0), 0});
  Value* b16 = f->AddArgument(T({32, 16}, Type::Float(FloatFormat::kBF16)),
                              {"b16", Loc(10, 0), 0});

  Builder bl(f->body());
  int line = 11;
  auto at = [&] { bl.set_loc(Loc(line++)); };
  auto attr = [](Value* v, const std::string& key, Attribute a) {
    v->defining_op()->set_attr(key, std::move(a));
    return v;
  };

  at();
  Value* zero = bl.IntConstant(0, I32());
  Value* one = bl.IntConstant(1, I32());
  Value* minus_one = bl.IntConstant(-1, I32());
  Value* one64 = bl.IntConstant(1, I64());
  Value* sixteen = bl.IntConstant(16, I32());
  Value* sixteen64 = bl.IntConstant(16, I64());
  Value* fone = bl.FloatConstant(1.0, F32());
  bl.IntConstant(1, i1);
  bl.FloatConstant(-std::numeric_limits<double>::infinity(), T({16}, F32()));
  bl.FloatConstant(0.1, Type::Float(FloatFormat::kBF16));
  Value* dense = bl.Create1(OpCode::kConstant, {}, T({2, 2}, I32()));
  attr(dense, "value",
       DenseAttr{T({2, 2}, I32()),
                 {int64_t{1}, int64_t{-2}, int64_t{3}, int64_t{4}}});
  Value* fzero = bl.FloatConstant(0.0, T({16, 16}, F32()));

  // Every elementwise op of a simple form, on i32 or f32 as its traits say.
  for (int c = 0; c < kNumOpCodes; ++c) {
    const OpCode code = static_cast<OpCode>(c);
    const bool ints = HasIntElements(code);
    Value* v = ints ? n : x;
    Value* w = ints ? one : fone;
    const Type* t = ints ? I32() : F32();
    at();
    switch (FormOf(code)) {
      case OpForm::kUnary:
        bl.Create1(code, {v}, t)->set_name("u");
        break;
      case OpForm::kBinary:
        bl.Create1(code, {v, w}, t)->set_name("bin");
        break;
      case OpForm::kTernary:
        bl.Create1(code, {v, w, w}, t);
        break;
      case OpForm::kCompare:
        attr(bl.Create1(code, {v, w}, i1), "predicate",
             std::string(ints ? "sge" : "une"));
        break;
      default:
        break;  // below
    }
  }
  at();
  Value* cond = attr(bl.Create1(OpCode::kCmpI, {n, one}, i1), "predicate",
                     std::string("eq"));
  bl.Create1(OpCode::kSelect, {cond, x, fone}, F32());
  bl.Create1(OpCode::kExtSI, {n}, I64());
  bl.Create1(OpCode::kExtUI, {n}, I64());
  bl.Create1(OpCode::kTruncI, {l}, I32());
  bl.Create1(OpCode::kSIToFP, {n}, F32());
  bl.Create1(OpCode::kUIToFP, {n}, F32());
  bl.Create1(OpCode::kFPToSI, {x}, I32());
  bl.Create1(OpCode::kFPToUI, {x}, I32());
  Value* half = bl.Create1(OpCode::kTruncF, {x}, F16());
  bl.Create1(OpCode::kExtF, {half}, F32());
  bl.Create1(OpCode::kBitcast, {x}, I32());

  at();
  Value* pid = attr(bl.Create1(OpCode::kGetProgramId, {}, I32()), "axis",
                    IntAttr{0, I32()});
  pid->set_name("pid");
  attr(bl.Create1(OpCode::kGetNumPrograms, {}, I32()), "axis",
       IntAttr{2, I32()});
  Value* range = bl.Create1(OpCode::kMakeRange, {}, T({16}, I32()));
  attr(range, "start", IntAttr{0, I32()});
  attr(range, "end", IntAttr{16, I32()});
  range->set_name("offs");
  Value* splat = bl.Create1(OpCode::kSplat, {x}, T({16}, F32()));
  Value* ptrs = bl.Create1(OpCode::kSplat, {p}, T({16}, ptr_f32));
  Value* addr = bl.Create1(OpCode::kAddPtr, {ptrs, range}, T({16}, ptr_f32));
  addr->set_name("offs");
  Value* mask = bl.Create1(OpCode::kSplat, {b}, T({16}, i1));
  mask->set_name("offs");
  Operation* load =
      bl.Create(OpCode::kLoad, {addr, mask, splat}, {T({16}, F32())});
  load->set_attr("cache", std::string("cg"));
  load->set_attr("evict", std::string("evict_normal"));  // the default
  load->set_attr("isVolatile", false);
  Value* loaded = load->result();
  loaded->set_name("loaded");
  bl.Create(OpCode::kStore, {addr, loaded, mask}, {})
      ->set_attr("evict", std::string("evict_first"));
  Value* expanded =
      attr(bl.Create1(OpCode::kExpandDims, {loaded}, T({16, 1}, F32())), "axis",
           IntAttr{1, I32()});
  Value* wide = bl.Create1(OpCode::kBroadcast, {expanded}, T({16, 16}, F32()));
  attr(bl.Create1(OpCode::kReshape, {wide}, T({256}, F32())), "allow_reorder",
       true);
  Value* trans = attr(bl.Create1(OpCode::kTrans, {wide}, T({16, 16}, F32())),
                      "order", ArrayAttr{{1, 0}});
  bl.Create1(OpCode::kCat, {loaded, splat}, T({32}, F32()));
  Value* joined = bl.Create1(OpCode::kJoin, {loaded, splat}, T({16, 2}, F32()));
  Operation* split =
      bl.Create(OpCode::kSplit, {joined}, {T({16}, F32()), T({16}, F32())});
  attr(bl.Create1(OpCode::kGather, {split->result(1), range}, T({16}, F32())),
       "axis", IntAttr{0, I32()});
  bl.Create1(OpCode::kHistogram, {range, mask}, T({4}, I32()));
  Value* single = bl.Create1(OpCode::kSplat, {n}, T({1, 1}, I32()));
  bl.Create1(OpCode::kUnsplat, {single}, I32());
  Value* as_ptr = bl.Create1(OpCode::kIntToPtr, {l}, ptr_f32);
  bl.Create1(OpCode::kPtrToInt, {as_ptr}, I64());
  bl.Create1(OpCode::kBitcastTT, {loaded}, T({16}, I32()));
  Operation* rmw =
      bl.Create(OpCode::kAtomicRMW, {addr, loaded, mask}, {T({16}, F32())});
  rmw->set_attr("atomic_rmw_op", std::string("fadd"));
  rmw->set_attr("sem", std::string("acq_rel"));
  rmw->set_attr("scope", std::string("gpu"));
  Operation* cas = bl.Create(OpCode::kAtomicCAS, {p, x, fone}, {F32()});
  cas->set_attr("sem", std::string("relaxed"));
  cas->set_attr("scope", std::string("sys"));

  at();
  const Type* block_ptr = Type::Pointer(T({16, 16}, F16()));
  Value* bptr =
      attr(bl.Create1(OpCode::kMakeTensorPtr,
                      {q, sixteen64, sixteen64, sixteen64, one64, zero, zero},
                      block_ptr),
           "order", ArrayAttr{{1, 0}});
  Value* advanced = bl.Create1(OpCode::kAdvance, {bptr, one, zero}, block_ptr);
  Operation* bload = bl.Create(OpCode::kLoad, {advanced}, {T({16, 16}, F16())});
  bload->set_attr("boundaryCheck", ArrayAttr{{0}});
  bload->set_attr("padding", std::string("nan"));
  const Type* desc_type = Type::TensorDesc(T({16, 16}, F16()));
  Value* desc = bl.Create1(OpCode::kMakeTensorDesc,
                           {q, sixteen, sixteen, sixteen64, one64}, desc_type);
  Value* tile = bl.Create1(OpCode::kDescriptorLoad, {desc, zero, zero},
                           T({16, 16}, F16()));
  bl.Create(OpCode::kDescriptorStore, {desc, tile, zero, zero}, {});
  bl.Create(OpCode::kDescriptorReduce, {desc, tile, zero, zero}, {})
      ->set_attr("kind", std::string("max"));
  const Type* row_desc = Type::TensorDesc(T({1, 16}, F16()));
  Value* rows = bl.Create1(OpCode::kMakeTensorDesc,
                           {q, sixteen, sixteen, sixteen64, one64}, row_desc);
  Value* gathered = bl.Create1(OpCode::kDescriptorGather, {rows, range, zero},
                               T({16, 16}, F16()));
  bl.Create(OpCode::kDescriptorScatter, {rows, range, zero, gathered}, {});

  at();
  Value* acc =
      attr(bl.Create1(OpCode::kDot, {wide, trans, fzero}, T({16, 16}, F32())),
           "inputPrecision", std::string("tf32x3"));
  Operation* scaled =
      bl.Create(OpCode::kDotScaled, {a8, b16, acc, s8}, {T({16, 16}, F32())});
  scaled->set_attr("operandSegmentSizes", ArrayAttr{{1, 1, 1, 1, 0}});
  scaled->set_attr("a_elem_type", std::string("e4m3"));
  scaled->set_attr("b_elem_type", std::string("bf16"));
  scaled->set_attr("fastMath", true);

  at();
  Operation* reduce = bl.Create(OpCode::kReduce, {loaded}, {F32()});
  reduce->set_attr("axis", IntAttr{0, I32()});
  {
    Block* body = reduce->add_region();
    Value* lhs = body->add_arg(F32(), "x");
    Value* rhs = body->add_arg(F32(), "x");
    Builder rb(body);
    rb.set_loc(Loc(line, 8));
    Value* s = rb.Create1(OpCode::kMaxNumF, {lhs, rhs}, F32());
    s->set_name("x");
    rb.Create(OpCode::kReduceReturn, {s}, {});
  }
  reduce->result()->set_name("x");
  at();
  Operation* scan = bl.Create(OpCode::kScan, {loaded}, {T({16}, F32())});
  scan->set_attr("axis", IntAttr{0, I32()});
  scan->set_attr("reverse", true);
  {
    Block* body = scan->add_region();
    Value* lhs = body->add_arg(F32());
    Value* rhs = body->add_arg(F32());
    Builder sb(body);
    sb.set_loc(Loc(line, 8));
    sb.Create(OpCode::kScanReturn,
              {sb.Create1(OpCode::kAddF, {lhs, rhs}, F32())}, {});
  }
  at();
  Operation* map =
      bl.Create(OpCode::kMapElementwise, {loaded, splat}, {T({16}, F32())});
  map->set_attr("pack", IntAttr{1, I32()});
  {
    Block* body = map->add_region();
    Value* u = body->add_arg(F32());
    Value* v = body->add_arg(F32());
    Builder mb(body);
    mb.set_loc(Loc(line, 8));
    mb.Create(OpCode::kMapElementwiseReturn,
              {mb.Create1(OpCode::kMulF, {u, v}, F32())}, {});
  }

  at();
  Value* fp8 = attr(bl.Create1(OpCode::kFpToFp, {loaded},
                               T({16}, Type::Float(FloatFormat::kF8E5M2))),
                    "rounding", std::string("rtz"));
  bl.Create1(OpCode::kFpToFp, {fp8}, T({16}, F32()));
  attr(bl.Create1(OpCode::kClampF, {loaded, splat, splat}, T({16}, F32())),
       "propagateNan", std::string("none"));
  Operation* ext =
      bl.Create(OpCode::kExternElementwise, {loaded}, {T({16}, F32())});
  ext->set_attr("libname", std::string("libdevice"));
  ext->set_attr("libpath", std::string("/lib/libdevice.bc"));
  ext->set_attr("symbol", std::string("__nv_expf"));
  ext->set_attr("pure", true);
  Operation* inline_asm = bl.Create(OpCode::kElementwiseInlineAsm, {range},
                                    {T({16}, I32()), T({16}, I32())});
  inline_asm->set_attr("asm_string", std::string("mov.b32 $0, $2;"));
  inline_asm->set_attr("constraints", std::string("=r,=r,r"));
  inline_asm->set_attr("pure", true);
  inline_asm->set_attr("packed_element", IntAttr{1, I32()});
  Operation* print = bl.Create(OpCode::kPrint, {loaded, range}, {});
  print->set_attr("prefix", std::string("x = \"\\\n"));
  print->set_attr("hex", false);
  print->set_attr("isSigned", ArrayAttr{{0, 1}});
  bl.Create(OpCode::kAssert, {mask}, {})
      ->set_attr("message", std::string("out of bounds"));
  bl.Create(OpCode::kBarrier, {}, {});
  bl.Create(OpCode::kAssume, {b}, {});
  bl.Create1(OpCode::kPoison, {}, T({16}, F32()));
  bl.Create(OpCode::kCall, {x}, {F32()})
      ->set_attr("callee", std::string("helper"));

  // scf.for with an accumulator, scf.if with and without results, and
  // scf.while.
  at();
  Operation* loop = bl.Create(OpCode::kFor, {zero, n, one, fone}, {F32()});
  {
    Block* body = loop->add_region();
    Value* iv = body->add_arg(I32(), "k");
    Value* carried = body->add_arg(F32(), "acc");
    Builder fb(body);
    fb.set_loc(Loc(line, 8));
    Value* iv_f = fb.Create1(OpCode::kSIToFP, {iv}, F32());
    Value* sum = fb.Create1(OpCode::kAddF, {carried, iv_f}, F32());
    sum->set_name("acc");
    fb.Create(OpCode::kYield, {sum}, {});
  }
  loop->result()->set_name("acc");
  at();
  Operation* branch = bl.Create(OpCode::kIf, {b}, {F32()});
  {
    Builder tb(branch->add_region());
    tb.set_loc(Loc(line, 8));
    tb.Create(OpCode::kYield, {x}, {});
    Builder eb(branch->add_region());
    eb.set_loc(Loc(line, 8));
    eb.Create(OpCode::kYield, {fone}, {});
  }
  at();
  Operation* guard = bl.Create(OpCode::kIf, {b}, {});
  {
    Builder tb(guard->add_region());
    tb.set_loc(Loc(line, 8));
    tb.Create(OpCode::kStore, {p, x}, {});
    tb.Create(OpCode::kYield, {}, {});
    guard->add_region();  // no else
  }
  at();
  Operation* loop2 = bl.Create(OpCode::kWhile, {n}, {I32()});
  {
    Block* before = loop2->add_region();
    Value* i = before->add_arg(I32(), "i");
    Builder wb(before);
    wb.set_loc(Loc(line, 8));
    Value* more = attr(wb.Create1(OpCode::kCmpI, {i, sixteen}, i1), "predicate",
                       std::string("slt"));
    wb.Create(OpCode::kCondition, {more, i}, {});
    Block* after = loop2->add_region();
    Value* j = after->add_arg(I32(), "i");
    Builder ab(after);
    ab.set_loc(Loc(line, 8));
    ab.Create(OpCode::kYield, {ab.Create1(OpCode::kAddI, {j, one}, I32())}, {});
  }
  at();
  bl.Create(OpCode::kReturn, {}, {});
  (void)minus_one;
  (void)pid;
  return m;
}

TEST(PrinterRoundTrip, BuiltIrCoversEveryOpAndVerifies) {
  auto m = BuildEveryOp();
  Status v = Verify(*m, "builder");
  ASSERT_TRUE(v.ok()) << v.error().message;
  std::set<OpCode> seen;
  for (const auto& f : m->functions()) {
    Walk(*f->body(), [&](const Operation* op) { seen.insert(op->code()); });
  }
  for (int c = 0; c < kNumOpCodes; ++c) {
    EXPECT_TRUE(seen.count(static_cast<OpCode>(c)))
        << OpName(static_cast<OpCode>(c)) << " is not built";
  }
}

TEST(PrinterRoundTrip, PrintReadPrintIsAFixedPoint) {
  auto m = BuildEveryOp();
  for (bool locations : {false, true}) {
    for (bool aliases : {false, true}) {
      SCOPED_TRACE(std::string(locations ? "locations" : "no locations") +
                   (aliases ? ", aliases" : ", inline"));
      PrintOptions o;
      o.locations = locations;
      o.location_aliases = aliases;
      const std::string text = PrintModule(*m, o);
      auto read = ttir::ReadTtir(text, "printed.ttir");
      ASSERT_TRUE(read.ok()) << read.error().message << "\n" << text;
      EXPECT_EQ(PrintModule(*read.value(), o), text);
      Status v = Verify(*read.value(), "reader");
      EXPECT_TRUE(v.ok()) << v.error().message;
      if (locations) {
        // Locations survive: the loop still says where it came from.
        const Function& f = *read.value()->Find("every_op");
        EXPECT_EQ(f.loc().line, 10);
        EXPECT_EQ(f.arg_info()[0].loc.line, 10);
        EXPECT_EQ(f.arg_info()[0].divisibility, 16);
        Walk(*f.body(), [&](const Operation* op) {
          EXPECT_TRUE(op->loc().known()) << op->name();
          EXPECT_EQ(op->loc().file, "kernel.py");
        });
      }
    }
  }
}

TEST(PrinterRoundTrip, WhatTheBuiltIrLooksLike) {
  auto m = BuildEveryOp();
  PrintOptions o;
  o.locations = false;
  const std::string text = PrintModule(*m, o);
  auto has = [&](const std::string& line) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
  };
  has("tt.func private @helper(%hx: f32) -> f32 attributes {noinline = true} "
      "{");
  has("tt.func public @every_op(%p: !tt.ptr<f32> {tt.divisibility = 16 : i32}, "
      "%q: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %n: i32, %x: f32, "
      "%arg4: i64, %arg5: i1, ");
  has("%c0_i32 = arith.constant 0 : i32");
  has("%c-1_i32 = arith.constant -1 : i32");
  has("%c1_i64 = arith.constant 1 : i64");
  has("%cst = arith.constant 1.000000e+00 : f32");
  has("%true = arith.constant true");
  has("%cst_0 = arith.constant dense<0xFF800000> : tensor<16xf32>");
  has("%cst_1 = arith.constant 1.000980e-01 : bf16");
  has("%cst_2 = arith.constant dense<[[1, -2], [3, 4]]> : tensor<2x2xi32>");
  has("%u = arith.negf %x : f32");
  has("%bin = arith.addi %n, %c1_i32 : i32");
  has("%bin_4 = arith.subi %n, %c1_i32 : i32");  // one counter for all names
  has("arith.cmpf une, %x, %cst : f32");
  has("%pid = tt.get_program_id x : i32");
  has("tt.get_num_programs z : i32");
  has("%offs = tt.make_range {end = 16 : i32, start = 0 : i32} : "
      "tensor<16xi32>");
  has("= tt.load %offs_");
  has("cacheModifier = cg : tensor<16x!tt.ptr<f32>>");  // defaults left out
  has("evictionPolicy = evict_first : tensor<16x!tt.ptr<f32>>");
  has("tt.reshape %");
  has(" allow_reorder : tensor<16x16xf32> -> tensor<256xf32>");
  has("{order = array<i32: 1, 0>} : tensor<16x16xf32> -> tensor<16x16xf32>");
  has(":2 = tt.split ");
  has("#1[%offs] {axis = 0 : i32} : (tensor<16xf32>, tensor<16xi32>) -> "
      "tensor<16xf32>");
  has("tt.atomic_rmw fadd, acq_rel, gpu, ");
  has("tt.atomic_cas relaxed, sys, %p, %x, %cst : (!tt.ptr<f32>, f32, f32) -> "
      "f32");
  has("{order = array<i32: 1, 0>} : <tensor<16x16xf16>>");
  has("{boundaryCheck = array<i32: 0>, padding = 2 : i32} : "
      "!tt.ptr<tensor<16x16xf16>>");
  has(": <f16>, <tensor<16x16xf16>>");
  has("tt.descriptor_reduce max, ");
  has(", inputPrecision = tf32x3 : tensor<16x16xf32> * tensor<16x16xf32> -> "
      "tensor<16x16xf32>");
  has(" lhs = e4m3 rhs = bf16 {fastMath = true} : tensor<16x32xf8E4M3FN>, "
      "tensor<16x1xi8> * tensor<32x16xbf16> -> tensor<16x16xf32>");
  has("\"tt.reduce\"(%loaded) <{axis = 0 : i32}> ({\n    ^bb0(%x_");
  has("<{axis = 0 : i32, reverse = true}>");
  has("tt.fp_to_fp %loaded, rounding = rtz : tensor<16xf32> -> "
      "tensor<16xf8E5M2>");
  has("propagateNan = none : tensor<16xf32>");
  has("{libname = \"libdevice\", libpath = \"/lib/libdevice.bc\", pure = true, "
      "symbol = \"__nv_expf\"} : (tensor<16xf32>) -> tensor<16xf32>");
  has("tt.elementwise_inline_asm \"mov.b32 $0, $2;\" {constraints = "
      "\"=r,=r,r\", packed_element = 1 : i32, pure = true} %offs : "
      "tensor<16xi32> -> tensor<16xi32>, tensor<16xi32>");
  has("tt.print \"x = \\22\\5C\\0A\" {hex = false, isSigned = array<i32: 0, "
      "1>} "
      ": %loaded, %offs : tensor<16xf32>, tensor<16xi32>");
  has("tt.assert %offs_");
  has("gpu.barrier\n");
  has("llvm.intr.assume %arg5 : i1");
  has("ub.poison : tensor<16xf32>");
  has("tt.call @helper(%x) : (f32) -> f32");
  has("%acc = scf.for %k = %c0_i32 to %n step %c1_i32 iter_args(%acc_");
  has(") -> (f32)  : i32 {");
  has("scf.yield %acc_");
  has("scf.if %arg5 -> (f32) {\n      scf.yield %x : f32\n    } else {\n"
      "      scf.yield %cst : f32\n    }");
  has("scf.if %arg5 {\n      tt.store %p, %x : !tt.ptr<f32>\n    }\n");
  has("scf.while (%i = %n) : (i32) -> i32 {");
  has("scf.condition(%");
  has("} do {\n    ^bb0(%i: i32):");
  has("    tt.return\n  }\n}\n");
}

// --- naming ------------------------------------------------------------------

TEST(PrinterNames, UniqueSuffixesNumbersAndScopesAsMlir) {
  Module m;
  Function* f =
      m.AddFunction(std::make_unique<Function>("k", SourceLocation{}));
  Value* a = f->AddArgument(I32(), {});
  Value* named = f->AddArgument(I32(), {"a", {}, 0});
  Builder b(f->body());
  Value* v0 = b.Create1(OpCode::kAddI, {a, named}, I32());
  v0->set_name("x");
  Value* v1 = b.Create1(OpCode::kAddI, {v0, v0}, I32());
  v1->set_name("x");
  Value* v2 = b.Create1(OpCode::kAddI, {v1, v1}, I32());
  Value* v3 = b.Create1(OpCode::kAddI, {v2, v2}, I32());
  v3->set_name("2nd value");
  Value* v4 = b.Create1(OpCode::kAddI, {v3, v3}, I32());
  v4->set_name("x_0");
  for (int k = 0; k < 2; ++k) {
    Operation* loop = b.Create(OpCode::kFor, {a, a, a}, {});
    Builder lb(loop->add_region());
    Value* iv = lb.block()->add_arg(I32(), "x");
    lb.Create1(OpCode::kAddI, {iv, v4}, I32());
    lb.Create(OpCode::kYield, {}, {});
  }
  b.Create1(OpCode::kAddI, {v4, v4}, I32());
  Operation* two = b.Create(OpCode::kSplit,
                            {b.Create1(OpCode::kSplat, {a}, T({4, 2}, I32()))},
                            {T({4}, I32()), T({4}, I32())});
  b.Create(OpCode::kReturn, {}, {});
  two->result(0)->set_name("halves");
  two->result(1)->set_name("halves");
  PrintOptions o;
  o.locations = false;
  const std::string text = PrintFunction(*f, o);
  EXPECT_EQ(text,
            "tt.func public @k(%arg0: i32, %a: i32) attributes {noinline = "
            "false} {\n"
            "  %x = arith.addi %arg0, %a : i32\n"
            "  %x_0 = arith.addi %x, %x : i32\n"
            "  %0 = arith.addi %x_0, %x_0 : i32\n"
            "  %_2nd_value = arith.addi %0, %0 : i32\n"
            "  %x_0_1 = arith.addi %_2nd_value, %_2nd_value : i32\n"
            "  scf.for %x_2 = %arg0 to %arg0 step %arg0  : i32 {\n"
            "    %3 = arith.addi %x_2, %x_0_1 : i32\n"
            "  }\n"
            "  scf.for %x_2 = %arg0 to %arg0 step %arg0  : i32 {\n"
            "    %3 = arith.addi %x_2, %x_0_1 : i32\n"
            "  }\n"
            "  %1 = arith.addi %x_0_1, %x_0_1 : i32\n"
            "  %2 = tt.splat %arg0 : i32 -> tensor<4x2xi32>\n"
            "  %halves:2 = tt.split %2 : tensor<4x2xi32> -> tensor<4xi32>\n"
            "  tt.return\n"
            "}\n");
}

TEST(PrinterNames, DifferentNamesPerResult) {
  Module m;
  Function* f =
      m.AddFunction(std::make_unique<Function>("k", SourceLocation{}));
  Value* a = f->AddArgument(T({4, 2}, I32()), {"a", {}, 0});
  Builder b(f->body());
  Operation* split =
      b.Create(OpCode::kSplit, {a}, {T({4}, I32()), T({4}, I32())});
  split->result(0)->set_name("lo");
  split->result(1)->set_name("hi");
  b.Create1(OpCode::kAddI, {split->result(1), split->result(0)}, T({4}, I32()));
  b.Create(OpCode::kReturn, {}, {});
  PrintOptions o;
  o.locations = false;
  const std::string text = PrintFunction(*f, o);
  EXPECT_NE(text.find("%lo, %hi = tt.split %a"), std::string::npos) << text;
  EXPECT_NE(text.find("arith.addi %hi, %lo"), std::string::npos) << text;
  auto read = ttir::ReadTtir("module {\n" + text + "}\n", "t.ttir");
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(read.value()->functions()[0]->body()->ops()[0]->result(1)->name(),
            "hi");
}

// --- locations ---------------------------------------------------------------

TEST(PrinterLocations, AliasesAfterTheModuleOrInline) {
  Module m;
  Function* f = m.AddFunction(std::make_unique<Function>("k", Loc(3, 0)));
  Value* a = f->AddArgument(I32(), {"a", Loc(3, 0), 16});
  Builder b(f->body());
  b.set_loc(Loc(4, 8));
  Value* s = b.Create1(OpCode::kAddI, {a, a}, I32());
  b.set_loc(SourceLocation{});
  b.Create1(OpCode::kMulI, {s, s}, I32());
  b.set_loc(Loc(4, 8));
  b.Create(OpCode::kReturn, {}, {});
  EXPECT_EQ(PrintModule(m),
            "module {\n"
            "  tt.func public @k(%a: i32 {tt.divisibility = 16 : i32} "
            "loc(\"a\"(#loc))) attributes {noinline = false} {\n"
            "    %0 = arith.addi %a, %a : i32 loc(#loc1)\n"
            "    %1 = arith.muli %0, %0 : i32 loc(#loc2)\n"
            "    tt.return loc(#loc1)\n"
            "  } loc(#loc)\n"
            "}\n"
            "#loc = loc(\"kernel.py\":3:0)\n"
            "#loc1 = loc(\"kernel.py\":4:8)\n"
            "#loc2 = loc(unknown)\n");
  PrintOptions inline_locs;
  inline_locs.location_aliases = false;
  EXPECT_EQ(PrintModule(m, inline_locs),
            "module {\n"
            "  tt.func public @k(%a: i32 {tt.divisibility = 16 : i32} "
            "loc(\"a\"(\"kernel.py\":3:0))) attributes {noinline = false} {\n"
            "    %0 = arith.addi %a, %a : i32 loc(\"kernel.py\":4:8)\n"
            "    %1 = arith.muli %0, %0 : i32 loc(unknown)\n"
            "    tt.return loc(\"kernel.py\":4:8)\n"
            "  } loc(\"kernel.py\":3:0)\n"
            "}\n");
}

// --- broken IR still prints --------------------------------------------------

TEST(PrinterBrokenIr, FallsBackToTheGenericForm) {
  Module m;
  Function* f =
      m.AddFunction(std::make_unique<Function>("k", SourceLocation{}));
  Function* g =
      m.AddFunction(std::make_unique<Function>("g", SourceLocation{}));
  Value* elsewhere = g->AddArgument(I32(), {"elsewhere", {}, 0});
  Builder b(f->body());
  b.Create1(OpCode::kLoad, {}, F32());                           // no pointer
  b.Create1(OpCode::kCmpI, {elsewhere, elsewhere}, Type::I1());  // no predicate
  b.Create(OpCode::kAddF, {nullptr}, {F32()});
  Operation* r = b.Create(OpCode::kReduce, {}, {});
  r->set_attr("cache", std::string("ca"));  // not tt.reduce's: kept as text
  PrintOptions o;
  o.locations = false;
  const std::string text = PrintModule(m, o);
  EXPECT_NE(text.find("%0 = \"tt.load\"() : () -> f32"), std::string::npos)
      << text;
  EXPECT_NE(text.find("%1 = \"arith.cmpi\"(<<UNKNOWN SSA VALUE>>, <<UNKNOWN "
                      "SSA VALUE>>) : (i32, i32) -> i1"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("%2 = \"arith.addf\"(<<UNKNOWN SSA VALUE>>) : "
                      "(<<NULL TYPE>>) -> f32"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\"tt.reduce\"() <{cache = \"ca\"}> : () -> ()"),
            std::string::npos)
      << text;
}

TEST(PrinterPieces, PrintOperationAndAttributes) {
  auto m = BuildEveryOp();
  const Function& f = *m->Find("every_op");
  const Operation* loop = nullptr;
  Walk(*f.body(), [&](const Operation* op) {
    if (op->code() == OpCode::kFor) loop = op;
  });
  ASSERT_NE(loop, nullptr);
  PrintOptions o;
  o.locations = false;
  const std::string text = PrintOperation(*loop, o);
  EXPECT_EQ(text.rfind("%acc = scf.for %k = %c0_i32 to %n step %c1_i32 "
                       "iter_args(%acc_",
                       0),
            0u)
      << text;
  EXPECT_EQ(PrintAttribute(IntAttr{16, I32()}), "16 : i32");
  EXPECT_EQ(PrintAttribute(IntAttr{255, Type::Int(8)}), "-1 : i8");
  EXPECT_EQ(PrintAttribute(IntAttr{7, I64()}), "7 : i64");
  EXPECT_EQ(PrintAttribute(FloatAttr{0.5, Type::Float(FloatFormat::kF64)}),
            "5.000000e-01 : f64");
  EXPECT_EQ(PrintAttribute(true), "true");
  EXPECT_EQ(PrintAttribute(std::string("a\tb")), "\"a\\09b\"");
  EXPECT_EQ(PrintAttribute(ArrayAttr{{}}), "array<i32>");
  EXPECT_EQ(PrintAttribute(Type::Pointer(F16(), 3)), "!tt.ptr<f16, 3>");
  EXPECT_EQ(
      PrintAttribute(DenseAttr{T({2}, Type::I1()), {int64_t{1}, int64_t{0}}}),
      "dense<[true, false]> : tensor<2xi1>");
}

// --- numbers -----------------------------------------------------------------

TEST(PrinterNumbers, FloatsAsMlirWritesThem) {
  const double inf = std::numeric_limits<double>::infinity();
  const struct {
    double value;
    FloatFormat format;
    const char* text;
  } kCases[] = {
      {1.0, FloatFormat::kF32, "1.000000e+00"},
      {0.0, FloatFormat::kF32, "0.000000e+00"},
      {-0.0, FloatFormat::kF32, "-0.000000e+00"},
      {0.1, FloatFormat::kF32, "1.000000e-01"},
      {1e-5, FloatFormat::kF32, "1.000000e-05"},
      {1.5, FloatFormat::kF32, "1.500000e+00"},
      {-2.5e10, FloatFormat::kF32, "-2.500000e+10"},
      {1.2345678, FloatFormat::kF32, "1.23456776"},
      {0.6931471805599453, FloatFormat::kF32, "0.693147182"},
      {3.14159265358979, FloatFormat::kF32, "3.14159274"},
      {1.17549435e-38, FloatFormat::kF32, "1.17549435E-38"},
      {123456789.0, FloatFormat::kF32, "0x4CEB79A3"},
      {-inf, FloatFormat::kF32, "0xFF800000"},
      {inf, FloatFormat::kF16, "0x7C00"},
      {std::nan(""), FloatFormat::kF32, "0x7FC00000"},
      {0.1, FloatFormat::kF64, "1.000000e-01"},
      {1.0 / 3.0, FloatFormat::kF64, "0.33333333333333331"},
      {0.1, FloatFormat::kBF16, "1.000980e-01"},
      {65504.0, FloatFormat::kF16, "6.550400e+04"},
      {448.0, FloatFormat::kF8E4M3FN, "4.480000e+02"},
      {-inf, FloatFormat::kF8E5M2, "0xFC"},
  };
  for (const auto& c : kCases) {
    EXPECT_EQ(FormatFloat(c.value, c.format), c.text)
        << c.value << " as " << FloatFormatName(c.format);
  }
}

TEST(PrinterNumbers, FloatEncodings) {
  EXPECT_EQ(FloatToBits(1.0, FloatFormat::kF16), 0x3C00u);
  EXPECT_EQ(FloatToBits(65520.0, FloatFormat::kF16), 0x7C00u);  // rounds to inf
  EXPECT_EQ(FloatToBits(1.0, FloatFormat::kBF16), 0x3F80u);
  EXPECT_EQ(FloatToBits(448.0, FloatFormat::kF8E4M3FN), 0x7Eu);
  EXPECT_EQ(FloatToBits(1e6, FloatFormat::kF8E4M3FN), 0x7Fu);  // NaN: no inf
  EXPECT_EQ(FloatToBits(-0.0, FloatFormat::kF8E4M3FNUZ), 0x00u);
  EXPECT_EQ(FloatToBits(57344.0, FloatFormat::kF8E5M2), 0x7Bu);
  EXPECT_EQ(FloatFromBits(0x0001, FloatFormat::kF16), std::ldexp(1.0, -24));
  EXPECT_EQ(FloatFromBits(0x80, FloatFormat::kF8E5M2FNUZ) !=
                FloatFromBits(0x80, FloatFormat::kF8E5M2FNUZ),
            true);  // NaN
  // Triton's float8e4b15: bias 15, S.1111.111 NaN.
  EXPECT_EQ(FloatFromBits(0x08, FloatFormat::kF8E4M3B11FNUZ),
            std::ldexp(1.0, -14));
  EXPECT_EQ(FloatFromBits(0x7E, FloatFormat::kF8E4M3B11FNUZ), 1.75);
  EXPECT_TRUE(std::isnan(FloatFromBits(0xFF, FloatFormat::kF8E4M3B11FNUZ)));
  // Every value of every small format survives a round trip.
  for (FloatFormat f :
       {FloatFormat::kF16, FloatFormat::kBF16, FloatFormat::kF8E4M3FN,
        FloatFormat::kF8E5M2, FloatFormat::kF8E4M3FNUZ,
        FloatFormat::kF8E5M2FNUZ, FloatFormat::kF8E4M3B11FNUZ}) {
    const int bits = Type::Float(f)->bits();
    for (uint64_t v = 0; v < (uint64_t{1} << bits); ++v) {
      const double d = FloatFromBits(v, f);
      if (std::isnan(d)) continue;
      ASSERT_EQ(FloatToBits(d, f), v) << FloatFormatName(f) << " " << v;
    }
  }
  EXPECT_EQ(SignExtend(0xFF, 8), -1);
  EXPECT_EQ(SignExtend(0x7F, 8), 127);
  EXPECT_EQ(SignExtend(3, 1), 1);
  EXPECT_EQ(QuoteString("a\"b\\c\n"), "\"a\\22b\\5Cc\\0A\"");
}

}  // namespace
}  // namespace mtlemu::triton::ir
