#include "compiler/triton/frontend/semantic.h"

#include <cmath>

#include "compiler/triton/frontend/compile_error.h"

namespace mtlemu::triton::frontend {
namespace {

using ir::OpCode;

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    s += (i ? ", " : "") + std::to_string(shape[i]);
  }
  return s + "]";
}

[[noreturn]] void Incompatible(const DType* a, const DType* b) {
  Fail("invalid operands of type " + a->Name() + " and " + b->Name());
}

bool IsPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

}  // namespace

std::string Semantic::TypeText(const Tensor& t) {
  if (!t.is_block()) return t.dtype->Name();
  return t.dtype->Name() + ShapeText(t.shape);
}

Tensor Semantic::Make(ir::Value* v, const DType* dtype,
                      const std::vector<int64_t>& shape) {
  return Tensor{v, dtype, shape};
}

// --- constants
// ---------------------------------------------------------------------

const DType* Semantic::DTypeOfNumber(const PyValue& v) {
  switch (v.kind()) {
    case PyValue::Kind::kBool:
      return DType::Bool();
    case PyValue::Kind::kInt: {
      const __int128 x = v.as_int();
      const __int128 two31 = static_cast<__int128>(1) << 31;
      const __int128 two63 = static_cast<__int128>(1) << 63;
      if (x >= -two31 && x < two31) return DType::Int(32);
      if (x >= two31 && x < 2 * two31) return DType::UInt(32);
      if (x >= -two63 && x < two63) return DType::Int(64);
      if (x >= two63 && x < 2 * two63) return DType::UInt(64);
      Fail("Nonrepresentable integer " + v.Repr() + ".");
    }
    case PyValue::Kind::kFloat: {
      const double x = v.as_float();
      const double ax = std::fabs(x);
      const double min_f32 = std::ldexp(1.0, -126);
      const double max_f32 = (2 - std::ldexp(1.0, -23)) * std::ldexp(1.0, 127);
      const bool f32 = std::isinf(ax) || ax == 0.0 || std::isnan(x) ||
                       (ax >= min_f32 && ax <= max_f32);
      return f32 ? DType::F32() : DType::Float(ir::FloatFormat::kF64);
    }
    default:
      Fail("cannot convert " + v.Repr() + " of type " + v.TypeName() +
           " to tensor");
  }
}

Tensor Semantic::ToTensor(const PyValue& v) {
  if (v.is_tensor()) return v.tensor();
  return ScalarConstant(v, DTypeOfNumber(v));
}

Tensor Semantic::AsTensor(const PyValue& v) { return ToTensor(v); }

Tensor Semantic::ScalarConstant(const PyValue& v, const DType* dtype) {
  if (v.is_tensor()) return Cast(v.tensor(), dtype);
  if (!v.is_number()) {
    Fail("cannot make a constant of type " + dtype->Name() + " from " +
         v.Repr());
  }
  const ir::Type* type = dtype->ToIr();
  ir::Value* handle = nullptr;
  if (dtype->is_floating()) {
    handle = b_.FloatConstant(v.as_float(), type);
  } else if (dtype->is_int()) {
    __int128 x = v.kind() == PyValue::Kind::kFloat
                     ? static_cast<__int128>(v.as_float())
                     : v.as_int();
    if (dtype->is_bool()) x = v.Truthy() ? 1 : 0;
    // Keep the low `bits` bits, sign-extended into the int64 attribute.
    const int bits = dtype->bits();
    uint64_t u = static_cast<uint64_t>(x);
    if (bits < 64) {
      u &= (uint64_t{1} << bits) - 1;
      if (bits > 1 && (u >> (bits - 1)) & 1) u |= ~((uint64_t{1} << bits) - 1);
    }
    handle = b_.IntConstant(static_cast<int64_t>(u), type);
  } else {
    Fail("cannot make a constant of type " + dtype->Name());
  }
  return Make(handle, dtype, {});
}

Tensor Semantic::Full(const std::vector<int64_t>& shape, const PyValue& v,
                      const DType* dtype) {
  for (int64_t d : shape) {
    if (!IsPowerOfTwo(d)) {
      Fail("Shape element " + std::to_string(d) + " must be a power of 2");
    }
  }
  if (v.is_tensor()) {
    const Tensor& t = v.tensor();
    if (t.is_block()) Fail("full: the value must be a scalar");
    return Splat(Cast(t, dtype), shape);
  }
  const ir::Type* type = dtype->ToIr()->WithShape(shape);
  ir::Value* handle = nullptr;
  if (dtype->is_floating()) {
    handle = b_.FloatConstant(v.as_float(), type);
  } else {
    Tensor scalar = ScalarConstant(v, dtype);
    // Reuse the scalar's bit pattern for the dense constant.
    const auto& attr =
        std::get<ir::IntAttr>(*scalar.handle->defining_op()->attr("value"));
    handle = b_.IntConstant(attr.value, type);
  }
  return Make(handle, dtype, shape);
}

