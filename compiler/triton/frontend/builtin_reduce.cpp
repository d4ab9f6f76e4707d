// Builtins that combine elements across a tensor: tl.dot, tl.reduce,
// tl.associative_scan, tl.histogram, tl.gather. The reductions Triton
// writes in Python (sum, max, argmax, cumsum...) are in the prelude and
// call tl.reduce / tl.associative_scan.
#include "compiler/triton/frontend/builtins.h"

namespace mtlemu::triton::frontend {
namespace {

using ir::OpCode;

PyValue T(Tensor t) { return PyValue::TensorValue(std::move(t)); }

std::string ShapeText(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i)
    out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

// The operands of a reduce or scan: one tensor or a tuple of them.
std::vector<Tensor> Operands(BuiltinCall& call, int arg) {
  std::vector<Tensor> out;
  const PyValue& v = call.arg(arg);
  if (v.is(PyValue::Kind::kTuple)) {
    for (const PyValue& t : v.items()) out.push_back(call.sem().ToTensor(t));
  } else {
    out.push_back(call.sem().ToTensor(v));
  }
  if (out.empty()) Fail(BuiltinName(call.id) + ": no operands");
  for (const Tensor& t : out) {
    if (t.shape != out[0].shape) {
      Fail("all reduction inputs must have the same shape");
    }
  }
  return out;
}

}  // namespace

PyValue HandlekDot(BuiltinCall& call) {
  Semantic& sem = call.sem();
  Tensor a = call.AsTensor(0), b = call.AsTensor(1);
  if (!a.is_block() || !b.is_block()) Fail("tl.dot needs two blocks");
  if (a.dtype->is_fp8() && b.dtype->is_fp8()) {
    // Any two fp8 formats, as Triton allows. Apple GPUs have no fp8
    // matrix units: each operand is widened to fp16, which holds every
    // fp8 value exactly, as Triton does on GPUs without fp8 MMA.
    a = sem.Cast(a, DType::Float(ir::FloatFormat::kF16));
    b = sem.Cast(b, DType::Float(ir::FloatFormat::kF16));
  }
  if (a.dtype != b.dtype) {
    Fail("Both operands must be same dtype. Got " + a.dtype->Name() + " and " +
         b.dtype->Name());
  }
  const size_t rank = a.shape.size();
  if (!((rank == 2 && b.shape.size() == 2) ||
        (rank == 3 && b.shape.size() == 3))) {
    Fail("Both inputs must be either 2D or 3D; (lhs: " + ShapeText(a.shape) +
         " vs rhs: " + ShapeText(b.shape) + ")");
  }
  const int64_t M = a.shape[rank - 2], K = a.shape[rank - 1];
  const int64_t K2 = b.shape[rank - 2], N = b.shape[rank - 1];
  if (K != K2) {
    Fail("First input shape (" + ShapeText(a.shape) +
         ") and second input shape " + ShapeText(b.shape) +
         " are not compatible for matmul (second index of "
         "first shape (" +
         std::to_string(K) +
         ") must be equal to first index "
         "of second shape (" +
         std::to_string(K2) + ")");
  }
  // Triton's min_dot_size is the backend's: (1, 1, 1) here, as on AMD
  // GPUs, Triton's interpreter and its tile IR backend (a dot too small
  // for simdgroup matrices is done with FMAs).
  if (M < 1 || N < 1 || K < 1) {
    Fail("Input shapes should have M >= 1, N >= 1 and K >= 1");
  }
  if (rank == 3 && a.shape[0] != b.shape[0]) Fail("tl.dot: batch sizes differ");
  if (a.dtype->is_fp64()) {
    Fail("tl.dot on fp64: Apple GPUs have no float64 arithmetic");
  }
  const DType* out_dtype = call.has(6) ? call.ConstDType(6) : DType::F32();
  const DType* ret;
  if (a.dtype->is_int()) {
    if (a.dtype->bits() != 8 || !a.dtype->is_int_signed()) {
      Fail("only int8 supported!");
    }
    ret = DType::I32();
  } else if (out_dtype->is_bf16()) {
    Fail(
        "out_dtype=bfloat16 is unsupported. Please use "
        "out_dtype=float32/float16 and cast with `.to(tl.bfloat16)`");
  } else if (a.dtype->is_fp32() || a.dtype->is_bf16()) {
    ret = DType::F32();
  } else {
    ret = out_dtype;
  }
  std::vector<int64_t> shape = rank == 3
                                   ? std::vector<int64_t>{a.shape[0], M, N}
                                   : std::vector<int64_t>{M, N};
  Tensor acc;
  if (call.has(2)) {
    acc = call.AsTensor(2);
    if (acc.shape != shape || acc.dtype != ret) {
      Fail("tl.dot: acc must be " + ret->Name() + ShapeText(shape) + ", got " +
           Semantic::TypeText(acc));
    }
  } else {
    acc = sem.Full(
        shape, ret->is_floating() ? PyValue::Float(0) : PyValue::Int(0), ret);
  }
  std::string precision;
  if (call.has(3)) precision = call.ConstString(3);
  if (call.has(4)) precision = call.ConstBool(4) ? "tf32" : "ieee";
  if (precision.empty()) precision = "tf32";
  if (precision != "tf32" && precision != "tf32x3" && precision != "ieee" &&
      precision != "bf16x3" && precision != "bf16x6") {
    Fail("input_precision must be one of tf32, tf32x3, ieee, got " + precision);
  }
  if (!a.dtype->is_fp32()) precision = "ieee";
  ir::Operation* op = call.cg.builder().Create(
      OpCode::kDot, {a.handle, b.handle, acc.handle}, {acc.handle->type()});
  op->set_attr("inputPrecision", precision);
  if (call.has(5)) {
    op->set_attr("maxNumImpreciseAcc",
                 ir::IntAttr{call.ConstInt(5), ir::Type::I32()});
  }
  return T(Tensor{op->result(), ret, shape});
}

PyValue HandlekReduce(BuiltinCall& call) {
  Semantic& sem = call.sem();
  const bool single = !call.arg(0).is(PyValue::Kind::kTuple);
  std::vector<Tensor> inputs = Operands(call, 0);
  std::optional<int> axis;
  if (!call.arg(1).is_none()) {
    const int rank = static_cast<int>(inputs[0].shape.size());
    int64_t a = call.ConstInt(1);
    if (a < -rank || a >= rank) {
      Fail("reduction axis must be < inputs rank (" + std::to_string(rank) +
           ")");
    }
    axis = static_cast<int>(a < 0 ? a + rank : a);
  }
  const std::vector<int64_t> original_shape = inputs[0].shape;
  if (!axis) {
    for (Tensor& t : inputs) t = sem.Reshape(t, {t.numel()}, true);
    axis = 0;
  }
  if (!inputs[0].is_block()) Fail("tl.reduce needs a block, got a scalar");
  std::vector<int64_t> shape;
  for (size_t i = 0; i < inputs[0].shape.size(); ++i) {
    if (static_cast<int>(i) != *axis) shape.push_back(inputs[0].shape[i]);
  }
  std::vector<ir::Value*> operands;
  std::vector<const ir::Type*> types;
  std::vector<const DType*> dtypes;
  for (const Tensor& t : inputs) {
    operands.push_back(t.handle);
    types.push_back(t.dtype->ToIr()->WithShape(shape));
    dtypes.push_back(t.dtype);
  }
  ir::Operation* op =
      call.cg.builder().Create(OpCode::kReduce, operands, types);
  op->set_attr("axis", ir::IntAttr{*axis, ir::Type::I32()});
  call.cg.BuildCombiner(op, call.arg(2), dtypes, OpCode::kReduceReturn,
                        call.loc, call.frame);
  call.cg.SetLoc(call.loc, call.frame);
  std::vector<PyValue> results;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Tensor r{op->result(static_cast<int>(i)), dtypes[i], shape};
    if (call.ConstBool(3)) {
      if (!call.arg(1).is_none()) {
        r = sem.ExpandDims(r, *axis);
      } else {
        r = sem.Reshape(r, std::vector<int64_t>(original_shape.size(), 1),
                        false);
      }
    }
    results.push_back(T(r));
  }
  if (single) return results[0];
  return PyValue::Tuple(std::move(results));
}

