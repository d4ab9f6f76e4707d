// MTLCommandQueue and MTLCommandBuffer. A command buffer runs its encoded
// dispatches in order when committed (synchronously, on the committing
// thread: commit returns when the work is done, so waitUntilCompleted has
// nothing left to wait for), and stops at the first dispatch that fails, as
// a GPU fault stops Metal's. Each runs with its own settings
// (EmulatorOptions), copied when it is made.
//
// Contract: as in Metal, one command buffer and its encoder are used by one
// thread at a time, and different command buffers (of one queue or of
// several, on one device) by as many threads as like, at once.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "emu/device/buffer.h"
#include "emu/device/compute_pipeline_state.h"
#include "emu/device/emulator_options.h"
#include "emu/device/types.h"
#include "emu/dispatch/dispatch.h"
#include "traces/timeline.h"
#include "traces/timing_report.h"

namespace mtlemu {

class Device;
class ComputeCommandEncoder;

enum class CommandBufferStatus { kNotEnqueued, kCommitted, kCompleted, kError };

// MTLCommandBufferError codes that the emulator can produce.
enum class CommandBufferErrorCode {
  kNone,
  kInternal,   // a fault Metal has no code for (divergent barrier, trap)
  kTimeout,    // MTLCommandBufferErrorTimeout
  kPageFault,  // MTLCommandBufferErrorPageFault: out-of-bounds access
};

struct CommandBufferError {
  CommandBufferErrorCode code = CommandBufferErrorCode::kNone;
  std::string message;  // one paragraph: what, where, which thread
  emu::Fault fault;
};

// What one dispatch did, for the command line and benchmarks.
struct DispatchReport {
  std::string kernel;
  MTLSize threadgroups;
  MTLSize threads_per_threadgroup;
  MTLSize threads_per_grid;
  uint64_t instructions = 0;       // SIMD-group instructions
  uint64_t lane_instructions = 0;  // active lanes summed over instructions
  double seconds = 0;  // host time to emulate it, the timing model included
  // Timed mode (EmulatorOptions::timing): what the chip would take.
  std::shared_ptr<const emu::TimingReport> timing;
  std::shared_ptr<const traces::Timeline> timeline;  // with options.timeline
  // With EmulatorOptions::checks: what the checks found (also when the
  // dispatch failed). Without: the accesses just outside a buffer, when
  // there were any (EmulatorOptions::out_of_bounds; `checks` empty).
  std::shared_ptr<const emu::CheckReport> check;
  // Why the kernel ran on the interpreter though the JIT was asked for
  // (EmulatorOptions::executor), else empty.
  std::string executor_note;
};

// A dispatch as encoded: everything needed to run it later.
struct EncodedDispatch {
  std::shared_ptr<const ComputePipelineState> pipeline;
  std::vector<uint32_t> uniforms;
  uint32_t threadgroup_memory_length = 0;
  emu::DispatchGrid grid;
  struct Binding {
    int index;  // [[buffer(index)]]; -1 for the kernel's constant data
    std::shared_ptr<Buffer> buffer;
    uint64_t offset;
    std::string name;  // the kernel's name for the parameter, may be empty
  };
  std::vector<Binding> bindings;  // keeps the buffers alive
};

// MTLCommandBufferDescriptor. Metal's own fields mean nothing here
// (references are always retained, errors always say where they come
// from); the emulator's settings take their place.
struct CommandBufferDescriptor {
  EmulatorOptions options;
};

class CommandBuffer {
 public:
  // Use CommandQueue::commandBuffer or commandBufferWithDescriptor.
  CommandBuffer(std::shared_ptr<Device> device, EmulatorOptions options)
      : device_(std::move(device)), options_(std::move(options)) {}

  // The settings its dispatches run with: the descriptor's, or the device's
  // defaults when it was made. They may be changed until commit.
  EmulatorOptions& options() { return options_; }
  const EmulatorOptions& options() const { return options_; }

  std::shared_ptr<ComputeCommandEncoder> computeCommandEncoder();
  void commit();
  void waitUntilCompleted() {}

  CommandBufferStatus status() const { return status_; }
  // nullptr unless status() is kError.
  const CommandBufferError* error() const {
    return status_ == CommandBufferStatus::kError ? &error_ : nullptr;
  }
  const std::vector<DispatchReport>& dispatches() const { return reports_; }

  // Used by ComputeCommandEncoder.
  void Enqueue(EncodedDispatch dispatch);
  const Device& device() const { return *device_; }

 private:
  std::shared_ptr<Device> device_;
  EmulatorOptions options_;
  std::vector<EncodedDispatch> commands_;
  std::vector<DispatchReport> reports_;
  CommandBufferStatus status_ = CommandBufferStatus::kNotEnqueued;
  CommandBufferError error_;
};

class CommandQueue {
 public:
  explicit CommandQueue(std::shared_ptr<Device> device)
      : device_(std::move(device)) {}
  // With the device's default settings (Device::options()).
  std::shared_ptr<CommandBuffer> commandBuffer();
  std::shared_ptr<CommandBuffer> commandBufferWithDescriptor(
      const CommandBufferDescriptor& descriptor) {
    return std::make_shared<CommandBuffer>(device_, descriptor.options);
  }

 private:
  std::shared_ptr<Device> device_;
};

}  // namespace mtlemu
