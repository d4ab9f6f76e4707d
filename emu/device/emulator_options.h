// The emulator's settings for running dispatches (host threads, time
// limit, interrupt, timed mode, checks): what Metal has no place for. A
// command buffer carries its own copy (CommandBuffer::options()), so that
// launches from several host threads each run with their own; the device's
// copy is the default new command buffers start from.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>

#include "emu/check/check_options.h"
#include "emu/dispatch/dispatch.h"
#include "emu/jit/kernel_jit.h"

namespace mtlemu {

struct EmulatorOptions {
  int host_threads = 0;  // 0: every core
  // How pipelines run their kernels (emu/jit/kernel_jit.h), read from the
  // device's options when a pipeline is made (a command buffer's copy has
  // no say: the pipeline is made before it). By default, big dispatches with
  // straight runs compiled to native code and small ones on the interpreter; or
  // always one or the other. Results are the same bits either way.
  // Device::Create takes it from MTLEMU_EXECUTOR (auto, interpreter or jit)
  // when that is set.
  emu::Executor executor = emu::Executor::kAuto;
  // A dispatch running longer fails as a GPU timeout would.
  std::chrono::milliseconds timeout{600'000};
  // Set to true (from any thread) to stop the running dispatch; it fails
  // with FaultKind::kInterrupted. May be null. Give each command buffer a
  // flag of its own, unless one flag is meant to stop them all.
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
  // A device access just outside a buffer (within a 16 KiB page of it):
  // zeros read, nothing stored, and a finding in the DispatchReport's
  // check (kReport, what a Mac's answer needs); or a fault (kFault), as
  // every access farther away is (emu/exec/near_buffer.h).
  emu::OutOfBoundsPolicy out_of_bounds = emu::OutOfBoundsPolicy::kReport;
  // The order of a threadgroup's SIMD groups between barriers
  // (emu/dispatch/schedule.h): interleaved by default, as on the GPU.
  emu::Schedule schedule;
  // Kernel checks (races, uninitialized reads, SIMD-group misuse): each
  // dispatch's findings are in its DispatchReport::check.
  emu::CheckOptions checks;
};

}  // namespace mtlemu
