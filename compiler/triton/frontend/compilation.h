// The state of one front-end compilation: the modules loaded (the kernel's
// file, what it imports, the library prelude, the builtin namespaces) and
// how a name in one of them resolves to a value.
//
// Imports are resolved statically: `triton`, `triton.language` (and
// `triton_metal`'s spellings) name builtin namespaces; `from M import f`
// finds M.py or M/__init__.py through the module search path (the kernel
// file's directory first); a relative import is resolved against the
// importing file's package. Modules nobody can load (torch, numpy) are
// foreign: importing them is fine, using them in a kernel is an error.
// Module-level `if` and `try` are followed where they can be decided; an
// undecidable `if` takes its first branch, as a current Triton would, and a
// `try` whose imports cannot be resolved takes its first handler.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/triton/frontend/module_scope.h"
#include "compiler/triton/frontend/py_value.h"

namespace mtlemu::triton::frontend {

class Compilation {
 public:
  explicit Compilation(std::vector<std::string> module_paths);
  ~Compilation();

  // Loads the user module of `path` (with `source` when given, else read
  // from the file); the same path is loaded once. Errors: unreadable file,
  // a Python file that does not tokenize.
  const ModuleScope* LoadFile(const std::string& path,
                              std::optional<std::string> source = {});
  // The module that `import dotted` (with `level` leading dots) names, seen
  // from `from`; a foreign module when nothing can be found.
  const ModuleScope* Import(const std::string& dotted, int level,
                            const ModuleScope* from);
  // True when `dotted` names a builtin namespace or a file on the path
  // (for deciding module-level try blocks).
  bool CanImport(const std::string& dotted, int level, const ModuleScope* from);

  // The value of `name` in module `m`, or nullopt when `m` has no such
  // name. Constants are evaluated once; an unusable global is an error.
  std::optional<PyValue> LookupGlobal(const ModuleScope* m,
                                      const std::string& name,
                                      const SourceLocation& loc);
  // The submodule `name` of the package whose __init__.py `m` is (its
  // name.py or name/__init__.py), or nullopt.
  std::optional<PyValue> Submodule(const ModuleScope* m,
                                   const std::string& name);
  // `m.name` for a module value (builtin namespaces included).
  std::optional<PyValue> ModuleAttribute(const ModuleScope* m,
                                         const std::string& name,
                                         const SourceLocation& loc);

  // The names a builtin module (`triton.language`, `triton.language.math`,
  // `triton`...) has for kernels: its builtins, prelude functions, classes,
  // enums, submodules; empty for a name that is no builtin module.
  std::vector<std::string> BuiltinModuleNames(const std::string& dotted);

  // The library prelude (Triton-language definitions of tl functions that
  // Triton itself writes in Python: cdiv, sum, argmax, softmax, sort...).
  const ModuleScope* prelude();
  // The names of prelude functions that are also tensor methods.
  bool IsTensorMethod(const std::string& name);

  // What tl.static_print printed, for the caller to show.
  void AddMessage(std::string line) { messages_.push_back(std::move(line)); }
  const std::vector<std::string>& messages() const { return messages_; }

 private:
  void ScanModule(ModuleScope* m);
  void ScanStatements(ModuleScope* m, const py::Body& body);
  const ModuleScope* BuiltinModule(const std::string& dotted);
  std::optional<std::string> FindModuleFile(const std::string& dotted,
                                            int level, const ModuleScope* from);

  std::vector<std::string> module_paths_;
  std::map<std::string, std::unique_ptr<ModuleScope>> modules_;  // by key
  const ModuleScope* prelude_ = nullptr;
  std::vector<std::string> messages_;
};

}  // namespace mtlemu::triton::frontend