// --- shapes
// ------------------------------------------------------------------------

Tensor Semantic::Splat(const Tensor& scalar,
                       const std::vector<int64_t>& shape) {
  if (scalar.is_block()) Fail("splat: the value is already a block");
  if (shape.empty()) return scalar;  // tl.full([], v, dtype): a scalar
  return Make(b_.Create1(OpCode::kSplat, {scalar.handle},
                         scalar.dtype->ToIr()->WithShape(shape)),
              scalar.dtype, shape);
}

Tensor Semantic::BroadcastTo(const Tensor& t,
                             const std::vector<int64_t>& shape) {
  if (!t.is_block()) return Splat(t, shape);
  if (t.shape == shape) return t;
  if (t.shape.size() != shape.size()) {
    Fail("Cannot broadcast, rank mismatch: " + ShapeText(t.shape) + ", " +
         ShapeText(shape));
  }
  for (size_t i = 0; i < shape.size(); ++i) {
    if (t.shape[i] != shape[i] && t.shape[i] != 1) {
      Fail("Cannot broadcast, the expanded size of the tensor (" +
           std::to_string(shape[i]) + ") must match the existing size (" +
           std::to_string(t.shape[i]) + ") at non-singleton dimension " +
           std::to_string(i) + ": " + ShapeText(t.shape) + ", " +
           ShapeText(shape));
    }
  }
  return Make(b_.Create1(OpCode::kBroadcast, {t.handle},
                         t.dtype->ToIr()->WithShape(shape)),
              t.dtype, shape);
}

std::pair<Tensor, Tensor> Semantic::Broadcast(Tensor a, Tensor b) {
  if (a.is_block() && !b.is_block()) return {a, Splat(b, a.shape)};
  if (!a.is_block() && b.is_block()) return {Splat(a, b.shape), b};
  if (!a.is_block()) return {a, b};
  while (a.shape.size() < b.shape.size()) a = ExpandDims(a, 0);
  while (b.shape.size() < a.shape.size()) b = ExpandDims(b, 0);
  std::vector<int64_t> shape;
  for (size_t i = 0; i < a.shape.size(); ++i) {
    const int64_t l = a.shape[i], r = b.shape[i];
    if (l == 1) {
      shape.push_back(r);
    } else if (r == 1 || r == l) {
      shape.push_back(l);
    } else {
      Fail("Cannot make_shape_compatible: incompatible dimensions at index " +
           std::to_string(i) + ": " + std::to_string(l) + " and " +
           std::to_string(r));
    }
  }
  return {BroadcastTo(a, shape), BroadcastTo(b, shape)};
}

Tensor Semantic::ExpandDims(const Tensor& t, int axis) {
  std::vector<int64_t> shape = t.shape;
  const int rank = static_cast<int>(shape.size());
  if (axis < 0) axis += rank + 1;
  if (axis < 0 || axis > rank) {
    Fail("expand_dims: axis " + std::to_string(axis) +
         " is out of range for a tensor of rank " + std::to_string(rank));
  }
  if (!t.is_block()) {
    // A scalar becomes a one-element block.
    return Splat(t, {1});
  }
  shape.insert(shape.begin() + axis, 1);
  ir::Operation* op = b_.Create(OpCode::kExpandDims, {t.handle},
                                {t.dtype->ToIr()->WithShape(shape)});
  op->set_attr("axis", ir::IntAttr{axis, ir::Type::I32()});
  return Make(op->result(), t.dtype, shape);
}

Tensor Semantic::Reshape(const Tensor& t, const std::vector<int64_t>& shape,
                         bool can_reorder) {
  int64_t numel = 1;
  for (int64_t d : shape) numel *= d;
  if (numel != t.numel()) {
    Fail("reshape() cannot change total number of elements in tensor");
  }
  if (!t.is_block()) return Splat(t, shape);
  if (shape.empty()) Fail("reshape: cannot reshape a block to a scalar");
  ir::Operation* op = b_.Create(OpCode::kReshape, {t.handle},
                                {t.dtype->ToIr()->WithShape(shape)});
  if (can_reorder) op->set_attr("allow_reorder", true);
  return Make(op->result(), t.dtype, shape);
}

Tensor Semantic::Permute(const Tensor& t, const std::vector<int>& order) {
  if (order.size() != t.shape.size()) {
    Fail("permute(): dims must have the same length as the tensor's rank");
  }
  std::vector<bool> seen(order.size());
  std::vector<int64_t> shape;
  for (int d : order) {
    if (d < 0 || d >= static_cast<int>(order.size()) || seen[d]) {
      Fail("permute(): dims must be a permutation of 0, 1, ..., n-1");
    }
    seen[d] = true;
    shape.push_back(t.shape[d]);
  }
  ir::Operation* op = b_.Create(OpCode::kTrans, {t.handle},
                                {t.dtype->ToIr()->WithShape(shape)});
  op->set_attr("order", ir::ArrayAttr{{order.begin(), order.end()}});
  return Make(op->result(), t.dtype, shape);
}

