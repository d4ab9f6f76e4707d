#include "compiler/triton/frontend/frontend.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "compiler/triton/frontend/codegen.h"
#include "compiler/triton/frontend/compilation.h"
#include "compiler/triton/frontend/module_scope.h"
#include "compiler/triton/ir/cleanup.h"
#include "compiler/triton/ir/verifier.h"

namespace mtlemu::triton::frontend {
namespace {

// The line `line` (1-based) of `text`, or "".
std::string SourceLine(const std::string& text, int line) {
  std::istringstream in(text);
  std::string s;
  for (int i = 1; std::getline(in, s); ++i) {
    if (i == line) return s;
  }
  return "";
}

std::string Format(const CompileError& e, Compilation* compilation,
                   const std::string& fallback_file,
                   const std::optional<std::string>& fallback_source = {}) {
  std::ostringstream out;
  const std::string file = e.loc.file.empty() ? fallback_file : e.loc.file;
  if (e.loc.known()) {
    out << file << ":" << e.loc.line << ":" << e.loc.column + 1
        << ": error: " << e.message << "\n";
    std::string text;
    if (file == fallback_file && fallback_source) {
      text = *fallback_source;
    } else if (compilation != nullptr) {
      try {
        text = compilation->LoadFile(file)->ast()->source;
      } catch (const CompileError&) {
        std::ifstream in(file, std::ios::binary);
        std::ostringstream all;
        all << in.rdbuf();
        text = all.str();
      }
    }
    const std::string line = SourceLine(text, e.loc.line);
    if (!line.empty()) {
      out << line << "\n" << std::string(e.loc.column, ' ') << "^\n";
    }
  } else {
    out << file << ": error: " << e.message << "\n";
  }
  for (const std::string& note : e.call_stack) out << "note: " << note << "\n";
  std::string s = out.str();
  if (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

const ModuleScope::Global* FindKernel(Compilation& c, const ModuleScope* m,
                                      const std::string& name,
                                      const std::string& file) {
  auto it = m->globals().find(name);
  const auto is_jit = [](const ModuleScope::Global& g) {
    return g.kind == ModuleScope::Global::Kind::kFunction && g.jit;
  };
  if (it == m->globals().end() || !is_jit(it->second)) {
    // `kernel = triton.jit(impl)`: the jit function is impl's, under
    // another module-level name.
    for (auto jt = m->globals().begin(); jt != m->globals().end(); ++jt) {
      if (is_jit(jt->second) && jt->second.function->name == name) {
        return &jt->second;
      }
    }
  }
  if (it == m->globals().end() || !is_jit(it->second)) {
    std::string known;
    for (const auto& [n, g] : m->globals()) {
      if (g.kind == ModuleScope::Global::Kind::kFunction && g.jit) {
        known += (known.empty() ? "" : ", ") + n;
      }
    }
    if (it != m->globals().end() &&
        it->second.kind == ModuleScope::Global::Kind::kUnusable) {
      FailAt(it->second.loc, it->second.reason);
    }
    Fail("no @triton.jit function named '" + name + "' in " + file +
         " (it has: " + (known.empty() ? "none" : known) + ")");
  }
  (void)c;
  return &it->second;
}

std::vector<KernelParam> ParamsOf(const py::FunctionDefStmt& def) {
  std::vector<KernelParam> params;
  auto add = [&](const py::Arg& a) {
    KernelParam p;
    p.name = a.name;
    p.is_constexpr = CodeGen::IsConstexprAnnotation(a.annotation.get());
    p.has_default = a.default_value != nullptr;
    params.push_back(p);
  };
  for (const py::Arg& a : def.args.posonly) add(a);
  for (const py::Arg& a : def.args.args) add(a);
  for (const py::Arg& a : def.args.kwonly) add(a);
  return params;
}

// `tl.const`, `const`, "tl.const": a parameter pointing to constant data.
bool IsConstAnnotation(const py::Expr* e) {
  if (e == nullptr) return false;
  if (const auto* a = py::As<py::AttributeExpr>(e)) return a->attr == "const";
  if (const auto* n = py::As<py::NameExpr>(e)) return n->id == "const";
  if (const auto* c = py::As<py::ConstantExpr>(e)) {
    return c->type == py::ConstantExpr::Type::kString &&
           (c->string_value == "tl.const" || c->string_value == "const");
  }
  return false;
}

PyValue ConstexprOf(const KernelArg& a) {
  switch (a.kind) {
    case KernelArg::Kind::kInt:
      if (a.is_uint64) {
        Fail("a tl.constexpr integer above int64's range (" +
             std::to_string(static_cast<uint64_t>(a.int_value)) +
             ") is not supported");
      }
      return PyValue::Int(a.int_value);
    case KernelArg::Kind::kTuple: {
      std::vector<PyValue> items;
      for (const KernelArg& item : a.items) items.push_back(ConstexprOf(item));
      return PyValue::Tuple(std::move(items));
    }
    case KernelArg::Kind::kFloat:
      return PyValue::Float(a.float_value);
    case KernelArg::Kind::kBool:
      return PyValue::Bool(a.int_value != 0);
    case KernelArg::Kind::kNone:
      return PyValue::None();
    case KernelArg::Kind::kString:
      return PyValue::String(a.text);
    case KernelArg::Kind::kDType:
      return PyValue::DTypeValue(a.dtype);
    case KernelArg::Kind::kPointer:
      break;
  }
  Fail("a buffer cannot be given for a tl.constexpr parameter");
}

// The argument `name` of a decorator call (keyword, else positional).
const py::Expr* DecoratorArg(const py::CallExpr* call, const std::string& name,
                             size_t position) {
  if (call == nullptr) return nullptr;
  for (const py::Keyword& k : call->keywords) {
    if (k.arg && *k.arg == name) return k.value.get();
  }
  return position < call->args.size() ? call->args[position].get() : nullptr;
}

// An @triton.autotune kernel's configs (Config dicts), when they can be
// computed here (a list of triton.Config, or a plain function returning
// one); empty otherwise.
std::vector<PyValue> AutotuneConfigs(Compilation& compilation,
                                     const ModuleScope* m,
                                     const ModuleScope::Global& g) {
  const py::Expr* configs = DecoratorArg(g.autotune, "configs", 0);
  if (configs == nullptr) return {};
  try {
    CodeGen constants(compilation, nullptr);
    Frame frame;
    frame.module = m;
    PyValue v = constants.Eval(*configs, frame);
    if (!v.is(PyValue::Kind::kTuple)) return {};
    for (const PyValue& c : v.items()) {
      if (!c.is(PyValue::Kind::kDict) || c.Lookup("kwargs") == nullptr)
        return {};
    }
    return v.items();
  } catch (const CompileError&) {
    return {};
  }
}

// The names an @triton.heuristics dict gives values to.
std::vector<std::string> HeuristicNames(const ModuleScope::Global& g) {
  std::vector<std::string> names;
  const auto* dict =
      py::As<py::DictExpr>(DecoratorArg(g.heuristics, "values", 0));
  if (dict == nullptr) return names;
  for (const py::ExprPtr& k : dict->keys) {
    const auto* c = py::As<py::ConstantExpr>(k.get());
    if (c != nullptr && c->type == py::ConstantExpr::Type::kString) {
      names.push_back(c->string_value);
    }
  }
  return names;
}

void MarkProvided(std::vector<KernelParam>& params, Compilation& compilation,
                  const ModuleScope* m, const ModuleScope::Global& g,
                  int config) {
  std::vector<PyValue> configs = AutotuneConfigs(compilation, m, g);
  if (!configs.empty()) {
    const PyValue& c = configs[std::min<size_t>(config, configs.size() - 1)];
    for (const std::string& k : c.Lookup("kwargs")->keys()) {
      for (KernelParam& p : params) {
        if (p.name == k) p.provided_by = "autotune";
      }
    }
  }
  for (const std::string& k : HeuristicNames(g)) {
    for (KernelParam& p : params) {
      if (p.name == k) p.provided_by = "heuristics";
    }
  }
}

// The value a host reference names: a function of a file, a builtin
// module, or a builtin module's function.
PyValue ResolveReference(Compilation& compilation, const HostReference& r) {
  const std::string what =
      "the global '" + r.name + "' (" +
      (r.file.empty() ? r.target : r.file + ": " + r.target) + ")";
  if (!r.file.empty()) {
    const ModuleScope* defining = compilation.LoadFile(r.file);
    if (std::optional<PyValue> v =
            compilation.ModuleAttribute(defining, r.target, {})) {
      return *v;
    }
    Fail(what + ": the file does not define '" + r.target + "'");
  }
  const ModuleScope* whole = compilation.Import(r.target, 0, nullptr);
  if (whole->kind() == ModuleScope::Kind::kBuiltin)
    return PyValue::Module(whole);
  const size_t dot = r.target.rfind('.');
  if (dot != std::string::npos) {
    const ModuleScope* m =
        compilation.Import(r.target.substr(0, dot), 0, nullptr);
    if (m->kind() == ModuleScope::Kind::kBuiltin) {
      if (std::optional<PyValue> v =
              compilation.ModuleAttribute(m, r.target.substr(dot + 1), {})) {
        return *v;
      }
    }
  }
  Fail(what + ": no builtin of that name");
}

}  // namespace

bool CodeGen::IsConstexprAnnotation(const py::Expr* e) {
  if (e == nullptr) return false;
  if (const auto* a = py::As<py::AttributeExpr>(e))
    return a->attr == "constexpr";
  if (const auto* n = py::As<py::NameExpr>(e)) return n->id == "constexpr";
  if (const auto* c = py::As<py::ConstantExpr>(e)) {
    return c->type == py::ConstantExpr::Type::kString &&
           (c->string_value == "tl.constexpr" ||
            c->string_value == "constexpr");
  }
  return false;
}

KernelArg KernelArg::FromText(const std::string& text) {
  KernelArg a;
  if (text == "None") return a;
  if (text == "True" || text == "False") {
    a.kind = Kind::kBool;
    a.int_value = text == "True";
    return a;
  }
  if (!text.empty()) {
    char* end = nullptr;
    errno = 0;
    const long long i = std::strtoll(text.c_str(), &end, 0);
    if (*end == 0 && errno == 0 &&
        text.find_first_of(".eE") == std::string::npos) {
      a.kind = Kind::kInt;
      a.int_value = i;
      return a;
    }
    const double f = std::strtod(text.c_str(), &end);
    if (*end == 0) {
      a.kind = Kind::kFloat;
      a.float_value = f;
      return a;
    }
    std::string name = text;
    for (const char* prefix : {"tl.", "triton.language.", "torch."}) {
      if (name.rfind(prefix, 0) == 0)
        name = name.substr(std::string(prefix).size());
    }
    if (const DType* d = DType::FromName(name);
        d != nullptr && name != "bool") {
      a.kind = Kind::kDType;
      a.dtype = d;
      return a;
    }
  }
  a.kind = Kind::kString;
  a.text = text;
  return a;
}

std::string KernelArg::Describe() const {
  switch (kind) {
    case Kind::kPointer:
      return "pointer<" + dtype->Name() + ">";
    case Kind::kInt:
      return "int " + (is_uint64
                           ? std::to_string(static_cast<uint64_t>(int_value))
                           : std::to_string(int_value));
    case Kind::kTuple: {
      std::string out = "(";
      for (size_t i = 0; i < items.size(); ++i) {
        out += (i ? ", " : "") + items[i].Describe();
      }
      return out + (items.size() == 1 ? ",)" : ")");
    }
    case Kind::kFloat:
      return "float " + PyValue::Float(float_value).Repr();
    case Kind::kBool:
      return int_value ? "True" : "False";
    case Kind::kNone:
      return "None";
    case Kind::kString:
      return "'" + text + "'";
    case Kind::kDType:
      return dtype->Name();
  }
  return "?";
}

Result<std::vector<KernelParam>> ReadKernelParams(
    const FrontendRequest& request) {
  Compilation compilation(request.module_paths);
  try {
    const ModuleScope* m = compilation.LoadFile(request.file, request.source);
    const ModuleScope::Global* g =
        FindKernel(compilation, m, request.kernel, request.file);
    std::vector<KernelParam> params = ParamsOf(*g->function);
    MarkProvided(params, compilation, m, *g, request.autotune_config);
    return params;
  } catch (const CompileError& e) {
    return Error{Format(e, &compilation, request.file, request.source)};
  }
}

Result<FrontendOutput> CompileKernel(const FrontendRequest& request) {
  Compilation compilation(request.module_paths);
  FrontendOutput out;
  try {
    const ModuleScope* m = compilation.LoadFile(request.file, request.source);
    for (const auto& [name, value] : request.globals) {
      if (value.kind == KernelArg::Kind::kPointer) {
        Fail("the global '" + name + "' cannot be a buffer");
      }
      m->values()[name] = ConstexprOf(value);
    }
    for (const HostReference& r : request.references) {
      const ModuleScope* in =
          r.module_file.empty() ? m : compilation.LoadFile(r.module_file);
      in->values()[r.name] = ResolveReference(compilation, r);
    }
    const ModuleScope::Global* g =
        FindKernel(compilation, m, request.kernel, request.file);
    const py::FunctionDefStmt& def = *g->function;
    out.params = ParamsOf(def);
    for (const auto& [name, arg] : request.args) {
      bool known = false;
      for (const KernelParam& p : out.params) known |= p.name == name;
      if (!known) {
        FailAt(def.loc, "kernel '" + def.name + "' has no parameter named '" +
                            name + "'");
      }
    }

    auto module = std::make_unique<ir::Module>();
    auto function = std::make_unique<ir::Function>(def.name, def.loc);
    ir::Builder builder(function->body());
    builder.set_loc(def.loc);
    CodeGen cg(compilation, &builder);
    Frame frame;
    frame.module = m;
    frame.def = &def;

    // Values the kernel's decorators give to parameters the launch leaves
    // out: an autotune config's, then heuristics' (computed from the rest).
    std::map<std::string, KernelArg> given_args(request.args.begin(),
                                                request.args.end());
    std::map<std::string, PyValue> decorated;
    std::vector<PyValue> configs = AutotuneConfigs(compilation, m, *g);
    if (!configs.empty()) {
      if (request.autotune_config < 0 ||
          request.autotune_config >= static_cast<int>(configs.size())) {
        FailAt(def.loc, "autotune config " +
                            std::to_string(request.autotune_config) +
                            " does not exist: the kernel has " +
                            std::to_string(configs.size()));
      }
      const PyValue& c = configs[request.autotune_config];
      std::string used;
      const PyValue& kwargs = *c.Lookup("kwargs");
      for (size_t i = 0; i < kwargs.keys().size(); ++i) {
        const std::string& k = kwargs.keys()[i];
        if (given_args.count(k)) continue;
        decorated[k] = kwargs.items()[i];
        used += " " + k + "=" + kwargs.items()[i].Repr();
      }
      const PyValue* warps = c.Lookup("num_warps");
      if (warps != nullptr && warps->is(PyValue::Kind::kInt)) {
        out.num_warps = static_cast<int>(warps->as_int());
        used += " num_warps=" + warps->Repr();
      }
      out.notes.push_back("autotune: config " +
                          std::to_string(request.autotune_config) + " of " +
                          std::to_string(configs.size()) + ":" + used);
    }
    if (const auto* dict =
            py::As<py::DictExpr>(DecoratorArg(g->heuristics, "values", 0))) {
      std::vector<std::pair<std::string, PyValue>> known;
      for (const auto& [name, arg] : given_args) {
        known.emplace_back(name, arg.kind == KernelArg::Kind::kPointer
                                     ? PyValue::Enum("pointer:" + name)
                                     : ConstexprOf(arg));
      }
      for (const auto& [name, v] : decorated) known.emplace_back(name, v);
      CodeGen constants(compilation, nullptr);
      Frame frame;
      frame.module = m;
      for (size_t i = 0; i < dict->keys.size(); ++i) {
        const auto* key = py::As<py::ConstantExpr>(dict->keys[i].get());
        if (key == nullptr || given_args.count(key->string_value)) continue;
        PyValue fn = constants.Eval(*dict->values[i], frame);
        PyValue v = constants.Call(fn, {PyValue::Dict(known)}, {},
                                   dict->values[i]->loc, frame);
        decorated[key->string_value] = v;
        known.emplace_back(key->string_value, v);
        out.notes.push_back("heuristics: " + key->string_value + "=" +
                            v.Repr());
      }
    }

    std::vector<const py::Arg*> args;
    for (const py::Arg& a : def.args.posonly) args.push_back(&a);
    for (const py::Arg& a : def.args.args) args.push_back(&a);
    for (const py::Arg& a : def.args.kwonly) args.push_back(&a);
    if (def.args.vararg || def.args.kwarg) {
      FailAt(def.loc, "a kernel cannot take *args or **kwargs");
    }
    for (size_t i = 0; i < args.size(); ++i) {
      const py::Arg& a = *args[i];
      KernelParam& p = out.params[i];
      const KernelArg* given = nullptr;
      for (const auto& [name, arg] : request.args) {
        if (name == a.name) given = &arg;
      }
      SourceLocation loc = a.loc.known() ? a.loc : def.loc;
      if (given == nullptr && decorated.count(a.name)) {
        if (!decorated[a.name].is_constexpr()) {
          FailAt(loc, "the value the decorators give '" + a.name +
                          "' is not constant");
        }
        frame.locals[a.name] = decorated[a.name];
        continue;
      }
      if (given == nullptr) {
        if (!a.default_value) {
          FailAt(loc, "missing a value for parameter '" + a.name +
                          "' of kernel '" + def.name + "'");
        }
        Frame module_frame;
        module_frame.module = m;
        CodeGen constants(compilation, nullptr);
        PyValue v = constants.Eval(*a.default_value, module_frame);
        if (!v.is_constexpr())
          FailAt(loc, "the default of '" + a.name + "' is not constant");
        frame.locals[a.name] = v;
        continue;
      }
      if (p.is_constexpr) {
        frame.locals[a.name] = ConstexprOf(*given);
        continue;
      }
      ir::ArgInfo info;
      info.name = a.name;
      info.loc = loc;
      const DType* dtype = nullptr;
      switch (given->kind) {
        case KernelArg::Kind::kNone:
          frame.locals[a.name] = PyValue::None();
          continue;
        case KernelArg::Kind::kTuple:
          frame.locals[a.name] = ConstexprOf(*given);
          continue;
        case KernelArg::Kind::kPointer:
          // `p: tl.const`: a pointer to data the kernel only reads.
          dtype = DType::Pointer(given->dtype, 1,
                                 IsConstAnnotation(a.annotation.get()));
          info.divisibility = 16;
          break;
        case KernelArg::Kind::kInt: {
          const int64_t v = given->int_value;
          if (given->is_uint64) {
            dtype = DType::UInt(64);
            if (static_cast<uint64_t>(v) % 16 == 0) info.divisibility = 16;
            break;
          }
          if (v == 1) {
            frame.locals[a.name] = PyValue::Int(1);
            continue;
          }
          dtype =
              (v >= INT32_MIN && v <= INT32_MAX) ? DType::I32() : DType::I64();
          if (v % 16 == 0) info.divisibility = 16;
          break;
        }
        case KernelArg::Kind::kFloat:
          dtype = DType::F32();
          break;
        case KernelArg::Kind::kBool:
          dtype = DType::Bool();
          break;
        case KernelArg::Kind::kString:
        case KernelArg::Kind::kDType:
          FailAt(loc, "parameter '" + a.name +
                          "' is not a tl.constexpr, so it "
                          "takes a buffer or a number, not " +
                          given->Describe());
      }
      p.ir_arg = static_cast<int>(function->arg_info().size());
      ir::Value* v = function->AddArgument(dtype->ToIr(), info);
      frame.locals[a.name] = PyValue::TensorValue(Tensor{v, dtype, {}});
    }

    for (const KernelParam& p : out.params) {
      if (p.is_constexpr) frame.constexpr_names.insert(p.name);
    }
    cg.RunBody(def.body, frame);
    if (frame.returned && !frame.returned->is_none()) {
      FailAt(def.loc, "a kernel cannot return a value");
    }
    builder.set_block(function->body());
    builder.set_loc(def.loc);
    builder.Create(ir::OpCode::kReturn, {}, {});
    ir::RemoveUnusedOps(*function);
    module->AddFunction(std::move(function));
    if (Status s = ir::Verify(*module, "the front end"); !s.ok()) {
      return Error{"internal compiler error: " + s.error().message};
    }
    out.module = std::move(module);
    out.messages = compilation.messages();
    return out;
  } catch (const CompileError& e) {
    return Error{Format(e, &compilation, request.file, request.source)};
  }
}

std::vector<std::string> BuiltinModuleNames(const std::string& dotted) {
  Compilation compilation({});
  try {
    return compilation.BuiltinModuleNames(dotted);
  } catch (const CompileError&) {
    return {};  // the prelude did not parse: no compile works either
  }
}

}  // namespace mtlemu::triton::frontend
