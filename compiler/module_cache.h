// The on-disk cache of compiled modules: MSL compiled once is loaded from
// the cache the next time, keyed by a hash of the source, the file name,
// the compile options, the kernels asked for, and the compiler itself (the
// running executable and the embedded shims), so any rebuild invalidates.
//
// Where: $MTLEMU_CACHE_DIR, else $XDG_CACHE_HOME/mtlemu, else
// $HOME/.cache/mtlemu. MTLEMU_CACHE_DIR=off (or an empty one) disables it.
// Sources with quoted #include "..." are not cached: their headers could
// change under the same key.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/msl/frontend.h"
#include "isa/module.h"

namespace mtlemu::compiler {

class ModuleCache {
 public:
  // The cache in the directory the environment names (disabled if none).
  static ModuleCache FromEnvironment();
  explicit ModuleCache(std::string directory)
      : directory_(std::move(directory)) {}

  bool enabled() const { return !directory_.empty(); }
  const std::string& directory() const { return directory_; }

  // The key for a compilation, or nullopt when it must not be cached.
  static std::optional<std::string> Key(
      std::string_view source, std::string_view file,
      const msl::CompileOptions& options,
      const std::vector<std::string>& kernels);

  // A cached module, or nullopt (missing, unreadable, damaged, or written
  // by another version: all the same, a miss).
  std::optional<isa::Module> Load(const std::string& key) const;
  // Best effort: a write that fails leaves no partial entry behind.
  void Store(const std::string& key, const isa::Module& module) const;

 private:
  std::string directory_;
};

}  // namespace mtlemu::compiler
