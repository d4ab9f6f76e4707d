// Builtins that make, reshape and combine tensors element by element:
// program_id, arange, full, where, the math functions beyond one op,
// casts and shape manipulation, hints and debugging.
#include <cmath>

#include "compiler/triton/frontend/builtins.h"
#include "compiler/triton/frontend/compilation.h"

namespace mtlemu::triton::frontend {
namespace {

using ir::OpCode;

PyValue T(Tensor t) { return PyValue::TensorValue(std::move(t)); }

bool PropagateNan(const PyValue& v) {
  if (v.is_none()) return false;
  if (v.is(PyValue::Kind::kEnum)) return v.as_string() == "PropagateNan.ALL";
  if (v.is_constexpr()) return v.Truthy();
  Fail("propagate_nan must be a tl.PropagateNan value");
}

Tensor ProgramIndex(BuiltinCall& call, OpCode op) {
  const int64_t axis = call.ConstInt(0);
  if (axis < 0 || axis > 2) {
    Fail(std::string(op == OpCode::kGetProgramId ? "program_id"
                                                 : "num_programs") +
         " axis must be 0, 1, or 2 but got " + std::to_string(axis));
  }
  ir::Operation* o = call.cg.builder().Create(op, {}, {ir::Type::I32()});
  o->set_attr("axis", ir::IntAttr{axis, ir::Type::I32()});
  return Tensor{o->result(), DType::I32(), {}};
}

std::vector<int64_t> ShapeArg(BuiltinCall& call, int i) {
  const PyValue& v = call.arg(i);
  if (v.is(PyValue::Kind::kInt)) return {static_cast<int64_t>(v.as_int())};
  return call.ConstShape(i);
}

}  // namespace

PyValue HandlekProgramId(BuiltinCall& call) {
  return T(ProgramIndex(call, OpCode::kGetProgramId));
}

PyValue HandlekNumPrograms(BuiltinCall& call) {
  return T(ProgramIndex(call, OpCode::kGetNumPrograms));
}

PyValue HandlekArange(BuiltinCall& call) {
  return T(call.sem().MakeRange(call.ConstInt(0), call.ConstInt(1)));
}

PyValue HandlekZeros(BuiltinCall& call) {
  return T(
      call.sem().Full(ShapeArg(call, 0), PyValue::Int(0), call.ConstDType(1)));
}

PyValue HandlekFull(BuiltinCall& call) {
  return T(call.sem().Full(ShapeArg(call, 0), call.arg(1), call.ConstDType(2)));
}

PyValue HandlekWhere(BuiltinCall& call) {
  return T(call.sem().Where(call.arg(0), call.arg(1), call.arg(2)));
}

PyValue HandlekMaximum(BuiltinCall& call) {
  return T(call.sem().MinMax(true, call.arg(0), call.arg(1),
                             PropagateNan(call.arg(2))));
}

PyValue HandlekMinimum(BuiltinCall& call) {
  return T(call.sem().MinMax(false, call.arg(0), call.arg(1),
                             PropagateNan(call.arg(2))));
}

PyValue HandlekFmax(BuiltinCall& call) {
  return T(call.sem().MinMax(true, call.arg(0), call.arg(1), false));
}

PyValue HandlekFmin(BuiltinCall& call) {
  return T(call.sem().MinMax(false, call.arg(0), call.arg(1), false));
}

PyValue HandlekClamp(BuiltinCall& call) {
  return T(call.sem().Clamp(call.arg(0), call.arg(1), call.arg(2),
                            PropagateNan(call.arg(3))));
}

PyValue HandlekFma(BuiltinCall& call) {
  return T(call.sem().Fma(call.arg(0), call.arg(1), call.arg(2)));
}

PyValue HandlekAbs(BuiltinCall& call) { return T(call.sem().Abs(call.arg(0))); }
PyValue HandlekFabs(BuiltinCall& call) {
  return T(call.sem().Abs(call.arg(0)));
}
PyValue HandlekLlabs(BuiltinCall& call) {
  return T(call.sem().Abs(call.arg(0)));
}

PyValue HandlekDivRn(BuiltinCall& call) {
  return T(call.sem().PreciseDiv(call.arg(0), call.arg(1)));
}

PyValue HandlekFdiv(BuiltinCall& call) {
  if (call.ConstBool(2))
    return T(call.sem().PreciseDiv(call.arg(0), call.arg(1)));
  return T(call.sem().Binary(BinaryOp::kTrueDiv, call.arg(0), call.arg(1)));
}

PyValue HandlekFastDividef(BuiltinCall& call) {
  return T(call.sem().Binary(BinaryOp::kTrueDiv, call.arg(0), call.arg(1)));
}

PyValue HandlekSqrtRn(BuiltinCall& call) {
  return T(call.sem().PreciseSqrt(call.arg(0)));
}

PyValue HandlekUMulHi(BuiltinCall& call) {
  return T(call.sem().UMulHi(call.arg(0), call.arg(1)));
}

namespace {

// A binary float op of libdevice (fp32 and fp64 only, as libdevice).
Tensor FloatBinary(BuiltinCall& call, OpCode op) {
  Tensor x = call.AsTensor(0);
  Tensor y = call.AsTensor(1);
  if (!x.dtype->is_floating()) x = call.sem().Cast(x, DType::F32());
  if (!y.dtype->is_floating() || y.dtype != x.dtype)
    y = call.sem().Cast(y, x.dtype);
  if (!x.dtype->is_fp32() && !x.dtype->is_fp64()) {
    Fail("Expected dtype ['fp32', 'fp64'] but got " + x.dtype->Name());
  }
  auto [a, b] = call.sem().Broadcast(x, y);
  return Tensor{
      call.cg.builder().Create1(op, {a.handle, b.handle}, a.handle->type()),
      a.dtype, a.shape};
}

Tensor FloatTest(BuiltinCall& call, bool inf) {
  Tensor x = call.AsTensor(0);
  if (!x.dtype->is_floating()) Fail("Expected a floating-point argument");
  ir::Builder& b = call.cg.builder();
  const ir::Type* i1 = ir::Type::I1()->WithShape(x.shape);
  ir::Operation* cmp;
  if (inf) {
    ir::Value* a = b.Create1(OpCode::kAbsF, {x.handle}, x.handle->type());
    Tensor inf_t = call.sem().Full(x.shape, PyValue::Float(INFINITY), x.dtype);
    cmp = b.Create(OpCode::kCmpF, {a, inf_t.handle}, {i1});
    cmp->set_attr("predicate", std::string("oeq"));
  } else {
    cmp = b.Create(OpCode::kCmpF, {x.handle, x.handle}, {i1});
    cmp->set_attr("predicate", std::string("uno"));
  }
  return Tensor{cmp->result(), DType::Bool(), x.shape};
}

}  // namespace

PyValue HandlekPow(BuiltinCall& call) {
  return T(FloatBinary(call, OpCode::kPowF));
}
PyValue HandlekAtan2(BuiltinCall& call) {
  return T(FloatBinary(call, OpCode::kAtan2));
}
PyValue HandlekFmod(BuiltinCall& call) {
  return T(FloatBinary(call, OpCode::kRemF));
}
PyValue HandlekCopysign(BuiltinCall& call) {
  return T(FloatBinary(call, OpCode::kCopySign));
}

PyValue HandlekIsNan(BuiltinCall& call) { return T(FloatTest(call, false)); }
PyValue HandlekIsInf(BuiltinCall& call) { return T(FloatTest(call, true)); }

PyValue HandlekIsFinite(BuiltinCall& call) {
  Tensor nan = FloatTest(call, false);
  Tensor inf = FloatTest(call, true);
  Tensor either = call.sem().LogicalOr(T(nan), T(inf));
  return T(call.sem().Not(either));
}

PyValue HandlekSignbit(BuiltinCall& call) {
  Tensor x = call.AsTensor(0);
  const DType* i = DType::Int(x.dtype->bits());
  Tensor bits = call.sem().Bitcast(x, i);
  return T(call.sem().Binary(BinaryOp::kLt, T(bits), PyValue::Int(0)));
}

PyValue HandlekRcpRn(BuiltinCall& call) {
  return T(call.sem().PreciseDiv(PyValue::Float(1.0), call.arg(0)));
}

PyValue HandlekFastExpf(BuiltinCall& call) {
  return T(call.sem().MathUnary(OpCode::kExp, call.arg(0), {"fp32"}));
}

PyValue HandlekFastLogf(BuiltinCall& call) {
  return T(call.sem().MathUnary(OpCode::kLog, call.arg(0), {"fp32"}));
}

PyValue HandlekRint(BuiltinCall& call) {
  return T(
      call.sem().MathUnary(OpCode::kRoundEven, call.arg(0), {"fp32", "fp64"}));
}

PyValue HandlekNearbyint(BuiltinCall& call) {
  return T(
      call.sem().MathUnary(OpCode::kRoundEven, call.arg(0), {"fp32", "fp64"}));
}

PyValue HandlekLog10(BuiltinCall& call) {
  Tensor l = call.sem().MathUnary(OpCode::kLog, call.arg(0), {"fp32", "fp64"});
  return T(call.sem().Binary(BinaryOp::kMul, T(l),
                             PyValue::Float(1.0 / std::log(10.0))));
}

// --- shapes and types
// --------------------------------------------------------------

PyValue HandlekReshape(BuiltinCall& call) {
  Tensor t = call.AsTensor(0);
  std::vector<int64_t> shape = call.ConstShape(1);
  return T(call.sem().Reshape(t, shape, call.ConstBool(2)));
}

// tensor.item(): the prelude's _item (a one-element reduction).
PyValue HandlekItem(BuiltinCall& call) {
  std::optional<PyValue> item = call.cg.compilation().LookupGlobal(
      call.cg.compilation().prelude(), "_item", call.loc);
  return call.cg.CallJit(item->function(), {call.arg(0)}, {}, call.loc,
                         &call.frame);
}

PyValue HandlekView(BuiltinCall& call) {
  Tensor t = call.AsTensor(0);
  return T(call.sem().Reshape(t, call.ConstShape(1), true));
}

PyValue HandlekTrans(BuiltinCall& call) {
  Tensor t = call.AsTensor(0);
  std::vector<int64_t> dims = call.ConstShape(1);
  std::vector<int> order;
  if (dims.empty()) {
    // Triton's rule: the last two dimensions swap.
    const int n = static_cast<int>(t.shape.size());
    if (n < 2) Fail("tl.trans invoked with a 0- or 1-dimensional tensor");
    for (int i = 0; i < n - 2; ++i) order.push_back(i);
    order.push_back(n - 1);
    order.push_back(n - 2);
  } else {
    order.assign(dims.begin(), dims.end());
  }
  return T(call.sem().Permute(t, order));
}

PyValue HandlekPermute(BuiltinCall& call) {
  Tensor t = call.AsTensor(0);
  std::vector<int64_t> dims = call.ConstShape(1);
  return T(call.sem().Permute(t, std::vector<int>(dims.begin(), dims.end())));
}

PyValue HandlekBroadcastTo(BuiltinCall& call) {
  return T(call.sem().BroadcastTo(call.AsTensor(0), call.ConstShape(1)));
}

PyValue HandlekBroadcast(BuiltinCall& call) {
  auto [a, b] = call.sem().Broadcast(call.AsTensor(0), call.AsTensor(1));
  return PyValue::Tuple({T(a), T(b)});
}

PyValue HandlekExpandDims(BuiltinCall& call) {
  Tensor t = call.AsTensor(0);
  std::vector<int64_t> axes;
  if (call.arg(1).is(PyValue::Kind::kTuple)) {
    axes = call.ConstShape(1);
  } else {
    axes = {call.ConstInt(1)};
  }
  const int new_rank = static_cast<int>(t.shape.size() + axes.size());
  // Triton's checks and words (core.py's _wrap_axis and expand_dims).
  std::string normalized;
  for (int64_t& a : axes) {
    if (a < -new_rank || a >= new_rank) {
      Fail("invalid axis " + std::to_string(a) + ". Expected " +
           std::to_string(-new_rank) + " <= axis < " +
           std::to_string(new_rank));
    }
    if (a < 0) a += new_rank;
    normalized += (normalized.empty() ? "" : ", ") + std::to_string(a);
  }
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) {
    Fail("expand_dims received duplicate axes, normalized axes = [" +
         normalized + "]");
  }
  for (int64_t a : axes) t = call.sem().ExpandDims(t, static_cast<int>(a));
  return T(t);
}

