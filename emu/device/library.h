// MTLLibrary and MTLFunction: a compiled module and one kernel of it.
//
// A library holds its module whole (made from ISA, a binary module, or a
// compile of every kernel), or makes each kernel's module when a function
// first asks for it (LibraryKernels: api/'s libraries of many MSL
// kernels, whose back end runs per kernel as Metal's does when a pipeline
// is made).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "isa/module.h"

namespace mtlemu {

class Library;

class Function {
 public:
  Function(std::shared_ptr<const Library> library,
           std::shared_ptr<const isa::Module> module, const isa::Kernel* kernel)
      : library_(std::move(library)),
        module_(std::move(module)),
        kernel_(kernel) {}

  const std::string& name() const { return kernel_->name; }
  const isa::Kernel& kernel() const { return *kernel_; }
  // The module that holds the kernel: its file table names the files of
  // the kernel's source locations.
  const isa::Module& module() const { return *module_; }
  const Library& library() const { return *library_; }
  std::shared_ptr<const Library> libraryPtr() const { return library_; }

 private:
  std::shared_ptr<const Library> library_;
  std::shared_ptr<const isa::Module> module_;
  const isa::Kernel* kernel_;
};

// The kernels of a library that makes each one when it is first asked for.
class LibraryKernels {
 public:
  virtual ~LibraryKernels() = default;
  // The kernels' names, in the library's order.
  virtual const std::vector<std::string>& names() const = 0;
  // The module of kernel `name` alone, or why it cannot be made (for a
  // name that is not one of names(), an error that names the file and
  // its kernels). Called at most once per name, from any thread.
  virtual Result<isa::Module> Make(const std::string& name) const = 0;
};

class Library : public std::enable_shared_from_this<Library> {
 public:
  explicit Library(isa::Module module);
  explicit Library(std::unique_ptr<const LibraryKernels> kernels);

  std::vector<std::string> functionNames() const;
  // An error naming the kernels the library has when `name` is not one,
  // or the back end's when the kernel could not be made. Thread-safe.
  Result<std::shared_ptr<Function>> newFunction(const std::string& name) const;
  // Every kernel in one module, in functionNames()' order: of a library
  // that makes its kernels when asked, all of them made now (an error if
  // one cannot be).
  Result<std::shared_ptr<const isa::Module>> wholeModule() const;
  // The module of a library made whole (null for one that makes its
  // kernels when asked).
  const isa::Module* module() const { return whole_.get(); }

 private:
  // A kernel made once (a failure too), while other threads make others.
  struct Made {
    std::once_flag once;
    std::optional<Result<std::shared_ptr<const isa::Module>>> module;
  };
  Result<std::shared_ptr<const isa::Module>> Make(
      const std::string& name) const;

  std::shared_ptr<const isa::Module> whole_;
  std::unique_ptr<const LibraryKernels> kernels_;
  mutable std::mutex mutex_;  // made_'s map
  mutable std::map<std::string, std::shared_ptr<Made>> made_;
};

}  // namespace mtlemu
