// A module: kernels with their code, argument tables, resource counts and
// debug information. The assembler builds one from text, the compilers
// build one from source; the emulator runs its kernels.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "isa/instruction.h"
#include "isa/scalar_type.h"

namespace mtlemu::isa {

inline constexpr int kMaxBufferSlots = 31;       // [[buffer(0..30)]]
inline constexpr int kMaxThreadgroupSlots = 31;  // [[threadgroup(n)]]
inline constexpr uint32_t kMaxThreadsPerThreadgroup = 1024;

// [[buffer(index)]]: the buffer's GPU address is placed in the uniform pair
// (uniform, uniform+1) before the kernel runs.
struct BufferArgument {
  int index = 0;
  int uniform = 0;
  AddressSpace space = AddressSpace::kDevice;  // kDevice or kConstant
  // The element type the kernel reads, when it is a scalar type; nullopt for
  // a struct or other opaque data (no type check at bind time).
  std::optional<ScalarType> element;
  std::string name;  // the parameter's name, for reports; may be empty

  bool operator==(const BufferArgument&) const = default;
};

// [[threadgroup(index)]]: a threadgroup memory block whose length is set by
// setThreadgroupMemoryLength; its offset is placed in `uniform`.
struct ThreadgroupArgument {
  int index = 0;
  int uniform = 0;
  std::string name;

  bool operator==(const ThreadgroupArgument&) const = default;
};

struct Kernel {
  std::string name;
  std::vector<BufferArgument> buffers;
  std::vector<ThreadgroupArgument> threadgroup_arguments;
  // Threadgroup memory the kernel declares itself, at offset 0; arguments'
  // blocks follow it, each 16-byte aligned.
  uint32_t static_threadgroup_memory = 0;
  // Private (thread address space) memory per thread, in bytes.
  uint32_t thread_memory = 0;
  // [[max_total_threads_per_threadgroup(n)]]; 0 when not given.
  uint32_t max_total_threads_per_threadgroup = 0;
  // Program-scope constant data (MSL `constant` tables and initializers):
  // copied into a read-only device buffer when the pipeline is made; its
  // 64-bit address is placed in the uniform pair (constant_data_uniform,
  // +1). constant_data_uniform is -1 when the kernel has none.
  std::vector<uint8_t> constant_data;
  int constant_data_uniform = -1;

  std::vector<Instruction> code;
  // Names of branch targets, by instruction index (for printing).
  std::map<uint32_t, std::string> labels;

  // Resource counts, derived from the code by ComputeResources().
  int registers = 0;  // 32-bit registers per lane
  int uniforms = 0;

  bool operator==(const Kernel&) const = default;
};

struct Module {
  // Source files for SourceLocation::file; file 0 is the module's own file
  // (the ISA text or the kernel source).
  std::vector<std::string> files;
  std::vector<Kernel> kernels;

  const Kernel* FindKernel(std::string_view name) const;
  bool operator==(const Module&) const = default;
};

// The kernels of `from` appended to `into`, their source locations
// renumbered into `into`'s file table (a file both name is one entry; an
// empty `into` takes `from`'s file 0 as its own).
void AppendKernels(Module& into, Module from);

// Registers and uniforms a kernel uses (highest index + 1, counting pairs).
void ComputeResources(Kernel& kernel);

}  // namespace mtlemu::isa
