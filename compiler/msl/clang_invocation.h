// What every clang run of the front end shares: the cc1 arguments of the
// language mode (C++ for OpenCL on spir64, Metal's floating-point rules) and
// the in-memory file system that serves the <metal_stdlib> shims. The
// compilation proper (frontend.cpp) and the precompiled shims
// (precompiled_shims.cpp) must agree on both, or the PCH would not load.
#pragma once

#include <llvm/ADT/IntrusiveRefCntPtr.h>
#include <llvm/Support/VirtualFileSystem.h>

#include <string>
#include <vector>

#include "compiler/msl/frontend.h"

namespace clang {
class CompilerInstance;
class DiagnosticConsumer;
}  // namespace clang

namespace mtlemu::msl {

// Where the shims live in the in-memory file system.
inline constexpr char kShimDirectory[] = "/__mtlemu/metal/include";
// The header the precompiled shims are made from: the prelude (included
// first, -include) and <metal_stdlib>.
inline constexpr char kShimPchHeader[] = "/__mtlemu/metal/include/__mtl_pch.h";

// cc1 arguments up to (not including) user macros, includes and the input.
std::vector<std::string> BaseArguments(bool fast_math);

// BaseArguments for these options and their -D macros.
std::vector<std::string> ArgumentsWithMacros(const CompileOptions& options);

// Sets `ci` up to run the cc1 arguments `args`: diagnostics go to
// `diagnostics` (without clang's carets: the front end's collector quotes
// the source itself, and clang prints no "N errors generated"), files come
// from `files`. False when clang refuses the arguments (it has said why to
// `diagnostics`).
bool PrepareCompiler(clang::CompilerInstance& ci,
                     clang::DiagnosticConsumer& diagnostics,
                     const std::vector<std::string>& args,
                     llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> files);

// `memory` over the real file system (for the files it does not hold).
llvm::IntrusiveRefCntPtr<llvm::vfs::OverlayFileSystem> OverRealFileSystem(
    llvm::IntrusiveRefCntPtr<llvm::vfs::InMemoryFileSystem> memory);

// The shims (and the PCH header) in memory; callers add their own files.
llvm::IntrusiveRefCntPtr<llvm::vfs::InMemoryFileSystem> ShimFileSystem();

}  // namespace mtlemu::msl