PyValue HandlekJoin(BuiltinCall& call) {
  auto [a, b] = call.sem().Broadcast(call.AsTensor(0), call.AsTensor(1));
  if (a.dtype != b.dtype) {
    Fail("tl.join: both tensors must have the same dtype, got " +
         a.dtype->Name() + " and " + b.dtype->Name());
  }
  // As Triton: two scalars are joined as two 1-element tensors, and the
  // [1, 2] result is reshaped to [2].
  const bool scalars = a.shape.empty();
  if (scalars) {
    a = call.sem().ExpandDims(a, 0);
    b = call.sem().ExpandDims(b, 0);
  }
  std::vector<int64_t> shape = a.shape;
  shape.push_back(2);
  ir::Value* v = call.cg.builder().Create1(OpCode::kJoin, {a.handle, b.handle},
                                           a.dtype->ToIr()->WithShape(shape));
  Tensor joined{v, a.dtype, shape};
  if (scalars) joined = call.sem().Reshape(joined, {2}, false);
  return T(joined);
}

namespace {

// A tensor of one element as a scalar: a reduce of it (Triton's _unsplat).
Tensor Unsplat(ir::Builder& b, const Tensor& t) {
  const ir::Type* scalar = t.dtype->ToIr();
  ir::Operation* op = b.Create(OpCode::kReduce, {t.handle}, {scalar});
  op->set_attr("axis", ir::IntAttr{0, ir::Type::I32()});
  ir::Block* body = op->add_region();
  ir::Value* first = body->add_arg(scalar);
  body->add_arg(scalar);
  ir::Builder inside(body);
  inside.set_loc(b.loc());
  inside.Create(OpCode::kReduceReturn, {first}, {});
  return Tensor{op->result(0), t.dtype, {}};
}

}  // namespace

