#include "compiler/msl_compiler.h"

#include <llvm/IR/Module.h>

#include <algorithm>

#include "compiler/air/ir_legality.h"
#include "compiler/air/lower_kernel.h"
#include "compiler/air/pipeline.h"
#include "compiler/msl_front_ends.h"
#include "isa/verifier.h"

namespace mtlemu::compiler {
namespace {

// The back end after `fronts`, the front ends of `kernels`.
CompiledMsl LowerFrontEnds(std::unique_ptr<MslFrontEnds> fronts,
                           const msl::PreprocessedSource& preprocessed,
                           const msl::CompileOptions& options,
                           const std::vector<std::string>& kernels) {
  if (!fronts->ok()) {
    return {Error{isa::FormatDiagnostics(fronts->errors())}, fronts->warnings(),
            fronts->errors()};
  }
  const bool in_parts = fronts->parts() > 1;
  Result<isa::Module> module = fronts->LowerAll(kernels);
  // A back end's error is the one a single compile reports (the first
  // kernel it fails on): compiled again so.
  if (!module.ok() && in_parts) {
    return LowerFrontEnds(
        MslFrontEnds::Compile(preprocessed, options, kernels, {}), preprocessed,
        options, kernels);
  }
  return {std::move(module), fronts->warnings(), {}};
}

}  // namespace

Result<isa::Module> CompileMsl(std::string_view source, std::string_view file,
                               const msl::CompileOptions& options,
                               const std::vector<std::string>& kernels) {
  return compiler::CompileMsl(msl::Preprocess(source, file, options), options,
                              kernels);
}

Result<isa::Module> CompileMsl(const msl::PreprocessedSource& preprocessed,
                               const msl::CompileOptions& options,
                               const std::vector<std::string>& kernels) {
  return CompileMslWithWarnings(preprocessed, options, kernels).module;
}

CompiledMsl CompileMslWithWarnings(const msl::PreprocessedSource& preprocessed,
                                   const msl::CompileOptions& options,
                                   const std::vector<std::string>& kernels) {
  if (!preprocessed.ok()) {
    return {Error{isa::FormatDiagnostics(preprocessed.errors)},
            preprocessed.warnings, preprocessed.errors};
  }
  return LowerFrontEnds(MslFrontEnds::Compile(preprocessed, options, kernels),
                        preprocessed, options, kernels);
}

CompiledMsl CompileMslInParts(
    const msl::PreprocessedSource& preprocessed,
    const msl::CompileOptions& options, const std::vector<std::string>& kernels,
    const std::vector<std::vector<std::string>>& parts) {
  return LowerFrontEnds(
      MslFrontEnds::Compile(preprocessed, options, kernels, parts),
      preprocessed, options, kernels);
}

Error NoKernelError(const std::string& name, std::string_view file,
                    const std::vector<std::string>& kernels,
                    const std::vector<std::string>& skipped) {
  std::string known;
  for (const std::vector<std::string>* list : {&kernels, &skipped}) {
    for (const std::string& k : *list) {
      known += (known.empty() ? "" : ", ") + k;
    }
  }
  return Error{"no kernel named '" + name + "' in " + std::string(file) +
               " (it has: " + (known.empty() ? "none" : known) + ")"};
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
      std::vector<std::string> declared;
      for (const auto& k : front.kernels) declared.push_back(k.name);
      return NoKernelError(name, file, declared, front.skipped_kernels);
    }
  }
  return LowerKernels(*front.module, chosen, file);
}

Result<isa::Module> LowerKernels(
    llvm::Module& module,
    const std::vector<const msl::KernelDeclaration*>& chosen,
    std::string_view file) {
  isa::Module out;
  out.files.push_back(std::string(file));
  // A file of helpers alone: Metal's compiler makes an empty library of it.
  if (chosen.empty()) return out;
  std::vector<std::string> ir_names;
  for (const auto* k : chosen) ir_names.push_back(k->ir_name);
  if (Status s = air::PrepareModule(module, ir_names); !s.ok()) {
    return s.error();
  }
  const std::vector<std::string> unexpected = air::UnexpectedConstructs(module);
  if (!unexpected.empty()) {
    return Error{std::string(file) + ": unsupported: " + unexpected.front()};
  }
  for (const auto* k : chosen) {
    const llvm::Function* f = module.getFunction(k->ir_name);
    Result<isa::Kernel> kernel = air::LowerKernel(*f, *k, out.files);
    if (!kernel.ok()) {
      return Error{std::string(file) + ": " + kernel.error().message};
    }
    out.kernels.push_back(std::move(kernel).value());
  }
  // Each kernel was verified after each pass; this adds the module's own
  // rules (kernel names unique).
  if (const isa::Diagnostics d = isa::Verify(out, "the back end"); !d.empty()) {
    return Error{"internal compiler error: " + isa::FormatDiagnostics(d)};
  }
  return out;
}

}  // namespace mtlemu::compiler