PyValue HandlekAssociativeScan(BuiltinCall& call) {
  const bool single = !call.arg(0).is(PyValue::Kind::kTuple);
  std::vector<Tensor> inputs = Operands(call, 0);
  const int rank = static_cast<int>(inputs[0].shape.size());
  if (rank == 0) Fail("tl.associative_scan needs a block, got a scalar");
  int64_t a = call.ConstInt(1);
  if (a < -rank || a >= rank) {
    Fail("scan axis must be < inputs rank (" + std::to_string(rank) + ")");
  }
  const int axis = static_cast<int>(a < 0 ? a + rank : a);
  std::vector<ir::Value*> operands;
  std::vector<const ir::Type*> types;
  std::vector<const DType*> dtypes;
  for (const Tensor& t : inputs) {
    operands.push_back(t.handle);
    types.push_back(t.handle->type());
    dtypes.push_back(t.dtype);
  }
  ir::Operation* op = call.cg.builder().Create(OpCode::kScan, operands, types);
  op->set_attr("axis", ir::IntAttr{axis, ir::Type::I32()});
  op->set_attr("reverse", call.ConstBool(3));
  call.cg.BuildCombiner(op, call.arg(2), dtypes, OpCode::kScanReturn, call.loc,
                        call.frame);
  call.cg.SetLoc(call.loc, call.frame);
  std::vector<PyValue> results;
  for (size_t i = 0; i < inputs.size(); ++i) {
    results.push_back(
        T(Tensor{op->result(static_cast<int>(i)), dtypes[i], inputs[i].shape}));
  }
  if (single) return results[0];
  return PyValue::Tuple(std::move(results));
}

