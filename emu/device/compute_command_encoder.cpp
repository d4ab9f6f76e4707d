#include "emu/device/compute_command_encoder.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "emu/device/device.h"

namespace mtlemu {
namespace {

std::string SizeText(const MTLSize& s) {
  return std::to_string(s.width) + "x" + std::to_string(s.height) + "x" +
         std::to_string(s.depth);
}

Status CheckIndex(const char* what, int index) {
  if (index < 0 || index >= MetalLimits::kMaxBufferArguments) {
    return Error{std::string(what) + " index " + std::to_string(index) +
                 " is out of range (Metal allows 0.." +
                 std::to_string(MetalLimits::kMaxBufferArguments - 1) + ")"};
  }
  return {};
}

// Threads in a threadgroup of size `t`, saturating at UINT64_MAX.
uint64_t TotalThreads(const MTLSize& t) {
  uint64_t total = 1;
  for (uint64_t d : {t.width, t.height, t.depth}) {
    total = d != 0 && total > UINT64_MAX / d ? UINT64_MAX : total * d;
  }
  return total;
}

// A dispatch needs a pipeline, and a threadgroup size with no zero dimension
// within the pipeline's maxTotalThreadsPerThreadgroup.
Status CheckThreadgroupSize(const char* call,
                            const ComputePipelineState* pipeline,
                            const MTLSize& threads_per_threadgroup) {
  if (pipeline == nullptr) {
    return Error{
        "dispatch without a compute pipeline state "
        "(setComputePipelineState was not called)"};
  }
  const MTLSize& t = threads_per_threadgroup;
  if (t.width == 0 || t.height == 0 || t.depth == 0) {
    return Error{std::string(call) + ": threadsPerThreadgroup " + SizeText(t) +
                 " has a zero dimension"};
  }
  // Checked on the exact product: per-dimension 32-bit values multiplied in
  // 64 bits can wrap to a small number (2^22 x 2^21 x 2^21 = 2^64 = 0).
  const uint64_t threads = TotalThreads(t);
  if (threads > pipeline->maxTotalThreadsPerThreadgroup()) {
    return Error{
        std::string(call) + ": threadgroup size " + SizeText(t) + " = " +
        (threads == UINT64_MAX ? std::string("more than 2^64")
                               : std::to_string(threads)) +
        " threads exceeds the pipeline's maxTotalThreadsPerThreadgroup (" +
        std::to_string(pipeline->maxTotalThreadsPerThreadgroup()) +
        ") for kernel '" + pipeline->function().kernel().name + "'"};
  }
  return {};
}

uint32_t AlignUp(uint64_t v, uint32_t a) {
  return static_cast<uint32_t>((v + a - 1) / a * a);
}

}  // namespace

Status ComputeCommandEncoder::setBuffer(std::shared_ptr<Buffer> buffer,
                                        uint64_t offset, int index) {
  if (Status s = CheckIndex("buffer", index); !s.ok()) return s;
  if (buffer && offset > buffer->length()) {
    return Error{"setBuffer: offset " + std::to_string(offset) +
                 " is past the end of the buffer (" +
                 std::to_string(buffer->length()) + " bytes) at index " +
                 std::to_string(index)};
  }
  buffers_[index] = {std::move(buffer), offset};
  return {};
}

Status ComputeCommandEncoder::setBytes(const void* bytes, uint64_t length,
                                       int index) {
  if (Status s = CheckIndex("buffer", index); !s.ok()) return s;
  if (length > MetalLimits::kMaxSetBytesLength) {
    return Error{"setBytes: " + std::to_string(length) + " bytes at index " +
                 std::to_string(index) +
                 " exceed Metal's limit of 4096 bytes; use a buffer"};
  }
  Result<std::shared_ptr<Buffer>> copy =
      const_cast<Device&>(command_buffer_->device()).newBuffer(bytes, length);
  if (!copy.ok()) return copy.error();
  buffers_[index] = {std::move(copy).value(), 0};
  return {};
}

Status ComputeCommandEncoder::setThreadgroupMemoryLength(uint64_t length,
                                                         int index) {
  if (Status s = CheckIndex("threadgroup memory", index); !s.ok()) return s;
  if (length % MetalLimits::kThreadgroupMemoryAlignment != 0) {
    return Error{"setThreadgroupMemoryLength: length " +
                 std::to_string(length) + " at index " + std::to_string(index) +
                 " is not a multiple of 16 bytes"};
  }
  if (length > MetalLimits::kMaxThreadgroupMemoryLength) {
    return Error{"setThreadgroupMemoryLength: length " +
                 std::to_string(length) + " at index " + std::to_string(index) +
                 " exceeds maxThreadgroupMemoryLength (32768 bytes)"};
  }
  threadgroup_lengths_[index] = length;
  threadgroup_set_[index] = true;
  return {};
}

Status ComputeCommandEncoder::dispatchThreads(MTLSize threads_per_grid,
                                              MTLSize threads_per_threadgroup) {
  if (Status s = CheckThreadgroupSize("dispatchThreads", pipeline_.get(),
                                      threads_per_threadgroup);
      !s.ok()) {
    return s;
  }
  emu::DispatchGrid grid;
  const uint64_t g[3] = {threads_per_grid.width, threads_per_grid.height,
                         threads_per_grid.depth};
  const uint64_t t[3] = {threads_per_threadgroup.width,
                         threads_per_threadgroup.height,
                         threads_per_threadgroup.depth};
  for (int i = 0; i < 3; ++i) {
    if (g[i] > 0xffffffffull) {
      return Error{"dispatchThreads: threadsPerGrid " +
                   SizeText(threads_per_grid) +
                   " has a dimension over 2^32-1 threads"};
    }
    grid.threads_per_grid[i] = static_cast<uint32_t>(g[i]);
    grid.threads_per_threadgroup[i] = static_cast<uint32_t>(t[i]);
    grid.threadgroups[i] = static_cast<uint32_t>((g[i] + t[i] - 1) / t[i]);
  }
  return Encode(grid);
}

Status ComputeCommandEncoder::dispatchThreadgroups(
    MTLSize threadgroups_per_grid, MTLSize threads_per_threadgroup) {
  if (Status s = CheckThreadgroupSize("dispatchThreadgroups", pipeline_.get(),
                                      threads_per_threadgroup);
      !s.ok()) {
    return s;
  }
  emu::DispatchGrid grid;
  const uint64_t n[3] = {threadgroups_per_grid.width,
                         threadgroups_per_grid.height,
                         threadgroups_per_grid.depth};
  const uint64_t t[3] = {threads_per_threadgroup.width,
                         threads_per_threadgroup.height,
                         threads_per_threadgroup.depth};
  for (int i = 0; i < 3; ++i) {
    // t[i] is 1..1024 here; n[i] * t[i] could wrap, n[i] > max / t[i] not.
    if (n[i] > 0xffffffffull / t[i]) {
      return Error{"dispatchThreadgroups: the grid " +
                   SizeText(threadgroups_per_grid) + " threadgroups of " +
                   SizeText(threads_per_threadgroup) +
                   " has a dimension over 2^32-1 threads"};
    }
    grid.threadgroups[i] = static_cast<uint32_t>(n[i]);
    grid.threads_per_threadgroup[i] = static_cast<uint32_t>(t[i]);
    grid.threads_per_grid[i] = static_cast<uint32_t>(n[i] * t[i]);
  }
  return Encode(grid);
}

// Called after CheckThreadgroupSize: the pipeline is set.
Status ComputeCommandEncoder::Encode(const emu::DispatchGrid& grid) {
  const isa::Kernel& kernel = pipeline_->function().kernel();
  EncodedDispatch d;
  d.pipeline = pipeline_;
  d.grid = grid;
  d.uniforms.assign(static_cast<size_t>(kernel.uniforms), 0);
  for (const isa::BufferArgument& arg : kernel.buffers) {
    const BufferBinding& b = buffers_[arg.index];
    if (!b.buffer && !pipeline_->isBufferActive(arg.index)) continue;
    if (!b.buffer) {
      return Error{"kernel '" + kernel.name + "' needs a buffer at index " +
                   std::to_string(arg.index) +
                   (arg.name.empty() ? "" : " ('" + arg.name + "')") +
                   ", and none is bound"};
    }
    const uint64_t address = b.buffer->gpuAddress() + b.offset;
    d.uniforms[arg.uniform] = static_cast<uint32_t>(address);
    d.uniforms[arg.uniform + 1] = static_cast<uint32_t>(address >> 32);
    d.bindings.push_back({arg.index, b.buffer, b.offset, arg.name});
  }
  if (kernel.constant_data_uniform >= 0) {
    const std::shared_ptr<Buffer>& data = pipeline_->constantDataBuffer();
    const uint64_t address = data->gpuAddress();
    d.uniforms[kernel.constant_data_uniform] = static_cast<uint32_t>(address);
    d.uniforms[kernel.constant_data_uniform + 1] =
        static_cast<uint32_t>(address >> 32);
    // Index -1: fault reports call it "constant data".
    d.bindings.push_back({-1, data, 0, ""});
  }
  uint32_t length = AlignUp(kernel.static_threadgroup_memory,
                            MetalLimits::kThreadgroupMemoryAlignment);
  std::vector<isa::ThreadgroupArgument> blocks = kernel.threadgroup_arguments;
  std::sort(blocks.begin(), blocks.end(),
            [](const auto& a, const auto& b) { return a.index < b.index; });
  for (const isa::ThreadgroupArgument& arg : blocks) {
    if (!threadgroup_set_[arg.index]) {
      return Error{"kernel '" + kernel.name +
                   "' needs threadgroup memory at index " +
                   std::to_string(arg.index) +
                   (arg.name.empty() ? "" : " ('" + arg.name + "')") +
                   ", and setThreadgroupMemoryLength was not called for it"};
    }
    d.uniforms[arg.uniform] = length;
    length += static_cast<uint32_t>(threadgroup_lengths_[arg.index]);
  }
  if (length > MetalLimits::kMaxThreadgroupMemoryLength) {
    return Error{"kernel '" + kernel.name + "' uses " + std::to_string(length) +
                 " bytes of threadgroup memory (static and set lengths), "
                 "over maxThreadgroupMemoryLength (32768 bytes)"};
  }
  d.threadgroup_memory_length = length;
  command_buffer_->Enqueue(std::move(d));
  return {};
}

}  // namespace mtlemu
