// The verifier: each rule broken on purpose in hand-built IR, with the
// message it gives (op, location, the pass that made the IR); every
// problem reported, not only the first; SSA dominance.
#include <gtest/gtest.h>

#include <string>

#include "compiler/triton/ir/verifier.h"

namespace mtlemu::triton::ir {
namespace {

SourceLocation Loc(int line, int column) { return {"kernel.py", line, column}; }

const Type* I1() { return Type::I1(); }
const Type* I32() { return Type::I32(); }
const Type* I64() { return Type::I64(); }
const Type* F32() { return Type::F32(); }
const Type* T(std::vector<int64_t> shape, const Type* e) {
  return Type::Tensor(std::move(shape), e);
}
const Type* Ptr(const Type* t) { return Type::Pointer(t); }

class VerifierTest : public ::testing::Test {
 protected:
  void SetUp() override {
    f_ = m_.AddFunction(std::make_unique<Function>("k", Loc(1, 0)));
    p_ = f_->AddArgument(Ptr(F32()), {"p", Loc(1, 0), 16});
    n_ = f_->AddArgument(I32(), {"n", Loc(1, 0), 0});
    x_ = f_->AddArgument(F32(), {"x", Loc(1, 0), 0});
    c_ = f_->AddArgument(I1(), {"c", Loc(1, 0), 0});
    b_.set_block(f_->body());
    b_.set_loc(Loc(12, 7));  // printed as 12:8
  }

  // Ends the function and verifies; the message, or "" when it verifies.
  std::string Errors(const char* pass = "test pass") {
    b_.set_block(f_->body());
    b_.set_loc(Loc(30, 4));
    b_.Create(OpCode::kReturn, {}, {});
    Status s = Verify(m_, pass);
    return s.ok() ? "" : s.error().message;
  }

  Value* Op(OpCode code, std::vector<Value*> operands, const Type* result) {
    return b_.Create1(code, std::move(operands), result);
  }
  Value* Splat(Value* v, std::vector<int64_t> shape) {
    return Op(OpCode::kSplat, {v}, T(std::move(shape), v->type()));
  }

  Module m_;
  Function* f_ = nullptr;
  Builder b_{nullptr};
  Value *p_, *n_, *x_, *c_;
};

// `errors` has a line that is exactly `line`.
#define EXPECT_ERROR(errors, line)                                          \
  EXPECT_NE(("\n" + (errors) + "\n").find("\n" + std::string(line) + "\n"), \
            std::string::npos)                                              \
      << "want: " << (line) << "\ngot:\n"                                   \
      << (errors)

TEST_F(VerifierTest, GoodIrVerifies) {
  Value* offs = b_.Create1(OpCode::kMakeRange, {}, T({32}, I32()));
  offs->defining_op()->set_attr("start", IntAttr{0, I32()});
  offs->defining_op()->set_attr("end", IntAttr{32, I32()});
  Value* ptrs =
      Op(OpCode::kAddPtr, {Splat(p_, {32}), offs}, T({32}, Ptr(F32())));
  Value* v = b_.Create1(OpCode::kLoad, {ptrs}, T({32}, F32()));
  b_.Create(OpCode::kStore, {ptrs, v}, {});
  EXPECT_EQ(Errors(), "");
}

TEST_F(VerifierTest, AddPtrShapes) {
  Value* ptrs = Splat(p_, {32, 32});
  Value* offs = Splat(n_, {32, 1});
  Op(OpCode::kAddPtr, {ptrs, offs}, ptrs->type());
  EXPECT_EQ(Errors(),
            "kernel.py:12:8: error: tt.addptr: offset shape 32x1 does not "
            "match pointer shape 32x32 (IR after 'test pass')");
}

TEST_F(VerifierTest, NoPassNameNoSuffix) {
  Op(OpCode::kAddI, {n_, x_}, I32());
  EXPECT_EQ(Errors(""),
            "kernel.py:12:8: error: arith.addi: operand 1 has type f32, "
            "expected i32");
}

TEST_F(VerifierTest, ElementwiseTypesAndDomains) {
  Op(OpCode::kAddI, {n_, x_}, I32());
  Op(OpCode::kAddF, {n_, n_}, I32());
  Op(OpCode::kNegF, {x_}, F32());                          // fine
  Op(OpCode::kMulI, {Splat(n_, {4}), n_}, T({4}, I32()));  // shapes differ
  b_.Create(OpCode::kSubI, {n_}, {I32()});                 // one operand short
  const std::string e = Errors();
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: arith.addi: operand 1 has type f32, "
               "expected i32 (IR after 'test pass')");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: arith.addf: the result must hold "
               "floats, not i32 (IR after 'test pass')");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: arith.muli: operand 1 has type i32, "
               "expected tensor<4xi32> (IR after 'test pass')");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: arith.subi: has 1 operands, "
               "expected 2 (IR after 'test pass')");
}

