// MTLComputePipelineState: a function decoded for the emulator, with the
// limits Metal reports for it.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "emu/device/buffer.h"
#include "emu/device/library.h"
#include "emu/exec/decoded_kernel.h"
#include "emu/jit/kernel_jit.h"

namespace mtlemu {

class ComputePipelineState {
 public:
  // Use Device::newComputePipelineState.
  ComputePipelineState(std::shared_ptr<const Function> function,
                       emu::DecodedKernel decoded,
                       std::shared_ptr<Buffer> constant_data = nullptr,
                       emu::Executor executor = emu::Executor::kInterpreter);

  const Function& function() const { return *function_; }
  const emu::DecodedKernel& decoded() const { return decoded_; }
  // The kernel a dispatch of `work` thread-instructions (threads x the
  // kernel's instructions; 0 for a timed dispatch, which interprets) runs:
  // under Executor::kAuto, a compiled copy once a dispatch is big enough
  // (compiled then, once, thread-safely), else decoded().
  const emu::DecodedKernel& kernelFor(uint64_t work) const;

  // 1024, lowered by [[max_total_threads_per_threadgroup]] and by register
  // use (a register file of ~208 KB per core shared by resident threads, as
  // on Apple7/8: see ../shared/reference/apple-gpu.md), in multiples of 64.
  uint32_t maxTotalThreadsPerThreadgroup() const { return max_threads_; }
  uint32_t threadExecutionWidth() const { return 32; }
  uint32_t staticThreadgroupMemoryLength() const {
    return function_->kernel().static_threadgroup_memory;
  }
  // The kernel's program-scope constant data, copied into a buffer when the
  // pipeline was made; null when the kernel has none.
  const std::shared_ptr<Buffer>& constantDataBuffer() const {
    return constant_data_;
  }
  // Whether the kernel reads the buffer argument at this index (Metal's
  // MTLArgument isActive): an inactive buffer need not be bound, as MLX
  // leaves the buffers of arguments it switched off unbound.
  bool isBufferActive(int index) const;

 private:
  std::shared_ptr<const Function> function_;
  emu::DecodedKernel decoded_;
  emu::Executor executor_;
  mutable std::once_flag compile_once_;
  mutable std::unique_ptr<emu::DecodedKernel> compiled_;  // kAuto, once big
  uint32_t max_threads_;
  std::shared_ptr<Buffer> constant_data_;
  std::vector<int> active_buffers_;  // indices, sorted
};

}  // namespace mtlemu
