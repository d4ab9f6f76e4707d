// Block IR -> Metal Shading Language: one program instance is one
// threadgroup of num_warps SIMD groups of 32 lanes.
//
// Every block tensor gets a layout (layout.h): where an op's result lives
// is decided once (layout_assignment.h), and values that are cheap to
// recompute (constants, ranges, splats and the elementwise arithmetic on
// them: offsets, masks, pointer tensors) are computed in whatever layout a
// use needs. The rest moves between layouts through threadgroup memory.
// Elementwise work is straight-line code on each thread's registers;
// reductions combine registers, then lanes (simd_shuffle_xor), then SIMD
// groups (threadgroup memory); scans likewise (registers, simd_shuffle,
// threadgroup memory); tl.dot is
// simdgroup_matrix 8x8 products of tiles held in registers in Apple's
// lane layout, with the accumulator kept across the K loop; masked loads
// and stores touch no memory outside their mask; stores and atomics are
// done by one thread per element.
//
// The output is MSL that a person can read and take to a Mac: each op is
// preceded by a `#line` naming the Python (or TTIR) line it came from, so
// the MSL compiler's locations, and the emulator's fault reports, name the
// kernel's own source.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "compiler/triton/ir/ir.h"
#include "compiler/triton/lower/print_log.h"

namespace mtlemu::triton::lower {

struct LowerOptions {
  int num_warps = 4;  // SIMD groups per program (Triton's num_warps)
  // Triton's enable_fp_fusion: a * b + c may become one fma (true, its
  // default), or every multiply and add rounds on its own.
  bool enable_fp_fusion = true;
};

// One argument of the lowered kernel: the IR function's argument `name`,
// bound at [[buffer(buffer_index)]]: a pointer (setBuffer), or a scalar
// passed by value (setBytes).
struct LoweredArg {
  std::string name;
  const ir::Type* type = nullptr;
  int buffer_index = 0;
  bool is_pointer = false;
};

struct LoweredKernel {
  std::string msl;     // the whole MSL source
  std::string kernel;  // its kernel function's name
  int threads_per_threadgroup = 128;
  std::vector<LoweredArg> args;  // one per IR function argument, in order
  int64_t threadgroup_memory_bytes = 0;
  // The layout chosen for each tensor value, one line per op result, for
  // `mtlemu compile --emit layouts`.
  std::string layouts;
  // tl.device_print: the kernel's print sites, and the [[buffer]] index of
  // its print log (print_log.h); -1 when it does not print.
  std::vector<PrintSite> prints;
  int print_log_index = -1;
};

// Lowers the module's public function. Errors: what Apple GPUs cannot do
// (float64, fp8), more than 31 arguments, more threads or threadgroup
// memory than Metal allows (naming the tensors that needed it).
Result<LoweredKernel> LowerToMsl(const ir::Module& module,
                                 const LowerOptions& options = {});

}  // namespace mtlemu::triton::lower
