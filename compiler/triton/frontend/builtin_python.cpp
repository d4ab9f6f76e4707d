// Python's own builtins inside a kernel (range, len, min, print...), the
// triton module's helpers, and tl.constexpr / tl.pointer_type.
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "compiler/triton/frontend/builtins.h"
#include "compiler/triton/frontend/compilation.h"

namespace mtlemu::triton::frontend {
namespace {

std::vector<PyValue> Iterate(const PyValue& v, const std::string& what) {
  if (v.is(PyValue::Kind::kTuple)) return v.items();
  if (v.is(PyValue::Kind::kRange) && v.range_is_static()) {
    std::vector<PyValue> out;
    const __int128 lb = CodeGen::ConstInt(v.items()[0], "range's start");
    const __int128 ub = CodeGen::ConstInt(v.items()[1], "range's end");
    const __int128 st = CodeGen::ConstInt(v.items()[2], "range's step");
    for (__int128 i = lb; st > 0 ? i < ub : i > ub; i += st)
      out.push_back(PyValue::Int(i));
    return out;
  }
  if (v.is(PyValue::Kind::kRange)) {
    bool all_const = true;
    for (const PyValue& p : v.items()) all_const &= p.is_constexpr();
    if (all_const)
      return Iterate(
          PyValue::Range(v.items()[0], v.items()[1], v.items()[2], true), what);
  }
  Fail(what + ": '" + v.TypeName() + "' object is not iterable here");
}

PyValue MinMax(BuiltinCall& call, bool is_max) {
  std::vector<PyValue> items = call.arg(0).items();
  if (items.size() == 1 && items[0].is(PyValue::Kind::kTuple))
    items = items[0].items();
  if (items.empty())
    Fail(std::string(is_max ? "max" : "min") +
         "() expected at least 1 argument");
  bool all_const = true;
  for (const PyValue& v : items) all_const &= v.is_constexpr();
  PyValue best = items[0];
  for (size_t i = 1; i < items.size(); ++i) {
    if (all_const) {
      PyValue less = call.cg.CompareOp(py::CmpOpKind::kLt, items[i], best);
      if (is_max ? !less.Truthy() && !items[i].Equals(best) : less.Truthy()) {
        best = items[i];
      }
    } else {
      // Triton maps min and max on tensors to tl.minimum and tl.maximum.
      best = PyValue::TensorValue(
          call.sem().MinMax(is_max, best, items[i], false));
    }
  }
  return best;
}

}  // namespace

PyValue HandlekRange(BuiltinCall& call) {
  PyValue lb = PyValue::Int(0), ub = call.arg(0), step = PyValue::Int(1);
  if (call.has(1)) {
    lb = call.arg(0);
    ub = call.arg(1);
  }
  if (call.has(2)) step = call.arg(2);
  return PyValue::Range(lb, ub, step, false);
}

PyValue HandlekStaticRange(BuiltinCall& call) {
  PyValue r = HandlekRange(call);
  for (const PyValue& p : r.items()) {
    if (!p.is(PyValue::Kind::kInt)) {
      Fail("tl.static_range's arguments must be compile-time integers, got " +
           (p.is_tensor() ? std::string("a tensor") : p.Repr()));
    }
  }
  return PyValue::Range(r.items()[0], r.items()[1], r.items()[2], true);
}

PyValue HandlekLen(BuiltinCall& call) {
  const PyValue& v = call.arg(0);
  if (v.is(PyValue::Kind::kTuple)) return PyValue::Int(v.items().size());
  if (v.is(PyValue::Kind::kString)) return PyValue::Int(v.as_string().size());
  if (v.is_tensor() && v.tensor().is_block())
    return PyValue::Int(v.tensor().shape[0]);
  Fail("object of type '" + v.TypeName() + "' has no len()");
}

PyValue HandlekPyMin(BuiltinCall& call) { return MinMax(call, false); }
PyValue HandlekPyMax(BuiltinCall& call) { return MinMax(call, true); }

PyValue HandlekPyAbs(BuiltinCall& call) {
  const PyValue& v = call.arg(0);
  if (v.is(PyValue::Kind::kFloat))
    return PyValue::Float(std::fabs(v.as_float()));
  if (v.is(PyValue::Kind::kInt) || v.is(PyValue::Kind::kBool)) {
    return PyValue::Int(v.as_int() < 0 ? -v.as_int() : v.as_int());
  }
  return PyValue::TensorValue(call.sem().Abs(v));
}

PyValue HandlekPyInt(BuiltinCall& call) {
  const PyValue& v = call.arg(0);
  if (v.is(PyValue::Kind::kFloat)) {
    if (!std::isfinite(v.as_float()))
      Fail("cannot convert float " + v.Repr() + " to integer");
    return PyValue::Int(static_cast<__int128>(std::trunc(v.as_float())));
  }
  if (v.is(PyValue::Kind::kInt) || v.is(PyValue::Kind::kBool))
    return PyValue::Int(v.as_int());
  if (v.is(PyValue::Kind::kString)) {
    char* end = nullptr;
    const long long x = std::strtoll(v.as_string().c_str(), &end, 10);
    if (end == v.as_string().c_str() || *end != 0) {
      Fail("invalid literal for int() with base 10: " + v.Repr());
    }
    return PyValue::Int(x);
  }
  if (v.is_tensor())
    return PyValue::TensorValue(call.sem().Cast(v.tensor(), DType::I32()));
  Fail("int() argument must be a string or a number, not '" + v.TypeName() +
       "'");
}

PyValue HandlekPyFloat(BuiltinCall& call) {
  const PyValue& v = call.arg(0);
  if (v.is_number()) return PyValue::Float(v.as_float());
  if (v.is(PyValue::Kind::kString)) {
    std::string s = v.as_string();
    std::transform(s.begin(), s.end(), s.begin(), ::tolower);
    s.erase(0, s.find_first_not_of(" \t"));
    s.erase(s.find_last_not_of(" \t") + 1);
    if (s == "inf" || s == "+inf" || s == "infinity")
      return PyValue::Float(INFINITY);
    if (s == "-inf" || s == "-infinity") return PyValue::Float(-INFINITY);
    if (s == "nan" || s == "+nan" || s == "-nan") return PyValue::Float(NAN);
    char* end = nullptr;
    const double x = std::strtod(s.c_str(), &end);
    if (end == s.c_str() || *end != 0)
      Fail("could not convert string to float: " + v.Repr());
    return PyValue::Float(x);
  }
  if (v.is_tensor())
    return PyValue::TensorValue(call.sem().Cast(v.tensor(), DType::F32()));
  Fail("float() argument must be a string or a number, not '" + v.TypeName() +
       "'");
}

PyValue HandlekPyBool(BuiltinCall& call) {
  const PyValue& v = call.arg(0);
  if (v.is_constexpr()) return PyValue::Bool(v.Truthy());
  return PyValue::TensorValue(call.sem().Cast(v.tensor(), DType::Bool()));
}

PyValue HandlekPyPrint(BuiltinCall& call) {
  // Triton maps print() in a kernel to tl.device_print.
  std::vector<PyValue> items = call.arg(0).items();
  std::string prefix;
  std::vector<PyValue> args;
  for (const PyValue& v : items) {
    if (v.is_constexpr() && args.empty()) {
      prefix += (prefix.empty() ? "" : " ") +
                (v.is(PyValue::Kind::kString) ? v.as_string() : v.Repr());
    } else {
      args.push_back(v);
    }
  }
  std::vector<PyValue> call_args = {PyValue::String(prefix)};
  for (const PyValue& a : args) call_args.push_back(a);
  return CallBuiltin(BuiltinId::kDevicePrint, call.cg, call.frame, call.loc,
                     std::move(call_args), {});
}

PyValue HandlekIsInstance(BuiltinCall& call) {
  const PyValue& v = call.arg(0);
  std::vector<PyValue> classes = call.arg(1).is(PyValue::Kind::kTuple)
                                     ? call.arg(1).items()
                                     : std::vector<PyValue>{call.arg(1)};
  for (const PyValue& c : classes) {
    if (c.is(PyValue::Kind::kEnum)) {
      const std::string& n = c.as_string();
      if (n == "class:tensor" && v.is_tensor()) return PyValue::Bool(true);
      if (n == "class:dtype" && v.is(PyValue::Kind::kDType))
        return PyValue::Bool(true);
      if (n == "class:tuple_type" && v.is(PyValue::Kind::kTuple))
        return PyValue::Bool(true);
      continue;
    }
    if (c.is(PyValue::Kind::kBuiltin)) {
      switch (c.builtin()) {
        case BuiltinId::kPyInt:
          if (v.is(PyValue::Kind::kInt) || v.is(PyValue::Kind::kBool))
            return PyValue::Bool(true);
          break;
        case BuiltinId::kPyFloat:
          if (v.is(PyValue::Kind::kFloat)) return PyValue::Bool(true);
          break;
        case BuiltinId::kPyBool:
          if (v.is(PyValue::Kind::kBool)) return PyValue::Bool(true);
          break;
        case BuiltinId::kPyTuple:
        case BuiltinId::kPyList:
          if (v.is(PyValue::Kind::kTuple)) return PyValue::Bool(true);
          break;
        case BuiltinId::kConstexprCall:
          if (v.is_constexpr()) return PyValue::Bool(true);
          break;
        case BuiltinId::kPointerType:  // tl.pointer_type: a pointer dtype
          if (v.is(PyValue::Kind::kDType) && v.dtype()->is_ptr())
            return PyValue::Bool(true);
          break;
        default:
          break;
      }
      continue;
    }
    Fail("isinstance() arg 2 must be a type or tuple of types");
  }
  return PyValue::Bool(false);
}

PyValue HandlekEnumerate(BuiltinCall& call) {
  std::vector<PyValue> out;
  __int128 i = CodeGen::ConstInt(call.arg(1), "enumerate's start");
  for (const PyValue& v : Iterate(call.arg(0), "enumerate()")) {
    out.push_back(PyValue::Tuple({PyValue::Int(i++), v}));
  }
  return PyValue::Tuple(std::move(out));
}

PyValue HandlekZip(BuiltinCall& call) {
  std::vector<std::vector<PyValue>> lists;
  size_t n = SIZE_MAX;
  for (const PyValue& v : call.arg(0).items()) {
    lists.push_back(Iterate(v, "zip()"));
    n = std::min(n, lists.back().size());
  }
  if (lists.empty()) n = 0;
  std::vector<PyValue> out;
  for (size_t i = 0; i < n; ++i) {
    std::vector<PyValue> t;
    for (auto& l : lists) t.push_back(l[i]);
    out.push_back(PyValue::Tuple(std::move(t)));
  }
  return PyValue::Tuple(std::move(out));
}

PyValue HandlekPyTuple(BuiltinCall& call) {
  return PyValue::Tuple(Iterate(call.arg(0), "tuple()"));
}

PyValue HandlekPyList(BuiltinCall& call) {
  return PyValue::Tuple(Iterate(call.arg(0), "list()"));
}

// getattr(obj, NAME[, default]) with a compile-time name: obj.NAME (as
// Triton's code generator runs it, in Python); default when obj has none.
PyValue HandlekPyGetattr(BuiltinCall& call) {
  if (!call.arg(1).is(PyValue::Kind::kString)) {
    Fail("getattr(): the attribute name must be a compile-time string, got " +
         call.arg(1).Repr());
  }
  const std::string name = call.arg(1).as_string();
  if (!call.given[2]) return call.cg.Attribute(call.arg(0), name, call.loc);
  try {
    return call.cg.Attribute(call.arg(0), name, call.loc);
  } catch (const CompileError&) {
    return call.arg(2);
  }
}

PyValue HandlekPyHasattr(BuiltinCall& call) {
  const PyValue& obj = call.arg(0);
  const std::string name = call.ConstString(1);
  if (obj.is(PyValue::Kind::kModule)) {
    return PyValue::Bool(call.cg.compilation()
                             .ModuleAttribute(obj.module(), name, call.loc)
                             .has_value());
  }
  try {
    call.cg.Attribute(obj, name, call.loc);
    return PyValue::Bool(true);
  } catch (const CompileError&) {
    return PyValue::Bool(false);
  }
}

PyValue HandlekNextPowerOf2(BuiltinCall& call) {
  __int128 n = CodeGen::ConstInt(call.arg(0), "next_power_of_2's argument");
  __int128 p = 1;
  while (p < n) p <<= 1;
  return PyValue::Int(p);
}

PyValue HandlekConfig(BuiltinCall& call) {
  // A configuration of @triton.autotune: its constexpr values and launch
  // options, as a dict the front end reads.
  if (!call.arg(0).is(PyValue::Kind::kDict)) {
    Fail("triton.Config's first argument must be a dict of meta-parameters");
  }
  return PyValue::Dict({{"kwargs", call.arg(0)},
                        {"num_warps", call.arg(1)},
                        {"num_stages", call.arg(2)}});
}

PyValue HandlekConstexprType(BuiltinCall& call) {
  if (!call.arg(0).is_constexpr()) {
    Fail("constexpr_type() needs a compile-time value");
  }
  return PyValue::ConstexprType(call.arg(0));
}

PyValue HandlekConstexprCall(BuiltinCall& call) {
  if (!call.arg(0).is_constexpr()) {
    Fail("tl.constexpr() needs a compile-time value");
  }
  return call.arg(0);
}

PyValue HandlekPointerType(BuiltinCall& call) {
  const DType* element = call.ConstDType(0);
  return PyValue::DTypeValue(DType::Pointer(
      element, static_cast<int>(call.ConstInt(1)), call.ConstBool(2)));
}

PyValue HandlekToTensor(BuiltinCall& call) {
  return PyValue::TensorValue(call.AsTensor(0));
}

PyValue HandlekGetIntDtype(BuiltinCall& call) {
  const int64_t bits = call.ConstInt(0);
  if (bits != 1 && bits != 8 && bits != 16 && bits != 32 && bits != 64) {
    Fail("get_int_dtype: unsupported bitwidth " + std::to_string(bits));
  }
  const int b = static_cast<int>(bits);
  return PyValue::DTypeValue(call.ConstBool(1) && b != 1 ? DType::Int(b)
                                                         : DType::UInt(b));
}

}  // namespace mtlemu::triton::frontend
