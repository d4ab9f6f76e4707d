// What a Python name or expression stands for while a jit function is
// generated: a compile-time value (Triton's constexpr: None, bool, int,
// float, str, a dtype, a tuple, a function, a module, a builtin) or a
// tensor (an IR value with its dtype and shape; a scalar is a tensor of
// shape ()). Arithmetic on compile-time values folds with Python's own
// rules; on tensors it builds IR with Triton's (semantic.h).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/triton/frontend/dtype.h"
#include "compiler/triton/ir/ir.h"

namespace mtlemu::triton::py {
struct FunctionDefStmt;
struct LambdaExpr;
}  // namespace mtlemu::triton::py

namespace mtlemu::triton::frontend {

class ModuleScope;
enum class BuiltinId : int;

// A jit function (or a constexpr_function, evaluated at compile time).
struct FunctionRef {
  const py::FunctionDefStmt* def = nullptr;
  const ModuleScope* module = nullptr;  // whose globals it sees
  bool jit = true;                      // false: @constexpr_function
  bool noinline = false;  // @triton.jit(noinline=True): still inlined here
};

// A tensor: an IR value of dtype `dtype` and shape `shape` (empty for a
// scalar). Block pointers and tensor descriptors are scalars of their
// pointer dtype.
struct Tensor {
  ir::Value* handle = nullptr;
  const DType* dtype = nullptr;
  std::vector<int64_t> shape;

  bool is_block() const { return !shape.empty(); }
  int64_t numel() const;
  // The IR type: dtype's in shape.
  const ir::Type* IrType() const;
};

// A tensor descriptor (tl.make_tensor_descriptor): the IR handle and the
// block it loads and stores.
struct TensorDescriptor {
  ir::Value* handle = nullptr;
  const DType* element = nullptr;
  std::vector<int64_t> block_shape;
  int rank = 0;
};

class PyValue {
 public:
  enum class Kind {
    kNone,
    kBool,
    kInt,
    kFloat,
    kString,
    kTuple,  // also Python lists, read-only
    kDType,
    kTensor,
    kTensorDesc,
    kFunction,     // a jit function
    kBuiltin,      // a tl.* builtin, a Python builtin, or a bound method
    kModule,       // tl, triton, a user module
    kSlice,        // a[lo:hi:step] inside a subscript
    kLambda,       // a Python lambda (heuristics)
    kEnum,         // tl.PropagateNan.ALL and such: a name
    kRange,        // range(...) / tl.range(...) / tl.static_range(...)
    kDTypeMethod,  // dtype.is_floating and such, before the call
    kDict,         // a dict of compile-time values with string keys (Config
                   // kwargs, the `args` of a heuristic)
  };

  PyValue() = default;
  static PyValue None() { return PyValue(); }
  static PyValue Bool(bool b);
  static PyValue Int(__int128 i);
  static PyValue Float(double f);
  static PyValue String(std::string s);
  static PyValue Tuple(std::vector<PyValue> items);
  static PyValue DTypeValue(const DType* d);
  static PyValue TensorValue(Tensor t);
  static PyValue Descriptor(TensorDescriptor d);
  static PyValue Function(FunctionRef f);
  static PyValue Builtin(BuiltinId id, std::optional<PyValue> self = {});
  static PyValue Module(const ModuleScope* module);
  static PyValue Slice(std::optional<PyValue> lo, std::optional<PyValue> hi,
                       std::optional<PyValue> step);
  static PyValue Lambda(const py::LambdaExpr* lambda,
                        const ModuleScope* module);
  static PyValue Enum(std::string name);
  // Triton's constexpr_type(v), the type of a tl.constexpr: equal for equal
  // values (an enum named by the value).
  static PyValue ConstexprType(const PyValue& v) {
    return Enum("constexpr_type[" + v.Repr() + "]");
  }
  // A jit function bound to the tensor it was looked up on (x.sum).
  static PyValue BoundFunction(FunctionRef f, PyValue self);
  // range(lb, ub, step); `is_static` for tl.static_range.
  static PyValue Range(PyValue lb, PyValue ub, PyValue step, bool is_static);
  static PyValue DTypeMethod(const DType* d, std::string name);
  static PyValue Dict(std::vector<std::pair<std::string, PyValue>> entries);

  Kind kind() const { return kind_; }
  bool is(Kind k) const { return kind_ == k; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_tensor() const { return kind_ == Kind::kTensor; }
  // A compile-time value (Triton's constexpr): anything but a tensor or a
  // descriptor, and tuples of such.
  bool is_constexpr() const;
  // bool, int or float.
  bool is_number() const {
    return kind_ == Kind::kBool || kind_ == Kind::kInt || kind_ == Kind::kFloat;
  }

  bool as_bool() const { return b_; }
  __int128 as_int() const { return i_; }  // also bools (0/1)
  double as_float() const;                // bools, ints and floats
  const std::string& as_string() const { return s_; }
  const std::vector<PyValue>& items() const { return items_; }
  const DType* dtype() const { return dtype_; }
  const Tensor& tensor() const { return tensor_; }
  Tensor& tensor() { return tensor_; }
  const TensorDescriptor& descriptor() const { return desc_; }
  const FunctionRef& function() const { return function_; }
  BuiltinId builtin() const { return builtin_; }
  // The object a bound method was looked up on (x in x.to(...)).
  const PyValue* self() const { return items_.empty() ? nullptr : &items_[0]; }
  const ModuleScope* module() const { return module_; }
  const py::LambdaExpr* lambda() const { return lambda_; }
  // kDict: keys() and items() in insertion order; Lookup(key) or null.
  const std::vector<std::string>& keys() const { return keys_; }
  const PyValue* Lookup(const std::string& key) const;
  // kRange: items() holds lb, ub, step.
  bool range_is_static() const { return b_; }
  // Slice parts: items() holds lo, hi, step; `slice_has` says which exist.
  bool slice_has(int part) const { return (slice_mask_ >> part) & 1; }

  // Python's truth value of a compile-time value.
  bool Truthy() const;
  // Python's repr, for messages and static_print: 3, 2.5, 'text',
  // (1, 2), int32, a tensor as "tensor<fp32[128]>".
  std::string Repr() const;
  // Python's == on compile-time values.
  bool Equals(const PyValue& other) const;
  // A short name of the kind, for messages: "int", "tensor", "function".
  std::string TypeName() const;

 private:
  Kind kind_ = Kind::kNone;
  bool b_ = false;
  __int128 i_ = 0;
  double f_ = 0;
  std::string s_;
  std::vector<PyValue> items_;
  const DType* dtype_ = nullptr;
  Tensor tensor_;
  TensorDescriptor desc_;
  FunctionRef function_;
  BuiltinId builtin_{};
  const ModuleScope* module_ = nullptr;
  const py::LambdaExpr* lambda_ = nullptr;
  int slice_mask_ = 0;
  std::vector<std::string> keys_;
};

}  // namespace mtlemu::triton::frontend