Tensor Semantic::MakeRange(int64_t start, int64_t end) {
  if (end <= start)
    Fail("arange's end argument must be greater than the start argument");
  const int64_t range = end - start;
  if (!IsPowerOfTwo(range)) Fail("arange's range must be a power of 2");
  if (start < INT32_MIN || end > static_cast<int64_t>(INT32_MAX) + 1) {
    Fail("arange's arguments must be within int32");
  }
  if (range > (int64_t{1} << 20)) {
    Fail("arange's range must be at most 1048576 elements (got " +
         std::to_string(range) + ")");
  }
  ir::Operation* op = b_.Create(OpCode::kMakeRange, {},
                                {ir::Type::Tensor({range}, ir::Type::I32())});
  op->set_attr("start", ir::IntAttr{start, ir::Type::I32()});
  op->set_attr("end", ir::IntAttr{end, ir::Type::I32()});
  return Make(op->result(), DType::I32(), {range});
}

// --- types
// ---------------------------------------------------------------------------

const DType* Semantic::IntegerPromote(const DType* a, const DType* b) {
  const int ar = a->bits(), br = b->bits();
  const bool as = a->is_int_signed(), bs = b->is_int_signed();
  if (as == bs) return ar > br ? a : b;
  if (!as) return ar >= br ? a : b;  // a unsigned
  return br >= ar ? b : a;           // b unsigned
}

const DType* Semantic::ComputationType(const DType* a, bool a_is_scalar,
                                       const DType* b, bool b_is_scalar,
                                       bool div_or_mod) {
  if (a_is_scalar != b_is_scalar) {
    const DType* scalar = a_is_scalar ? a : b;
    const DType* tensor = a_is_scalar ? b : a;
    if (scalar->kind_rank() <= tensor->kind_rank()) {
      if (div_or_mod && (tensor->is_fp16() || tensor->is_bf16())) {
        return DType::F32();
      }
      return tensor;
    }
  }
  if (a->is_fp64() || b->is_fp64()) return DType::Float(ir::FloatFormat::kF64);
  if (a->is_fp32() || b->is_fp32()) return DType::F32();
  if (a->is_fp16() || b->is_fp16()) {
    return div_or_mod ? DType::F32() : DType::Float(ir::FloatFormat::kF16);
  }
  if (a->is_bf16() || b->is_bf16()) {
    if (div_or_mod) return DType::F32();
    if (a->is_bf16() && b->is_bf16()) return a;
    return DType::F32();
  }
  if (a->is_fp8() && b->is_fp8()) {
    return a == b ? a : DType::Float(ir::FloatFormat::kF16);
  }
  if (!a->is_int() || !b->is_int()) {
    Fail("unexpected type " + a->Name() + " and " + b->Name());
  }
  if (div_or_mod && a->is_int_signed() != b->is_int_signed()) {
    Fail("Cannot use /, #, or % with " + a->Name() + " and " + b->Name() +
         " because they have different signedness;this is unlikely to result "
         "in a useful answer. Cast them to the same signedness.");
  }
  return IntegerPromote(a, b);
}

Tensor Semantic::IntCast(const Tensor& t, const DType* dst) {
  const ir::Type* to = dst->ToIr()->WithShape(t.shape);
  const int from_bits = t.dtype->bits(), to_bits = dst->bits();
  if (from_bits == to_bits) return Make(t.handle, dst, t.shape);
  ir::OpCode op = OpCode::kTruncI;
  if (to_bits > from_bits) {
    const bool sign_extend = t.dtype->is_int_signed() && !t.dtype->is_bool();
    op = sign_extend ? OpCode::kExtSI : OpCode::kExtUI;
  }
  return Make(b_.Create1(op, {t.handle}, to), dst, t.shape);
}

Tensor Semantic::NotEqualZero(const Tensor& t) {
  return Binary(
      BinaryOp::kNe, PyValue::TensorValue(t),
      PyValue::TensorValue(t.dtype->is_floating()
                               ? ScalarConstant(PyValue::Float(0), t.dtype)
                               : ScalarConstant(PyValue::Int(0), t.dtype)));
}

