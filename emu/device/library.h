// MTLLibrary and MTLFunction: a compiled module and one kernel of it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "isa/module.h"

namespace mtlemu {

class Library;

class Function {
 public:
  Function(std::shared_ptr<const Library> library, const isa::Kernel* kernel)
      : library_(std::move(library)), kernel_(kernel) {}

  const std::string& name() const { return kernel_->name; }
  const isa::Kernel& kernel() const { return *kernel_; }
  const Library& library() const { return *library_; }
  std::shared_ptr<const Library> libraryPtr() const { return library_; }

 private:
  std::shared_ptr<const Library> library_;
  const isa::Kernel* kernel_;
};

class Library : public std::enable_shared_from_this<Library> {
 public:
  explicit Library(isa::Module module) : module_(std::move(module)) {}

  std::vector<std::string> functionNames() const;
  // An error naming the kernels the library has when `name` is not one.
  Result<std::shared_ptr<Function>> newFunction(const std::string& name) const;
  const isa::Module& module() const { return module_; }

 private:
  isa::Module module_;
};

}  // namespace mtlemu