// tl.map_elementwise(f, *args, pack=P): f called on scalars, P elements of
// each (broadcast) argument at a time, returning P values per result; its
// body becomes the op's region, run element by element.
PyValue HandlekMapElementwise(BuiltinCall& call) {
  Semantic& sem = call.sem();
  std::vector<Tensor> inputs;
  for (const PyValue& v : call.arg(1).items())
    inputs.push_back(sem.ToTensor(v));
  if (inputs.empty()) Fail("tl.map_elementwise needs at least one tensor");
  for (size_t i = 1; i < inputs.size(); ++i) {
    auto [a, b] = sem.Broadcast(inputs[0], inputs[i]);
    inputs[0] = a;
    inputs[i] = b;
  }
  for (Tensor& t : inputs) t = sem.BroadcastTo(t, inputs[0].shape);
  const int64_t pack = call.ConstInt(2);
  if (pack < 1) Fail("tl.map_elementwise: pack must be at least 1");
  const std::vector<int64_t> shape = inputs[0].shape;
  std::vector<ir::Value*> operands;
  for (const Tensor& t : inputs) operands.push_back(t.handle);
  ir::Builder& b = call.cg.builder();
  ir::Operation* op = b.Create(OpCode::kMapElementwise, operands, {});
  op->set_attr("pack", ir::IntAttr{pack, ir::Type::I32()});
  ir::Block* region = op->add_region();
  std::vector<PyValue> args;
  for (const Tensor& t : inputs) {
    for (int64_t j = 0; j < pack; ++j) {
      ir::Value* v = region->add_arg(t.dtype->ToIr());
      args.push_back(PyValue::TensorValue(Tensor{v, t.dtype, {}}));
    }
  }
  ir::Block* saved = b.block();
  b.set_block(region);
  PyValue result =
      call.cg.Call(call.arg(0), std::move(args), {}, call.loc, call.frame);
  const bool single = !result.is(PyValue::Kind::kTuple);
  std::vector<Tensor> scalars;
  for (const PyValue& r :
       single ? std::vector<PyValue>{result} : result.items()) {
    scalars.push_back(sem.ToTensor(r));
    if (scalars.back().is_block()) {
      Fail("the function tl.map_elementwise maps must return scalars");
    }
  }
  if (scalars.size() % pack != 0) {
    Fail("the function tl.map_elementwise maps with pack=" +
         std::to_string(pack) + " returns " + std::to_string(scalars.size()) +
         " values, not a multiple of " + std::to_string(pack));
  }
  const size_t outputs = scalars.size() / pack;
  std::vector<ir::Value*> handles;
  for (const Tensor& r : scalars) handles.push_back(r.handle);
  b.Create(OpCode::kMapElementwiseReturn, handles, {});
  b.set_block(saved);
  call.cg.SetLoc(call.loc, call.frame);
  std::vector<PyValue> results;
  for (size_t k = 0; k < outputs; ++k) {
    const DType* d = scalars[k * pack].dtype;
    for (int64_t j = 1; j < pack; ++j) {
      if (scalars[k * pack + j].dtype != d) {
        Fail("tl.map_elementwise: the " + std::to_string(pack) +
             " values of result " + std::to_string(k) + " must have one type");
      }
    }
    ir::Value* r = op->add_result(d->ToIr()->WithShape(shape));
    results.push_back(T(Tensor{r, d, shape}));
  }
  return single ? results[0] : PyValue::Tuple(std::move(results));
}

