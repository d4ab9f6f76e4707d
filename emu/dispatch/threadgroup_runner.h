// Runs one threadgroup: its SIMD groups take turns on one host thread, each
// running until it exits or reaches threadgroup_barrier; when all live SIMD
// groups wait at the barrier they are released together.
#pragma once

#include <cstdint>
#include <vector>

#include "emu/check/finding_set.h"
#include "emu/dispatch/dispatch.h"
#include "emu/exec/simd_group.h"
#include "emu/exec/streamed_stores.h"

namespace mtlemu::emu {

// Contract: a runner serves one dispatch only (its SIMD groups' lane files
// keep that dispatch's uniforms and immediates).
class ThreadgroupRunner {
 public:
  // Runs threadgroup `position`. Returns false on a fault or stop; `fault`
  // then says what happened (kind kNone when stopped by the signal).
  // With `trace`, every SIMD group records what it issues (timed mode);
  // with `checker`, the kernel checks see every access and barrier (the
  // caller starts and finishes the checker's threadgroup).
  bool Run(const DispatchSetup& setup, const Size3& position, StopSignal& stop,
           SimdGroupStats& stats, Fault& fault,
           ThreadgroupTrace* trace = nullptr, KernelChecker* checker = nullptr);

  // Makes the stores that its threadgroups' compiled code streamed visible
  // to the other host threads (emu/exec/streamed_stores.h): the dispatch
  // calls it at the end of each range of threadgroups a thread ran.
  void PublishStreamedStores() { FenceStreamedStores(ctx_); }

  // The accesses just outside a buffer that its threadgroups made
  // (OutOfBoundsPolicy::kReport).
  const FindingSet& near_buffer() const { return near_buffer_; }

 private:
  // A kernel compiled whole (DecodedKernel::groups) on a threadgroup whose
  // width is a multiple of 32: its SIMD groups one after the other, each
  // to its exit, in native code.
  bool RunWhole(const DispatchSetup& setup, const Size3& position,
                const Size3& size, StopSignal& stop, SimdGroupStats& stats,
                Fault& fault);
  // A kernel compiled a phase at a time (DecodedKernel::phases) on a
  // threadgroup of whole SIMD groups: each phase for all of its SIMD
  // groups in order, in native code, then the next.
  bool RunPhases(const DispatchSetup& setup, const Size3& position,
                 const Size3& size, StopSignal& stop, SimdGroupStats& stats,
                 Fault& fault);
  // ctx_ set for threadgroup `position` (after FillThreadgroupMemory).
  ExecContext& PrepareContext(const DispatchSetup& setup, const Size3& position,
                              Fault& fault, KernelChecker* checker);
  void StartSimdGroup(const DispatchSetup& setup, const Size3& position,
                      const Size3& size, uint32_t index);
  void FillThreadgroupMemory(const DispatchSetup& setup, const Size3& position);

  // What the handlers see; kept from one threadgroup to the next for the
  // compiled code's region cache (ExecContext::jit_regions).
  ExecContext ctx_;
  FindingSet near_buffer_;
  std::vector<SimdGroup> simd_groups_;
  std::vector<uint32_t*> files_;  // RunPhases: each SIMD group's lane file
  std::vector<uint8_t> threadgroup_memory_;
  std::vector<uint8_t> thread_memory_;  // per SIMD group, per lane
  // Checks: the SIMD groups released from a barrier, with its instruction;
  // those that finished meanwhile, with the instruction they finished
  // after (SimdGroup::finished_after), each told of once (told_).
  std::vector<std::pair<uint32_t, uint32_t>> at_barrier_;
  std::vector<std::pair<uint32_t, uint32_t>> finished_;
  std::vector<bool> told_;
  std::vector<uint32_t> ready_;  // kRandom: the SIMD groups ready to run
};

}  // namespace mtlemu::emu
