// A Python module as the front end sees it: a user's file (its top-level
// definitions: jit functions, constants, imports), or one of the builtin
// namespaces that stand for Triton's own modules (triton, triton.language,
// triton.language.math, ...extra.libdevice), or a foreign module (torch,
// numpy...) that a kernel file imports for its host code, usable by no
// kernel.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "compiler/triton/frontend/py_value.h"
#include "compiler/triton/python/ast.h"

namespace mtlemu::triton::frontend {

// The builtin namespaces (builtins.def's namespace column).
enum Namespace : unsigned {
  kTl = 1,
  kMath = 2,
  kLibdevice = 4,
  kTriton = 8,
  kPython = 16,
  kTensor = 32,
  kDesc = 64,
};

class ModuleScope {
 public:
  enum class Kind { kUser, kBuiltin, kForeign };

  // One top-level name of a user module and how to get its value.
  struct Global {
    enum class Kind {
      kFunction,      // def: jit, constexpr_function, or plain Python
      kExpr,          // NAME = expr (or NAME: ann = expr)
      kTupleElement,  // A, B = expr: element `index` of expr's value
      kImportModule,  // import a.b as NAME / import a (NAME = a)
      kImportName,    // from a.b import x as NAME
      kUnusable,      // a class, an unparsed statement: the reason
    };
    Kind kind = Kind::kExpr;
    SourceLocation loc;
    const py::FunctionDefStmt* function = nullptr;
    bool jit = false;
    bool constexpr_function = false;
    // @triton.autotune(...) and @triton.heuristics(...) around a jit
    // function, for a launcher that leaves their parameters out.
    const py::CallExpr* autotune = nullptr;
    const py::CallExpr* heuristics = nullptr;
    const py::Expr* expr = nullptr;
    int index = 0;
    std::string module;  // dotted, for imports
    int level = 0;       // relative import dots
    std::string name;    // the imported name
    std::string reason;  // kUnusable
  };

  static std::unique_ptr<ModuleScope> User(
      std::string name, std::string path, std::shared_ptr<const py::Module> ast,
      bool library);
  static std::unique_ptr<ModuleScope> Builtin(std::string name,
                                              unsigned namespaces);
  static std::unique_ptr<ModuleScope> Foreign(std::string name);

  Kind kind() const { return kind_; }
  const std::string& name() const { return name_; }
  // User modules.
  const std::string& path() const { return path_; }
  const py::Module* ast() const { return ast_.get(); }
  // The library prelude: its ops take the caller's location.
  bool library() const { return library_; }
  const std::map<std::string, Global>& globals() const { return globals_; }
  std::map<std::string, Global>& mutable_globals() { return globals_; }
  // Builtin modules: the namespaces their names come from.
  unsigned namespaces() const { return namespaces_; }

  // Evaluated globals (filled lazily by Compilation::LookupGlobal).
  std::map<std::string, PyValue>& values() const { return values_; }
  std::set<std::string>& evaluating() const { return evaluating_; }

 private:
  Kind kind_ = Kind::kUser;
  std::string name_;
  std::string path_;
  std::shared_ptr<const py::Module> ast_;  // shared, see parse_cache.h
  bool library_ = false;
  unsigned namespaces_ = 0;
  std::map<std::string, Global> globals_;
  mutable std::map<std::string, PyValue> values_;
  mutable std::set<std::string> evaluating_;
};

}  // namespace mtlemu::triton::frontend
