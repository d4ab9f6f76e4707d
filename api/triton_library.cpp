#include "api/triton_library.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "api/library.h"
#include "compiler/triton/ir/cleanup.h"
#include "compiler/triton/ir/printer.h"
#include "compiler/triton/ir/verifier.h"
#include "compiler/triton/lower/loop_pointers.h"
#include "compiler/triton/ttir/reader.h"

namespace mtlemu::api {
namespace {

Result<std::string> ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path + ": cannot open file"};
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool IsTtirFile(const std::string& path) {
  const std::string ext = std::filesystem::path(path).extension().string();
  return ext == ".ttir" || ext == ".mlir";
}

}  // namespace

bool IsTritonFile(const std::string& path) {
  const std::string ext = std::filesystem::path(path).extension().string();
  return ext == ".py" || IsTtirFile(path);
}

Result<TritonKernel> CompileTriton(const TritonRequest& request) {
  TritonKernel out;
  std::unique_ptr<triton::ir::Module> module;
  std::optional<int> config_warps;
  if (IsTtirFile(request.file)) {
    std::string text;
    if (request.source) {
      text = *request.source;
    } else {
      Result<std::string> r = ReadAll(request.file);
      if (!r.ok()) return r.error();
      text = std::move(r).value();
    }
    Result<std::unique_ptr<triton::ir::Module>> read =
        triton::ttir::ReadTtir(text, request.file);
    if (!read.ok()) return read.error();
    module = std::move(read).value();
    const triton::ir::Function* f = module->Find(request.kernel);
    if (f == nullptr) {
      std::string known;
      for (const auto& fn : module->functions()) {
        known += (known.empty() ? "" : ", ") + fn->name();
      }
      return Error{request.file + ": no tt.func named '" + request.kernel +
                   "' (it has: " + (known.empty() ? "none" : known) + ")"};
    }
    for (const auto& fn : module->functions()) {
      fn->set_public(fn.get() == f);
    }
  } else {
    triton::frontend::FrontendRequest fr;
    fr.file = request.file;
    fr.source = request.source;
    fr.kernel = request.kernel;
    fr.args = request.args;
    fr.module_paths = request.module_paths;
    fr.autotune_config = request.autotune_config;
    fr.globals = request.globals;
    fr.references = request.references;
    Result<triton::frontend::FrontendOutput> front =
        triton::frontend::CompileKernel(fr);
    if (!front.ok()) return front.error();
    module = std::move(front.value().module);
    out.params = std::move(front.value().params);
    out.messages = std::move(front.value().messages);
    out.notes = std::move(front.value().notes);
    config_warps = front.value().num_warps;
  }
  out.ttir = triton::ir::PrintModule(*module);
  // Lowering's own rewrites of the IR (after the TTIR is printed: that is
  // Triton's).
  for (const auto& fn : module->functions()) {
    if (triton::lower::StrengthReduceLoopPointers(*fn) > 0) {
      triton::ir::RemoveUnusedOps(*fn);
    }
  }
  if (Status s = triton::ir::Verify(*module, "loop pointers"); !s.ok()) {
    return Error{"internal compiler error: " + s.error().message};
  }
  triton::lower::LowerOptions lo;
  lo.num_warps = request.num_warps.value_or(config_warps.value_or(4));
  lo.enable_fp_fusion = request.enable_fp_fusion;
  Result<triton::lower::LoweredKernel> lowered =
      triton::lower::LowerToMsl(*module, lo);
  if (!lowered.ok()) return lowered.error();
  out.function = lowered.value().kernel;
  out.threads_per_threadgroup = lowered.value().threads_per_threadgroup;
  out.args = lowered.value().args;
  out.layouts = lowered.value().layouts;
  out.msl = lowered.value().msl;
  out.prints = lowered.value().prints;
  out.print_log_index = lowered.value().print_log_index;
  return out;
}

Result<TritonLibrary> newLibraryWithTriton(Device& device,
                                           const TritonRequest& request) {
  Result<TritonKernel> kernel = CompileTriton(request);
  if (!kernel.ok()) return kernel.error();
  msl::CompileOptions options;
  // Triton's float semantics: infinities and NaNs are values (a softmax
  // loads -inf), so the MSL is compiled without fast math.
  options.fast_math = false;
  const std::string msl_file =
      std::filesystem::path(request.file).stem().string() + ".metal";
  const compiler::ModuleCache cache =
      request.cache_dir ? compiler::ModuleCache(*request.cache_dir)
                        : compiler::ModuleCache::FromEnvironment();
  Result<std::shared_ptr<Library>> library =
      newLibraryWithSource(device, kernel.value().msl, options, msl_file,
                           {kernel.value().function}, cache);
  if (!library.ok()) {
    return Error{"internal compiler error: the MSL generated for '" +
                 request.kernel + "' does not compile:\n" +
                 library.error().message};
  }
  // The MSL's #line directives give each instruction the Python line it came
  // from; its column is the MSL text's, which means nothing in the .py
  // file, so reports name the line only.
  Result<std::shared_ptr<const isa::Module>> whole =
      library.value()->wholeModule();
  if (!whole.ok()) return whole.error();
  isa::Module module = *whole.value();
  for (isa::Kernel& k : module.kernels) {
    for (isa::Instruction& inst : k.code) {
      if (inst.location.file != 0) inst.location.column = 0;
    }
  }
  auto lib = std::make_shared<Library>(std::move(module));
  Result<std::shared_ptr<Function>> function =
      lib->newFunction(kernel.value().function);
  if (!function.ok()) return function.error();
  Result<std::shared_ptr<ComputePipelineState>> pipeline =
      device.newComputePipelineState(function.value());
  if (!pipeline.ok()) return pipeline.error();
  return TritonLibrary{std::move(lib), std::move(kernel).value(),
                       std::move(pipeline).value()};
}

}  // namespace mtlemu::api
