// Expressions: names, constants, operators (folded on compile-time values,
// Triton's semantics on tensors), attributes, subscripts, tuples.
#include <cmath>

#include "compiler/triton/frontend/builtins.h"
#include "compiler/triton/frontend/codegen.h"
#include "compiler/triton/frontend/compilation.h"
#include "compiler/triton/frontend/module_scope.h"

namespace mtlemu::triton::frontend {
namespace {

using py::BinOpKind;
using py::CmpOpKind;

// Python's floor division and modulo on integers.
__int128 FloorDiv(__int128 a, __int128 b) {
  __int128 q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
__int128 FloorMod(__int128 a, __int128 b) {
  __int128 r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

bool IsIntLike(const PyValue& v) {
  return v.is(PyValue::Kind::kInt) || v.is(PyValue::Kind::kBool);
}

std::optional<BinaryOp> TensorOp(BinOpKind op) {
  switch (op) {
    case BinOpKind::kAdd:
      return BinaryOp::kAdd;
    case BinOpKind::kSub:
      return BinaryOp::kSub;
    case BinOpKind::kMult:
      return BinaryOp::kMul;
    case BinOpKind::kDiv:
      return BinaryOp::kTrueDiv;
    case BinOpKind::kFloorDiv:
      return BinaryOp::kFloorDiv;
    case BinOpKind::kMod:
      return BinaryOp::kMod;
    case BinOpKind::kBitAnd:
      return BinaryOp::kAnd;
    case BinOpKind::kBitOr:
      return BinaryOp::kOr;
    case BinOpKind::kBitXor:
      return BinaryOp::kXor;
    case BinOpKind::kLShift:
      return BinaryOp::kShl;
    case BinOpKind::kRShift:
      return BinaryOp::kShr;
    default:
      return std::nullopt;
  }
}

// A dtype's attributes and methods (x.dtype.is_floating(), .element_ty).
std::optional<PyValue> DTypeAttribute(const DType* d, const std::string& n) {
  if (n == "element_ty") {
    if (!d->is_ptr()) Fail("'" + d->Name() + "' has no attribute 'element_ty'");
    return PyValue::DTypeValue(d->element());
  }
  if (n == "primitive_bitwidth") return PyValue::Int(d->bits());
  if (n == "int_bitwidth") {
    if (!d->is_int())
      Fail("'" + d->Name() + "' has no attribute 'int_bitwidth'");
    return PyValue::Int(d->bits());
  }
  if (n == "int_signedness") {
    if (!d->is_int())
      Fail("'" + d->Name() + "' has no attribute 'int_signedness'");
    return PyValue::Int(d->is_int_signed() ? 0 : 1);  // dtype.SIGNEDNESS
  }
  if (n == "itemsize") return PyValue::Int(d->bits() / 8);
  if (n == "fp_mantissa_width" || n == "exponent_bias") {
    if (!d->is_floating()) {
      Fail("'" + d->Name() + "' has no attribute '" + n + "'");
    }
    // Both from the one table of encodings (ir::FloatEncodingOf).
    return PyValue::Int(n == "fp_mantissa_width" ? d->mantissa_bits()
                                                 : d->exponent_bias());
  }
  if (n == "name" || n == "cache_key_part") return PyValue::String(d->Name());
  if (n == "scalar") return PyValue::DTypeValue(d);
  if (n == "address_space") return PyValue::Int(d->address_space());
  if (n.rfind("is_", 0) == 0 || n == "to_ir" || n == "kind" ||
      n == "get_int_max_value" || n == "get_int_min_value" ||
      n == "codegen_name") {
    return PyValue::DTypeMethod(d, n);
  }
  return std::nullopt;
}

}  // namespace

PyValue CodeGen::Eval(const py::Expr& e, Frame& frame) {
  SetLoc(e.loc, frame);
  try {
    switch (e.kind) {
      case py::ExprKind::kName:
        return EvalName(static_cast<const py::NameExpr&>(e), frame);
      case py::ExprKind::kConstant: {
        const auto& c = static_cast<const py::ConstantExpr&>(e);
        switch (c.type) {
          case py::ConstantExpr::Type::kNone:
            return PyValue::None();
          case py::ConstantExpr::Type::kBool:
            return PyValue::Bool(c.bool_value);
          case py::ConstantExpr::Type::kInt:
            if (c.int_overflow) Fail("integer literal too large");
            return PyValue::Int(static_cast<__int128>(c.int_value));
          case py::ConstantExpr::Type::kFloat:
            if (c.imaginary) Fail("complex numbers are not supported");
            return PyValue::Float(c.float_value);
          case py::ConstantExpr::Type::kString:
            return PyValue::String(c.string_value);
          case py::ConstantExpr::Type::kBytes:
            Fail("bytes literals are not supported");
          case py::ConstantExpr::Type::kEllipsis:
            return PyValue::Enum("Ellipsis");
        }
        Fail("unknown constant");
      }
      case py::ExprKind::kBinOp:
        return EvalBinOp(static_cast<const py::BinOpExpr&>(e), frame);
      case py::ExprKind::kUnaryOp:
        return EvalUnary(static_cast<const py::UnaryOpExpr&>(e), frame);
      case py::ExprKind::kCompare:
        return EvalCompare(static_cast<const py::CompareExpr&>(e), frame);
      case py::ExprKind::kBoolOp:
        return EvalBoolOp(static_cast<const py::BoolOpExpr&>(e), frame);
      case py::ExprKind::kIfExp:
        return EvalIfExp(static_cast<const py::IfExpExpr&>(e), frame);
      case py::ExprKind::kCall:
        return EvalCall(static_cast<const py::CallExpr&>(e), frame);
      case py::ExprKind::kAttribute:
        return EvalAttribute(static_cast<const py::AttributeExpr&>(e), frame);
      case py::ExprKind::kSubscript:
        return EvalSubscript(static_cast<const py::SubscriptExpr&>(e), frame);
      case py::ExprKind::kTuple:
      case py::ExprKind::kList: {
        const auto& elts = e.kind == py::ExprKind::kTuple
                               ? static_cast<const py::TupleExpr&>(e).elts
                               : static_cast<const py::ListExpr&>(e).elts;
        std::vector<PyValue> items;
        for (const py::ExprPtr& x : elts) {
          if (const auto* st = py::As<py::StarredExpr>(x.get())) {
            PyValue v = Eval(*st->value, frame);
            if (!v.is(PyValue::Kind::kTuple)) {
              Fail("cannot unpack a value of type " + v.TypeName());
            }
            for (const PyValue& i : v.items()) items.push_back(i);
          } else {
            items.push_back(Eval(*x, frame));
          }
        }
        return PyValue::Tuple(std::move(items));
      }
      case py::ExprKind::kLambda:
        return PyValue::Lambda(static_cast<const py::LambdaExpr*>(&e),
                               frame.module);
      case py::ExprKind::kJoinedStr: {
        const auto& j = static_cast<const py::JoinedStrExpr&>(e);
        std::string out;
        for (const py::ExprPtr& part : j.values) {
          if (const auto* c = py::As<py::ConstantExpr>(part.get())) {
            out += c->string_value;
            continue;
          }
          const auto* f = py::As<py::FormattedValueExpr>(part.get());
          if (f == nullptr) continue;
          PyValue v = Eval(*f->value, frame);
          if (!v.is_constexpr()) {
            Fail(
                "an f-string can only format compile-time values in a "
                "Triton kernel");
          }
          out += v.is(PyValue::Kind::kString) && f->conversion != 'r'
                     ? v.as_string()
                     : v.Repr();
        }
        return PyValue::String(out);
      }
      case py::ExprKind::kSlice: {
        const auto& s = static_cast<const py::SliceExpr&>(e);
        auto part = [&](const py::ExprPtr& p) -> std::optional<PyValue> {
          if (!p) return std::nullopt;
          return Eval(*p, frame);
        };
        return PyValue::Slice(part(s.lower), part(s.upper), part(s.step));
      }
      case py::ExprKind::kStarred:
        Fail("can't use starred expression here");
      case py::ExprKind::kDict: {
        // Only compile-time dicts with string keys (autotune configs,
        // heuristics): kernels themselves have no dicts in Triton.
        const auto& d = static_cast<const py::DictExpr&>(e);
        std::vector<std::pair<std::string, PyValue>> entries;
        for (size_t i = 0; i < d.keys.size(); ++i) {
          if (!d.keys[i]) Fail("unsupported: ** in a dict");
          PyValue k = Eval(*d.keys[i], frame);
          if (!k.is(PyValue::Kind::kString))
            Fail("unsupported: a dict key that is not a string");
          entries.emplace_back(k.as_string(), Eval(*d.values[i], frame));
        }
        return PyValue::Dict(std::move(entries));
      }
      case py::ExprKind::kListComp:
        Fail("unsupported AST node type: ListComp");
      case py::ExprKind::kGeneratorExp:
        Fail("unsupported AST node type: GeneratorExp");
      case py::ExprKind::kFormattedValue:
        Fail("unsupported AST node type: FormattedValue");
    }
    Fail("unsupported expression");
  } catch (CompileError& err) {
    if (!err.loc.known()) err.loc = loc_.known() ? loc_ : e.loc;
    throw;
  }
}

PyValue CodeGen::EvalName(const py::NameExpr& e, Frame& frame) {
  if (auto it = frame.locals.find(e.id); it != frame.locals.end()) {
    return it->second;
  }
  if (frame.module != nullptr) {
    if (std::optional<PyValue> v =
            compilation_.LookupGlobal(frame.module, e.id, e.loc)) {
      return *v;
    }
  }
  if (std::optional<BuiltinId> id = FindBuiltin(kPython, e.id)) {
    return PyValue::Builtin(*id);
  }
  Fail("name '" + e.id + "' is not defined");
}

// --- operators
// ---------------------------------------------------------------------

std::optional<PyValue> CodeGen::FoldBinary(BinOpKind op, const PyValue& a,
                                           const PyValue& b) {
  if (!a.is_constexpr() || !b.is_constexpr()) return std::nullopt;
  if (a.is(PyValue::Kind::kString) && b.is(PyValue::Kind::kString) &&
      op == BinOpKind::kAdd) {
    return PyValue::String(a.as_string() + b.as_string());
  }
  if (a.is(PyValue::Kind::kTuple) && b.is(PyValue::Kind::kTuple) &&
      op == BinOpKind::kAdd) {
    std::vector<PyValue> items = a.items();
    for (const PyValue& v : b.items()) items.push_back(v);
    return PyValue::Tuple(std::move(items));
  }
  if (a.is(PyValue::Kind::kTuple) && IsIntLike(b) && op == BinOpKind::kMult) {
    std::vector<PyValue> items;
    for (__int128 i = 0; i < b.as_int(); ++i) {
      for (const PyValue& v : a.items()) items.push_back(v);
    }
    return PyValue::Tuple(std::move(items));
  }
  if (!a.is_number() || !b.is_number()) {
    Fail("unsupported operand type(s) for " + std::string(py::Spelling(op)) +
         ": '" + a.TypeName() + "' and '" + b.TypeName() + "'");
  }
  const bool ints = IsIntLike(a) && IsIntLike(b);
  if (ints) {
    const __int128 x = a.as_int(), y = b.as_int();
    switch (op) {
      case BinOpKind::kAdd:
        return PyValue::Int(x + y);
      case BinOpKind::kSub:
        return PyValue::Int(x - y);
      case BinOpKind::kMult:
        return PyValue::Int(x * y);
      case BinOpKind::kDiv:
        if (y == 0) Fail("ZeroDivisionError: division by zero");
        return PyValue::Float(static_cast<double>(x) / static_cast<double>(y));
      case BinOpKind::kFloorDiv:
        if (y == 0)
          Fail("ZeroDivisionError: integer division or modulo by zero");
        return PyValue::Int(FloorDiv(x, y));
      case BinOpKind::kMod:
        if (y == 0)
          Fail("ZeroDivisionError: integer division or modulo by zero");
        return PyValue::Int(FloorMod(x, y));
      case BinOpKind::kPow: {
        if (y < 0) {
          return PyValue::Float(
              std::pow(static_cast<double>(x), static_cast<double>(y)));
        }
        __int128 r = 1;
        for (__int128 i = 0; i < y; ++i) {
          r *= x;
          if (r > (static_cast<__int128>(1) << 100) ||
              r < -(static_cast<__int128>(1) << 100)) {
            Fail("integer overflow in a compile-time constant");
          }
        }
        return PyValue::Int(r);
      }
      case BinOpKind::kLShift:
        if (y < 0) Fail("ValueError: negative shift count");
        if (y > 100) Fail("integer overflow in a compile-time constant");
        return PyValue::Int(x << static_cast<int>(y));
      case BinOpKind::kRShift:
        if (y < 0) Fail("ValueError: negative shift count");
        return PyValue::Int(y > 126 ? (x < 0 ? -1 : 0)
                                    : x >> static_cast<int>(y));
      case BinOpKind::kBitAnd:
        if (a.is(PyValue::Kind::kBool) && b.is(PyValue::Kind::kBool)) {
          return PyValue::Bool(a.as_bool() && b.as_bool());
        }
        return PyValue::Int(x & y);
      case BinOpKind::kBitOr:
        if (a.is(PyValue::Kind::kBool) && b.is(PyValue::Kind::kBool)) {
          return PyValue::Bool(a.as_bool() || b.as_bool());
        }
        return PyValue::Int(x | y);
      case BinOpKind::kBitXor:
        if (a.is(PyValue::Kind::kBool) && b.is(PyValue::Kind::kBool)) {
          return PyValue::Bool(a.as_bool() != b.as_bool());
        }
        return PyValue::Int(x ^ y);
      case BinOpKind::kMatMult:
        Fail("unsupported operand type(s) for @: 'int' and 'int'");
    }
  }
  const double x = a.as_float(), y = b.as_float();
  switch (op) {
    case BinOpKind::kAdd:
      return PyValue::Float(x + y);
    case BinOpKind::kSub:
      return PyValue::Float(x - y);
    case BinOpKind::kMult:
      return PyValue::Float(x * y);
    case BinOpKind::kDiv:
      if (y == 0) Fail("ZeroDivisionError: float division by zero");
      return PyValue::Float(x / y);
    case BinOpKind::kFloorDiv:
      if (y == 0) Fail("ZeroDivisionError: float floor division by zero");
      return PyValue::Float(std::floor(x / y));
    case BinOpKind::kMod: {
      if (y == 0) Fail("ZeroDivisionError: float modulo");
      double r = std::fmod(x, y);
      if (r != 0 && ((r < 0) != (y < 0))) r += y;
      return PyValue::Float(r);
    }
    case BinOpKind::kPow:
      return PyValue::Float(std::pow(x, y));
    default:
      Fail("unsupported operand type(s) for " + std::string(py::Spelling(op)) +
           ": '" + a.TypeName() + "' and '" + b.TypeName() + "'");
  }
}

PyValue CodeGen::BinaryOp(BinOpKind op, const PyValue& a, const PyValue& b) {
  if (std::optional<PyValue> folded = FoldBinary(op, a, b)) return *folded;
  if (!a.is_tensor() && !b.is_tensor()) {
    Fail("unsupported operand type(s) for " + std::string(py::Spelling(op)) +
         ": '" + a.TypeName() + "' and '" + b.TypeName() + "'");
  }
  std::optional<frontend::BinaryOp> t = TensorOp(op);
  if (!t) {
    if (op == BinOpKind::kPow) {
      Fail(
          "the ** operator is not supported on tensors; use "
          "libdevice.pow");
    }
    Fail(std::string("unsupported operator ") + py::Spelling(op) +
         " on tensors (use tl.dot for matrix products)");
  }
  return PyValue::TensorValue(semantic().Binary(*t, a, b));
}

PyValue CodeGen::EvalBinOp(const py::BinOpExpr& e, Frame& frame) {
  PyValue a = Eval(*e.left, frame);
  PyValue b = Eval(*e.right, frame);
  SetLoc(e.loc, frame);
  return BinaryOp(e.op, a, b);
}

PyValue CodeGen::EvalUnary(const py::UnaryOpExpr& e, Frame& frame) {
  PyValue v = Eval(*e.operand, frame);
  SetLoc(e.loc, frame);
  if (v.is_constexpr()) {
    switch (e.op) {
      case py::UnaryOpKind::kNot:
        return PyValue::Bool(!v.Truthy());
      case py::UnaryOpKind::kUAdd:
        if (!v.is_number()) break;
        return v.is(PyValue::Kind::kBool) ? PyValue::Int(v.as_int()) : v;
      case py::UnaryOpKind::kUSub:
        if (!v.is_number()) break;
        return v.is(PyValue::Kind::kFloat) ? PyValue::Float(-v.as_float())
                                           : PyValue::Int(-v.as_int());
      case py::UnaryOpKind::kInvert:
        if (!IsIntLike(v)) break;
        return PyValue::Int(~v.as_int());
    }
    Fail(std::string("bad operand type for unary ") + py::Spelling(e.op) +
         ": '" + v.TypeName() + "'");
  }
  if (!v.is_tensor()) {
    Fail(std::string("bad operand type for unary ") + py::Spelling(e.op) +
         ": '" + v.TypeName() + "'");
  }
  switch (e.op) {
    case py::UnaryOpKind::kNot:
      return PyValue::TensorValue(semantic().Not(v.tensor()));
    case py::UnaryOpKind::kUAdd:
      return v;
    case py::UnaryOpKind::kUSub:
      return PyValue::TensorValue(semantic().Minus(v.tensor()));
    case py::UnaryOpKind::kInvert:
      return PyValue::TensorValue(semantic().Invert(v.tensor()));
  }
  Fail("unknown unary operator");
}

PyValue CodeGen::CompareOp(CmpOpKind op, const PyValue& a, const PyValue& b) {
  if (op == CmpOpKind::kIs || op == CmpOpKind::kIsNot) {
    bool same;
    if (a.is_tensor() || b.is_tensor()) {
      same = a.is_tensor() && b.is_tensor() &&
             a.tensor().handle == b.tensor().handle;
    } else {
      same = a.kind() == b.kind() && a.Equals(b);
    }
    return PyValue::Bool(op == CmpOpKind::kIs ? same : !same);
  }
  if (op == CmpOpKind::kIn || op == CmpOpKind::kNotIn) {
    bool found = false;
    if (b.is(PyValue::Kind::kTuple)) {
      for (const PyValue& v : b.items()) found |= v.Equals(a);
    } else if (b.is(PyValue::Kind::kString) && a.is(PyValue::Kind::kString)) {
      found = b.as_string().find(a.as_string()) != std::string::npos;
    } else {
      Fail("argument of type '" + b.TypeName() + "' is not iterable");
    }
    return PyValue::Bool(op == CmpOpKind::kIn ? found : !found);
  }
  if (a.is_constexpr() && b.is_constexpr()) {
    if (op == CmpOpKind::kEq) return PyValue::Bool(a.Equals(b));
    if (op == CmpOpKind::kNotEq) return PyValue::Bool(!a.Equals(b));
    int c = 0;
    if (a.is_number() && b.is_number()) {
      if (IsIntLike(a) && IsIntLike(b)) {
        c = a.as_int() < b.as_int() ? -1 : a.as_int() > b.as_int() ? 1 : 0;
      } else {
        const double x = a.as_float(), y = b.as_float();
        if (std::isnan(x) || std::isnan(y)) return PyValue::Bool(false);
        c = x < y ? -1 : x > y ? 1 : 0;
      }
    } else if (a.is(PyValue::Kind::kString) && b.is(PyValue::Kind::kString)) {
      c = a.as_string().compare(b.as_string());
      c = c < 0 ? -1 : c > 0 ? 1 : 0;
    } else {
      Fail(std::string("'") + py::Spelling(op) +
           "' not supported between instances of '" + a.TypeName() + "' and '" +
           b.TypeName() + "'");
    }
    switch (op) {
      case CmpOpKind::kLt:
        return PyValue::Bool(c < 0);
      case CmpOpKind::kLtE:
        return PyValue::Bool(c <= 0);
      case CmpOpKind::kGt:
        return PyValue::Bool(c > 0);
      case CmpOpKind::kGtE:
        return PyValue::Bool(c >= 0);
      default:
        break;
    }
  }
  frontend::BinaryOp t;
  switch (op) {
    case CmpOpKind::kLt:
      t = frontend::BinaryOp::kLt;
      break;
    case CmpOpKind::kLtE:
      t = frontend::BinaryOp::kLe;
      break;
    case CmpOpKind::kGt:
      t = frontend::BinaryOp::kGt;
      break;
    case CmpOpKind::kGtE:
      t = frontend::BinaryOp::kGe;
      break;
    case CmpOpKind::kEq:
      t = frontend::BinaryOp::kEq;
      break;
    default:
      t = frontend::BinaryOp::kNe;
      break;
  }
  return PyValue::TensorValue(semantic().Binary(t, a, b));
}

PyValue CodeGen::EvalCompare(const py::CompareExpr& e, Frame& frame) {
  PyValue left = Eval(*e.left, frame);
  PyValue result;
  for (size_t i = 0; i < e.ops.size(); ++i) {
    PyValue right = Eval(*e.comparators[i], frame);
    SetLoc(e.loc, frame);
    PyValue r = CompareOp(e.ops[i], left, right);
    if (e.ops.size() > 1 && !r.is_constexpr()) {
      Fail("simultaneous multiple comparison is not supported");
    }
    if (i == 0) {
      result = r;
    } else if (!result.Truthy()) {
      return result;
    } else {
      result = r;
    }
    if (!result.is_constexpr()) return result;
    if (!result.Truthy()) return result;
    left = right;
  }
  return result;
}

PyValue CodeGen::EvalBoolOp(const py::BoolOpExpr& e, Frame& frame) {
  const bool is_and = e.op == py::BoolOpKind::kAnd;
  std::vector<PyValue> tensors;
  PyValue last;
  for (const py::ExprPtr& sub : e.values) {
    PyValue v = Eval(*sub, frame);
    if (v.is_constexpr()) {
      const bool t = v.Truthy();
      if (!t && is_and) return tensors.empty() ? v : PyValue::Bool(false);
      if (t && !is_and) return tensors.empty() ? v : PyValue::Bool(true);
      last = v;
      continue;
    }
    tensors.push_back(v);
  }
  if (tensors.empty()) return last;
  SetLoc(e.loc, frame);
  PyValue acc = tensors[0];
  for (size_t i = 1; i < tensors.size(); ++i) {
    acc = PyValue::TensorValue(is_and ? semantic().LogicalAnd(acc, tensors[i])
                                      : semantic().LogicalOr(acc, tensors[i]));
  }
  return acc;
}

// --- attributes and subscripts
// -------------------------------------------------------------

PyValue CodeGen::EvalAttribute(const py::AttributeExpr& e, Frame& frame) {
  PyValue v = Eval(*e.value, frame);
  SetLoc(e.loc, frame);
  if (const auto* n = py::As<py::NameExpr>(e.value.get());
      e.attr == "type" && n != nullptr && v.is_constexpr() &&
      frame.constexpr_names.count(n->id) != 0) {
    return PyValue::ConstexprType(v);
  }
  return Attribute(std::move(v), e.attr, e.loc);
}

PyValue CodeGen::Attribute(PyValue v, const std::string& n,
                           const SourceLocation& loc) {
  // A number assigned in a kernel is a tensor in Triton's code generator
  // (`acc = 0; acc = acc.to(tl.int64)`, `val = 1; val.dtype`): its tensor
  // attributes and methods are those of the tensor it makes.
  if ((v.is(PyValue::Kind::kInt) || v.is(PyValue::Kind::kFloat) ||
       v.is(PyValue::Kind::kBool)) &&
      (n == "dtype" || n == "type" || n == "shape" || n == "numel" ||
       FindBuiltin(kTensor, n) || compilation_.IsTensorMethod(n))) {
    v = PyValue::TensorValue(semantic().ToTensor(v));
  }
  switch (v.kind()) {
    case PyValue::Kind::kModule: {
      const ModuleScope* m = v.module();
      if (m->kind() == ModuleScope::Kind::kForeign) {
        return compilation_.ModuleAttribute(m, n, loc).value();
      }
      if (std::optional<PyValue> a = compilation_.ModuleAttribute(m, n, loc)) {
        return *a;
      }
      Fail("module '" + m->name() + "' has no attribute '" + n + "'");
    }
    case PyValue::Kind::kTensor: {
      const Tensor& t = v.tensor();
      if (n == "dtype") return PyValue::DTypeValue(t.dtype);
      if (n == "shape") {
        std::vector<PyValue> dims;
        for (int64_t d : t.shape) dims.push_back(PyValue::Int(d));
        return PyValue::Tuple(std::move(dims));
      }
      if (n == "numel") return PyValue::Int(t.numel());
      if (n == "T") {
        std::vector<int> order;
        for (int i = static_cast<int>(t.shape.size()) - 1; i >= 0; --i) {
          order.push_back(i);
        }
        if (order.size() < 2) return v;
        return PyValue::TensorValue(semantic().Permute(t, order));
      }
      if (n == "type") return PyValue::DTypeValue(t.dtype);
      if (std::optional<BuiltinId> id = FindBuiltin(kTensor, n)) {
        return PyValue::Builtin(*id, v);
      }
      if (compilation_.IsTensorMethod(n)) {
        std::optional<PyValue> f =
            compilation_.LookupGlobal(compilation_.prelude(), n, loc);
        if (f && f->is(PyValue::Kind::kFunction)) {
          return PyValue::BoundFunction(f->function(), v);
        }
      }
      Fail("'tensor' object has no attribute '" + n + "'");
    }
    case PyValue::Kind::kTensorDesc: {
      if (n == "dtype") return PyValue::DTypeValue(v.descriptor().element);
      if (n == "block_shape") {
        std::vector<PyValue> dims;
        for (int64_t d : v.descriptor().block_shape) {
          dims.push_back(PyValue::Int(d));
        }
        return PyValue::Tuple(std::move(dims));
      }
      if (std::optional<BuiltinId> id = FindBuiltin(kDesc, n)) {
        return PyValue::Builtin(*id, v);
      }
      Fail("'tensor_descriptor' object has no attribute '" + n + "'");
    }
    case PyValue::Kind::kDType:
      if (std::optional<PyValue> a = DTypeAttribute(v.dtype(), n)) return *a;
      // A dtype passed to a jit function is a tl.constexpr there: its
      // .value is the dtype.
      if (n == "value") return v;
      Fail("'dtype' object has no attribute '" + n + "'");
    case PyValue::Kind::kEnum:
      if (v.as_string() == "PropagateNan" && (n == "ALL" || n == "NONE")) {
        return PyValue::Enum("PropagateNan." + n);
      }
      break;
    default:
      break;
  }
  if (n == "value" && v.is_constexpr()) return v;  // tl.constexpr(x).value
  Fail("'" + v.TypeName() + "' object has no attribute '" + n + "'");
}

PyValue CodeGen::EvalSubscript(const py::SubscriptExpr& e, Frame& frame) {
  PyValue v = Eval(*e.value, frame);
  PyValue index = Eval(*e.slice, frame);
  SetLoc(e.loc, frame);
  if (v.is(PyValue::Kind::kTuple) || v.is(PyValue::Kind::kString)) {
    const int64_t size = v.is(PyValue::Kind::kTuple)
                             ? static_cast<int64_t>(v.items().size())
                             : static_cast<int64_t>(v.as_string().size());
    if (IsIntLike(index)) {
      int64_t i = static_cast<int64_t>(index.as_int());
      if (i < 0) i += size;
      if (i < 0 || i >= size) Fail("IndexError: tuple index out of range");
      if (v.is(PyValue::Kind::kString)) {
        return PyValue::String(std::string(1, v.as_string()[i]));
      }
      return v.items()[i];
    }
    if (index.is(PyValue::Kind::kSlice)) {
      auto bound = [&](int part, int64_t fallback) {
        if (!index.slice_has(part)) return fallback;
        int64_t x = static_cast<int64_t>(
            ConstInt(index.items()[part], "a slice bound"));
        return x;
      };
      const int64_t step = bound(2, 1);
      if (step == 0) Fail("ValueError: slice step cannot be zero");
      int64_t lo = bound(0, step > 0 ? 0 : size - 1);
      int64_t hi = bound(1, step > 0 ? size : -size - 1);
      auto clamp = [&](int64_t x, int64_t lo_lim, int64_t hi_lim) {
        if (x < 0) x += size;
        return std::max(lo_lim, std::min(hi_lim, x));
      };
      lo = clamp(lo, step > 0 ? 0 : -1, step > 0 ? size : size - 1);
      hi = clamp(hi, step > 0 ? 0 : -1, step > 0 ? size : size - 1);
      std::vector<PyValue> items;
      std::string chars;
      for (int64_t i = lo; step > 0 ? i < hi : i > hi; i += step) {
        if (v.is(PyValue::Kind::kTuple)) {
          items.push_back(v.items()[i]);
        } else {
          chars += v.as_string()[i];
        }
      }
      if (v.is(PyValue::Kind::kString)) return PyValue::String(chars);
      return PyValue::Tuple(std::move(items));
    }
    Fail("tuple indices must be integers or slices, not " + index.TypeName());
  }
  if (v.is(PyValue::Kind::kDict)) {
    if (!index.is(PyValue::Kind::kString)) Fail("dict keys are strings here");
    const PyValue* x = v.Lookup(index.as_string());
    if (x == nullptr) Fail("KeyError: '" + index.as_string() + "'");
    return *x;
  }
  if (v.is_tensor()) {
    // x[None, :], x[:, None]: new axes where None is; `:` keeps a dim.
    std::vector<PyValue> parts = index.is(PyValue::Kind::kTuple)
                                     ? index.items()
                                     : std::vector<PyValue>{index};
    // As Triton's tensor.__getitem__: None expands at its position, a
    // slice of None bounds (`:`, `None:`) keeps a dimension, and the rank
    // is not checked (a scalar's `[None, None, :]` is 1x1).
    Tensor t = v.tensor();
    auto whole = [](const PyValue& p) {
      if (!p.is(PyValue::Kind::kSlice)) return false;
      for (int k = 0; k < 3; ++k) {
        if (p.slice_has(k) && !p.items()[k].is_none()) return false;
      }
      return true;
    };
    int dim = 0;
    for (const PyValue& p : parts) {
      if (p.is_none()) {
        t = semantic().ExpandDims(t, dim);
      } else if (!whole(p)) {
        Fail("unsupported tensor index: " + p.Repr() +
             " (Triton tensors take only None and ':' as indices)");
      }
      ++dim;
    }
    return PyValue::TensorValue(t);
  }
  Fail("'" + v.TypeName() + "' object is not subscriptable");
}

PyValue CodeGen::EvalIfExp(const py::IfExpExpr& e, Frame& frame) {
  PyValue cond = Eval(*e.test, frame);
  if (cond.is_constexpr()) {
    return Eval(cond.Truthy() ? *e.body : *e.orelse, frame);
  }
  SetLoc(e.loc, frame);
  Tensor c = Condition(cond);
  ir::Builder& b = builder();
  ir::Operation* op = b.Create(ir::OpCode::kIf, {c.handle}, {});
  ir::Block* then_block = op->add_region();
  ir::Block* else_block = op->add_region();
  ir::Block* saved = b.block();
  b.set_block(then_block);
  PyValue xv = Eval(*e.body, frame);
  b.set_block(else_block);
  PyValue yv = Eval(*e.orelse, frame);
  if (xv.is_none() && yv.is_none()) {
    // Both sides void (`tl.store(...) if c else tl.store(...)`): an if of
    // no results, as Triton's.
    SetLoc(e.loc, frame);
    b.set_block(then_block);
    b.Create(ir::OpCode::kYield, {}, {});
    b.set_block(else_block);
    b.Create(ir::OpCode::kYield, {}, {});
    b.set_block(saved);
    return PyValue::None();
  }
  b.set_block(then_block);
  Tensor x = semantic().ToTensor(xv);
  b.set_block(else_block);
  Tensor y = semantic().ToTensor(yv);
  if (x.dtype != y.dtype || x.shape != y.shape) {
    Fail("Ternary expression with dynamic condition has inconsistent types " +
         Semantic::TypeText(x) + " and " + Semantic::TypeText(y));
  }
  SetLoc(e.loc, frame);
  b.set_block(then_block);
  b.Create(ir::OpCode::kYield, {x.handle}, {});
  b.set_block(else_block);
  b.Create(ir::OpCode::kYield, {y.handle}, {});
  b.set_block(saved);
  return PyValue::TensorValue(
      Tensor{op->add_result(x.IrType()), x.dtype, x.shape});
}

Tensor CodeGen::Condition(const PyValue& v) {
  Tensor t = semantic().ToTensor(v);
  if (t.is_block()) {
    Fail("Boolean value of Tensor with more than one value is ambiguous");
  }
  if (!t.dtype->is_bool()) t = semantic().Cast(t, DType::Bool());
  return t;
}

}  // namespace mtlemu::triton::frontend