TEST_F(VerifierTest, CompareAndSelect) {
  Value* bad = Op(OpCode::kCmpI, {n_, n_}, I32());
  bad->defining_op()->set_attr("predicate", std::string("lt"));
  Value* t = Splat(x_, {8});
  Op(OpCode::kSelect, {Splat(c_, {4}), t, t}, t->type());
  Op(OpCode::kCmpF, {n_, n_}, I1())
      ->defining_op()
      ->set_attr("predicate", std::string("olt"));
  const std::string e = Errors();
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: arith.cmpi: attribute 'predicate' "
               "must be one of eq, ne, slt, sle, sgt, sge, ult, ule, ugt, "
               "uge (IR after 'test pass')");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: arith.cmpi: the result has type "
               "i32, expected i1 (IR after 'test pass')");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: arith.select: the condition has "
               "type tensor<4xi1>, expected i1 or tensor<8xi1> (IR after "
               "'test pass')");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: arith.cmpf: the operands must hold "
               "floats, not i32 (IR after 'test pass')");
}

TEST_F(VerifierTest, Casts) {
  Value* wide = Op(OpCode::kExtSI, {n_}, I64());
  Op(OpCode::kExtSI, {wide}, I32());
  Op(OpCode::kTruncF, {x_}, Type::Float(FloatFormat::kF64));
  Op(OpCode::kBitcast, {x_}, I64());
  Op(OpCode::kSIToFP, {Splat(n_, {4})}, F32());
  const std::string e = Errors("");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: arith.extsi: cannot convert i64 to i32");
  EXPECT_ERROR(
      e, "kernel.py:12:8: error: arith.truncf: cannot convert f32 to f64");
  EXPECT_ERROR(
      e, "kernel.py:12:8: error: arith.bitcast: cannot bitcast f32 to i64");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: arith.sitofp: result shape scalar "
               "does not match operand shape 4");
}

TEST_F(VerifierTest, ShapeOps) {
  Op(OpCode::kSplat, {Splat(x_, {4})}, T({4}, F32()));
  Value* row = Splat(x_, {1, 8});
  Op(OpCode::kBroadcast, {row}, T({4, 4}, F32()));
  Op(OpCode::kBroadcast, {row}, T({4, 8}, F32()));  // fine
  Value* v = Splat(x_, {8});
  Op(OpCode::kExpandDims, {v}, T({8, 1}, F32()))
      ->defining_op()
      ->set_attr("axis", IntAttr{0, I32()});
  Op(OpCode::kExpandDims, {v}, T({8, 1}, F32()))
      ->defining_op()
      ->set_attr("axis", IntAttr{2, I32()});
  Op(OpCode::kReshape, {v}, T({3, 3}, F32()));
  Value* m = Splat(x_, {2, 8});
  Op(OpCode::kTrans, {m}, T({2, 8}, F32()))
      ->defining_op()
      ->set_attr("order", ArrayAttr{{1, 0}});
  Op(OpCode::kTrans, {m}, T({8, 2}, F32()))
      ->defining_op()
      ->set_attr("order", ArrayAttr{{1, 1}});
  const std::string e = Errors("");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: tt.splat: splats a scalar, not "
               "tensor<4xf32>");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: tt.broadcast: cannot broadcast "
               "shape 1x8 to 4x4");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: tt.expand_dims: shape 8 with a new "
               "axis 0 is 1x8, not 8x1");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: tt.expand_dims: axis 2 is out of "
               "range for rank 1");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: tt.reshape: shape 8 has 8 "
               "elements, 3x3 has 9");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: tt.trans: shape 2x8 permuted is "
               "8x2, not 2x8");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: tt.trans: order is not a "
               "permutation of the 2 dimensions");
}

