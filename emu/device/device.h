// MTLDevice: one emulated GPU (a chip from emu/chips) and the factory of
// buffers, libraries, pipelines and queues. Emulator settings (host threads,
// time limit, progress) live here too, since Metal has no place for them.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string_view>

#include "common/result.h"
#include "emu/chips/chip.h"
#include "emu/chips/chip_timing.h"
#include "emu/device/buffer.h"
#include "emu/device/compute_pipeline_state.h"
#include "emu/device/library.h"
#include "emu/dispatch/dispatch.h"
#include "emu/jit/kernel_jit.h"

namespace mtlemu {

class CommandQueue;

struct EmulatorOptions {
  int host_threads = 0;  // 0: every core
  // How pipelines made from now on run their kernels (emu/jit/kernel_jit.h):
  // by default, big dispatches with straight runs compiled to native code
  // and small ones on the interpreter; or always one or the other. Results
  // are the same bits either way. Device::Create takes it from
  // MTLEMU_EXECUTOR (auto, interpreter or jit) when that is set.
  emu::Executor executor = emu::Executor::kAuto;
  // A dispatch running longer fails as a GPU timeout would.
  std::chrono::milliseconds timeout{600'000};
  // Set to true (from any thread) to stop the running dispatch; it fails
  // with FaultKind::kInterrupted. May be null.
  std::shared_ptr<std::atomic<bool>> interrupt;
  // Called from worker threads with (threadgroups done, total).
  std::function<void(uint64_t, uint64_t)> progress;
  // Timed mode: each dispatch also runs through the chip's timing model
  // (emu/timing/), which adds a TimingReport (and, with `timeline`, the
  // data of a trace) to its DispatchReport. Results are the same either way.
  bool timing = false;
  bool timeline = false;     // with timing: keep the timeline for a trace
  bool simd_detail = false;  // with timeline: a slice per SIMD group
  // What threadgroup memory holds at a threadgroup's start (Metal: not
  // defined; see emu/dispatch/dispatch.h).
  emu::ThreadgroupMemoryFill threadgroup_memory_fill =
      emu::ThreadgroupMemoryFill::kZero;
  // Kernel checks (races, uninitialized reads, SIMD-group misuse): each
  // dispatch's findings are in its DispatchReport::check.
  emu::CheckOptions checks;
};

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
