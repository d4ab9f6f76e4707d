#include "emu/device/library.h"

#include <algorithm>

namespace mtlemu {

Library::Library(isa::Module module)
    : whole_(std::make_shared<const isa::Module>(std::move(module))) {}

Library::Library(std::unique_ptr<const LibraryKernels> kernels)
    : kernels_(std::move(kernels)) {}

std::vector<std::string> Library::functionNames() const {
  if (kernels_ != nullptr) return kernels_->names();
  std::vector<std::string> names;
  for (const isa::Kernel& k : whole_->kernels) names.push_back(k.name);
  return names;
}

Result<std::shared_ptr<const isa::Module>> Library::Make(
    const std::string& name) const {
  std::shared_ptr<Made> made;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    std::shared_ptr<Made>& slot = made_[name];
    if (slot == nullptr) slot = std::make_shared<Made>();
    made = slot;
  }
  std::call_once(made->once, [&] {
    Result<isa::Module> module = kernels_->Make(name);
    if (!module.ok()) {
      made->module.emplace(module.error());
    } else {
      made->module.emplace(
          std::make_shared<const isa::Module>(std::move(module).value()));
    }
  });
  return *made->module;
}

Result<std::shared_ptr<Function>> Library::newFunction(
    const std::string& name) const {
  std::shared_ptr<const isa::Module> module = whole_;
  if (kernels_ != nullptr) {
    Result<std::shared_ptr<const isa::Module>> made = Make(name);
    if (!made.ok()) return made.error();
    module = std::move(made).value();
  }
  const isa::Kernel* kernel = module->FindKernel(name);
  if (kernel == nullptr && kernels_ != nullptr) {
    return Error{"internal error: the module made for kernel '" + name +
                 "' does not hold it"};
  }
  if (kernel == nullptr) {
    std::string known;
    for (const isa::Kernel& k : module->kernels) {
      known += (known.empty() ? "" : ", ") + k.name;
    }
    return Error{"no kernel named '" + name + "' in " +
                 (module->files.empty() ? "the library" : module->files[0]) +
                 " (it has: " + (known.empty() ? "none" : known) + ")"};
  }
  return std::make_shared<Function>(shared_from_this(), std::move(module),
                                    kernel);
}

Result<std::shared_ptr<const isa::Module>> Library::wholeModule() const {
  if (whole_ != nullptr) return whole_;
  isa::Module all;
  for (const std::string& name : kernels_->names()) {
    Result<std::shared_ptr<const isa::Module>> made = Make(name);
    if (!made.ok()) return made.error();
    isa::AppendKernels(all, *made.value());
  }
  return std::make_shared<const isa::Module>(std::move(all));
}

}  // namespace mtlemu