Tensor Semantic::Cast(const Tensor& t, const DType* dst,
                      const std::string& rounding_in) {
  const DType* src = t.dtype;
  if (src == dst) return t;
  if (dst->is_void()) Fail("cannot cast to void");
  const ir::Type* to = dst->ToIr() ? dst->ToIr()->WithShape(t.shape) : nullptr;
  std::string rounding = rounding_in;
  bool custom_rounding = false;
  if (dst->is_floating() && src->is_floating() && dst->bits() < src->bits()) {
    if (rounding.empty()) {
      rounding = "rtne";
    } else if (rounding != "rtne") {
      if (rounding != "rtz") {
        Fail("Invalid rounding mode: " + rounding +
             ". Supported rounding modes are 'rtne' and 'rtz'.");
      }
      custom_rounding = true;
    }
  } else if (!rounding.empty()) {
    Fail(
        "fp_downcast_rounding should be set only for truncating fp "
        "conversions. Source scalar type is " +
        src->Name() + " and destination type is " + dst->Name());
  }
  if ((src->is_fp8() && dst->is_floating()) ||
      (src->is_floating() && dst->is_fp8()) || custom_rounding) {
    ir::Operation* op = b_.Create(OpCode::kFpToFp, {t.handle}, {to});
    if (dst->bits() < src->bits()) op->set_attr("rounding", rounding);
    return Make(op->result(), dst, t.shape);
  }
  if ((src->is_fp16() && !dst->is_fp32()) ||
      (src->is_bf16() && !dst->is_fp32())) {
    return Cast(Cast(t, DType::F32()), dst);
  }
  if (src->is_floating() && dst->is_floating()) {
    const OpCode op =
        src->bits() > dst->bits() ? OpCode::kTruncF : OpCode::kExtF;
    return Make(b_.Create1(op, {t.handle}, to), dst, t.shape);
  }
  if (src->is_int() && dst->is_int()) {
    if (dst->is_bool()) return NotEqualZero(t);
    return IntCast(t, dst);
  }
  if (src->is_floating() && dst->is_int()) {
    if (dst->is_bool()) return NotEqualZero(t);
    const OpCode op = dst->is_int_signed() ? OpCode::kFPToSI : OpCode::kFPToUI;
    return Make(b_.Create1(op, {t.handle}, to), dst, t.shape);
  }
  if (src->is_int() && dst->is_floating()) {
    const OpCode op = (src->is_bool() || !src->is_int_signed())
                          ? OpCode::kUIToFP
                          : OpCode::kSIToFP;
    return Make(b_.Create1(op, {t.handle}, to), dst, t.shape);
  }
  if (src->is_ptr() && dst->is_int()) {
    if (dst->bits() == 64) {
      return Make(b_.Create1(OpCode::kPtrToInt, {t.handle}, to), dst, t.shape);
    }
    if (dst->bits() == 1) return NotEqualZero(Cast(t, DType::I64()));
  }
  if (src->is_int() && dst->is_ptr()) {
    return Make(b_.Create1(OpCode::kIntToPtr, {t.handle}, to), dst, t.shape);
  }
  if (src->is_ptr() && dst->is_ptr()) {
    return Make(b_.Create1(OpCode::kBitcastTT, {t.handle}, to), dst, t.shape);
  }
  Fail("cannot cast " + TypeText(t) + " to " + dst->Name());
}

Tensor Semantic::Bitcast(const Tensor& t, const DType* dst) {
  if (t.dtype == dst) return t;
  if (t.dtype->is_ptr() || dst->is_ptr()) return Cast(t, dst);
  if (t.dtype->bits() != dst->bits()) {
    Fail("Cannot bitcast data-type of size " + std::to_string(t.dtype->bits()) +
         " to data-type of size " + std::to_string(dst->bits()));
  }
  const ir::Type* to = dst->ToIr()->WithShape(t.shape);
  if (to == t.handle->type()) return Make(t.handle, dst, t.shape);
  return Make(b_.Create1(OpCode::kBitcastTT, {t.handle}, to), dst, t.shape);
}

// --- operators
// -----------------------------------------------------------------------

