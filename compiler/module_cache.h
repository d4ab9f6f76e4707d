// The on-disk cache of compiled modules: MSL compiled once is loaded from
// the cache the next time, keyed by a hash of the preprocessed source (so
// every header it includes counts), the file name, the compile options, the
// kernels asked for, and the compiler itself (the build ids of the object
// that holds it and of LLVM's and Clang's shared libraries, and the
// embedded shims), so any rebuild or library upgrade invalidates.
// Preprocessing is a small part of a compile.
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

  // What identifies the compiler in every key: the object that holds it
  // (path "compiler": the executable or a shared library) first, then
  // LLVM's and Clang's shared libraries, each with its GNU build id (hex),
  // or a hash of its bytes where it has none.
  struct CompilerPart {
    std::string path;
    std::string id;
  };
  static std::vector<CompilerPart> CompilerParts();

  // The key of kernel `kernel` of a library that makes each kernel when
  // asked (a compile of every kernel, lowered one at a time), apart from
  // Key's of a compile of that kernel alone.
  static std::string FunctionKey(const msl::PreprocessedSource& preprocessed,
                                 const msl::CompileOptions& options,
                                 const std::string& kernel);

  // A cached module, or nullopt (missing, unreadable, damaged, or written
  // by another version: all the same, a miss).
  std::optional<isa::Module> Load(const std::string& key) const;
  // Best effort: a write that fails leaves no partial entry behind, and
  // writers of one key at once (threads or processes) leave one whole
  // entry. Load and Store may be called from many threads at once.
  void Store(const std::string& key, const isa::Module& module) const;
  // The same of a list of kernel names (a library's, under the key of its
  // compile).
  std::optional<std::vector<std::string>> LoadNames(
      const std::string& key) const;
  void StoreNames(const std::string& key,
                  const std::vector<std::string>& names) const;

 private:
  // The file `name` of the directory, whole.
  std::optional<std::vector<uint8_t>> LoadBytes(const std::string& name) const;
  void StoreBytes(const std::string& name,
                  const std::vector<uint8_t>& bytes) const;

  std::string directory_;
};

}  // namespace mtlemu::compiler
