#include "api/library.h"

#include <algorithm>
#include <mutex>

#include "compiler/kernel_parts.h"
#include "compiler/msl/attribute_rewriter.h"
#include "compiler/msl_compiler.h"
#include "compiler/msl_front_ends.h"
#include "isa/verifier.h"

namespace mtlemu::api {
namespace {

// The kernels of a library of many: the front ends compiled once (when
// the library is made, or when the cache, which knew the kernels' names,
// misses a kernel for the first time), each kernel lowered, or loaded from
// the cache, when a function first asks for it.
class MslLibraryKernels final : public LibraryKernels {
 public:
  MslLibraryKernels(msl::PreprocessedSource preprocessed,
                    msl::CompileOptions options, compiler::ModuleCache cache,
                    std::vector<std::string> names,
                    std::unique_ptr<compiler::MslFrontEnds> fronts)
      : preprocessed_(std::move(preprocessed)),
        options_(std::move(options)),
        cache_(std::move(cache)),
        names_(std::move(names)),
        fronts_(std::move(fronts)) {}

  const std::vector<std::string>& names() const override { return names_; }

  Result<isa::Module> Make(const std::string& name) const override {
    const std::string& file = preprocessed_.files[0].name;
    if (std::find(names_.begin(), names_.end(), name) == names_.end()) {
      return compiler::NoKernelError(name, file, names_, {});
    }
    const std::string key =
        compiler::ModuleCache::FunctionKey(preprocessed_, options_, name);
    if (std::optional<isa::Module> cached = cache_.Load(key)) {
      if (isa::Verify(*cached).empty()) return std::move(*cached);
    }
    std::call_once(compiled_, [&] {
      if (fronts_ == nullptr) {
        fronts_ = compiler::MslFrontEnds::Compile(preprocessed_, options_);
      }
    });
    if (!fronts_->ok()) {
      return Error{isa::FormatDiagnostics(fronts_->errors())};
    }
    Result<isa::Module> module = fronts_->Lower(name);
    if (module.ok()) cache_.Store(key, module.value());
    return module;
  }

 private:
  const msl::PreprocessedSource preprocessed_;
  const msl::CompileOptions options_;
  const compiler::ModuleCache cache_;
  const std::vector<std::string> names_;
  mutable std::once_flag compiled_;
  mutable std::unique_ptr<compiler::MslFrontEnds> fronts_;
};

// A library of every kernel of a source of many: the front ends now (so
// that every error is reported now, as Metal's newLibraryWithSource
// reports them), the back end of each kernel when it is asked for.
Result<std::shared_ptr<Library>> LibraryOfMany(
    const msl::PreprocessedSource& preprocessed,
    const msl::CompileOptions& options, const compiler::ModuleCache& cache) {
  const std::string key = compiler::ModuleCache::Key(preprocessed, options, {});
  std::unique_ptr<compiler::MslFrontEnds> fronts;
  std::vector<std::string> names;
  if (std::optional<std::vector<std::string>> cached = cache.LoadNames(key)) {
    names = std::move(*cached);
  } else {
    fronts = compiler::MslFrontEnds::Compile(preprocessed, options);
    if (!fronts->ok()) return Error{isa::FormatDiagnostics(fronts->errors())};
    names = fronts->names();
    cache.StoreNames(key, names);
  }
  return std::make_shared<Library>(std::make_unique<MslLibraryKernels>(
      preprocessed, options, cache, std::move(names), std::move(fronts)));
}

}  // namespace

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
  if (kernels.empty() &&
      compiler::ManyInstantiations(
          msl::ExplicitInstantiations(preprocessed.text).size())) {
    return LibraryOfMany(preprocessed, options, cache);
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
