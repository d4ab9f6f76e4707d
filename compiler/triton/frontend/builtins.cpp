// The builtin table (builtins.def): lookup by name and namespace, and the
// binding of a call's arguments to a builtin's Python signature.
#include "compiler/triton/frontend/builtins.h"

#include <array>
#include <mutex>

#include "compiler/triton/frontend/compilation.h"
#include "compiler/triton/frontend/module_scope.h"
#include "compiler/triton/python/parser.h"

namespace mtlemu::triton::frontend {
namespace {

struct BuiltinInfo {
  const char* name;
  unsigned namespaces;
  const char* signature;  // MATH1 rows: "x"
  ir::OpCode math_op;     // MATH1 rows
  const char* allowed;    // MATH1 rows: "fp32,fp64" or ""
  bool math1;
};

constexpr BuiltinInfo kBuiltins[] = {
#define BUILTIN(e, name, ns, sig) \
  {name, ns, sig, ir::OpCode::kConstant, "", false},
#define MATH1(e, name, ns, op, allowed) \
  {name, ns, "x", ir::OpCode::op, allowed, true},
#include "compiler/triton/frontend/builtins.def"
#undef BUILTIN
#undef MATH1
};
constexpr int kNumBuiltins = static_cast<int>(std::size(kBuiltins));

using Handler = PyValue (*)(BuiltinCall&);
PyValue HandleMath1(BuiltinCall& call);

constexpr Handler kHandlers[] = {
#define BUILTIN(e, name, ns, sig) &Handle##e,
#define MATH1(e, name, ns, op, allowed) &HandleMath1,
#include "compiler/triton/frontend/builtins.def"
#undef BUILTIN
#undef MATH1
};
static_assert(std::size(kHandlers) == std::size(kBuiltins));

// A parsed signature: parameter names, which is *args, defaults.
struct Signature {
  std::vector<std::string> names;
  int vararg = -1;     // index of the *args parameter
  int positional = 0;  // parameters before *args / keyword-only ones
  std::vector<std::optional<PyValue>> defaults;
};

const Signature& SignatureOf(BuiltinId id) {
  static std::mutex mutex;
  static std::array<std::unique_ptr<Signature>, kNumBuiltins> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = cache[static_cast<int>(id)];
  if (slot) return *slot;
  auto sig = std::make_unique<Signature>();
  const BuiltinInfo& info = kBuiltins[static_cast<int>(id)];
  const std::string text = std::string("lambda ") + info.signature + ": 0";
  Result<py::ExprPtr> parsed = py::ParseExpression(text, "<builtin signature>");
  if (!parsed.ok()) {
    throw CompileError{"internal error: bad signature of builtin '" +
                           std::string(info.name) +
                           "': " + parsed.error().message,
                       {},
                       {}};
  }
  const auto* lambda = py::As<py::LambdaExpr>(parsed.value().get());
  auto default_of = [](const py::Arg& a) -> std::optional<PyValue> {
    if (!a.default_value) return std::nullopt;
    const auto* c = py::As<py::ConstantExpr>(a.default_value.get());
    if (c != nullptr) {
      switch (c->type) {
        case py::ConstantExpr::Type::kNone:
          return PyValue::None();
        case py::ConstantExpr::Type::kBool:
          return PyValue::Bool(c->bool_value);
        case py::ConstantExpr::Type::kInt:
          return PyValue::Int(static_cast<__int128>(c->int_value));
        case py::ConstantExpr::Type::kFloat:
          return PyValue::Float(c->float_value);
        case py::ConstantExpr::Type::kString:
          return PyValue::String(c->string_value);
        default:
          break;
      }
    }
    if (const auto* t = py::As<py::TupleExpr>(a.default_value.get())) {
      if (t->elts.empty()) return PyValue::Tuple({});
    }
    return PyValue::None();
  };
  for (const py::Arg& a : lambda->args.args) {
    sig->names.push_back(a.name);
    sig->defaults.push_back(default_of(a));
  }
  sig->positional = static_cast<int>(sig->names.size());
  if (lambda->args.vararg) {
    sig->vararg = static_cast<int>(sig->names.size());
    sig->names.push_back(lambda->args.vararg->name);
    sig->defaults.push_back(PyValue::Tuple({}));
  }
  for (const py::Arg& a : lambda->args.kwonly) {
    sig->names.push_back(a.name);
    sig->defaults.push_back(default_of(a));
  }
  slot = std::move(sig);
  return *slot;
}

}  // namespace

std::optional<BuiltinId> FindBuiltin(unsigned mask, std::string_view name) {
  for (int i = 0; i < kNumBuiltins; ++i) {
    if ((kBuiltins[i].namespaces & mask) && name == kBuiltins[i].name) {
      return static_cast<BuiltinId>(i);
    }
  }
  return std::nullopt;
}

std::vector<std::string> BuiltinNames(unsigned mask) {
  std::vector<std::string> out;
  for (int i = 0; i < kNumBuiltins; ++i) {
    if (kBuiltins[i].namespaces & mask) out.emplace_back(kBuiltins[i].name);
  }
  return out;
}

std::string BuiltinName(BuiltinId id) {
  const BuiltinInfo& info = kBuiltins[static_cast<int>(id)];
  const unsigned ns = info.namespaces;
  if (ns & kTl) return std::string("tl.") + info.name;
  if (ns & kMath) return std::string("tl.math.") + info.name;
  if (ns & kLibdevice) return std::string("libdevice.") + info.name;
  if (ns & kTriton) return std::string("triton.") + info.name;
  return info.name;
}

const std::string& BuiltinCall::param_name(int i) const {
  return SignatureOf(id).names[i];
}

int64_t BuiltinCall::ConstInt(int i) const {
  const PyValue& v = args[i];
  if (v.is(PyValue::Kind::kInt) || v.is(PyValue::Kind::kBool)) {
    return static_cast<int64_t>(v.as_int());
  }
  Fail(BuiltinName(id) + ": '" + param_name(i) +
       "' must be a compile-time integer (tl.constexpr), got " +
       (v.is_tensor() ? "a tensor" : v.Repr()));
}

bool BuiltinCall::ConstBool(int i) const {
  const PyValue& v = args[i];
  if (v.is_constexpr()) return v.Truthy();
  Fail(BuiltinName(id) + ": '" + param_name(i) +
       "' must be a compile-time value (tl.constexpr)");
}

const DType* BuiltinCall::ConstDType(int i) const {
  const PyValue& v = args[i];
  if (v.is(PyValue::Kind::kDType)) return v.dtype();
  if (v.is(PyValue::Kind::kString)) {
    if (const DType* d = DType::FromName(v.as_string())) return d;
  }
  Fail(BuiltinName(id) + ": '" + param_name(i) + "' must be a dtype, got " +
       v.Repr());
}

std::string BuiltinCall::ConstString(int i) const {
  const PyValue& v = args[i];
  if (v.is(PyValue::Kind::kString)) return v.as_string();
  if (v.is_none()) return "";
  Fail(BuiltinName(id) + ": '" + param_name(i) + "' must be a string, got " +
       v.Repr());
}

std::vector<int64_t> BuiltinCall::ConstShape(int i) const {
  const PyValue& v = args[i];
  std::vector<PyValue> items;
  if (v.is(PyValue::Kind::kTuple)) {
    items = v.items();
    // f(x, (a, b)) and f(x, a, b) mean the same for *shape parameters.
    if (items.size() == 1 && items[0].is(PyValue::Kind::kTuple)) {
      items = items[0].items();
    }
  } else {
    items = {v};
  }
  std::vector<int64_t> shape;
  for (const PyValue& d : items) {
    if (!d.is(PyValue::Kind::kInt)) {
      Fail(BuiltinName(id) + ": '" + param_name(i) +
           "' must be a tuple of compile-time integers, got " + v.Repr());
    }
    shape.push_back(static_cast<int64_t>(d.as_int()));
  }
  return shape;
}

Tensor BuiltinCall::AsTensor(int i) { return sem().ToTensor(args[i]); }

PyValue CallBuiltin(BuiltinId id, CodeGen& cg, Frame& frame,
                    const SourceLocation& loc, std::vector<PyValue> args,
                    std::vector<std::pair<std::string, PyValue>> kwargs) {
  const Signature& sig = SignatureOf(id);
  const std::string name = BuiltinName(id);
  BuiltinCall call{cg, frame, loc, {}, {}, id};
  const size_t n = sig.names.size();
  std::vector<std::optional<PyValue>> bound(n);
  std::vector<PyValue> extra;
  for (size_t i = 0; i < args.size(); ++i) {
    if (static_cast<int>(i) < sig.positional) {
      bound[i] = std::move(args[i]);
    } else if (sig.vararg >= 0) {
      extra.push_back(std::move(args[i]));
    } else {
      Fail(name + "() takes " + std::to_string(sig.positional) +
           " positional arguments but " + std::to_string(args.size()) +
           " were given");
    }
  }
  if (sig.vararg >= 0) bound[sig.vararg] = PyValue::Tuple(std::move(extra));
  for (auto& [k, v] : kwargs) {
    size_t i = 0;
    while (i < n && (sig.names[i] != k || static_cast<int>(i) == sig.vararg))
      ++i;
    if (i == n)
      Fail(name + "() got an unexpected keyword argument '" + k + "'");
    if (bound[i] && static_cast<int>(i) != sig.vararg) {
      Fail(name + "() got multiple values for argument '" + k + "'");
    }
    bound[i] = std::move(v);
  }
  call.given.assign(n, false);
  for (size_t i = 0; i < n; ++i) {
    if (bound[i]) {
      call.given[i] = true;
      if (static_cast<int>(i) == sig.vararg) {
        call.given[i] = !bound[i]->items().empty();
      }
      call.args.push_back(std::move(*bound[i]));
    } else if (sig.defaults[i]) {
      call.args.push_back(*sig.defaults[i]);
    } else {
      Fail(name + "() missing 1 required positional argument: '" +
           sig.names[i] + "'");
    }
  }
  return kHandlers[static_cast<int>(id)](call);
}

namespace {

PyValue HandleMath1(BuiltinCall& call) {
  const BuiltinInfo& info = kBuiltins[static_cast<int>(call.id)];
  std::vector<std::string> allowed;
  std::string list = info.allowed;
  size_t start = 0;
  while (start < list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    allowed.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return PyValue::TensorValue(
      call.sem().MathUnary(info.math_op, call.arg(0), allowed));
}

}  // namespace

}  // namespace mtlemu::triton::frontend