TEST_F(VerifierTest, LoadAndStore) {
  Value* ptrs = Splat(p_, {16});
  Value* mask8 = Splat(c_, {8});
  Value* wrong_mask = Splat(n_, {16});
  b_.Create1(OpCode::kLoad, {ptrs, mask8}, T({16}, F32()));
  b_.Create1(OpCode::kLoad, {ptrs, wrong_mask}, T({16}, F32()));
  b_.Create1(OpCode::kLoad, {ptrs, Splat(c_, {16}), n_}, T({16}, F32()));
  b_.Create1(OpCode::kLoad, {ptrs}, T({16}, I32()));
  b_.Create1(OpCode::kLoad, {n_}, I32());
  b_.Create(OpCode::kStore, {ptrs, Splat(n_, {16})}, {});
  b_.Create(OpCode::kStore, {ptrs, Splat(x_, {8})}, {});
  b_.Create1(OpCode::kLoad, {p_}, F32())
      ->defining_op()
      ->set_attr("cache", std::string("sometimes"));
  const std::string e = Errors("");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: tt.load: mask shape 8 does not "
               "match pointer shape 16");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: tt.load: the mask must hold i1, "
               "not tensor<16xi32>");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: tt.load: other has type i32, "
               "expected tensor<16xf32>");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: tt.load: the result has type "
               "tensor<16xi32>, expected tensor<16xf32>");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: tt.load: loads through a pointer or "
               "a tensor of pointers, not i32");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: tt.store: the value has type "
               "tensor<16xi32>, expected tensor<16xf32>");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: tt.store: value shape 8 does not "
               "match pointer shape 16");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: tt.load: attribute 'cache' must be "
               "one of none, ca, cg, wb, cs, wt, cv");
}

TEST_F(VerifierTest, Dot) {
  Value* a = Splat(x_, {32, 16});
  Value* bt = Splat(x_, {32, 32});
  Value* acc = Splat(x_, {32, 32});
  Op(OpCode::kDot, {a, bt, acc}, acc->type());
  Op(OpCode::kDot, {bt, bt, Splat(x_, {32, 16})}, T({32, 16}, F32()));
  Op(OpCode::kDot, {bt, bt, acc}, T({16, 16}, F32()));
  Op(OpCode::kDot, {Splat(x_, {32}), bt, acc}, acc->type());
  const std::string e = Errors("");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: tt.dot: shapes 32x16 and 32x32 do "
               "not agree on K");
  EXPECT_ERROR(e, "kernel.py:12:8: error: tt.dot: 32x32 * 32x32 is not 32x16");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: tt.dot: the result has type "
               "tensor<16x16xf32>, expected tensor<32x32xf32>");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: tt.dot: operands must all be 2-D "
               "(or 3-D, batched), not 32, 32x32 and 32x32");
}

// A tt.reduce of `operand` along `axis` with a combiner of `arity`
// arguments returning `returned` values.
Operation* Reduce(Builder& b, Value* operand, int axis, const Type* result,
                  int arity, int returned) {
  Operation* r = b.Create(OpCode::kReduce, {operand}, {result});
  r->set_attr("axis", IntAttr{axis, I32()});
  Block* body = r->add_region();
  std::vector<Value*> args;
  for (int i = 0; i < arity; ++i) args.push_back(body->add_arg(F32()));
  Builder rb(body);
  rb.set_loc(Loc(13, 2));
  Value* s = rb.Create1(OpCode::kAddF, {args[0], args[arity - 1]}, F32());
  rb.Create(OpCode::kReduceReturn, std::vector<Value*>(returned, s), {});
  return r;
}

