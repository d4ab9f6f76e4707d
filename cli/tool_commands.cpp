#include "cli/tool_commands.h"

#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <span>

#include "cli/compile_options.h"
#include "cli/exit_codes.h"
#include "cli/kernel_file.h"
#include "compiler/msl/frontend.h"
#include "compiler/msl_compiler.h"
#include "emu/chips/chip.h"
#include "isa/assembler.h"
#include "isa/binary_module.h"
#include "isa/printer.h"
#include "isa/verifier.h"

namespace mtlemu::cli {
namespace {

int Fail(const std::string& message) {
  std::fprintf(stderr, "mtlemu: error: %s\n", message.c_str());
  return kExitBadInput;
}

// A module from ISA text or binary, verified; prints diagnostics on error.
bool LoadModule(const std::string& file, isa::Module& module) {
  Result<std::string> text = ReadTextFile(file);
  if (!text.ok()) {
    Fail(text.error().message);
    return false;
  }
  const std::string& data = text.value();
  const std::span<const uint8_t> bytes(
      reinterpret_cast<const uint8_t*>(data.data()), data.size());
  isa::Diagnostics diagnostics;
  if (isa::IsBinaryModule(bytes)) {
    std::string error;
    if (!isa::DeserializeModule(bytes, module, error)) {
      Fail(file + ": " + error);
      return false;
    }
  } else {
    isa::AssembleResult assembled = isa::Assemble(data, file);
    diagnostics = std::move(assembled.diagnostics);
    module = std::move(assembled.module);
  }
  if (diagnostics.empty()) diagnostics = isa::Verify(module);
  if (diagnostics.empty() && module.kernels.empty()) {
    Fail(file + ": no kernel in this file");
    return false;
  }
  if (!diagnostics.empty()) {
    std::fputs(isa::FormatDiagnostics(diagnostics).c_str(), stderr);
    return false;
  }
  return true;
}

}  // namespace

int AsmCommand(const std::string& file, const std::string& output) {
  isa::Module module;
  if (!LoadModule(file, module)) return kExitBadInput;
  if (output.empty()) {
    std::fputs(isa::PrintModule(module).c_str(), stdout);
    return kExitOk;
  }
  const std::vector<uint8_t> bytes = isa::SerializeModule(module);
  std::ofstream out(output, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  if (!out) return Fail(output + ": cannot write file");
  return kExitOk;
}

int DisasmCommand(const std::string& file) {
  isa::Module module;
  if (!LoadModule(file, module)) return kExitBadInput;
  std::fputs(isa::PrintModule(module).c_str(), stdout);
  return kExitOk;
}

int ChipsCommand() {
  std::printf("%-10s %-16s %-8s %6s %10s\n", "name", "chip", "family", "cores",
              "clock MHz");
  for (const ChipSpec& c : AllChips()) {
    std::printf("%-10s %-16s %-8s %6d %10d\n", std::string(c.name).c_str(),
                std::string(c.marketing_name).c_str(),
                std::string(c.gpu_family).c_str(), c.gpu_cores, c.clock_mhz);
  }
  std::printf(
      "\nMetal limits (all chips): %u threads per threadgroup, %u bytes of "
      "threadgroup memory, %d buffer slots, %u bytes of setBytes data, SIMD "
      "width %u\n",
      MetalLimits::kMaxThreadsPerThreadgroup,
      MetalLimits::kMaxThreadgroupMemoryLength,
      MetalLimits::kMaxBufferArguments, MetalLimits::kMaxSetBytesLength,
      MetalLimits::kThreadExecutionWidth);
  return kExitOk;
}

int CompileCommand(const CompileCommandOptions& options) {
  Result<std::string> text = ReadTextFile(options.file);
  if (!text.ok()) return Fail(text.error().message);
  Result<msl::CompileOptions> made = MakeCompileOptions(
      options.defines, options.no_fast_math, options.constants);
  if (!made.ok()) return Fail(made.error().message);
  const msl::CompileOptions& compile = made.value();
  const msl::FrontendResult result =
      msl::CompileMsl(text.value(), options.file, compile);
  for (const std::string& w : result.warnings) {
    std::fprintf(stderr, "%s\n", w.c_str());
  }
  if (!result.ok()) {
    std::fputs(isa::FormatDiagnostics(result.errors).c_str(), stderr);
    return kExitBadInput;
  }
  if (!options.emit_llvm) {
    Result<isa::Module> module =
        compiler::CompileMsl(text.value(), options.file, compile);
    if (!module.ok()) {
      std::string message = module.error().message;
      while (!message.empty() && message.back() == '\n') message.pop_back();
      std::fprintf(stderr, "%s\n", message.c_str());
      return kExitBadInput;
    }
    std::fputs(isa::PrintModule(module.value()).c_str(), stdout);
    return kExitOk;
  }
  for (const msl::KernelDeclaration& k : result.kernels) {
    std::printf("; kernel %s (%s)\n", k.name.c_str(), k.ir_name.c_str());
    for (const msl::KernelParameter& p : k.parameters) {
      std::string binding;
      switch (p.kind) {
        case msl::ParameterKind::kBuffer:
          binding = fmt::format("buffer({})", p.index);
          break;
        case msl::ParameterKind::kThreadgroup:
          binding = fmt::format("threadgroup({})", p.index);
          break;
        case msl::ParameterKind::kBuiltin:
          binding = p.attribute;
          break;
      }
      std::printf(";   %s %s [[%s]]\n", p.type.c_str(), p.name.c_str(),
                  binding.c_str());
    }
  }
  std::fputs(msl::PrintModule(*result.module).c_str(), stdout);
  return kExitOk;
}

}  // namespace mtlemu::cli
