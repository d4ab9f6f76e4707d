// Triton kernels to a Library, as newLibraryWithSource does for MSL: a
// @triton.jit kernel of a .py file (specialized for its launch arguments)
// or a TTIR file goes through the Triton front end or the TTIR reader,
// the layouts and the lowering to MSL, then the MSL compiler (its disk
// cache included). Each stage's text is kept for `mtlemu compile --emit`.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "compiler/triton/frontend/frontend.h"
#include "compiler/triton/lower/lower.h"
#include "emu/device/device.h"

namespace mtlemu::api {

struct TritonRequest {
  std::string file;                   // .py (or .ttir / .mlir: TTIR)
  std::optional<std::string> source;  // its text; read from `file` if unset
  std::string kernel;                 // the jit function (or tt.func) name
  // .py: the launch arguments by parameter name (they specialize the
  // kernel); TTIR: unused (its signature is already specialized).
  std::vector<std::pair<std::string, triton::frontend::KernelArg>> args;
  std::vector<std::string> module_paths;
  // SIMD groups per program; unset: the autotune config's, else 4.
  std::optional<int> num_warps;
  // Triton's enable_fp_fusion (lower.h's LowerOptions).
  bool enable_fp_fusion = true;
  // Which autotune config gives the parameters `args` leave out.
  int autotune_config = 0;
  // .py: values of the module's names, over the file's (frontend.h).
  std::vector<std::pair<std::string, triton::frontend::KernelArg>> globals;
  // .py: names bound to functions of other files and builtins (frontend.h).
  std::vector<triton::frontend::HostReference> references;
  // Where compiled modules are cached ("": nowhere); unset: where the
  // environment says (compiler/module_cache.h). Given here, not through
  // the environment, so that threads with different caches do not meet.
  std::optional<std::string> cache_dir;
};

// A compiled Triton kernel: what a launcher needs, and each stage's text.
struct TritonKernel {
  std::string function;  // the Metal kernel function's name
  int threads_per_threadgroup = 128;
  std::vector<triton::lower::LoweredArg> args;  // buffer bindings, in order
  // .py only: the Python parameters, and where each went (ir_arg).
  std::vector<triton::frontend::KernelParam> params;
  std::string ttir;     // the block IR as TTIR
  std::string layouts;  // the layout of every tensor
  std::string msl;      // the generated Metal Shading Language
  // tl.device_print: the print sites and the [[buffer]] index of the
  // kernel's print log (-1: it does not print); see triton_print.h.
  std::vector<triton::lower::PrintSite> prints;
  int print_log_index = -1;
  std::vector<std::string> messages;  // tl.static_print output
  // What the compilation chose for the caller to show (an autotune
  // config, heuristics' values).
  std::vector<std::string> notes;
};

// True for the file names the Triton path takes: .py, .ttir, .mlir.
bool IsTritonFile(const std::string& path);

// Front end (or TTIR reader) and lowering: the kernel's TTIR and MSL.
Result<TritonKernel> CompileTriton(const TritonRequest& request);

// A compiled kernel for one device: launch it on the device that made it.
struct TritonLibrary {
  std::shared_ptr<Library> library;
  TritonKernel kernel;
  // The kernel's pipeline, made once (decoding the ISA) for every launch.
  std::shared_ptr<ComputePipelineState> pipeline;
};

// CompileTriton, then the MSL through the compiler into a Library.
Result<TritonLibrary> newLibraryWithTriton(Device& device,
                                           const TritonRequest& request);

}  // namespace mtlemu::api