TEST_F(VerifierTest, Reduce) {
  Value* v = Splat(x_, {4, 8});
  Reduce(b_, v, 1, T({4}, F32()), 2, 1);  // fine
  Reduce(b_, v, 0, T({4}, F32()), 2, 1);
  Reduce(b_, v, 2, T({4}, F32()), 2, 1);
  Reduce(b_, v, 1, T({4}, F32()), 3, 1);
  Reduce(b_, v, 1, T({4}, F32()), 2, 2);
  Operation* no_return = b_.Create(OpCode::kReduce, {v}, {T({4}, F32())});
  no_return->set_attr("axis", IntAttr{1, I32()});
  Block* body = no_return->add_region();
  body->add_arg(F32());
  body->add_arg(F32());
  const std::string e = Errors("");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: tt.reduce: result 0 has type "
               "tensor<4xf32>, expected tensor<8xf32>");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: tt.reduce: axis 2 is out of range "
               "for rank 2");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: tt.reduce: the combiner takes 3 "
               "arguments, expected 2");
  EXPECT_ERROR(e,
               "kernel.py:13:3: error: tt.reduce.return: returns 2 values, "
               "the combiner of 1 operands returns 1");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: tt.reduce: region 0 does not end in "
               "tt.reduce.return");
}

TEST_F(VerifierTest, ScfFor) {
  Value* zero = b_.IntConstant(0, I32());
  Operation* loop = b_.Create(OpCode::kFor, {zero, n_, zero, x_}, {F32()});
  Block* body = loop->add_region();
  body->add_arg(I32());
  body->add_arg(F32());
  Builder lb(body);
  lb.set_loc(Loc(14, 6));
  lb.Create(OpCode::kYield, {n_}, {});  // yields i32 for an f32
  Operation* bad_args = b_.Create(OpCode::kFor, {zero, n_, zero}, {});
  Block* b2 = bad_args->add_region();
  b2->add_arg(I64());
  Builder(b2).Create(OpCode::kYield, {}, {});
  Operation* float_loop = b_.Create(OpCode::kFor, {x_, x_, x_}, {});
  Builder(float_loop->add_region()).Create(OpCode::kYield, {}, {});
  float_loop->region(0)->add_arg(F32());
  const std::string e = Errors("");
  EXPECT_ERROR(e,
               "kernel.py:14:7: error: scf.yield: value 0 has type i32, "
               "scf.for expects f32");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: scf.for: the induction variable has "
               "type i64, expected i32");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: scf.for: the bounds must be "
               "integers, not f32");
}

TEST_F(VerifierTest, ScfIfAndWhile) {
  Operation* branch = b_.Create(OpCode::kIf, {n_}, {F32()});
  Builder(branch->add_region()).Create(OpCode::kYield, {x_, x_}, {});
  branch->add_region();  // no else, but results
  Operation* loop = b_.Create(OpCode::kWhile, {n_}, {F32()});
  Block* before = loop->add_region();
  Value* i = before->add_arg(I32());
  Builder bb(before);
  bb.Create(OpCode::kCondition, {i, i}, {});  // not i1; i32 for f32
  Block* after = loop->add_region();
  after->add_arg(F32());
  Builder(after).Create(OpCode::kYield, {x_}, {});  // f32 for i32
  const std::string e = Errors("");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: scf.if: the condition has type i32, "
               "expected i1");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: scf.if: has results but no else "
               "region");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: scf.if: region 1 does not end in "
               "scf.yield");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: scf.yield: gives 2 values, scf.if "
               "expects 1");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: scf.condition: the condition must "
               "be i1, not i32");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: scf.condition: value 0 has type "
               "i32, scf.while's results are f32");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: scf.yield: value 0 has type f32, "
               "scf.while expects i32");
}

TEST_F(VerifierTest, Terminators) {
  b_.Create(OpCode::kReturn, {}, {});  // in the middle
  Op(OpCode::kAddI, {n_, n_}, I32());
  Operation* loop = b_.Create(OpCode::kFor, {n_, n_, n_}, {});
  Block* body = loop->add_region();
  body->add_arg(I32());
  Builder lb(body);
  lb.set_loc(Loc(15, 2));
  lb.Create(OpCode::kReturn, {}, {});  // the wrong terminator
  const std::string e = Errors("");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: tt.return: a terminator must be the "
               "last op of its block");
  EXPECT_ERROR(e,
               "kernel.py:15:3: error: tt.return: cannot end a region of "
               "scf.for (scf.yield does)");
  // And a function that does not end in tt.return.
  Module m;
  Function* f = m.AddFunction(std::make_unique<Function>("open", Loc(40, 0)));
  Builder(f->body()).Create(OpCode::kBarrier, {}, {});
  Status s = Verify(m, "pass");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message,
            "kernel.py:40:1: error: tt.func @open: the body does not end in "
            "tt.return (IR after 'pass')");
}

