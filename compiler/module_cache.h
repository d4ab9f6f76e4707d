// The on-disk cache of compiled modules: MSL compiled once is loaded from
// the cache the next time, keyed by a hash of the preprocessed source (so
// every header it includes counts), the file name, the compile options, the
// kernels asked for, and the compiler itself (the running executable and
// the embedded shims), so any rebuild invalidates. Preprocessing is a
// small part of a compile.
//
// Where: $MTLEMU_CACHE_DIR, else $XDG_CACHE_HOME/mtlemu, else
// $HOME/.cache/mtlemu. MTLEMU_CACHE_DIR=off (or an empty one) disables it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/msl/frontend.h"
#include "compiler/msl/preprocessor.h"
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

  // The key for a compilation of a source preprocessed without errors.
  static std::string Key(const msl::PreprocessedSource& preprocessed,
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