PyValue HandlekSplit(BuiltinCall& call) {
  Tensor a = call.AsTensor(0);
  if (a.shape.empty() || a.shape.back() != 2) {
    Fail("tl.split: the last dimension must be 2, got shape " +
         Semantic::TypeText(a));
  }
  // As Triton: a [2] is split as a [1, 2], and the halves made scalars.
  const bool to_scalars = a.shape.size() == 1;
  if (to_scalars) a = call.sem().ExpandDims(a, 0);
  std::vector<int64_t> shape(a.shape.begin(), a.shape.end() - 1);
  const ir::Type* t = a.dtype->ToIr()->WithShape(shape);
  ir::Operation* op =
      call.cg.builder().Create(OpCode::kSplit, {a.handle}, {t, t});
  Tensor lhs{op->result(0), a.dtype, shape};
  Tensor rhs{op->result(1), a.dtype, shape};
  if (to_scalars) {
    lhs = Unsplat(call.cg.builder(), lhs);
    rhs = Unsplat(call.cg.builder(), rhs);
  }
  return PyValue::Tuple({T(lhs), T(rhs)});
}

PyValue HandlekCat(BuiltinCall& call) {
  Tensor a = call.AsTensor(0), b = call.AsTensor(1);
  if (!call.ConstBool(2)) {
    Fail("current implementation of `cat` always may reorder elements");
  }
  if (a.shape.size() != 1 || b.shape.size() != 1 || a.dtype != b.dtype ||
      a.shape != b.shape) {
    Fail("tl.cat needs two 1-D tensors of the same shape and dtype, got " +
         Semantic::TypeText(a) + " and " + Semantic::TypeText(b));
  }
  std::vector<int64_t> shape = {a.shape[0] + b.shape[0]};
  ir::Value* v = call.cg.builder().Create1(OpCode::kCat, {a.handle, b.handle},
                                           a.dtype->ToIr()->WithShape(shape));
  return T(Tensor{v, a.dtype, shape});
}