TEST_F(VerifierTest, Dominance) {
  // A use before the definition, in one block.
  Operation* early = b_.Create(OpCode::kAddI, {n_, n_}, {I32()});
  Value* later = Op(OpCode::kMulI, {n_, n_}, I32());
  later->set_name("later");
  early->set_operand(1, later);
  // A value defined in a loop body, used after the loop.
  Operation* loop = b_.Create(OpCode::kFor, {n_, n_, n_}, {});
  Block* body = loop->add_region();
  body->add_arg(I32());
  Builder lb(body);
  Value* inside = lb.Create1(OpCode::kAddI, {n_, n_}, I32());
  lb.Create(OpCode::kYield, {}, {});
  Op(OpCode::kSubI, {inside, n_}, I32());
  // The loop's own induction variable is fine inside, not after.
  Op(OpCode::kSubI, {n_, body->arg(0)}, I32());
  // A value of another function.
  Function* g = m_.AddFunction(std::make_unique<Function>("g", Loc(50, 0)));
  Value* foreign = g->AddArgument(I32(), {"foreign", Loc(50, 0), 0});
  Builder(g->body()).Create(OpCode::kReturn, {}, {});
  Op(OpCode::kXOrI, {n_, foreign}, I32());
  const std::string e = Errors("");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: arith.addi: operand 1 ('%later') is "
               "not defined before this use (SSA dominance)");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: arith.subi: operand 0 (result 0 of "
               "arith.addi) is not defined before this use (SSA dominance)");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: arith.subi: operand 1 (block "
               "argument 0) is not defined before this use (SSA dominance)");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: arith.xori: operand 1 ('%foreign') "
               "is not defined before this use (SSA dominance)");
}

TEST_F(VerifierTest, EveryProblemIsReported) {
  for (int i = 0; i < 5; ++i) {
    b_.set_loc(Loc(20 + i, 0));
    Op(OpCode::kAddI, {n_, x_}, I32());
  }
  const std::string e = Errors();
  int lines = 1;
  for (char c : e) lines += c == '\n';
  EXPECT_EQ(lines, 5) << e;
  EXPECT_ERROR(e,
               "kernel.py:24:1: error: arith.addi: operand 1 has type f32, "
               "expected i32 (IR after 'test pass')");
}

TEST_F(VerifierTest, UnknownLocationsFallBackToTheFunction) {
  b_.set_loc(SourceLocation{});
  Op(OpCode::kAddI, {n_, x_}, I32());
  EXPECT_ERROR(Errors(""),
               "kernel.py:1:1: error: arith.addi: operand 1 has "
               "type f32, expected i32");
  Module m;
  Function* f =
      m.AddFunction(std::make_unique<Function>("g", SourceLocation{}));
  Value* a = f->AddArgument(I32(), {"a", {}, 0});
  Builder b(f->body());
  b.Create1(OpCode::kAddF, {a, a}, I32());
  b.Create(OpCode::kReturn, {}, {});
  Status s = Verify(m);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message,
            "<unknown location>: error: arith.addf: the result must hold "
            "floats, not i32");
}

