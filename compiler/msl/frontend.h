// The MSL front end: Metal Shading Language source -> LLVM IR, with Clang 16
// as a library, in-process. MSL is compiled as C++ for OpenCL for spir64
// with the <metal_stdlib> shim headers (shim/, embedded in the binary) and
// MSL attributes rewritten to clang annotations; the kernels' argument
// tables are read off the AST.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "isa/diagnostic.h"
#include "isa/instruction.h"
#include "isa/scalar_type.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace mtlemu::msl {

// MTLCompileOptions, as far as the compiler sees it.
struct CompileOptions {
  std::vector<std::pair<std::string, std::string>> macros;  // -D NAME=VALUE
  bool fast_math = true;                                    // Metal's default
  // MTLFunctionConstantValues: function constant name (or index, as
  // decimal text) -> the value as an MSL expression ("1", "2.5", "true").
  // Constants not given are undefined: is_function_constant_defined()
  // is false for them and they read as zero.
  std::vector<std::pair<std::string, std::string>> function_constants;
  // -I: folders searched for #include "..." and <...> after the including
  // file's own folder, in order.
  std::vector<std::string> include_directories;
};

enum class ParameterKind {
  kBuffer,       // [[buffer(n)]]: a pointer or reference into memory
  kThreadgroup,  // [[threadgroup(n)]]
  kBuiltin,      // [[thread_position_in_grid]] and the other inputs
};

struct KernelParameter {
  std::string name;
  ParameterKind kind = ParameterKind::kBuffer;
  int index = -1;         // buffer / threadgroup slot
  std::string attribute;  // the builtin's Metal name, for kBuiltin
  isa::AddressSpace space = isa::AddressSpace::kNone;
  // The pointee's scalar (or vector element) type, when it is one.
  std::optional<isa::ScalarType> element;
  std::string type;  // as written, for messages: "device float*"
};

// The LLVM string attribute the front end puts on a kernel's argument that
// is a buffer in Metal's constant address space (the IR keeps it in the
// device address space): its memory does not change during a dispatch.
inline constexpr char kConstantBufferAttribute[] = "metal.constant";

struct KernelDeclaration {
  std::string name;     // [[host_name]] if given, else the function's name
  std::string ir_name;  // the LLVM function's name
  std::vector<KernelParameter> parameters;
  uint32_t max_total_threads_per_threadgroup = 0;
  int line = 0;
};

struct FrontendResult {
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;  // null on error
  std::vector<KernelDeclaration> kernels;
  // Errors with file:line:col, the source line and a caret.
  isa::Diagnostics errors;
  std::vector<std::string> warnings;  // formatted the same way
  // With kernels asked for: the [[host_name]]s of the explicit
  // instantiations left out (not made, not in `kernels`).
  std::vector<std::string> skipped_kernels;

  FrontendResult();
  FrontendResult(FrontendResult&&) noexcept;
  FrontendResult& operator=(FrontendResult&&) noexcept;
  ~FrontendResult();
  bool ok() const { return errors.empty() && module != nullptr; }
};

struct PreprocessedSource;  // preprocessor.h

// `file` names the source in messages and resolves its #include "..."s.
FrontendResult CompileMsl(std::string_view source, std::string_view file,
                          const CompileOptions& options);
// The same from a source already preprocessed with these options. With
// `only_kernels` given, the explicit instantiations (`template
// [[host_name("x")]] ...;`, MLX's instantiate_kernel) of other kernels are
// left out before clang sees them: a file of thousands of instantiations
// compiles one kernel in the time of one.
FrontendResult CompileMsl(const PreprocessedSource& preprocessed,
                          const CompileOptions& options,
                          const std::vector<std::string>& only_kernels = {});

struct RetrySites;  // attribute_rewriter.h

// CompileMsl compiles again, with the places rewritten, while clang
// refuses what Metal's compiler takes and each round finds places the
// last did not (RetrySites), up to this many rounds.
inline constexpr int kMaxRetryRounds = 16;
// One such round: the compile with the `retry` sites rewritten; `found`
// gets the sites of its errors that a rewrite fixes.
FrontendResult CompileMslOnce(const PreprocessedSource& preprocessed,
                              const CompileOptions& options,
                              const std::vector<std::string>& only_kernels,
                              const RetrySites& retry, RetrySites& found);

// The text of a module, for `mtlemu compile --emit-llvm`.
std::string PrintModule(const llvm::Module& module);

}  // namespace mtlemu::msl
