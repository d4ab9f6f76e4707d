#include "api/library.h"

#include "compiler/msl_compiler.h"

namespace mtlemu::api {

Result<std::shared_ptr<Library>> newLibraryWithSource(
    Device& device, std::string_view source, const msl::CompileOptions& options,
    std::string_view file, const std::vector<std::string>& kernels) {
  return newLibraryWithSource(device, source, options, file, kernels,
                              compiler::ModuleCache::FromEnvironment());
}

Result<std::shared_ptr<Library>> newLibraryWithSource(
    Device& device, std::string_view source, const msl::CompileOptions& options,
    std::string_view file, const std::vector<std::string>& kernels,
    const compiler::ModuleCache& cache) {
  const msl::PreprocessedSource preprocessed =
      msl::Preprocess(source, file, options);
  if (!preprocessed.ok()) {
    return Error{isa::FormatDiagnostics(preprocessed.errors)};
  }
  std::optional<std::string> key;
  if (cache.enabled()) {
    key = compiler::ModuleCache::Key(preprocessed, options, kernels);
    if (std::optional<isa::Module> cached = cache.Load(*key)) {
      return device.newLibraryWithModule(std::move(*cached));
    }
  }
  Result<isa::Module> module =
      compiler::CompileMsl(preprocessed, options, kernels);
  if (!module.ok()) return module.error();
  if (key) cache.Store(*key, module.value());
  return device.newLibraryWithModule(std::move(module).value());
}

}  // namespace mtlemu::api