std::pair<Tensor, Tensor> Semantic::CheckBinary(
    const PyValue& av, const PyValue& bv, bool allow_a_ptr, bool allow_b_ptr,
    bool arithmetic_check, bool div_or_mod) {
  const bool a_scalar = av.is_number();
  const bool b_scalar = bv.is_number();
  if (!a_scalar && !av.is_tensor()) {
    Fail("unsupported operand of type " + av.TypeName());
  }
  if (!b_scalar && !bv.is_tensor()) {
    Fail("unsupported operand of type " + bv.TypeName());
  }
  // Numbers become constants once their computation type is known.
  const DType* at = a_scalar ? DTypeOfNumber(av) : av.tensor().dtype;
  const DType* bt = b_scalar ? DTypeOfNumber(bv) : bv.tensor().dtype;
  Tensor a = a_scalar ? Tensor{} : av.tensor();
  Tensor b = b_scalar ? Tensor{} : bv.tensor();
  auto check_ptr = [](const DType* x, const DType* y, bool allow) {
    if (!x->is_ptr()) return;
    if (!allow) Incompatible(x, y);
    if (y->is_ptr() && x != y) Incompatible(x, y);
    if (y->is_floating()) Incompatible(x, y);
  };
  check_ptr(at, bt, allow_a_ptr);
  check_ptr(bt, at, allow_b_ptr);
  if (arithmetic_check && !at->is_ptr() && !bt->is_ptr()) {
    const DType* ret = ComputationType(at, a_scalar, bt, b_scalar, div_or_mod);
    if (ret->is_int_unsigned() &&
        ((a_scalar && av.kind() != PyValue::Kind::kFloat && av.as_int() < 0) ||
         (b_scalar && bv.kind() != PyValue::Kind::kFloat && bv.as_int() < 0))) {
      Fail(
          "Cannot perform a binary operation between an unsigned tensor and "
          "a negative scalar. Perform a explicit cast on one of them.");
    }
    if (ret->is_int()) {
      // Triton's check: a Python integer must fit the computation type.
      const int bits = ret->bits();
      const __int128 lo =
          ret->is_int_signed() ? -(static_cast<__int128>(1) << (bits - 1)) : 0;
      const __int128 hi = ret->is_int_signed()
                              ? (static_cast<__int128>(1) << (bits - 1)) - 1
                              : (static_cast<__int128>(1) << bits) - 1;
      for (const PyValue* v :
           {a_scalar ? &av : nullptr, b_scalar ? &bv : nullptr}) {
        if (v == nullptr || v->kind() == PyValue::Kind::kFloat) continue;
        const __int128 x = v->as_int();
        if (x < lo || x > hi) {
          Fail("Scalar " + v->Repr() + " is out of range for type " +
               ret->Name());
        }
      }
    }
    // A Python number is made directly in the computation type (no cast).
    a = a_scalar ? ScalarConstant(av, ret) : Cast(a, ret);
    b = b_scalar ? ScalarConstant(bv, ret) : Cast(b, ret);
  } else {
    if (a_scalar) a = ScalarConstant(av, at);
    if (b_scalar) b = ScalarConstant(bv, bt);
  }
  return Broadcast(a, b);
}

std::pair<Tensor, Tensor> Semantic::CheckBitwise(const PyValue& av,
                                                 const PyValue& bv) {
  auto [a, b] = CheckBinary(av, bv, false, false, true, false);
  if (!a.dtype->is_int() || !b.dtype->is_int()) Incompatible(a.dtype, b.dtype);
  const DType* ret = IntegerPromote(a.dtype, b.dtype);
  return {Cast(a, ret), Cast(b, ret)};
}

Tensor Semantic::Compare(BinaryOp op, const PyValue& av, const PyValue& bv) {
  auto [a, b] = CheckBinary(av, bv, false, false, true, false);
  const DType* t = a.dtype;
  const ir::Type* result = ir::Type::I1()->WithShape(a.shape);
  std::string pred;
  ir::OpCode code;
  if (t->is_floating()) {
    code = OpCode::kCmpF;
    switch (op) {
      case BinaryOp::kLt:
        pred = "olt";
        break;
      case BinaryOp::kLe:
        pred = "ole";
        break;
      case BinaryOp::kGt:
        pred = "ogt";
        break;
      case BinaryOp::kGe:
        pred = "oge";
        break;
      case BinaryOp::kEq:
        pred = "oeq";
        break;
      default:
        pred = "une";
        break;
    }
  } else if (t->is_int()) {
    code = OpCode::kCmpI;
    const bool s = t->is_int_signed();
    switch (op) {
      case BinaryOp::kLt:
        pred = s ? "slt" : "ult";
        break;
      case BinaryOp::kLe:
        pred = s ? "sle" : "ule";
        break;
      case BinaryOp::kGt:
        pred = s ? "sgt" : "ugt";
        break;
      case BinaryOp::kGe:
        pred = s ? "sge" : "uge";
        break;
      case BinaryOp::kEq:
        pred = "eq";
        break;
      default:
        pred = "ne";
        break;
    }
  } else {
    Fail("unexpected type " + t->Name());
  }
  ir::Operation* o = b_.Create(code, {a.handle, b.handle}, {result});
  o->set_attr("predicate", pred);
  return Make(o->result(), DType::Bool(), a.shape);
}

