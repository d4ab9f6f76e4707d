#include "emu/device/command_buffer.h"

#include <algorithm>
#include <chrono>

#include "emu/device/compute_command_encoder.h"
#include "emu/device/device.h"
#include "emu/timing/timing_model.h"

namespace mtlemu {
namespace {

MTLSize ToMTLSize(const emu::Size3& s) { return {s[0], s[1], s[2]}; }

CommandBufferErrorCode CodeOf(emu::FaultKind kind) {
  switch (kind) {
    case emu::FaultKind::kOutOfBounds:
    case emu::FaultKind::kMisalignedAtomic:
      return CommandBufferErrorCode::kPageFault;
    case emu::FaultKind::kTimeout:
      return CommandBufferErrorCode::kTimeout;
    default:
      return CommandBufferErrorCode::kInternal;
  }
}

// "buffer(2) 'out' (4096 bytes)" for the binding the address is nearest to;
// "constant data (32 bytes)" for the kernel's constant data (index -1).
std::string DescribeAddress(const emu::AddressMap& memory,
                            const EncodedDispatch& dispatch, uint64_t address,
                            int64_t* offset) {
  const emu::MemoryRegion* region = memory.Nearest(address);
  if (region == nullptr) return "";
  const EncodedDispatch::Binding* best = nullptr;
  for (const EncodedDispatch::Binding& b : dispatch.bindings) {
    if (reinterpret_cast<uint64_t>(b.buffer.get()) != region->id) continue;
    if (best == nullptr ||
        (b.offset <= address - region->base && b.offset > best->offset)) {
      best = &b;
    }
  }
  if (best == nullptr) {
    *offset = static_cast<int64_t>(address - region->base);
    return "a buffer of " + std::to_string(region->length) +
           " bytes not bound to this dispatch";
  }
  *offset = static_cast<int64_t>(address - region->base - best->offset);
  std::string out = best->index < 0
                        ? std::string("constant data")
                        : "buffer(" + std::to_string(best->index) + ")";
  if (!best->name.empty()) out += " '" + best->name + "'";
  out += " (" + std::to_string(region->length - best->offset) + " bytes";
  if (best->offset) out += ", bound at offset " + std::to_string(best->offset);
  return out + ")";
}

// The bound buffers that hold bytes nobody has written (init check), each
// once, by address.
std::vector<emu::UninitializedRegion> Uninitialized(
    const EncodedDispatch& command) {
  std::vector<emu::UninitializedRegion> regions;
  for (const EncodedDispatch::Binding& b : command.bindings) {
    std::vector<uint64_t>* written = b.buffer->UninitializedTracking();
    if (written == nullptr) continue;
    regions.push_back({b.buffer->gpuAddress(), b.buffer->length(), written});
  }
  std::sort(regions.begin(), regions.end(),
            [](const auto& a, const auto& b) { return a.base < b.base; });
  regions.erase(std::unique(regions.begin(), regions.end(),
                            [](const auto& a, const auto& b) {
                              return a.base == b.base;
                            }),
                regions.end());
  return regions;
}

}  // namespace

std::shared_ptr<CommandBuffer> CommandQueue::commandBuffer() {
  return std::make_shared<CommandBuffer>(device_, device_->options());
}

std::shared_ptr<ComputeCommandEncoder> CommandBuffer::computeCommandEncoder() {
  return std::make_shared<ComputeCommandEncoder>(this);
}

void CommandBuffer::Enqueue(EncodedDispatch dispatch) {
  commands_.push_back(std::move(dispatch));
}

void CommandBuffer::commit() {
  status_ = CommandBufferStatus::kCommitted;
  const EmulatorOptions& options = options_;
  for (const EncodedDispatch& command : commands_) {
    // Buffers that other threads make or release from now on do not move
    // what this dispatch sees.
    const std::shared_ptr<const emu::AddressMap> memory =
        device_->memory().Snapshot();
    const isa::Module& module = command.pipeline->function().module();
    emu::DispatchSetup setup;
    const uint64_t threads = uint64_t{command.grid.threads_per_grid[0]} *
                             command.grid.threads_per_grid[1] *
                             command.grid.threads_per_grid[2];
    // (Timed mode runs compiled code that touches no memory too.)
    setup.kernel = &command.pipeline->kernelFor(
        threads * command.pipeline->decoded().code.size());
    setup.uniforms = command.uniforms;
    setup.threadgroup_memory_length = command.threadgroup_memory_length;
    setup.threadgroup_memory_fill = options.threadgroup_memory_fill;
    setup.device = memory.get();
    setup.grid = command.grid;
    setup.host_threads = options.host_threads;
    setup.timeout = options.timeout;
    setup.interrupt = options.interrupt.get();
    setup.progress = options.progress;
    setup.files = module.files;
    setup.describe_address = [&memory, &command](uint64_t address,
                                                 int64_t* offset) {
      return DescribeAddress(*memory, command, address, offset);
    };
    setup.out_of_bounds = options.out_of_bounds;
    setup.schedule = options.schedule;
    if (options.checks.any()) {
      setup.checks = &options.checks;
      if (options.checks.init) setup.uninitialized = Uninitialized(command);
    }
    std::unique_ptr<emu::TimingModel> timing;
    if (options.timing) {
      timing = std::make_unique<emu::TimingModel>(
          device_->timing(), *setup.kernel->kernel, command.grid,
          command.threadgroup_memory_length,
          emu::TimingOptions{options.simd_detail, options.host_threads});
      setup.timing = timing.get();
    }
    const emu::DispatchResult result = emu::RunDispatch(setup);
    DispatchReport report{command.pipeline->function().name(),
                          ToMTLSize(command.grid.threadgroups),
                          ToMTLSize(command.grid.threads_per_threadgroup),
                          ToMTLSize(command.grid.threads_per_grid),
                          result.instructions,
                          result.lane_instructions,
                          result.seconds};
    report.executor_note = setup.kernel->jit_note;
    if (timing != nullptr && result.ok) {
      const auto start = std::chrono::steady_clock::now();
      auto timeline =
          options.timeline ? std::make_shared<traces::Timeline>() : nullptr;
      report.timing = std::make_shared<const emu::TimingReport>(
          timing->Finish(timeline.get()));
      report.timeline = std::move(timeline);
      report.seconds += std::chrono::duration<double>(
                            std::chrono::steady_clock::now() - start)
                            .count();
    }
    if (result.check) {
      report.check = std::make_shared<const emu::CheckReport>(*result.check);
    }
    reports_.push_back(std::move(report));
    if (!result.ok) {
      status_ = CommandBufferStatus::kError;
      error_.code = CodeOf(result.fault.kind);
      error_.fault = result.fault;
      error_.message = result.fault.Describe();
      return;
    }
  }
  status_ = CommandBufferStatus::kCompleted;
}

}  // namespace mtlemu
