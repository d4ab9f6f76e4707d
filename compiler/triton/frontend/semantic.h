// Triton's typing rules for tensors, building block IR: implicit
// promotion (integer promotion as in C, bool < integer < float, Python
// numbers that do not raise a tensor's kind), broadcasting, pointer
// arithmetic, casts, and the arithmetic, comparison and bitwise operators.
// Follows triton/language/semantic.py (Triton 3.x) rule for rule, with its
// error messages; a type error throws CompileError (compile_error.h).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compiler/triton/frontend/py_value.h"
#include "compiler/triton/ir/ir.h"

namespace mtlemu::triton::frontend {

enum class BinaryOp {
  kAdd,
  kSub,
  kMul,
  kTrueDiv,
  kFloorDiv,
  kMod,
  kAnd,
  kOr,
  kXor,
  kShl,
  kShr,
  kLt,
  kLe,
  kGt,
  kGe,
  kEq,
  kNe,
};

class Semantic {
 public:
  explicit Semantic(ir::Builder& builder) : b_(builder) {}
  ir::Builder& builder() { return b_; }

  // --- constants
  // --------------------------------------------------------------- A Python
  // number as a tensor: bool -> int1, int -> int32 (uint32, int64, uint64 when
  // it does not fit), float -> fp32 (fp64 outside fp32's range).
  Tensor ToTensor(const PyValue& v);
  // The dtype ToTensor gives a number, without making it.
  static const DType* DTypeOfNumber(const PyValue& v);
  // A number (or a tensor) as a scalar or tensor of `dtype`.
  Tensor ScalarConstant(const PyValue& v, const DType* dtype);
  Tensor Full(const std::vector<int64_t>& shape, const PyValue& v,
              const DType* dtype);
  // A tensor of any value: numbers convert with ToTensor.
  Tensor AsTensor(const PyValue& v);

  // --- shapes
  // ------------------------------------------------------------------
  Tensor Splat(const Tensor& scalar, const std::vector<int64_t>& shape);
  Tensor BroadcastTo(const Tensor& t, const std::vector<int64_t>& shape);
  // Both to their common shape (numpy rules, sizes 1 stretch).
  std::pair<Tensor, Tensor> Broadcast(Tensor a, Tensor b);
  Tensor ExpandDims(const Tensor& t, int axis);
  Tensor Reshape(const Tensor& t, const std::vector<int64_t>& shape,
                 bool can_reorder);
  Tensor Permute(const Tensor& t, const std::vector<int>& order);
  Tensor MakeRange(int64_t start, int64_t end);

  // --- types
  // ------------------------------------------------------------------- tl.cast
  // / x.to: value conversion, as semantic.cast.
  Tensor Cast(const Tensor& t, const DType* dst,
              const std::string& fp_downcast_rounding = "");
  // Reinterpreting bits (same width), as semantic.bitcast.
  Tensor Bitcast(const Tensor& t, const DType* dst);
  // The type two operands compute in (semantic.computation_type_impl).
  const DType* ComputationType(const DType* a, bool a_is_scalar, const DType* b,
                               bool b_is_scalar, bool div_or_mod);
  static const DType* IntegerPromote(const DType* a, const DType* b);

  // --- operators
  // --------------------------------------------------------------- `a op b`
  // where at least one is a tensor (the other may be a number).
  Tensor Binary(BinaryOp op, const PyValue& a, const PyValue& b);
  Tensor Minus(const Tensor& t);
  Tensor Invert(const Tensor& t);
  Tensor Not(const Tensor& t);
  Tensor LogicalAnd(const PyValue& a, const PyValue& b);
  Tensor LogicalOr(const PyValue& a, const PyValue& b);
  Tensor Where(const PyValue& cond, const PyValue& x, const PyValue& y);
  // tl.maximum / tl.minimum; `propagate_nan` is PropagateNan.ALL.
  Tensor MinMax(bool is_max, const PyValue& a, const PyValue& b,
                bool propagate_nan);
  Tensor Clamp(const PyValue& x, const PyValue& lo, const PyValue& hi,
               bool propagate_nan);
  // A float unary math op (exp, log, sqrt...) on x; `allowed` lists the
  // dtypes Triton accepts ("fp32", "fp64"...; empty: any float).
  Tensor MathUnary(ir::OpCode op, const PyValue& x,
                   const std::vector<std::string>& allowed = {});
  Tensor Abs(const PyValue& x);
  Tensor Fma(const PyValue& x, const PyValue& y, const PyValue& z);
  Tensor UMulHi(const PyValue& x, const PyValue& y);
  Tensor PreciseDiv(const PyValue& x, const PyValue& y);
  Tensor PreciseSqrt(const PyValue& x);

  // An element of `t` compared with zero (int and pointer types) or 0.0.
  Tensor NotEqualZero(const Tensor& t);

  // The Triton name of a value's type for messages: "fp32", "pointer<fp16>",
  // with the block shape when it has one.
  static std::string TypeText(const Tensor& t);

 private:
  Tensor Make(ir::Value* v, const DType* dtype,
              const std::vector<int64_t>& shape);
  // binary_op_type_checking_impl: converts numbers, promotes, broadcasts.
  std::pair<Tensor, Tensor> CheckBinary(const PyValue& a, const PyValue& b,
                                        bool allow_a_ptr, bool allow_b_ptr,
                                        bool arithmetic_check, bool div_or_mod);
  std::pair<Tensor, Tensor> CheckBitwise(const PyValue& a, const PyValue& b);
  Tensor Compare(BinaryOp op, const PyValue& a, const PyValue& b);
  Tensor IntCast(const Tensor& t, const DType* dst);

  ir::Builder& b_;
};

}  // namespace mtlemu::triton::frontend
