#include "compiler/triton/frontend/module_scope.h"

namespace mtlemu::triton::frontend {

std::unique_ptr<ModuleScope> ModuleScope::User(
    std::string name, std::string path, std::shared_ptr<const py::Module> ast,
    bool library) {
  auto m = std::make_unique<ModuleScope>();
  m->kind_ = Kind::kUser;
  m->name_ = std::move(name);
  m->path_ = std::move(path);
  m->ast_ = std::move(ast);
  m->library_ = library;
  return m;
}

std::unique_ptr<ModuleScope> ModuleScope::Builtin(std::string name,
                                                  unsigned namespaces) {
  auto m = std::make_unique<ModuleScope>();
  m->kind_ = Kind::kBuiltin;
  m->name_ = std::move(name);
  m->namespaces_ = namespaces;
  return m;
}

std::unique_ptr<ModuleScope> ModuleScope::Foreign(std::string name) {
  auto m = std::make_unique<ModuleScope>();
  m->kind_ = Kind::kForeign;
  m->name_ = std::move(name);
  return m;
}

}  // namespace mtlemu::triton::frontend