TEST_F(VerifierTest, AttributesAndOtherOps) {
  Value* range = b_.Create1(OpCode::kMakeRange, {}, T({16}, I32()));
  range->defining_op()->set_attr("start", IntAttr{0, I32()});
  range->defining_op()->set_attr("end", IntAttr{32, I32()});
  b_.Create1(OpCode::kGetProgramId, {}, I32())
      ->defining_op()
      ->set_attr("axis", IntAttr{3, I32()});
  Operation* rmw = b_.Create(OpCode::kAtomicRMW, {p_, x_}, {F32()});
  rmw->set_attr("atomic_rmw_op", std::string("fadd"));
  rmw->set_attr("sem", std::string("eventually"));
  rmw->set_attr("scope", std::string("gpu"));
  b_.IntConstant(1, I64())->defining_op()->set_attr("value", IntAttr{1, I32()});
  b_.Create(OpCode::kCall, {x_}, {F32()})
      ->set_attr("callee", std::string("missing"));
  b_.Create1(OpCode::kFpToFp, {x_}, Type::Float(FloatFormat::kF16));
  b_.Create(OpCode::kPrint, {x_}, {})->set_attr("prefix", std::string("x"));
  const std::string e = Errors("");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: tt.make_range: range [0, 32) does "
               "not have 16 elements");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: tt.get_program_id: axis must be 0, "
               "1 or 2, not 3");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: tt.atomic_rmw: attribute 'sem' "
               "must be one of relaxed, acquire, release, acq_rel");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: arith.constant: integer value of "
               "type i32 for a result of type i64");
  EXPECT_ERROR(e, "kernel.py:12:8: error: tt.call: no function @missing");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: tt.fp_to_fp: narrowing f32 to f16 "
               "needs a rounding mode");
  EXPECT_ERROR(e, "kernel.py:12:8: error: tt.print: missing attribute 'hex'");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: tt.print: missing attribute "
               "'isSigned'");
}

TEST_F(VerifierTest, CallsAndReturns) {
  Function* g = m_.AddFunction(std::make_unique<Function>("g", Loc(60, 0)));
  g->AddArgument(F32(), {"v", Loc(60, 0), 0});
  g->add_result_type(F32());
  Builder gb(g->body());
  gb.set_loc(Loc(61, 2));
  gb.Create(OpCode::kReturn, {g->body()->arg(0), g->body()->arg(0)}, {});
  b_.Create(OpCode::kCall, {n_}, {F32()})->set_attr("callee", std::string("g"));
  b_.Create(OpCode::kCall, {x_}, {I32()})->set_attr("callee", std::string("g"));
  const std::string e = Errors("");
  EXPECT_ERROR(e,
               "kernel.py:61:3: error: tt.return: gives 2 values, the "
               "function returns 1");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: tt.call: value 0 has type i32, @g "
               "takes f32");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: tt.call: the results do not match "
               "what @g returns");
}

