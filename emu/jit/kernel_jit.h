// The JIT execution path: a decoded kernel's straight runs compiled to
// native code with LLVM ORC (run_codegen.h), kept alive by the kernel
// (DecodedKernel::jit). The interpreter stays the reference: it runs
// everything the JIT does not (control flow other than loops round one run
// and if-thens round one, barriers outside kernels cut into phases, in
// timed mode code that touches memory, runs with nothing to inline), and a
// kernel whose compile fails runs on it alone, with a note.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "emu/exec/decoded_kernel.h"

namespace mtlemu::emu {

// How a kernel's instructions run. Results are the same bits on each.
enum class Executor : uint8_t {
  // Straight runs compiled the first time a dispatch of the kernel has
  // kJitMinWork thread-instructions (threads x instructions in the
  // kernel) or more, where compiling (tens of ms) pays; interpreted before.
  kAuto,
  kInterpreter,  // the handlers, one after the other
  kJit,          // compiled when the pipeline is made (tests, benchmarks)
};
inline constexpr uint64_t kJitMinWork = uint64_t{1} << 24;

// The executor a name gives ("auto", "interpreter", "jit"), or nullopt:
// MTLEMU_EXECUTOR and `mtlemu run --executor` both take these.
std::optional<Executor> ParseExecutor(std::string_view name);

// Compiles the straight runs of `kernel` worth compiling (at least two
// inlined instructions) and each if-then whose body is one run, with the
// run before its branch (run_codegen.h's IfThenEnd), setting
// DecodedInstruction::jit where each starts and DecodedKernel::jit to the
// code's owner; and the kernel whole where it is one run and `exit`
// (DecodedKernel::groups) or, a phase at a time, where threadgroup barriers
// cut it into runs and if-thens (DecodedKernel::phases). Returns false with
// `note` set when LLVM failed; the kernel is then unchanged.
bool CompileRuns(DecodedKernel& kernel, std::string& note);

}  // namespace mtlemu::emu
