// MTLComputeCommandEncoder. Setters and dispatches check Metal's limits
// (what Metal's validation layer checks) and return an error that names the
// limit; nothing is encoded when a dispatch fails validation.
#pragma once

#include <array>
#include <memory>

#include "common/result.h"
#include "emu/chips/chip.h"
#include "emu/device/command_buffer.h"

namespace mtlemu {

class ComputeCommandEncoder {
 public:
  explicit ComputeCommandEncoder(CommandBuffer* command_buffer)
      : command_buffer_(command_buffer) {}

  void setComputePipelineState(
      std::shared_ptr<const ComputePipelineState> pipeline) {
    pipeline_ = std::move(pipeline);
  }
  Status setBuffer(std::shared_ptr<Buffer> buffer, uint64_t offset, int index);
  // Copies the bytes now (at most 4 KB), as Metal does.
  Status setBytes(const void* bytes, uint64_t length, int index);
  // `length` must be a multiple of 16.
  Status setThreadgroupMemoryLength(uint64_t length, int index);

  // A grid of threads; threadgroups at the grid's far edges are cut to fit.
  Status dispatchThreads(MTLSize threads_per_grid,
                         MTLSize threads_per_threadgroup);
  // A grid of whole threadgroups.
  Status dispatchThreadgroups(MTLSize threadgroups_per_grid,
                              MTLSize threads_per_threadgroup);
  void endEncoding() {}

 private:
  Status Encode(const emu::DispatchGrid& grid);

  CommandBuffer* command_buffer_;
  std::shared_ptr<const ComputePipelineState> pipeline_;
  struct BufferBinding {
    std::shared_ptr<Buffer> buffer;
    uint64_t offset = 0;
  };
  std::array<BufferBinding, MetalLimits::kMaxBufferArguments> buffers_{};
  std::array<uint64_t, MetalLimits::kMaxBufferArguments> threadgroup_lengths_{};
  std::array<bool, MetalLimits::kMaxBufferArguments> threadgroup_set_{};
};

}  // namespace mtlemu
