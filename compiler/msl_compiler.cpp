#include "compiler/msl_compiler.h"

#include <llvm/IR/Module.h>

#include <algorithm>

#include "compiler/air/ir_legality.h"
#include "compiler/air/lower_kernel.h"
#include "compiler/air/pipeline.h"
#include "isa/verifier.h"

namespace mtlemu::compiler {

Result<isa::Module> CompileMsl(std::string_view source, std::string_view file,
                               const msl::CompileOptions& options,
                               const std::vector<std::string>& kernels) {
  return compiler::CompileMsl(msl::Preprocess(source, file, options), options,
                              kernels);
}

Result<isa::Module> CompileMsl(const msl::PreprocessedSource& preprocessed,
                               const msl::CompileOptions& options,
                               const std::vector<std::string>& kernels) {
  msl::FrontendResult front = msl::CompileMsl(preprocessed, options, kernels);
  if (!front.ok()) return Error{isa::FormatDiagnostics(front.errors)};
  return LowerMsl(std::move(front), preprocessed.files[0].name, kernels);
}

Result<isa::Module> LowerMsl(msl::FrontendResult front, std::string_view file,
                             const std::vector<std::string>& kernels) {
  std::vector<const msl::KernelDeclaration*> chosen;
  for (const msl::KernelDeclaration& k : front.kernels) {
    if (kernels.empty() ||
        std::find(kernels.begin(), kernels.end(), k.name) != kernels.end()) {
      chosen.push_back(&k);
    }
  }
  for (const std::string& name : kernels) {
    if (std::none_of(chosen.begin(), chosen.end(),
                     [&](const auto* k) { return k->name == name; })) {
      std::string known;
      for (const auto& k : front.kernels) {
        known += (known.empty() ? "" : ", ") + k.name;
      }
      for (const std::string& k : front.skipped_kernels) {
        known += (known.empty() ? "" : ", ") + k;
      }
      return Error{"no kernel named '" + name + "' in " + std::string(file) +
                   " (it has: " + (known.empty() ? "none" : known) + ")"};
    }
  }
  isa::Module module;
  module.files.push_back(std::string(file));
  // A file of helpers alone: Metal's compiler makes an empty library of it.
  if (chosen.empty()) return module;
  std::vector<std::string> ir_names;
  for (const auto* k : chosen) ir_names.push_back(k->ir_name);
  if (Status s = air::PrepareModule(*front.module, ir_names); !s.ok()) {
    return s.error();
  }
  const std::vector<std::string> unexpected =
      air::UnexpectedConstructs(*front.module);
  if (!unexpected.empty()) {
    return Error{std::string(file) + ": unsupported: " + unexpected.front()};
  }
  for (const auto* k : chosen) {
    const llvm::Function* f = front.module->getFunction(k->ir_name);
    Result<isa::Kernel> kernel = air::LowerKernel(*f, *k, module.files);
    if (!kernel.ok()) {
      return Error{std::string(file) + ": " + kernel.error().message};
    }
    module.kernels.push_back(std::move(kernel).value());
  }
  // Each kernel was verified after each pass; this adds the module's own
  // rules (kernel names unique).
  if (const isa::Diagnostics d = isa::Verify(module, "the back end");
      !d.empty()) {
    return Error{"internal compiler error: " + isa::FormatDiagnostics(d)};
  }
  return module;
}

}  // namespace mtlemu::compiler