Tensor Semantic::Binary(BinaryOp op, const PyValue& av, const PyValue& bv) {
  switch (op) {
    case BinaryOp::kAdd: {
      auto [a, b] = CheckBinary(av, bv, true, true, true, false);
      if (a.dtype->is_ptr() && b.dtype->is_ptr()) {
        Fail("cannot add pointers together");
      }
      if (b.dtype->is_ptr()) std::swap(a, b);
      if (a.dtype->is_ptr()) {
        if (a.dtype->is_block_ptr()) {
          Fail("cannot add an offset to a block pointer; use tl.advance");
        }
        if (!b.dtype->is_int()) Incompatible(a.dtype, b.dtype);
        ir::Value* off = b.handle;
        if (b.dtype->is_int_unsigned() && b.dtype->bits() < 64) {
          off = IntCast(Tensor{b.handle, DType::UInt(b.dtype->bits()), b.shape},
                        DType::UInt(64))
                    .handle;
        }
        return Make(
            b_.Create1(OpCode::kAddPtr, {a.handle, off}, a.handle->type()),
            a.dtype, a.shape);
      }
      if (a.dtype->is_floating()) {
        return Make(
            b_.Create1(OpCode::kAddF, {a.handle, b.handle}, a.handle->type()),
            a.dtype, a.shape);
      }
      return Make(
          b_.Create1(OpCode::kAddI, {a.handle, b.handle}, a.handle->type()),
          a.dtype, a.shape);
    }
    case BinaryOp::kSub: {
      auto [a, b] = CheckBinary(av, bv, true, false, true, false);
      if (a.dtype->is_ptr()) {
        return Binary(BinaryOp::kAdd, PyValue::TensorValue(a),
                      PyValue::TensorValue(Minus(b)));
      }
      const OpCode code =
          a.dtype->is_floating() ? OpCode::kSubF : OpCode::kSubI;
      return Make(b_.Create1(code, {a.handle, b.handle}, a.handle->type()),
                  a.dtype, a.shape);
    }
    case BinaryOp::kMul: {
      auto [a, b] = CheckBinary(av, bv, false, false, true, false);
      const OpCode code =
          a.dtype->is_floating() ? OpCode::kMulF : OpCode::kMulI;
      return Make(b_.Create1(code, {a.handle, b.handle}, a.handle->type()),
                  a.dtype, a.shape);
    }
    case BinaryOp::kTrueDiv: {
      auto [a, b] = CheckBinary(av, bv, false, false, true, true);
      if (a.dtype->is_floating() && b.dtype->is_int()) {
        b = Cast(b, a.dtype);
      } else if (a.dtype->is_int() && b.dtype->is_floating()) {
        a = Cast(a, b.dtype);
      } else if (a.dtype->is_int() && b.dtype->is_int()) {
        a = Cast(a, DType::F32());
        b = Cast(b, DType::F32());
      } else if (a.dtype->is_floating() && b.dtype->is_floating()) {
        if (a.dtype->mantissa_bits() > b.dtype->mantissa_bits()) {
          b = Cast(b, a.dtype);
        } else {
          a = Cast(a, b.dtype);
        }
      } else {
        Fail("unexpected type " + a.dtype->Name());
      }
      return Make(
          b_.Create1(OpCode::kDivF, {a.handle, b.handle}, a.handle->type()),
          a.dtype, a.shape);
    }
    case BinaryOp::kFloorDiv: {
      auto [a, b] = CheckBinary(av, bv, false, false, true, true);
      if (a.dtype->is_int() && b.dtype->is_int()) {
        const DType* ret = IntegerPromote(a.dtype, b.dtype);
        a = Cast(a, ret);
        b = Cast(b, ret);
        const OpCode code =
            ret->is_int_signed() ? OpCode::kDivSI : OpCode::kDivUI;
        return Make(b_.Create1(code, {a.handle, b.handle}, a.handle->type()),
                    ret, a.shape);
      }
      Fail("unexpected type " + a.dtype->Name());
    }
    case BinaryOp::kMod: {
      auto [a, b] = CheckBinary(av, bv, false, false, true, true);
      if (a.dtype->is_floating()) {
        return Make(
            b_.Create1(OpCode::kRemF, {a.handle, b.handle}, a.handle->type()),
            a.dtype, a.shape);
      }
      if (a.dtype->is_int()) {
        if (a.dtype->is_int_signed() != b.dtype->is_int_signed()) {
          Fail("Cannot mod " + a.dtype->Name() + " by " + b.dtype->Name() +
               " because they have different signedness;this is unlikely to "
               "result in a useful answer. Cast them to the same signedness.");
        }
        const OpCode code =
            a.dtype->is_int_signed() ? OpCode::kRemSI : OpCode::kRemUI;
        return Make(b_.Create1(code, {a.handle, b.handle}, a.handle->type()),
                    a.dtype, a.shape);
      }
      Fail("unexpected type " + a.dtype->Name());
    }
    case BinaryOp::kAnd:
    case BinaryOp::kOr:
    case BinaryOp::kXor: {
      auto [a, b] = CheckBitwise(av, bv);
      const OpCode code = op == BinaryOp::kAnd  ? OpCode::kAndI
                          : op == BinaryOp::kOr ? OpCode::kOrI
                                                : OpCode::kXOrI;
      return Make(b_.Create1(code, {a.handle, b.handle}, a.handle->type()),
                  a.dtype, a.shape);
    }
    case BinaryOp::kShl:
    case BinaryOp::kShr: {
      auto [a, b] = CheckBitwise(av, bv);
      OpCode code = OpCode::kShLI;
      if (op == BinaryOp::kShr) {
        // As Triton's tensor.__rshift__ (__rrshift__ for a number on the
        // left): the tensor's own signedness, before the operands are
        // promoted, picks the arithmetic or the logical shift, so int8 >>
        // uint32 shifts arithmetically in uint32.
        const DType* own = av.is_tensor()   ? av.tensor().dtype
                           : bv.is_tensor() ? bv.tensor().dtype
                                            : a.dtype;
        code = own->is_int_signed() ? OpCode::kShRSI : OpCode::kShRUI;
      }
      return Make(b_.Create1(code, {a.handle, b.handle}, a.handle->type()),
                  a.dtype, a.shape);
    }
    case BinaryOp::kLt:
    case BinaryOp::kLe:
    case BinaryOp::kGt:
    case BinaryOp::kGe:
    case BinaryOp::kEq:
    case BinaryOp::kNe:
      return Compare(op, av, bv);
  }
  Fail("unknown binary operator");
}