PyValue HandlekHistogram(BuiltinCall& call) {
  Tensor x = call.AsTensor(0);
  if (x.shape.size() != 1 || !x.dtype->is_int()) {
    Fail("tl.histogram needs a 1-D integer tensor, got " +
         Semantic::TypeText(x));
  }
  const int64_t bins = call.ConstInt(1);
  if (bins <= 0 || (bins & (bins - 1)) != 0) {
    Fail("tl.histogram: num_bins must be a power of 2, got " +
         std::to_string(bins));
  }
  std::vector<ir::Value*> operands = {x.handle};
  if (call.has(2)) {
    Tensor m = call.sem().BroadcastTo(
        call.sem().Cast(call.AsTensor(2), DType::Bool()), x.shape);
    operands.push_back(m.handle);
  }
  ir::Value* v = call.cg.builder().Create1(
      OpCode::kHistogram, operands, ir::Type::Tensor({bins}, ir::Type::I32()));
  return T(Tensor{v, DType::I32(), {bins}});
}

PyValue HandlekGather(BuiltinCall& call) {
  Tensor src = call.AsTensor(0), index = call.AsTensor(1);
  const int rank = static_cast<int>(src.shape.size());
  if (rank == 0 || index.shape.size() != src.shape.size()) {
    Fail("tl.gather: src and index must have the same rank");
  }
  if (!index.dtype->is_int())
    Fail("tl.gather: index must be an integer tensor");
  int64_t a = call.ConstInt(2);
  if (a < -rank || a >= rank) Fail("tl.gather: axis out of range");
  const int axis = static_cast<int>(a < 0 ? a + rank : a);
  for (int d = 0; d < rank; ++d) {
    if (d != axis && src.shape[d] != index.shape[d]) {
      Fail(
          "tl.gather: src and index must match in every dimension but the "
          "axis");
    }
  }
  ir::Operation* op =
      call.cg.builder().Create(OpCode::kGather, {src.handle, index.handle},
                               {src.dtype->ToIr()->WithShape(index.shape)});
  op->set_attr("axis", ir::IntAttr{axis, ir::Type::I32()});
  return T(Tensor{op->result(), src.dtype, index.shape});
}

}  // namespace mtlemu::triton::frontend
