// The front ends of an MSL compile, kept for the back end: what a Metal
// library is between newLibraryWithSource (the source compiled, every
// error reported) and the pipelines made of it (each kernel's GPU code).
// A kernel lowered from here alone has the code a compile of the whole
// source gives it, so a library of many kernels (llama.cpp's, MLX's) need
// lower only the ones a pipeline asks for, when it asks.
//
// A source of many explicit instantiations is compiled in parts side by
// side (kernel_parts.h); each part keeps its translation's module, in its
// own LLVM context.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "compiler/msl/frontend.h"
#include "compiler/msl/preprocessor.h"
#include "isa/module.h"

namespace mtlemu::compiler {

class MslFrontEnds {
 public:
  // The front ends of `kernels` (by Metal name; every kernel when empty)
  // of `preprocessed` (preprocessed without errors), in the parts given:
  // `parts[p]` are the explicit instantiations part p makes, as
  // CompileMslInParts takes them; one part (or none given) is one compile
  // of `kernels`. A source that fails is compiled again in one part, so
  // that errors() are the ones a single compile reports.
  static std::unique_ptr<MslFrontEnds> Compile(
      const msl::PreprocessedSource& preprocessed,
      const msl::CompileOptions& options,
      const std::vector<std::string>& kernels,
      const std::vector<std::vector<std::string>>& parts);
  // The same in as many parts as the host has cores for
  // (PartitionInstantiations).
  static std::unique_ptr<MslFrontEnds> Compile(
      const msl::PreprocessedSource& preprocessed,
      const msl::CompileOptions& options,
      const std::vector<std::string>& kernels = {});
  ~MslFrontEnds();

  bool ok() const { return errors_.empty(); }
  // The front end's errors when it failed (file:line:col, source line).
  const isa::Diagnostics& errors() const { return errors_; }
  // What the front ends warned of, once each, in part order.
  const std::vector<std::string>& warnings() const { return warnings_; }
  // The kernels compiled (Metal names), in the order the module of a
  // single compile has them.
  const std::vector<std::string>& names() const { return names_; }
  size_t parts() const { return parts_.size(); }

  // The module of kernel `name` alone, with the code a compile of the
  // whole source gives it; an error naming the kernels there are when it
  // is not one of them, or the back end's. Thread-safe: the kernels of
  // one part are lowered one at a time, those of different parts at once.
  // Not after LowerAll.
  Result<isa::Module> Lower(const std::string& name) const;
  // The module of `kernels` (every kernel when empty) in names()' order,
  // the parts lowered side by side. Uses the front ends up: only names()
  // and warnings() hold after it.
  Result<isa::Module> LowerAll(const std::vector<std::string>& kernels);

 private:
  struct Part;
  MslFrontEnds();

  std::string file_;                         // the source's name, for messages
  std::vector<std::string> instantiations_;  // the source's, in order
  std::vector<std::unique_ptr<Part>> parts_;
  std::vector<std::string> names_;
  std::vector<std::string> warnings_;
  isa::Diagnostics errors_;
};

}  // namespace mtlemu::compiler