Tensor Semantic::Minus(const Tensor& t) {
  if (t.dtype->is_ptr()) {
    Fail("wrong type argument to unary minus (" + t.dtype->Name() + ")");
  }
  const PyValue zero =
      t.dtype->is_floating() ? PyValue::Float(0) : PyValue::Int(0);
  return Binary(BinaryOp::kSub,
                PyValue::TensorValue(ScalarConstant(zero, t.dtype)),
                PyValue::TensorValue(t));
}

Tensor Semantic::Invert(const Tensor& t) {
  if (t.dtype->is_ptr() || t.dtype->is_floating()) {
    Fail("wrong type argument to unary invert (" + t.dtype->Name() + ")");
  }
  return Binary(
      BinaryOp::kXor, PyValue::TensorValue(t),
      PyValue::TensorValue(ScalarConstant(PyValue::Int(-1), t.dtype)));
}

Tensor Semantic::Not(const Tensor& t) {
  if (t.dtype->is_bool()) return Invert(t);
  if (t.dtype->is_floating()) Fail("unexpected type " + t.dtype->Name());
  return Binary(BinaryOp::kEq, PyValue::TensorValue(t), PyValue::Int(0));
}

Tensor Semantic::LogicalAnd(const PyValue& a, const PyValue& b) {
  Tensor x = ToTensor(a), y = ToTensor(b);
  if (!x.dtype->is_bool()) x = NotEqualZero(x);
  if (!y.dtype->is_bool()) y = NotEqualZero(y);
  return Binary(BinaryOp::kAnd, PyValue::TensorValue(x),
                PyValue::TensorValue(y));
}

Tensor Semantic::LogicalOr(const PyValue& a, const PyValue& b) {
  Tensor x = ToTensor(a), y = ToTensor(b);
  if (!x.dtype->is_bool()) x = NotEqualZero(x);
  if (!y.dtype->is_bool()) y = NotEqualZero(y);
  return Binary(BinaryOp::kOr, PyValue::TensorValue(x),
                PyValue::TensorValue(y));
}

Tensor Semantic::Where(const PyValue& cond_v, const PyValue& xv,
                       const PyValue& yv) {
  Tensor cond = ToTensor(cond_v);
  if (!cond.dtype->is_bool()) cond = Cast(cond, DType::Bool());
  auto [x, y] = CheckBinary(xv, yv, true, true, true, false);
  std::tie(cond, x) = Broadcast(cond, x);
  std::tie(x, y) = Broadcast(x, y);
  std::tie(cond, x) = Broadcast(cond, x);
  return Make(b_.Create1(ir::OpCode::kSelect, {cond.handle, x.handle, y.handle},
                         x.handle->type()),
              x.dtype, x.shape);
}

Tensor Semantic::MinMax(bool is_max, const PyValue& av, const PyValue& bv,
                        bool propagate_nan) {
  auto [a, b] = CheckBinary(av, bv, false, false, true, false);
  const DType* t = a.dtype;
  OpCode code;
  if (t->is_floating()) {
    code = is_max ? (propagate_nan ? OpCode::kMaximumF : OpCode::kMaxNumF)
                  : (propagate_nan ? OpCode::kMinimumF : OpCode::kMinNumF);
  } else if (t->is_int_signed()) {
    code = is_max ? OpCode::kMaxSI : OpCode::kMinSI;
  } else if (t->is_int_unsigned()) {
    code = is_max ? OpCode::kMaxUI : OpCode::kMinUI;
  } else {
    Fail(std::string("Unexpected dtype ") + t->Name());
  }
  return Make(b_.Create1(code, {a.handle, b.handle}, a.handle->type()), t,
              a.shape);
}

