// MTLDevice: one emulated GPU (a chip from emu/chips) and the factory of
// buffers, libraries, pipelines and queues. It also holds the default
// emulator settings (emulator_options.h) that each command buffer copies
// when it is made, since Metal has no place for them.
//
// Contract: thread-safe as Metal's MTLDevice is: several host threads may
// make buffers, pipelines and command buffers, and commit them, at once.
// options() is configuration, not per-launch state: set it before the
// device is shared between threads, and give each launch its own settings
// through its command buffer (CommandBuffer::options(),
// CommandQueue::commandBufferWithDescriptor).
#pragma once

#include <memory>
#include <string_view>

#include "common/result.h"
#include "emu/chips/chip.h"
#include "emu/chips/chip_timing.h"
#include "emu/device/buffer.h"
#include "emu/device/compute_pipeline_state.h"
#include "emu/device/emulator_options.h"
#include "emu/device/library.h"
#include "emu/memory/device_memory.h"

namespace mtlemu {

class CommandQueue;

class Device : public std::enable_shared_from_this<Device> {
 public:
  // `chip` as --chip takes it: "m1", "m2-max", ...
  static Result<std::shared_ptr<Device>> Create(std::string_view chip = "m1");
  explicit Device(const ChipSpec& chip);

  const ChipSpec& chip() const { return chip_; }
  std::string_view name() const { return chip_.marketing_name; }
  // The chip's timing-model data (chip_timing.h).
  const ChipTiming& timing() const { return timing_; }

  // Zero-filled; for the init check its bytes are uninitialized until
  // written (Buffer::UninitializedTracking).
  Result<std::shared_ptr<Buffer>> newBuffer(uint64_t length);
  Result<std::shared_ptr<Buffer>> newBuffer(const void* bytes, uint64_t length);
  // The caller's memory as a buffer, without a copy (Metal's
  // newBufferWithBytesNoCopy): kernels read and write `bytes` itself, which
  // must outlive the buffer. Every access is bounds-checked against
  // `length`, as for any buffer.
  Result<std::shared_ptr<Buffer>> newBufferWithBytesNoCopy(void* bytes,
                                                           uint64_t length);

  // A library from ISA text (the assembler's format); errors are the
  // assembler's and verifier's diagnostics, "file:line:col: error: ...".
  Result<std::shared_ptr<Library>> newLibraryWithISA(std::string_view text,
                                                     std::string_view file);
  // A library from an already built module (verified here).
  Result<std::shared_ptr<Library>> newLibraryWithModule(isa::Module module);

  Result<std::shared_ptr<ComputePipelineState>> newComputePipelineState(
      std::shared_ptr<const Function> function);

  std::shared_ptr<CommandQueue> newCommandQueue();

  // The defaults of command buffers made from now on, and the executor of
  // pipelines made from now on (see the contract above).
  EmulatorOptions& options() { return options_; }
  const EmulatorOptions& options() const { return options_; }
  const emu::DeviceMemory& memory() const { return *memory_; }

 private:
  ChipSpec chip_;
  ChipTiming timing_;
  std::shared_ptr<emu::DeviceMemory> memory_;
  EmulatorOptions options_;
};

}  // namespace mtlemu
