// MSL source to a Library, as Metal's newLibraryWithSource:options:error:
// does it: compiled in-process, or loaded from the disk cache
// (module_cache.h) when the same source, file name, options and kernels
// were compiled before by the same compiler.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "compiler/module_cache.h"
#include "compiler/msl/frontend.h"
#include "emu/device/device.h"

namespace mtlemu::api {

// `file` names the source in diagnostics and resolves its #include "...";
// `kernels` (Metal names) limits what is lowered, empty for every kernel.
// The disk cache is the one the environment names
// (ModuleCache::FromEnvironment).
Result<std::shared_ptr<Library>> newLibraryWithSource(
    Device& device, std::string_view source,
    const msl::CompileOptions& options = {},
    std::string_view file = "source.metal",
    const std::vector<std::string>& kernels = {});
// The same with the disk cache `cache` (disabled: none).
Result<std::shared_ptr<Library>> newLibraryWithSource(
    Device& device, std::string_view source, const msl::CompileOptions& options,
    std::string_view file, const std::vector<std::string>& kernels,
    const compiler::ModuleCache& cache);

}  // namespace mtlemu::api