Tensor Semantic::Clamp(const PyValue& xv, const PyValue& lov,
                       const PyValue& hiv, bool propagate_nan) {
  auto [lo, hi] = CheckBinary(lov, hiv, false, false, true, false);
  auto [x, lo2] =
      CheckBinary(xv, PyValue::TensorValue(lo), false, false, true, false);
  auto [x2, hi2] =
      CheckBinary(PyValue::TensorValue(x), PyValue::TensorValue(hi), false,
                  false, true, false);
  if (!x2.dtype->is_floating()) {
    Fail("Unexpected dtype " + x2.dtype->Name() +
         ". Only floating point clamp is supported");
  }
  std::tie(x2, lo2) = Broadcast(x2, lo2);
  std::tie(x2, hi2) = Broadcast(x2, hi2);
  ir::Operation* op =
      b_.Create(OpCode::kClampF, {x2.handle, lo2.handle, hi2.handle},
                {x2.handle->type()});
  op->set_attr("propagateNan", std::string(propagate_nan ? "all" : "none"));
  return Make(op->result(), x2.dtype, x2.shape);
}

Tensor Semantic::MathUnary(ir::OpCode op, const PyValue& xv,
                           const std::vector<std::string>& allowed) {
  Tensor x = ToTensor(xv);
  if (!allowed.empty()) {
    bool ok = false;
    std::string list;
    for (const std::string& a : allowed) {
      ok |= x.dtype->Name() == a;
      list += (list.empty() ? "" : ", ") + ("'" + a + "'");
    }
    if (!ok) {
      Fail("Expected dtype [" + list + "] but got " + x.dtype->Name());
    }
  }
  return Make(b_.Create1(op, {x.handle}, x.handle->type()), x.dtype, x.shape);
}

Tensor Semantic::Abs(const PyValue& xv) {
  Tensor x = ToTensor(xv);
  if (x.dtype->is_floating()) {
    return Make(b_.Create1(OpCode::kAbsF, {x.handle}, x.handle->type()),
                x.dtype, x.shape);
  }
  if (x.dtype->is_int_signed()) {
    return Make(b_.Create1(OpCode::kAbsI, {x.handle}, x.handle->type()),
                x.dtype, x.shape);
  }
  if (x.dtype->is_int_unsigned()) return x;
  Fail("Unexpected dtype " + x.dtype->Name());
}

Tensor Semantic::Fma(const PyValue& xv, const PyValue& yv, const PyValue& zv) {
  auto [x, y] = CheckBinary(xv, yv, false, false, true, false);
  auto [z, x2] =
      CheckBinary(zv, PyValue::TensorValue(x), false, false, true, false);
  auto [z2, y2] = CheckBinary(PyValue::TensorValue(z), PyValue::TensorValue(y),
                              false, false, true, false);
  std::tie(x2, y2) = Broadcast(x2, y2);
  std::tie(x2, z2) = Broadcast(x2, z2);
  std::tie(y2, z2) = Broadcast(y2, z2);
  if (!x2.dtype->is_floating()) Fail("fma: expected floating-point operands");
  return Make(b_.Create1(OpCode::kFma, {x2.handle, y2.handle, z2.handle},
                         x2.handle->type()),
              x2.dtype, x2.shape);
}

Tensor Semantic::UMulHi(const PyValue& xv, const PyValue& yv) {
  auto [x, y] = CheckBinary(xv, yv, false, false, true, false);
  const std::string n = x.dtype->Name();
  if (n != "int32" && n != "int64" && n != "uint32" && n != "uint64") {
    Fail("Expected dtype ['int32', 'int64', 'uint32', 'uint64'] but got " + n);
  }
  return Make(
      b_.Create1(OpCode::kMulHiUI, {x.handle, y.handle}, x.handle->type()),
      x.dtype, x.shape);
}

Tensor Semantic::PreciseDiv(const PyValue& xv, const PyValue& yv) {
  auto [x, y] = CheckBinary(xv, yv, false, false, true, false);
  if (!x.dtype->is_fp32()) {
    Fail("Expected dtype ['fp32'] but got " + x.dtype->Name());
  }
  return Make(
      b_.Create1(OpCode::kPreciseDivF, {x.handle, y.handle}, x.handle->type()),
      x.dtype, x.shape);
}

Tensor Semantic::PreciseSqrt(const PyValue& xv) {
  Tensor x = ToTensor(xv);
  if (!x.dtype->is_fp32()) {
    Fail("Expected dtype ['fp32'] but got " + x.dtype->Name());
  }
  return Make(b_.Create1(OpCode::kPreciseSqrt, {x.handle}, x.handle->type()),
              x.dtype, x.shape);
}

}  // namespace mtlemu::triton::frontend
