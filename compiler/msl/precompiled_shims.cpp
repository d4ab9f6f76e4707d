#include "compiler/msl/precompiled_shims.h"

#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/FrontendActions.h>
#include <clang/Frontend/TextDiagnosticBuffer.h>
#include <llvm/Support/VirtualFileSystem.h>

#include <algorithm>

#include "compiler/msl/clang_invocation.h"
#include "compiler/msl/shim_files.h"

namespace mtlemu::msl {

bool CanUseShimPch(const CompileOptions& options) {
  return std::none_of(
      options.macros.begin(), options.macros.end(), [](const auto& m) {
        const std::string_view name = m.first;
        return name.starts_with("MTLEMU_") || name.starts_with("__METAL") ||
               name.starts_with("__MTL") || name == "__FAST_MATH__";
      });
}

Status WriteShimPch(bool fast_math, const std::string& path) {
  std::vector<std::string> args = BaseArguments(fast_math);
  std::replace(args.begin(), args.end(), std::string("clcpp"),
               std::string("clcpp-header"));
  if (kShimPrelude != nullptr) {
    args.insert(args.end(), {"-include", kShimPrelude});
  }
  args.insert(args.end(), {"-emit-pch", "-o", path, kShimPchHeader});
  clang::TextDiagnosticBuffer diagnostics;
  clang::CompilerInstance ci;
  if (!PrepareCompiler(ci, diagnostics, args,
                       OverRealFileSystem(ShimFileSystem()))) {
    return Error{"make_shim_pch: bad compiler arguments"};
  }
  clang::GeneratePCHAction action;
  if (!ci.ExecuteAction(action) || diagnostics.getNumErrors() > 0) {
    std::string message = "the shims do not precompile:";
    for (auto it = diagnostics.err_begin(); it != diagnostics.err_end(); ++it) {
      message += "\n  " + it->second;
    }
    return Error{message};
  }
  return {};
}

}  // namespace mtlemu::msl