namespace {

PyValue Convert(BuiltinCall& call, const PyValue& x, const DType* dtype,
                const PyValue& rounding, bool bitcast) {
  Tensor t = call.sem().ToTensor(x);
  if (bitcast) return T(call.sem().Bitcast(t, dtype));
  std::string mode;
  if (!rounding.is_none()) {
    if (!rounding.is(PyValue::Kind::kString))
      Fail("fp_downcast_rounding must be a string");
    mode = rounding.as_string();
  }
  return T(call.sem().Cast(t, dtype, mode));
}

}  // namespace

PyValue HandlekCast(BuiltinCall& call) {
  return Convert(call, call.arg(0), call.ConstDType(1), call.arg(2),
                 call.ConstBool(3));
}

PyValue HandlekTo(BuiltinCall& call) {
  return Convert(call, call.arg(0), call.ConstDType(1), call.arg(2),
                 call.ConstBool(3));
}

// --- hints, assertions, debugging
// ------------------------------------------------------

PyValue HandlekMultipleOf(BuiltinCall& call) { return call.arg(0); }
PyValue HandlekMaxContiguous(BuiltinCall& call) { return call.arg(0); }
PyValue HandlekMaxConstancy(BuiltinCall& call) { return call.arg(0); }

PyValue HandlekAssume(BuiltinCall& call) {
  const PyValue& c = call.arg(0);
  if (c.is_constexpr()) {
    if (!c.Truthy()) Fail("tl.assume: the condition is False at compile time");
    return PyValue::None();
  }
  call.cg.Condition(c);  // type-checks it; the emulator needs no hint
  return PyValue::None();
}