TEST_F(VerifierTest, TensorAndMemoryOps) {
  Value* v = Splat(x_, {8});
  Value* idx = Splat(n_, {8});
  Op(OpCode::kCat, {v, v}, T({8}, F32()));
  Op(OpCode::kJoin, {v, v}, T({2, 8}, F32()));
  Op(OpCode::kJoin, {x_, x_}, T({2}, F32()));
  b_.Create(OpCode::kSplit, {v}, {T({4}, F32()), T({4}, F32())});
  b_.Create(OpCode::kSplit, {Splat(x_, {2})}, {F32(), F32()});
  Op(OpCode::kGather, {v, Splat(n_, {4, 2})}, T({4, 2}, F32()))
      ->defining_op()
      ->set_attr("axis", IntAttr{0, I32()});
  Op(OpCode::kHistogram, {v}, T({4}, I32()));
  Op(OpCode::kUnsplat, {v}, F32());
  Op(OpCode::kAtomicCAS, {p_, n_, n_}, I32())
      ->defining_op()
      ->set_attr("sem", std::string("acq_rel"));
  Op(OpCode::kAssert, {n_}, nullptr);
  const Type* block = Ptr(T({8, 8}, F32()));
  Value* sixty_four = b_.IntConstant(64, I64());
  Op(OpCode::kMakeTensorPtr, {p_, sixty_four, sixty_four, n_}, block);
  Op(OpCode::kAdvance, {p_, n_}, p_->type());
  Op(OpCode::kExternElementwise, {v, Splat(x_, {4})}, v->type());
  Operation* map = b_.Create(OpCode::kMapElementwise, {v}, {v->type()});
  map->set_attr("pack", IntAttr{2, I32()});
  Block* body = map->add_region();
  Value* e = body->add_arg(F32());
  Builder(body).Create(OpCode::kMapElementwiseReturn, {e}, {});
  Op(OpCode::kIntToPtr, {n_}, Ptr(F32()));
  Op(OpCode::kBitcastTT, {idx}, T({8}, Type::Int(16)));
  const std::string e2 = Errors("");
  EXPECT_ERROR(e2,
               "kernel.py:12:8: error: tt.cat: two tensor<8xf32> cannot "
               "make tensor<8xf32>");
  EXPECT_ERROR(e2,
               "kernel.py:12:8: error: tt.join: joining two "
               "tensor<8xf32> gives shape 8x2, not tensor<2x8xf32>");
  EXPECT_ERROR(e2,
               "kernel.py:12:8: error: tt.join: joins two tensors, not f32 "
               "(scalars are first expanded to 1 element)");
  EXPECT_ERROR(e2,
               "kernel.py:12:8: error: tt.split: splits a tensor whose "
               "last dimension is 2, not tensor<8xf32>");
  EXPECT_ERROR(e2,
               "kernel.py:12:8: error: tt.split: splits a tensor of rank 2 "
               "or more (a tensor of 2 is first expanded to 1x2), not "
               "tensor<2xf32>");
  EXPECT_ERROR(e2,
               "kernel.py:12:8: error: tt.gather: gathers from a tensor "
               "with integer indices of its rank, not tensor<8xf32> and "
               "tensor<4x2xi32>");
  EXPECT_ERROR(e2,
               "kernel.py:12:8: error: tt.histogram: maps a 1-D integer "
               "tensor to a 1-D integer tensor, not tensor<8xf32> to "
               "tensor<4xi32>");
  EXPECT_ERROR(e2,
               "kernel.py:12:8: error: tt.unsplat: takes a tensor of one "
               "element, not tensor<8xf32>");
  EXPECT_ERROR(e2,
               "kernel.py:12:8: error: tt.atomic_cas: missing attribute "
               "'scope'");
  EXPECT_ERROR(e2,
               "kernel.py:12:8: error: tt.atomic_cas: the pointer has "
               "type !tt.ptr<f32>, expected !tt.ptr<i32>");
  EXPECT_ERROR(e2,
               "kernel.py:12:8: error: tt.assert: has 1 results, "
               "expected 0");
  EXPECT_ERROR(e2,
               "kernel.py:12:8: error: tt.make_tensor_ptr: needs a base "
               "and shape, strides and offsets for each dimension of its "
               "block, 4 operands for !tt.ptr<tensor<8x8xf32>>");
  EXPECT_ERROR(e2,
               "kernel.py:12:8: error: tt.advance: advances a block "
               "pointer, not !tt.ptr<f32>");
  EXPECT_ERROR(e2,
               "kernel.py:12:8: error: tt.extern_elementwise: operand 1 "
               "shape 4 does not match result shape 8");
  EXPECT_ERROR(e2,
               "kernel.py:12:8: error: tt.map_elementwise: the region "
               "takes 1 arguments, expected 2");
  EXPECT_ERROR(e2,
               "kernel.py:12:8: error: tt.map_elementwise.return: "
               "returns 1 values, expected 2");
  EXPECT_ERROR(e2,
               "kernel.py:12:8: error: tt.int_to_ptr: converts i64 to "
               "pointers, not i32 to !tt.ptr<f32>");
  EXPECT_ERROR(e2,
               "kernel.py:12:8: error: tt.bitcast: cannot bitcast "
               "tensor<8xi32> to tensor<8xi16>");
}

TEST_F(VerifierTest, NullsAndMissingTypesDoNotCrash) {
  b_.Create(OpCode::kAddI, {nullptr, n_}, {I32()});
  b_.Create(OpCode::kLoad, {}, {nullptr});
  b_.Create(OpCode::kReduce, {}, {});
  b_.Create(OpCode::kWhile, {n_}, {});
  const std::string e = Errors("");
  EXPECT_ERROR(e, "kernel.py:12:8: error: arith.addi: operand 0 is null");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: tt.load: has 0 operands, expected "
               "1 to 3");
  EXPECT_ERROR(e, "kernel.py:12:8: error: tt.load: result 0 has no type");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: tt.reduce: has 0 regions, expected 1");
  EXPECT_ERROR(e,
               "kernel.py:12:8: error: scf.while: has 0 regions, expected 2");
}

}  // namespace
}  // namespace mtlemu::triton::ir
