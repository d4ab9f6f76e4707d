#include "compiler/triton/frontend/compilation.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

#include "compiler/triton/frontend/builtins.h"
#include "compiler/triton/frontend/codegen.h"
#include "compiler/triton/frontend/compile_error.h"
#include "compiler/triton/frontend/prelude.h"
#include "compiler/triton/python/parse_cache.h"

namespace mtlemu::triton::frontend {
namespace fs = std::filesystem;

namespace {

// The builtin namespaces, by the dotted names that import them.
struct BuiltinModuleInfo {
  const char* name;
  unsigned namespaces;
};
constexpr BuiltinModuleInfo kBuiltinModules[] = {
    {"triton", kTriton},
    {"triton_metal", kTriton},
    {"triton.language", kTl},
    {"triton_metal.language", kTl},
    {"triton.language.core", kTl},
    {"triton.language.standard", kTl},
    {"triton.language.math", kMath},
    {"triton_metal.language.math", kMath},
    {"triton_metal.language.core", kTl},
    {"triton_metal.language.standard", kTl},
    {"triton.language.extra", 0},
    {"triton.language.extra.cuda", 0},
    {"triton.language.extra.hip", 0},
    {"triton.language.extra.intel", 0},
    {"triton.language.extra.cpu", 0},  // Triton's CPU backend's spelling
    {"triton.language.extra.libdevice", kLibdevice},
    {"triton.language.extra.cuda.libdevice", kLibdevice},
    {"triton.language.extra.hip.libdevice", kLibdevice},
    {"triton.language.extra.intel.libdevice", kLibdevice},
    {"triton.language.extra.cpu.libdevice", kLibdevice},
    {"triton_metal.language.extra", 0},
    {"triton_metal.language.extra.libdevice", kLibdevice},
};

// Names of the builtin namespaces that are no builtins.def row: classes
// (for isinstance and annotations), enums, constants, decorators.
constexpr const char* kTlClasses[] = {"tensor", "dtype", "block_type",
                                      "tuple_type", "tensor_descriptor"};
constexpr const char* kTritonDecorators[] = {
    "jit", "autotune", "heuristics", "constexpr_function", "must_use_result"};

// The modules whose prelude names include those starting with '_' (Triton's
// standard.py defines them, and libraries import them: _log2...).
bool ExportsPrivatePreludeNames(const std::string& dotted) {
  return dotted == "triton.language.standard" ||
         dotted == "triton_metal.language.standard";
}

// The rightmost name of a decorator: jit for @triton.jit, @jit and
// @triton.jit(...).
std::string DecoratorName(const py::Expr* e) {
  if (const auto* c = py::As<py::CallExpr>(e))
    return DecoratorName(c->func.get());
  if (const auto* n = py::As<py::NameExpr>(e)) return n->id;
  if (const auto* a = py::As<py::AttributeExpr>(e)) return a->attr;
  return "";
}

// A function made by calls rather than decorators: `K = triton.jit(K)`,
// `K = triton.heuristics({...})(K)`, `K = triton.autotune(...)(
// triton.jit(K))`, `kernel = tl.core.jit(impl)`, `triton.jit(repr=f)(K)`:
// the function's global with what the calls add, or nullopt for any other
// expression.
std::optional<ModuleScope::Global> WrappedFunction(
    const py::Expr* e, const std::map<std::string, ModuleScope::Global>& g) {
  using G = ModuleScope::Global;
  if (const auto* n = py::As<py::NameExpr>(e)) {
    auto it = g.find(n->id);
    if (it == g.end() || it->second.kind != G::Kind::kFunction) {
      return std::nullopt;
    }
    return it->second;
  }
  const auto* c = py::As<py::CallExpr>(e);
  if (c == nullptr || c->args.size() != 1 || !c->keywords.empty() ||
      py::As<py::StarredExpr>(c->args[0].get()) != nullptr) {
    return std::nullopt;
  }
  const auto* factory = py::As<py::CallExpr>(c->func.get());
  const std::string name = DecoratorName(c->func.get());
  const bool decorator = name == "jit" || name == "constexpr_function" ||
                         name == "autotune" || name == "heuristics";
  if (!decorator ||
      ((name == "autotune" || name == "heuristics") && factory == nullptr)) {
    return std::nullopt;
  }
  std::optional<G> inner = WrappedFunction(c->args[0].get(), g);
  if (!inner) return std::nullopt;
  if (name == "jit") inner->jit = true;
  if (name == "constexpr_function") inner->constexpr_function = true;
  if (name == "autotune") inner->autotune = factory;
  if (name == "heuristics") inner->heuristics = factory;
  return inner;
}

bool IsStringOrEllipsis(const py::Stmt& s) {
  const auto* e = py::As<py::ExprStmt>(&s);
  if (e == nullptr) return false;
  const auto* c = py::As<py::ConstantExpr>(e->value.get());
  return c != nullptr;
}

// The parser's "file:line:col: error: message" as a located CompileError,
// so that it is printed once, with its source line.
CompileError ParseFailure(const std::string& text) {
  const std::string marker = ": error: ";
  const size_t at = text.find(marker);
  if (at != std::string::npos) {
    const std::string where = text.substr(0, at);
    const size_t c2 = where.rfind(':');
    const size_t c1 = c2 == std::string::npos ? c2 : where.rfind(':', c2 - 1);
    if (c1 != std::string::npos) {
      SourceLocation loc;
      loc.file = where.substr(0, c1);
      loc.line = std::atoi(where.substr(c1 + 1, c2 - c1 - 1).c_str());
      loc.column = std::max(0, std::atoi(where.substr(c2 + 1).c_str()) - 1);
      std::string message = text.substr(at + marker.size());
      // Only the first line: the source line and caret are printed again.
      message = message.substr(0, message.find('\n'));
      if (loc.line > 0) return CompileError{message, loc, {}};
    }
  }
  return CompileError{text, {}, {}};
}

}  // namespace

Compilation::Compilation(std::vector<std::string> module_paths)
    : module_paths_(std::move(module_paths)) {}

Compilation::~Compilation() = default;

const ModuleScope* Compilation::LoadFile(const std::string& path,
                                         std::optional<std::string> source) {
  std::error_code ec;
  fs::path canonical = fs::weakly_canonical(fs::path(path), ec);
  const std::string key = "file:" + (ec ? path : canonical.string());
  if (auto it = modules_.find(key); it != modules_.end())
    return it->second.get();
  if (!source) {
    std::ifstream in(path, std::ios::binary);
    if (!in) Fail(path + ": cannot open file");
    std::ostringstream text;
    text << in.rdbuf();
    source = text.str();
  }
  Result<std::shared_ptr<const py::Module>> parsed =
      py::ParseModuleCached(*source, path);
  if (!parsed.ok()) throw ParseFailure(parsed.error().message);
  std::shared_ptr<const py::Module> ast = std::move(parsed).value();
  std::string name = fs::path(path).stem().string();
  auto scope = ModuleScope::User(name, path, std::move(ast), false);
  ModuleScope* m = scope.get();
  modules_[key] = std::move(scope);
  ScanModule(m);
  return m;
}

const ModuleScope* Compilation::prelude() {
  if (prelude_ != nullptr) return prelude_;
  const std::string key = "prelude";
  Result<std::shared_ptr<const py::Module>> parsed =
      py::ParseModuleCached(PreludeSource(), kPreludeFile);
  if (!parsed.ok()) {
    throw CompileError{
        "internal error in the Triton prelude: " + parsed.error().message,
        {},
        {}};
  }
  std::shared_ptr<const py::Module> ast = std::move(parsed).value();
  auto scope = ModuleScope::User("triton.language.standard", kPreludeFile,
                                 std::move(ast), true);
  ModuleScope* m = scope.get();
  modules_[key] = std::move(scope);
  prelude_ = m;
  ScanModule(m);
  return m;
}

bool Compilation::IsTensorMethod(const std::string& name) {
  const ModuleScope* p = prelude();
  std::optional<PyValue> methods =
      LookupGlobal(p, "_TENSOR_METHODS", SourceLocation{});
  if (!methods || !methods->is(PyValue::Kind::kTuple)) return false;
  for (const PyValue& v : methods->items()) {
    if (v.is(PyValue::Kind::kString) && v.as_string() == name) return true;
  }
  return false;
}

const ModuleScope* Compilation::BuiltinModule(const std::string& dotted) {
  for (const BuiltinModuleInfo& info : kBuiltinModules) {
    if (dotted == info.name) {
      const std::string key = "builtin:" + dotted;
      auto it = modules_.find(key);
      if (it == modules_.end()) {
        it =
            modules_.emplace(key, ModuleScope::Builtin(dotted, info.namespaces))
                .first;
      }
      return it->second.get();
    }
  }
  return nullptr;
}

std::optional<std::string> Compilation::FindModuleFile(
    const std::string& dotted, int level, const ModuleScope* from) {
  std::vector<std::string> parts;
  {
    std::stringstream ss(dotted);
    std::string part;
    while (std::getline(ss, part, '.')) {
      if (!part.empty()) parts.push_back(part);
    }
  }
  auto try_dir = [&](fs::path dir) -> std::optional<std::string> {
    for (const std::string& p : parts) dir /= p;
    std::error_code ec;
    fs::path file = dir;
    file += ".py";
    if (fs::is_regular_file(file, ec)) return file.string();
    if (fs::is_regular_file(dir / "__init__.py", ec)) {
      return (dir / "__init__.py").string();
    }
    return std::nullopt;
  };
  fs::path from_dir = from != nullptr &&
                              from->kind() == ModuleScope::Kind::kUser &&
                              !from->path().empty()
                          ? fs::path(from->path()).parent_path()
                          : fs::path(".");
  if (from_dir.empty()) from_dir = ".";
  if (level > 0) {
    fs::path base = from_dir;
    for (int i = 1; i < level; ++i) base = base.parent_path();
    if (parts.empty()) {
      std::error_code ec;
      if (fs::is_regular_file(base / "__init__.py", ec)) {
        return (base / "__init__.py").string();
      }
      return std::nullopt;
    }
    return try_dir(base);
  }
  if (parts.empty()) return std::nullopt;
  std::vector<fs::path> dirs = {from_dir};
  for (const std::string& p : module_paths_) dirs.push_back(p);
  // A package the importing file lives in: `from pkg.sub import x` inside
  // .../pkg/ops/file.py finds pkg's parent without a --module-path.
  std::error_code abs_error;
  for (fs::path d = fs::absolute(from_dir, abs_error); d.has_relative_path();
       d = d.parent_path()) {
    if (d.filename() == parts[0]) {
      dirs.push_back(d.parent_path());
      break;
    }
    if (d == d.parent_path()) break;
  }
  for (const fs::path& d : dirs) {
    if (auto found = try_dir(d)) return found;
  }
  return std::nullopt;
}

bool Compilation::CanImport(const std::string& dotted, int level,
                            const ModuleScope* from) {
  if (level == 0 && BuiltinModule(dotted) != nullptr) return true;
  return FindModuleFile(dotted, level, from).has_value();
}

const ModuleScope* Compilation::Import(const std::string& dotted, int level,
                                       const ModuleScope* from) {
  if (level == 0) {
    if (const ModuleScope* b = BuiltinModule(dotted)) return b;
  }
  if (std::optional<std::string> file = FindModuleFile(dotted, level, from)) {
    return LoadFile(*file);
  }
  const std::string key = "foreign:" + std::string(level, '.') + dotted;
  auto it = modules_.find(key);
  if (it == modules_.end()) {
    it = modules_
             .emplace(key,
                      ModuleScope::Foreign(std::string(level, '.') + dotted))
             .first;
  }
  return it->second.get();
}

void Compilation::ScanModule(ModuleScope* m) {
  ScanStatements(m, m->ast()->body);
}

void Compilation::ScanStatements(ModuleScope* m, const py::Body& body) {
  using G = ModuleScope::Global;
  auto& globals = m->mutable_globals();
  for (const py::StmtPtr& sp : body) {
    const py::Stmt& s = *sp;
    switch (s.kind) {
      case py::StmtKind::kFunctionDef: {
        const auto& f = static_cast<const py::FunctionDefStmt&>(s);
        G g;
        g.kind = G::Kind::kFunction;
        g.loc = f.loc;
        g.function = &f;
        for (const py::ExprPtr& d : f.decorators) {
          const std::string n = DecoratorName(d.get());
          if (n == "jit") g.jit = true;
          // `@tl.constexpr` on a def: a constexpr holding the function,
          // which Triton calls at compile time as a constexpr_function.
          if (n == "constexpr_function" || n == "constexpr") {
            g.constexpr_function = true;
          }
          if (n == "autotune") g.autotune = py::As<py::CallExpr>(d.get());
          if (n == "heuristics") g.heuristics = py::As<py::CallExpr>(d.get());
        }
        globals[f.name] = g;
        m->values().erase(f.name);
        break;
      }
      case py::StmtKind::kClassDef: {
        const auto& c = static_cast<const py::ClassDefStmt&>(s);
        G g;
        g.kind = G::Kind::kUnusable;
        g.loc = c.loc;
        g.reason =
            "'" + c.name + "' is a class; Triton kernels cannot use classes";
        globals[c.name] = g;
        m->values().erase(c.name);
        break;
      }
      case py::StmtKind::kAssign: {
        const auto& a = static_cast<const py::AssignStmt&>(s);
        const std::optional<G> wrapped =
            WrappedFunction(a.value.get(), globals);
        if (!wrapped) {
          // `K = LibraryWrapper(triton.jit(K), ...)`: a jit function passed
          // to something else (a KernelInterface subclass) stays
          // launchable under its def's name, kept under a key no Python
          // name can be (FindKernel looks there).
          if (const auto* c = py::As<py::CallExpr>(a.value.get())) {
            for (const py::ExprPtr& arg : c->args) {
              std::optional<G> inner = WrappedFunction(arg.get(), globals);
              if (inner && inner->jit && py::As<py::CallExpr>(arg.get())) {
                globals[" jit " + inner->function->name] = *inner;
              }
            }
          }
        }
        for (const py::ExprPtr& t : a.targets) {
          const auto* n = py::As<py::NameExpr>(t.get());
          if (n != nullptr && wrapped) {
            globals[n->id] = *wrapped;
            m->values().erase(n->id);
          } else if (n != nullptr) {
            G g;
            g.kind = G::Kind::kExpr;
            g.loc = a.loc;
            g.expr = a.value.get();
            globals[n->id] = g;
            m->values().erase(n->id);
          } else if (const auto* tup = py::As<py::TupleExpr>(t.get())) {
            for (size_t i = 0; i < tup->elts.size(); ++i) {
              if (const auto* n = py::As<py::NameExpr>(tup->elts[i].get())) {
                G g;
                g.kind = G::Kind::kTupleElement;
                g.loc = a.loc;
                g.expr = a.value.get();
                g.index = static_cast<int>(i);
                globals[n->id] = g;
                m->values().erase(n->id);
              }
            }
          }
        }
        break;
      }
      case py::StmtKind::kAnnAssign: {
        const auto& a = static_cast<const py::AnnAssignStmt&>(s);
        const auto* n = py::As<py::NameExpr>(a.target.get());
        if (n != nullptr && a.value) {
          G g;
          g.kind = G::Kind::kExpr;
          g.loc = a.loc;
          g.expr = a.value.get();
          globals[n->id] = g;
          m->values().erase(n->id);
        }
        break;
      }
      case py::StmtKind::kImport: {
        const auto& imp = static_cast<const py::ImportStmt&>(s);
        for (const py::Alias& al : imp.names) {
          G g;
          g.kind = G::Kind::kImportModule;
          g.loc = al.loc;
          std::string bound = al.asname;
          if (bound.empty()) {
            bound = al.name.substr(0, al.name.find('.'));
            g.module = bound;
          } else {
            g.module = al.name;
          }
          globals[bound] = g;
          m->values().erase(bound);
        }
        break;
      }
      case py::StmtKind::kImportFrom: {
        const auto& imp = static_cast<const py::ImportFromStmt&>(s);
        for (const py::Alias& al : imp.names) {
          if (al.name == "*") continue;
          G g;
          g.kind = G::Kind::kImportName;
          g.loc = al.loc;
          g.module = imp.module;
          g.level = imp.level;
          g.name = al.name;
          const std::string bound = al.asname.empty() ? al.name : al.asname;
          globals[bound] = g;
          m->values().erase(bound);
        }
        break;
      }
      case py::StmtKind::kIf: {
        const auto& i = static_cast<const py::IfStmt&>(s);
        bool take_body = true;
        try {
          CodeGen cg(*this, nullptr);
          Frame frame;
          frame.module = m;
          PyValue v = cg.Eval(*i.test, frame);
          if (v.is_constexpr()) take_body = v.Truthy();
        } catch (const CompileError&) {
          take_body = true;  // undecidable: a current Triton's branch
        }
        ScanStatements(m, take_body ? i.body : i.orelse);
        break;
      }
      case py::StmtKind::kTry: {
        const auto& t = static_cast<const py::TryStmt&>(s);
        bool importable = true;
        for (const py::StmtPtr& inner : t.body) {
          if (const auto* imp = py::As<py::ImportFromStmt>(inner.get())) {
            importable &= CanImport(imp->module, imp->level, m);
          } else if (const auto* imp2 = py::As<py::ImportStmt>(inner.get())) {
            for (const py::Alias& al : imp2->names) {
              importable &= CanImport(al.name, 0, m);
            }
          }
        }
        if (importable || t.handlers.empty()) {
          ScanStatements(m, t.body);
          ScanStatements(m, t.orelse);
        } else {
          ScanStatements(m, t.handlers.front().body);
        }
        ScanStatements(m, t.finalbody);
        break;
      }
      case py::StmtKind::kUnparsed: {
        const auto& u = static_cast<const py::UnparsedStmt&>(s);
        if (!u.defines.empty()) {
          G g;
          g.kind = G::Kind::kUnusable;
          g.loc = u.error_loc;
          g.reason = u.error;
          globals[u.defines] = g;
          m->values().erase(u.defines);
        }
        break;
      }
      default:
        (void)IsStringOrEllipsis;
        break;
    }
  }
}

std::optional<PyValue> Compilation::LookupGlobal(const ModuleScope* m,
                                                 const std::string& name,
                                                 const SourceLocation& loc) {
  if (m->kind() != ModuleScope::Kind::kUser) {
    return ModuleAttribute(m, name, loc);
  }
  if (auto it = m->values().find(name); it != m->values().end()) {
    return it->second;
  }
  auto git = m->globals().find(name);
  if (git == m->globals().end()) return std::nullopt;
  const ModuleScope::Global& g = git->second;
  using G = ModuleScope::Global;
  if (m->evaluating().count(name)) {
    FailAt(g.loc, "module-level name '" + name + "' depends on itself");
  }
  m->evaluating().insert(name);
  struct Done {
    const ModuleScope* m;
    const std::string& name;
    ~Done() { m->evaluating().erase(name); }
  } done{m, name};
  PyValue value;
  switch (g.kind) {
    case G::Kind::kFunction: {
      FunctionRef f;
      f.def = g.function;
      f.module = m;
      f.jit = g.jit || g.constexpr_function;
      f.noinline = false;
      if (g.constexpr_function) f.jit = false;
      value = PyValue::Function(f);
      if (!g.jit && !g.constexpr_function) {
        // A plain Python function: usable only as a compile-time helper of
        // decorators; calling it from a kernel is an error (builtins.cpp).
        FunctionRef plain = f;
        plain.jit = false;
        value = PyValue::Function(plain);
      }
      break;
    }
    case G::Kind::kExpr:
    case G::Kind::kTupleElement: {
      CodeGen cg(*this, nullptr);
      Frame frame;
      frame.module = m;
      try {
        value = cg.Eval(*g.expr, frame);
      } catch (CompileError& e) {
        e.call_stack.push_back("while evaluating the module-level value '" +
                               name + "' of " + m->path());
        throw;
      }
      if (g.kind == G::Kind::kTupleElement) {
        if (!value.is(PyValue::Kind::kTuple) ||
            static_cast<size_t>(g.index) >= value.items().size()) {
          FailAt(g.loc, "cannot unpack the value of '" + name + "'");
        }
        value = value.items()[g.index];
      }
      break;
    }
    case G::Kind::kImportModule:
      value = PyValue::Module(Import(g.module, 0, m));
      break;
    case G::Kind::kImportName: {
      const ModuleScope* src = Import(g.module, g.level, m);
      // `from . import name` in a package's own __init__.py: the
      // submodule (as an attribute, `name` would be this very import).
      std::optional<PyValue> v;
      if (src == m) v = Submodule(src, g.name);
      if (!v) v = ModuleAttribute(src, g.name, g.loc);
      if (!v) {
        FailAt(g.loc, "cannot import name '" + g.name + "' from '" +
                          std::string(g.level, '.') + g.module + "'");
      }
      value = *v;
      break;
    }
    case G::Kind::kUnusable:
      FailAt(g.loc, g.reason);
  }
  m->values()[name] = value;
  return value;
}

std::optional<PyValue> Compilation::Submodule(const ModuleScope* m,
                                              const std::string& name) {
  if (m->kind() != ModuleScope::Kind::kUser ||
      fs::path(m->path()).filename() != "__init__.py") {
    return std::nullopt;
  }
  // `from . import name` from the package's __init__.py: its folder's
  // name.py or name/__init__.py.
  if (std::optional<std::string> file = FindModuleFile(name, 1, m)) {
    return PyValue::Module(LoadFile(*file));
  }
  return std::nullopt;
}

std::optional<PyValue> Compilation::ModuleAttribute(const ModuleScope* m,
                                                    const std::string& name,
                                                    const SourceLocation& loc) {
  switch (m->kind()) {
    case ModuleScope::Kind::kUser: {
      if (std::optional<PyValue> v = LookupGlobal(m, name, loc)) return v;
      return Submodule(m, name);
    }
    case ModuleScope::Kind::kForeign:
      return PyValue::Module(Import(m->name() + "." + name, 0, nullptr));
    case ModuleScope::Kind::kBuiltin:
      break;
  }
  const std::string& mod = m->name();
  if (const ModuleScope* sub = BuiltinModule(mod + "." + name)) {
    return PyValue::Module(sub);
  }
  const unsigned ns = m->namespaces();
  if (ns & kTl) {
    if (const DType* d = DType::FromName(name)) {
      if (name != "bool") return PyValue::DTypeValue(d);
    }
    if (name == "PropagateNan") return PyValue::Enum("PropagateNan");
    for (const char* c : kTlClasses) {
      if (name == c) return PyValue::Enum("class:" + name);
    }
    if (name == "TRITON_MAX_TENSOR_NUMEL") return PyValue::Int(1048576);
    if (name == "pi32_t") {  // core.py's one pointer-type constant
      return PyValue::DTypeValue(DType::Pointer(DType::Int(32)));
    }
  }
  if (ns & kTriton) {
    if (name == "__version__") return PyValue::String("3.6.0");
    for (const char* d : kTritonDecorators) {
      if (name == d) return PyValue::Enum("decorator:" + name);
    }
  }
  if (ns != 0) {
    if (std::optional<BuiltinId> id = FindBuiltin(ns, name)) {
      return PyValue::Builtin(*id);
    }
  }
  if (ns & (kTl | kTriton | kMath)) {
    const ModuleScope* p = prelude();
    if (p != m) {
      auto git = p->globals().find(name);
      if (git != p->globals().end() && !name.empty() &&
          (name[0] != '_' || ExportsPrivatePreludeNames(mod))) {
        return LookupGlobal(p, name, loc);
      }
    }
  }
  return std::nullopt;
}

std::vector<std::string> Compilation::BuiltinModuleNames(
    const std::string& dotted) {
  std::set<std::string> names;
  const ModuleScope* m = BuiltinModule(dotted);
  if (m == nullptr) return {};
  for (const BuiltinModuleInfo& info : kBuiltinModules) {
    const std::string sub = info.name;
    if (sub.size() > dotted.size() + 1 && sub.starts_with(dotted + ".") &&
        sub.find('.', dotted.size() + 1) == std::string::npos) {
      names.insert(sub.substr(dotted.size() + 1));
    }
  }
  const unsigned ns = m->namespaces();
  if (ns & kTl) {
    names.insert({"PropagateNan", "TRITON_MAX_TENSOR_NUMEL"});
    names.insert(std::begin(kTlClasses), std::end(kTlClasses));
  }
  if (ns & kTriton) {
    names.insert("__version__");
    names.insert(std::begin(kTritonDecorators), std::end(kTritonDecorators));
  }
  for (const std::string& n : BuiltinNames(ns)) names.insert(n);
  if (ns & (kTl | kTriton | kMath)) {
    for (const auto& [n, g] : prelude()->globals()) {
      if (g.kind != ModuleScope::Global::Kind::kFunction || n.empty()) continue;
      if (n[0] != '_' || ExportsPrivatePreludeNames(dotted)) names.insert(n);
    }
  }
  return {names.begin(), names.end()};
}

}  // namespace mtlemu::triton::frontend
