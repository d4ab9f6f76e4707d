#include "compiler/msl/clang_invocation.h"

#include <clang/Basic/DiagnosticOptions.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/CompilerInvocation.h>
#include <llvm/Support/MemoryBuffer.h>

#include "compiler/msl/shim_files.h"

namespace mtlemu::msl {

std::vector<std::string> BaseArguments(bool fast_math) {
  // C++ for OpenCL without OpenCL's own headers.
  std::vector<std::string> args = {
      "-triple", "spir64-unknown-unknown", "-x", "clcpp", "-cl-std=clc++2021",
      "-O2", "-disable-llvm-passes", "-disable-llvm-verifier", "-fno-builtin",
      "-fno-threadsafe-statics", "-debug-info-kind=line-tables-only",
      "-dwarf-version=4", "-isystem", kShimDirectory,
      "-cl-single-precision-constant", "-cl-ext=-cl_khr_fp64,-__opencl_c_fp64",
      // Metal's predefined macros, for
      // Metal 3.1 on macOS: here, not in the
      // shims, because the preprocessing run
      // sees the shims as empty files and
      // user code tests these with #if.
      "-D__METAL_VERSION__=310", "-D__METAL__=1", "-D__METAL_MACOS__=1",
      "-D__HAVE_BFLOAT__=1", "-D__HAVE_SIMDGROUP_MATRIX__=1", "-D__MTLEMU__=1"};
  // Metal's fast math: contraction and relaxed algebra, but NaN and inf are
  // still honoured (isnan and friends are not folded away).
  if (fast_math) {
    args.insert(args.end(),
                {"-ffp-contract=fast", "-fapprox-func", "-fno-signed-zeros",
                 "-freciprocal-math", "-D__FAST_MATH__=1"});
  } else {
    args.push_back("-ffp-contract=on");
  }
  return args;
}

std::vector<std::string> ArgumentsWithMacros(const CompileOptions& options) {
  std::vector<std::string> args = BaseArguments(options.fast_math);
  for (const auto& [name, value] : options.macros) {
    args.push_back("-D" + name + (value.empty() ? "" : "=" + value));
  }
  return args;
}

bool PrepareCompiler(clang::CompilerInstance& ci,
                     clang::DiagnosticConsumer& diagnostics,
                     const std::vector<std::string>& args,
                     llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> files) {
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  ci.createDiagnostics(&diagnostics, /*ShouldOwnClient=*/false);
  auto invocation = std::make_shared<clang::CompilerInvocation>();
  if (!clang::CompilerInvocation::CreateFromArgs(*invocation, argv,
                                                 ci.getDiagnostics())) {
    return false;
  }
  invocation->getDiagnosticOpts().ShowCarets = false;
  ci.setInvocation(std::move(invocation));
  ci.createFileManager(std::move(files));
  return true;
}

llvm::IntrusiveRefCntPtr<llvm::vfs::OverlayFileSystem> OverRealFileSystem(
    llvm::IntrusiveRefCntPtr<llvm::vfs::InMemoryFileSystem> memory) {
  auto overlay = llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(
      llvm::vfs::getRealFileSystem());
  overlay->pushOverlay(std::move(memory));
  return overlay;
}

llvm::IntrusiveRefCntPtr<llvm::vfs::InMemoryFileSystem> ShimFileSystem() {
  auto memory = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
  for (size_t i = 0; i < kNumShimFiles; ++i) {
    memory->addFile(std::string(kShimDirectory) + "/" + kShimFiles[i].name, 0,
                    llvm::MemoryBuffer::getMemBuffer(kShimFiles[i].text));
  }
  memory->addFile(
      kShimPchHeader, 0,
      llvm::MemoryBuffer::getMemBuffer("#include <metal_stdlib>\n"));
  return memory;
}

}  // namespace mtlemu::msl
