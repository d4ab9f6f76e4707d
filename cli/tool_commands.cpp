#include "cli/tool_commands.h"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <span>

#include "api/triton_library.h"
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
  return PrintError(message, kExitBadInput);
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

// A Triton kernel compiled for its --arg values; the stage --emit names.
int CompileTritonCommand(const CompileCommandOptions& options) {
  if (options.kernels.size() != 1) {
    return Fail("give one --kernel NAME for a Triton file");
  }
  Result<std::vector<TritonArg>> args =
      ResolveTritonArgs(options.triton.args, /*with_data=*/false);
  if (!args.ok()) return Fail(args.error().message);
  const std::string emit = options.emit.value_or("isa");
  std::shared_ptr<Device> device;
  if (emit == "isa") {
    Result<std::shared_ptr<Device>> created = Device::Create("m1");
    if (!created.ok()) return Fail(created.error().message);
    device = std::move(created).value();
  }
  // tl.static_print goes to stderr: stdout is the stage's text alone.
  Result<api::TritonLibrary> compiled =
      CompileTritonKernel(device.get(), options.file, options.kernels[0],
                          options.triton, args.value(),
                          /*for_launch=*/false, stderr);
  if (!compiled.ok()) return Fail(compiled.error().message);
  const api::TritonKernel& kernel = compiled.value().kernel;
  if (emit == "ttir") {
    std::fputs(kernel.ttir.c_str(), stdout);
  } else if (emit == "layouts") {
    std::fputs(kernel.layouts.c_str(), stdout);
  } else if (emit == "msl") {
    std::fputs(kernel.msl.c_str(), stdout);
  } else {
    std::fputs(isa::PrintModule(*compiled.value().library->module()).c_str(),
               stdout);
  }
  return kExitOk;
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
  const OptionUse metal_only[] = {
      {"-D", !options.defines.empty()},
      {"-I", !options.include_directories.empty()},
      {"--constant", !options.constants.empty()},
      {"--no-fast-math", options.no_fast_math},
      {"--emit-llvm", options.emit_llvm},
  };
  const OptionUse triton_only[] = {
      {"--emit " + options.emit.value_or(""),
       options.emit.value_or("isa") != "isa"},
      {"--arg", !options.triton.args.empty()},
      {"--num-warps", options.triton.num_warps.has_value()},
      {"--no-fp-fusion", options.triton.no_fp_fusion},
      {"--module-path", !options.triton.module_paths.empty()},
  };
  if (Status s = CheckOptionsApply(options.file, metal_only, triton_only);
      !s.ok()) {
    return Fail(s.error().message);
  }
  if (api::IsTritonFile(options.file)) return CompileTritonCommand(options);
  if (const std::string ext =
          std::filesystem::path(options.file).extension().string();
      ext != ".metal") {
    return Fail(options.file + ": 'compile' takes Metal Shading Language " +
                "(.metal) or a Triton kernel (.py, .ttir, .mlir), not '" + ext +
                "' (ISA text is checked with 'mtlemu asm')");
  }
  Result<std::string> text = ReadTextFile(options.file);
  if (!text.ok()) return Fail(text.error().message);
  Result<msl::CompileOptions> made =
      MakeCompileOptions(options.defines, options.include_directories,
                         options.no_fast_math, options.constants);
  if (!made.ok()) return Fail(made.error().message);
  const msl::CompileOptions& compile = made.value();
  const msl::PreprocessedSource preprocessed =
      msl::Preprocess(text.value(), options.file, compile);
  if (!options.emit_llvm) {
    compiler::CompiledMsl compiled = compiler::CompileMslWithWarnings(
        preprocessed, compile, options.kernels);
    for (const std::string& w : compiled.warnings) {
      std::fprintf(stderr, "%s\n", w.c_str());
    }
    if (!compiled.errors.empty()) {
      std::fputs(isa::FormatDiagnostics(compiled.errors).c_str(), stderr);
      return kExitBadInput;
    }
    if (!compiled.module.ok()) return Fail(compiled.module.error().message);
    const isa::Module& module = compiled.module.value();
    if (module.kernels.empty()) {
      // As Metal's compiler does for a file of helpers.
      std::fprintf(stderr, "mtlemu: note: %s has no kernel: an empty library\n",
                   options.file.c_str());
    }
    std::fputs(isa::PrintModule(module).c_str(), stdout);
    return kExitOk;
  }
  msl::FrontendResult result =
      msl::CompileMsl(preprocessed, compile, options.kernels);
  for (const std::string& w : result.warnings) {
    std::fprintf(stderr, "%s\n", w.c_str());
  }
  if (!result.ok()) {
    std::fputs(isa::FormatDiagnostics(result.errors).c_str(), stderr);
    return kExitBadInput;
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
