// Calls: argument binding, jit functions inlined, builtins, lambdas.
#include "compiler/triton/frontend/builtins.h"
#include "compiler/triton/frontend/codegen.h"
#include "compiler/triton/frontend/compilation.h"
#include "compiler/triton/frontend/module_scope.h"

namespace mtlemu::triton::frontend {
namespace {

constexpr int kMaxCallDepth = 64;

}  // namespace

PyValue CodeGen::EvalCall(const py::CallExpr& e, Frame& frame) {
  PyValue callee = Eval(*e.func, frame);
  std::vector<PyValue> args;
  for (const py::ExprPtr& a : e.args) {
    if (const auto* st = py::As<py::StarredExpr>(a.get())) {
      PyValue v = Eval(*st->value, frame);
      if (!v.is(PyValue::Kind::kTuple)) {
        Fail("argument after * must be an iterable, not " + v.TypeName());
      }
      for (const PyValue& i : v.items()) args.push_back(i);
    } else {
      args.push_back(Eval(*a, frame));
    }
  }
  std::vector<std::pair<std::string, PyValue>> kwargs;
  for (const py::Keyword& k : e.keywords) {
    if (!k.arg) Fail("**kwargs in a call is not supported in Triton kernels");
    kwargs.emplace_back(*k.arg, Eval(*k.value, frame));
  }
  SetLoc(e.loc, frame);
  return Call(callee, std::move(args), std::move(kwargs), e.loc, frame);
}

PyValue CodeGen::Call(const PyValue& callee, std::vector<PyValue> args,
                      std::vector<std::pair<std::string, PyValue>> kwargs,
                      const SourceLocation& loc, Frame& frame) {
  switch (callee.kind()) {
    case PyValue::Kind::kFunction: {
      if (const PyValue* self = callee.self()) args.insert(args.begin(), *self);
      return CallJit(callee.function(), std::move(args), std::move(kwargs), loc,
                     &frame);
    }
    case PyValue::Kind::kBuiltin: {
      if (const PyValue* self = callee.self()) args.insert(args.begin(), *self);
      return CallBuiltin(callee.builtin(), *this, frame, loc, std::move(args),
                         std::move(kwargs));
    }
    case PyValue::Kind::kLambda:
      return CallLambda(callee, std::move(args), std::move(kwargs), loc, frame);
    case PyValue::Kind::kDTypeMethod: {
      if (!args.empty() || !kwargs.empty()) {
        Fail(callee.as_string() + "() takes no arguments");
      }
      const DType* d = callee.dtype();
      const std::string& n = callee.as_string();
      if (n == "is_int") return PyValue::Bool(d->is_int());
      if (n == "is_int_signed") return PyValue::Bool(d->is_int_signed());
      if (n == "is_int_unsigned") return PyValue::Bool(d->is_int_unsigned());
      if (n == "is_bool" || n == "is_int1") return PyValue::Bool(d->is_bool());
      if (n == "is_floating") return PyValue::Bool(d->is_floating());
      if (n == "is_standard_floating") {
        return PyValue::Bool(d->is_floating() && !d->is_fp8());
      }
      if (n == "is_fp8") return PyValue::Bool(d->is_fp8());
      if (n == "is_fp16") return PyValue::Bool(d->is_fp16());
      if (n == "is_bf16") return PyValue::Bool(d->is_bf16());
      if (n == "is_fp32") return PyValue::Bool(d->is_fp32());
      if (n == "is_fp64") return PyValue::Bool(d->is_fp64());
      if (n == "is_ptr") return PyValue::Bool(d->is_ptr());
      if (n == "is_block") return PyValue::Bool(false);
      if (n == "is_void") return PyValue::Bool(d->is_void());
      if (n == "is_const") return PyValue::Bool(d->is_ptr() && d->is_const());
      if (n == "kind") return PyValue::Int(d->kind_rank());  // dtype.KIND
      if (n == "codegen_name") {  // fp32 -> float32, bf16 -> bfloat16
        const std::string name = d->Name();
        if (name == "bf16") return PyValue::String("bfloat16");
        if (name.rfind("fp", 0) == 0) {
          return PyValue::String("float" + name.substr(2));
        }
        return PyValue::String(name);
      }
      using F = ir::FloatFormat;
      for (const auto& [name, format] :
           {std::pair{"is_fp8e4nv", F::kF8E4M3FN},
            std::pair{"is_fp8e4b8", F::kF8E4M3FNUZ},
            std::pair{"is_fp8e4b15", F::kF8E4M3B11FNUZ},
            std::pair{"is_fp8e5", F::kF8E5M2},
            std::pair{"is_fp8e5b16", F::kF8E5M2FNUZ}}) {
        if (n == name) return PyValue::Bool(d->is(format));
      }
      if (n == "get_int_max_value" || n == "get_int_min_value") {
        if (!d->is_int()) Fail(d->Name() + " is not an integer type");
        const int bits = d->bits();
        const bool max = n == "get_int_max_value";
        if (d->is_int_signed()) {
          const __int128 half = static_cast<__int128>(1) << (bits - 1);
          return PyValue::Int(max ? half - 1 : -half);
        }
        return PyValue::Int(max ? (static_cast<__int128>(1) << bits) - 1 : 0);
      }
      for (int bits : {8, 16, 32, 64}) {
        if (n == "is_int" + std::to_string(bits)) {
          return PyValue::Bool(d->is_int_signed() && d->bits() == bits);
        }
        if (n == "is_uint" + std::to_string(bits)) {
          return PyValue::Bool(d->is_int_unsigned() && d->bits() == bits);
        }
      }
      Fail("'dtype' object has no attribute '" + n + "'");
    }
    case PyValue::Kind::kModule: {
      const ModuleScope* m = callee.module();
      if (m->kind() == ModuleScope::Kind::kForeign) {
        const std::string top = m->name().substr(0, m->name().find('.'));
        Fail("'" + m->name() + "' cannot be used in a kernel: module '" + top +
             "' was not found on the module path (the kernel file's "
             "directory, --module-path) and is not one of Triton's");
      }
      Fail("module '" + m->name() + "' is not callable");
    }
    case PyValue::Kind::kEnum:
      if (callee.as_string().rfind("foreign", 0) == 0 ||
          callee.as_string().rfind("class:", 0) == 0) {
        Fail("'" + callee.as_string() +
             "' cannot be called in a Triton kernel");
      }
      Fail("'" + callee.Repr() + "' is not callable");
    case PyValue::Kind::kDType:
      Fail("'dtype' object is not callable (use x.to(" + callee.Repr() +
           ") to convert)");
    default:
      Fail("'" + callee.TypeName() + "' object is not callable");
  }
}

PyValue CodeGen::CallJit(const FunctionRef& f, std::vector<PyValue> args,
                         std::vector<std::pair<std::string, PyValue>> kwargs,
                         const SourceLocation& loc, Frame* caller) {
  const py::FunctionDefStmt& def = *f.def;
  const bool constexpr_fn = !f.jit;
  if (!f.jit) {
    bool declared_constexpr = false;
    if (f.module != nullptr) {
      auto it = f.module->globals().find(def.name);
      declared_constexpr =
          it != f.module->globals().end() && it->second.constexpr_function;
    }
    // Module-level evaluation (decorator arguments, constants) is plain
    // Python: any function may run there; a kernel may call jit ones only.
    if (!declared_constexpr && has_builder()) {
      Fail("'" + def.name +
           "' is not a @triton.jit function and cannot be called from a "
           "kernel");
    }
  }
  if (call_depth_ >= kMaxCallDepth) {
    Fail("calls nested more than " + std::to_string(kMaxCallDepth) +
         " deep (recursion is not supported in Triton kernels)");
  }
  Frame frame;
  frame.module = f.module;
  frame.def = &def;
  frame.caller = caller;
  frame.call_loc = loc;

  // Bind the parameters, as Python does.
  std::vector<const py::Arg*> params;
  for (const py::Arg& a : def.args.posonly) params.push_back(&a);
  for (const py::Arg& a : def.args.args) params.push_back(&a);
  const size_t positional = params.size();
  for (const py::Arg& a : def.args.kwonly) params.push_back(&a);
  std::vector<std::optional<PyValue>> bound(params.size());
  std::vector<PyValue> extra;
  for (size_t i = 0; i < args.size(); ++i) {
    if (i < positional) {
      bound[i] = args[i];
    } else if (def.args.vararg) {
      extra.push_back(args[i]);
    } else {
      Fail(def.name + "() takes " + std::to_string(positional) +
           " positional arguments but " + std::to_string(args.size()) +
           " were given");
    }
  }
  for (auto& [name, value] : kwargs) {
    size_t i = 0;
    while (i < params.size() && params[i]->name != name) ++i;
    if (i == params.size()) {
      Fail(def.name + "() got an unexpected keyword argument '" + name + "'");
    }
    if (bound[i]) {
      Fail(def.name + "() got multiple values for argument '" + name + "'");
    }
    bound[i] = value;
  }
  for (size_t i = 0; i < params.size(); ++i) {
    if (!bound[i]) {
      if (!params[i]->default_value) {
        Fail(def.name + "() missing 1 required argument: '" + params[i]->name +
             "'");
      }
      // Defaults are evaluated in the function's module.
      Frame module_frame;
      module_frame.module = f.module;
      CodeGen constants(compilation_, nullptr);
      bound[i] = constants.Eval(*params[i]->default_value, module_frame);
    }
    // A tl.constexpr annotation on a called function's parameter asks for
    // specialization; Triton passes tensors given to it through.
    frame.locals[params[i]->name] = *bound[i];
  }
  if (def.args.vararg)
    frame.locals[def.args.vararg->name] = PyValue::Tuple(extra);

  ++call_depth_;
  struct Depth {
    int& d;
    ~Depth() { --d; }
  } depth{call_depth_};
  try {
    ExecBody(def.body, 0, frame);
  } catch (CompileError& e) {
    if (!e.loc.known()) e.loc = loc_;
    if (!f.module->library()) {
      e.call_stack.push_back("in '" + def.name + "' called from " + loc.file +
                             ":" + std::to_string(loc.line));
    }
    throw;
  }
  PyValue result = frame.returned.value_or(PyValue::None());
  if (constexpr_fn && !result.is_constexpr()) {
    Fail("constexpr_function '" + def.name + "' returned a tensor");
  }
  SetLoc(loc, caller != nullptr ? *caller : frame);
  return result;
}

PyValue CodeGen::CallLambda(const PyValue& lambda, std::vector<PyValue> args,
                            std::vector<std::pair<std::string, PyValue>> kwargs,
                            const SourceLocation& loc, Frame& caller) {
  const py::LambdaExpr& l = *lambda.lambda();
  Frame frame;
  frame.module = lambda.module();
  frame.caller = &caller;
  frame.call_loc = loc;
  frame.locals = caller.locals;  // lambdas see the enclosing names
  std::vector<const py::Arg*> params;
  for (const py::Arg& a : l.args.args) params.push_back(&a);
  if (args.size() > params.size())
    Fail("<lambda>() takes " + std::to_string(params.size()) + " arguments");
  for (size_t i = 0; i < params.size(); ++i) {
    if (i < args.size()) {
      frame.locals[params[i]->name] = args[i];
    } else if (params[i]->default_value) {
      frame.locals[params[i]->name] = Eval(*params[i]->default_value, caller);
    } else {
      bool found = false;
      for (auto& [k, v] : kwargs) {
        if (k == params[i]->name) {
          frame.locals[k] = v;
          found = true;
        }
      }
      if (!found) Fail("<lambda>() missing argument '" + params[i]->name + "'");
    }
  }
  return Eval(*l.body, frame);
}

void CodeGen::BuildCombiner(ir::Operation* op, const PyValue& fn,
                            const std::vector<const DType*>& dtypes,
                            ir::OpCode terminator, const SourceLocation& loc,
                            Frame& frame) {
  ir::Builder& b = builder();
  ir::Block* region = op->add_region();
  std::vector<PyValue> args;
  for (int pass = 0; pass < 2; ++pass) {
    for (const DType* d : dtypes) {
      ir::Value* v = region->add_arg(d->ToIr());
      args.push_back(PyValue::TensorValue(Tensor{v, d, {}}));
    }
  }
  ir::Block* saved = b.block();
  b.set_block(region);
  PyValue result = Call(fn, std::move(args), {}, loc, frame);
  std::vector<Tensor> results;
  if (result.is(PyValue::Kind::kTuple)) {
    for (const PyValue& r : result.items()) {
      results.push_back(semantic().ToTensor(r));
    }
  } else {
    results.push_back(semantic().ToTensor(result));
  }
  if (results.size() != dtypes.size()) {
    Fail("the combine function returns " + std::to_string(results.size()) +
         " values for " + std::to_string(dtypes.size()) + " operands");
  }
  std::vector<ir::Value*> handles;
  for (size_t i = 0; i < results.size(); ++i) {
    Tensor r = results[i];
    if (r.is_block()) Fail("the combine function must return scalars");
    if (r.dtype != dtypes[i]) r = semantic().Cast(r, dtypes[i]);
    handles.push_back(r.handle);
  }
  b.Create(terminator, handles, {});
  b.set_block(saved);
}

__int128 CodeGen::ConstInt(const PyValue& v, const std::string& what) {
  if (v.is(PyValue::Kind::kInt) || v.is(PyValue::Kind::kBool))
    return v.as_int();
  Fail(what + " must be a compile-time integer (tl.constexpr), got " +
       (v.is_tensor() ? "a tensor" : v.Repr()));
}

}  // namespace mtlemu::triton::frontend
