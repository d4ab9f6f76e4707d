#include "emu/device/library.h"

namespace mtlemu {

std::vector<std::string> Library::functionNames() const {
  std::vector<std::string> names;
  for (const isa::Kernel& k : module_.kernels) names.push_back(k.name);
  return names;
}

Result<std::shared_ptr<Function>> Library::newFunction(
    const std::string& name) const {
  const isa::Kernel* kernel = module_.FindKernel(name);
  if (kernel == nullptr) {
    std::string known;
    for (const isa::Kernel& k : module_.kernels) {
      known += (known.empty() ? "" : ", ") + k.name;
    }
    return Error{"no kernel named '" + name + "' in " +
                 (module_.files.empty() ? "the library" : module_.files[0]) +
                 " (it has: " + (known.empty() ? "none" : known) + ")"};
  }
  return std::make_shared<Function>(shared_from_this(), kernel);
}

}  // namespace mtlemu
