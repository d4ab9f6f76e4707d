#include "compiler/triton/frontend/py_value.h"

#include <cmath>
#include <cstdio>

#include "compiler/triton/frontend/module_scope.h"

namespace mtlemu::triton::frontend {

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

const ir::Type* Tensor::IrType() const {
  return dtype->ToIr()->WithShape(shape);
}

PyValue PyValue::Bool(bool b) {
  PyValue v;
  v.kind_ = Kind::kBool;
  v.b_ = b;
  v.i_ = b ? 1 : 0;
  return v;
}

PyValue PyValue::Int(__int128 i) {
  PyValue v;
  v.kind_ = Kind::kInt;
  v.i_ = i;
  return v;
}

PyValue PyValue::Float(double f) {
  PyValue v;
  v.kind_ = Kind::kFloat;
  v.f_ = f;
  return v;
}

PyValue PyValue::String(std::string s) {
  PyValue v;
  v.kind_ = Kind::kString;
  v.s_ = std::move(s);
  return v;
}

PyValue PyValue::Tuple(std::vector<PyValue> items) {
  PyValue v;
  v.kind_ = Kind::kTuple;
  v.items_ = std::move(items);
  return v;
}

PyValue PyValue::DTypeValue(const DType* d) {
  PyValue v;
  v.kind_ = Kind::kDType;
  v.dtype_ = d;
  return v;
}

PyValue PyValue::TensorValue(Tensor t) {
  PyValue v;
  v.kind_ = Kind::kTensor;
  v.tensor_ = std::move(t);
  return v;
}

PyValue PyValue::Descriptor(TensorDescriptor d) {
  PyValue v;
  v.kind_ = Kind::kTensorDesc;
  v.desc_ = std::move(d);
  return v;
}

PyValue PyValue::Function(FunctionRef f) {
  PyValue v;
  v.kind_ = Kind::kFunction;
  v.function_ = f;
  return v;
}

PyValue PyValue::Builtin(BuiltinId id, std::optional<PyValue> self) {
  PyValue v;
  v.kind_ = Kind::kBuiltin;
  v.builtin_ = id;
  if (self) v.items_.push_back(std::move(*self));
  return v;
}

PyValue PyValue::Module(const ModuleScope* module) {
  PyValue v;
  v.kind_ = Kind::kModule;
  v.module_ = module;
  return v;
}

PyValue PyValue::Slice(std::optional<PyValue> lo, std::optional<PyValue> hi,
                       std::optional<PyValue> step) {
  PyValue v;
  v.kind_ = Kind::kSlice;
  int part = 0;
  for (auto* p : {&lo, &hi, &step}) {
    if (p->has_value()) v.slice_mask_ |= 1 << part;
    v.items_.push_back(p->has_value() ? **p : PyValue());
    ++part;
  }
  return v;
}

PyValue PyValue::Lambda(const py::LambdaExpr* lambda,
                        const ModuleScope* module) {
  PyValue v;
  v.kind_ = Kind::kLambda;
  v.lambda_ = lambda;
  v.module_ = module;
  return v;
}

PyValue PyValue::Enum(std::string name) {
  PyValue v;
  v.kind_ = Kind::kEnum;
  v.s_ = std::move(name);
  return v;
}

PyValue PyValue::BoundFunction(FunctionRef f, PyValue self) {
  PyValue v = Function(f);
  v.items_.push_back(std::move(self));
  return v;
}

PyValue PyValue::Range(PyValue lb, PyValue ub, PyValue step, bool is_static) {
  PyValue v;
  v.kind_ = Kind::kRange;
  v.items_ = {std::move(lb), std::move(ub), std::move(step)};
  v.b_ = is_static;
  return v;
}

PyValue PyValue::DTypeMethod(const DType* d, std::string name) {
  PyValue v;
  v.kind_ = Kind::kDTypeMethod;
  v.dtype_ = d;
  v.s_ = std::move(name);
  return v;
}

PyValue PyValue::Dict(std::vector<std::pair<std::string, PyValue>> entries) {
  PyValue v;
  v.kind_ = Kind::kDict;
  for (auto& [k, x] : entries) {
    v.keys_.push_back(k);
    v.items_.push_back(std::move(x));
  }
  return v;
}

const PyValue* PyValue::Lookup(const std::string& key) const {
  for (size_t i = 0; i < keys_.size(); ++i) {
    if (keys_[i] == key) return &items_[i];
  }
  return nullptr;
}

bool PyValue::is_constexpr() const {
  if (kind_ == Kind::kTensor || kind_ == Kind::kTensorDesc) return false;
  if (kind_ == Kind::kTuple || kind_ == Kind::kRange || kind_ == Kind::kDict) {
    for (const PyValue& v : items_) {
      if (!v.is_constexpr()) return false;
    }
  }
  return true;
}

double PyValue::as_float() const {
  if (kind_ == Kind::kFloat) return f_;
  return static_cast<double>(i_);
}

bool PyValue::Truthy() const {
  switch (kind_) {
    case Kind::kNone:
      return false;
    case Kind::kBool:
      return b_;
    case Kind::kInt:
      return i_ != 0;
    case Kind::kFloat:
      return f_ != 0;
    case Kind::kString:
      return !s_.empty();
    case Kind::kTuple:
      return !items_.empty();
    default:
      return true;
  }
}

namespace {

std::string IntText(__int128 v) {
  if (v == 0) return "0";
  const bool negative = v < 0;
  unsigned __int128 u = negative ? -static_cast<unsigned __int128>(v)
                                 : static_cast<unsigned __int128>(v);
  std::string s;
  while (u != 0) {
    s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  }
  return negative ? "-" + s : s;
}

std::string FloatText(double f) {
  if (std::isnan(f)) return "nan";
  if (std::isinf(f)) return f > 0 ? "inf" : "-inf";
  char buf[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, f);
    if (std::strtod(buf, nullptr) == f) break;
  }
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

}  // namespace

std::string PyValue::Repr() const {
  switch (kind_) {
    case Kind::kNone:
      return "None";
    case Kind::kBool:
      return b_ ? "True" : "False";
    case Kind::kInt:
      return IntText(i_);
    case Kind::kFloat:
      return FloatText(f_);
    case Kind::kString:
      return "'" + s_ + "'";
    case Kind::kTuple: {
      std::string s = "(";
      for (size_t i = 0; i < items_.size(); ++i) {
        s += (i ? ", " : "") + items_[i].Repr();
      }
      if (items_.size() == 1) s += ",";
      return s + ")";
    }
    case Kind::kDType:
      return dtype_->Name();
    case Kind::kTensor: {
      std::string s = tensor_.dtype->Name();
      if (tensor_.is_block()) {
        s += "[";
        for (size_t i = 0; i < tensor_.shape.size(); ++i) {
          s += (i ? ", " : "") + std::to_string(tensor_.shape[i]);
        }
        s += "]";
      }
      return s;
    }
    case Kind::kTensorDesc:
      return "tensor_descriptor<" + desc_.element->Name() + ">";
    case Kind::kFunction:
      return "<jit function>";
    case Kind::kBuiltin:
      return "<builtin>";
    case Kind::kModule:
      return "<module " + (module_ ? module_->name() : std::string()) + ">";
    case Kind::kSlice:
      return "slice";
    case Kind::kLambda:
      return "<lambda>";
    case Kind::kEnum:
      return s_;
    case Kind::kRange:
      return "range(" + items_[0].Repr() + ", " + items_[1].Repr() + ", " +
             items_[2].Repr() + ")";
    case Kind::kDTypeMethod:
      return "<method " + s_ + ">";
    case Kind::kDict: {
      std::string s = "{";
      for (size_t i = 0; i < keys_.size(); ++i) {
        s += (i ? ", '" : "'") + keys_[i] + "': " + items_[i].Repr();
      }
      return s + "}";
    }
  }
  return "?";
}

bool PyValue::Equals(const PyValue& o) const {
  if (is_number() && o.is_number()) {
    if (kind_ == Kind::kFloat || o.kind_ == Kind::kFloat) {
      return as_float() == o.as_float();
    }
    return i_ == o.i_;
  }
  if (kind_ != o.kind_) return false;
  switch (kind_) {
    case Kind::kNone:
      return true;
    case Kind::kString:
    case Kind::kEnum:
      return s_ == o.s_;
    case Kind::kDType:
      return dtype_ == o.dtype_;
    case Kind::kTuple:
      if (items_.size() != o.items_.size()) return false;
      for (size_t i = 0; i < items_.size(); ++i) {
        if (!items_[i].Equals(o.items_[i])) return false;
      }
      return true;
    case Kind::kFunction:
      return function_.def == o.function_.def;
    case Kind::kModule:
      return module_ == o.module_;
    case Kind::kBuiltin:
      return builtin_ == o.builtin_;
    default:
      return false;
  }
}

std::string PyValue::TypeName() const {
  switch (kind_) {
    case Kind::kNone:
      return "NoneType";
    case Kind::kBool:
      return "bool";
    case Kind::kInt:
      return "int";
    case Kind::kFloat:
      return "float";
    case Kind::kString:
      return "str";
    case Kind::kTuple:
      return "tuple";
    case Kind::kDType:
      return "dtype";
    case Kind::kTensor:
      return "tensor";
    case Kind::kTensorDesc:
      return "tensor_descriptor";
    case Kind::kFunction:
      return "function";
    case Kind::kBuiltin:
      return "builtin_function";
    case Kind::kModule:
      return "module";
    case Kind::kSlice:
      return "slice";
    case Kind::kLambda:
      return "function";
    case Kind::kEnum:
      return "enum";
    case Kind::kRange:
      return "range";
    case Kind::kDTypeMethod:
      return "method";
    case Kind::kDict:
      return "dict";
  }
  return "?";
}

}  // namespace mtlemu::triton::frontend
