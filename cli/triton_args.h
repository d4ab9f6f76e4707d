// The Triton side of `mtlemu run` and `mtlemu compile`: the --arg values
// (buffers, pointer types, numbers, constexprs), checked against the
// kernel's parameters, and the kernel compiled for them.
//
// --arg NAME=SPEC
//   SPEC is a buffer when it ends in .npy or holds a '[': FILE.npy or
//   TYPE[COUNT]:GEN as --buffer takes it (buffer_spec.h). The kernel gets a
//   pointer to the buffer's elements, as Triton's dtype of the Metal type:
//   float fp32, half fp16, bfloat bf16, int int32, uint uint32, short int16,
//   ushort uint16, char int8, uchar uint8, long int64, ulong uint64, bool
//   int1 (a .npy file by its dtype: '<u2' is uint16).
//   *DTYPE (*fp32, *fp16, *int32 ...) is a pointer without data, for
//   `compile` only. Anything else is a value, as KernelArg::FromText reads
//   it: None, True, False, an integer, a float, a dtype name, else text (a
//   string constexpr, possibly empty).
#pragma once

#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "api/triton_library.h"
#include "cli/buffer_spec.h"
#include "common/result.h"
#include "compiler/triton/frontend/frontend.h"
#include "emu/device/device.h"

namespace mtlemu::cli {

// The command-line options only Triton kernels take.
struct TritonOptions {
  std::vector<std::string> args;  // NAME=SPEC
  std::optional<int> num_warps;   // default: the autotune config's, or 4
  std::vector<std::string> module_paths;
  int autotune_config = 0;    // which @triton.autotune config
  bool no_fp_fusion = false;  // Triton's enable_fp_fusion=False
};

// One --arg, resolved.
struct TritonArg {
  std::string name;
  std::string text;                   // "NAME=SPEC" as given, for messages
  triton::frontend::KernelArg value;  // kPointer for buffers and *DTYPE
  std::optional<BufferData> data;     // a buffer's elements, when loaded
};

// Parses each NAME=SPEC (a name given twice is an error). With `with_data`
// (run) buffers are read or generated and *DTYPE is an error; without it
// (compile) only the buffers' element types are found.
Result<std::vector<TritonArg>> ResolveTritonArgs(
    const std::vector<std::string>& texts, bool with_data);

// Triton's dtype for a buffer of Metal scalar type `type`.
const triton::frontend::DType* TritonDType(isa::ScalarType type);

// The kernel `kernel` of `file` compiled for `args`: with a device, into a
// Library (the MSL through the compiler); without, to MSL only (library
// null). Before compiling a .py file the arguments are checked against the
// kernel's parameters; after compiling TTIR, against its signature: an
// unknown name, a missing parameter (for a launch: TTIR needs no
// arguments to compile), a buffer of another element type are errors that
// list the parameters. tl.static_print's messages go to `messages`.
Result<api::TritonLibrary> CompileTritonKernel(
    Device* device, const std::string& file, const std::string& kernel,
    const TritonOptions& options, const std::vector<TritonArg>& args,
    bool for_launch, std::FILE* messages);

// An option of one kind of kernel file, and whether the command line gave
// it.
struct OptionUse {
  std::string name;  // "--buffer"
  bool given;
};

// An error naming the first option given that `file` does not take: Metal
// and ISA kernels take none of `triton_only`, Triton kernels none of
// `metal_only`.
Status CheckOptionsApply(const std::string& file,
                         std::span<const OptionUse> metal_only,
                         std::span<const OptionUse> triton_only);

}  // namespace mtlemu::cli
