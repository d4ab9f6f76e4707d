// MSL source -> an ISA module: the front end (compiler/msl), the IR
// pipeline and instruction selection (compiler/air), and the verifier
// between them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "compiler/msl/frontend.h"
#include "compiler/msl/preprocessor.h"
#include "isa/module.h"

namespace mtlemu::compiler {

// Compiles `source`; lowers only the kernels named in `kernels` (by Metal
// name: [[host_name]] or the function's), or every kernel when empty.
// Errors: the compiler's diagnostics ("file:line:col: error: ..." with the
// source line) or "unsupported: ..." naming the construct.
Result<isa::Module> CompileMsl(std::string_view source, std::string_view file,
                               const msl::CompileOptions& options,
                               const std::vector<std::string>& kernels = {});
// The same from a source already preprocessed with these options.
Result<isa::Module> CompileMsl(const msl::PreprocessedSource& preprocessed,
                               const msl::CompileOptions& options,
                               const std::vector<std::string>& kernels = {});
// A compile with what the front end warned of (formatted as its errors),
// with the module or without it. `errors` are the front end's when it
// failed (`module` has them formatted); empty when the back end failed.
struct CompiledMsl {
  Result<isa::Module> module;
  std::vector<std::string> warnings;
  isa::Diagnostics errors;
};
// CompileMsl, with the warnings: a source of many explicit instantiations
// compiles in parts side by side (kernel_parts.h), one module in the end,
// the one a single compile makes.
CompiledMsl CompileMslWithWarnings(const msl::PreprocessedSource& preprocessed,
                                   const msl::CompileOptions& options,
                                   const std::vector<std::string>& kernels);
// The same in the parts given: `parts[p]` are the explicit instantiations
// part p's front end makes (PartitionInstantiations' result, or any
// division of the instantiations asked for into non-empty parts). With one
// part, one compile of `kernels`. A source that fails is compiled again in
// one part, so that the errors are the ones a single compile reports.
CompiledMsl CompileMslInParts(
    const msl::PreprocessedSource& preprocessed,
    const msl::CompileOptions& options, const std::vector<std::string>& kernels,
    const std::vector<std::vector<std::string>>& parts);

// The back end's part: the front end's module (compiled without errors) to
// the ISA. `file` names the source in messages.
Result<isa::Module> LowerMsl(msl::FrontendResult front, std::string_view file,
                             const std::vector<std::string>& kernels = {});
// The same of `chosen`, kernels of `module` (which the IR pipeline
// changes).
Result<isa::Module> LowerKernels(
    llvm::Module& module,
    const std::vector<const msl::KernelDeclaration*>& chosen,
    std::string_view file);
// "no kernel named 'NAME' in FILE (it has: ...)": `kernels` the file has,
// then `skipped`, the instantiations left out of this compile.
Error NoKernelError(const std::string& name, std::string_view file,
                    const std::vector<std::string>& kernels,
                    const std::vector<std::string>& skipped);

}  // namespace mtlemu::compiler