// tl.condition(c, disable_licm=...): a while loop's condition with a hint
// for LLVM's loop-invariant code motion, which the MSL compiler decides
// for itself; the condition is the value.
PyValue HandlekCondition(BuiltinCall& call) { return call.arg(0); }

PyValue HandlekStaticAssert(BuiltinCall& call) {
  const PyValue& c = call.arg(0);
  if (!c.is_constexpr()) {
    Fail("tl.static_assert needs a compile-time condition");
  }
  if (!c.Truthy()) {
    const std::string msg = call.arg(1).is(PyValue::Kind::kString)
                                ? call.arg(1).as_string()
                                : call.arg(1).Repr();
    Fail("Static assertion failed" +
         (msg.empty() ? std::string() : ": " + msg));
  }
  return PyValue::None();
}

PyValue HandlekStaticPrint(BuiltinCall& call) {
  std::string line;
  const std::string sep = call.ConstString(1);
  for (const PyValue& v : call.arg(0).items()) {
    if (!line.empty()) line += sep;
    line += v.is(PyValue::Kind::kString) ? v.as_string() : v.Repr();
  }
  call.cg.compilation().AddMessage(line);
  return PyValue::None();
}

PyValue HandlekDevicePrint(BuiltinCall& call) {
  std::string prefix = call.ConstString(0);
  std::vector<ir::Value*> operands;
  std::vector<int64_t> is_signed;
  for (const PyValue& v : call.arg(1).items()) {
    Tensor t = call.sem().ToTensor(v);
    operands.push_back(t.handle);
    is_signed.push_back(t.dtype->is_int_signed() ? 1 : 0);
  }
  // As Triton spells it in the IR: a prefix before values ends in ": ", and
  // one longer than that starts with " " ("x" -> " x: ").
  if (!operands.empty()) {
    if (!prefix.ends_with(' ')) prefix += ' ';
    if (!prefix.ends_with(": "))
      prefix = prefix.substr(0, prefix.size() - 1) + ": ";
  }
  if (prefix.size() > 2 && !prefix.starts_with(' ')) prefix = ' ' + prefix;
  ir::Operation* op = call.cg.builder().Create(OpCode::kPrint, operands, {});
  op->set_attr("prefix", prefix);
  op->set_attr("hex", call.ConstBool(2));
  op->set_attr("isSigned", ir::ArrayAttr{is_signed});
  return PyValue::None();
}

PyValue HandlekDeviceAssert(BuiltinCall& call) {
  const PyValue& c = call.arg(0);
  const std::string msg = call.arg(1).is(PyValue::Kind::kString)
                              ? call.arg(1).as_string()
                              : call.arg(1).Repr();
  if (c.is_constexpr()) {
    if (!c.Truthy()) {
      Fail("device_assert failed at compile time" +
           (msg.empty() ? std::string() : ": " + msg));
    }
    return PyValue::None();
  }
  Tensor cond = call.sem().ToTensor(c);
  if (!cond.dtype->is_bool()) cond = call.sem().Cast(cond, DType::Bool());
  if (call.has(2)) {
    // Lanes outside the mask pass: cond | !mask.
    Tensor mask = call.sem().Cast(call.AsTensor(2), DType::Bool());
    cond = call.sem().LogicalOr(T(cond), T(call.sem().Not(mask)));
  }
  ir::Operation* op =
      call.cg.builder().Create(OpCode::kAssert, {cond.handle}, {});
  op->set_attr("message", msg);
  return PyValue::None();
}

PyValue HandlekDebugBarrier(BuiltinCall& call) {
  call.cg.builder().Create(OpCode::kBarrier, {}, {});
  return PyValue::None();
}

PyValue HandlekInlineAsm(BuiltinCall&) {
  Fail(
      "tl.inline_asm_elementwise is not supported: inline PTX/AMDGCN "
      "assembly cannot run on an Apple GPU");
}

}  // namespace mtlemu::triton::frontend
