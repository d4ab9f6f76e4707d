// The checks' side of a running dispatch, one per host worker: the
// executor calls it (through ExecContext::checker, null when no check is
// on) at every threadgroup or device access, cross-lane read and barrier
// of the threadgroup it runs; it keeps the threadgroup-memory shadow, the
// device-access records and the findings. A worker runs one threadgroup at
// a time, so nothing here is shared between threads.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "emu/check/check_options.h"
#include "emu/check/device_access_log.h"
#include "emu/check/finding_set.h"
#include "emu/check/threadgroup_shadow.h"
#include "emu/exec/exec_context.h"

namespace mtlemu::emu {

// A device buffer created without contents, for the init check: one bit per
// byte, set where the host or a kernel has written it. Read-only while a
// dispatch runs; the dispatch's writes are added after it.
struct UninitializedRegion {
  uint64_t base = 0;  // GPU address of byte 0
  uint64_t length = 0;
  std::vector<uint64_t>* initialized = nullptr;

  bool IsInitialized(uint64_t offset) const {
    return ((*initialized)[offset >> 6] >> (offset & 63)) & 1;
  }
};

class KernelChecker {
 public:
  // `code` is the decoded kernel's first instruction (instruction indices
  // are taken from it); `uninitialized` is sorted by base.
  KernelChecker(const CheckOptions& options, const DecodedInstruction* code,
                const std::vector<UninitializedRegion>* uninitialized);

  void StartThreadgroup(uint64_t index, uint32_t threadgroup_memory_length,
                        uint32_t simdgroups);
  // Called when the threadgroup is over (finished or faulted).
  void FinishThreadgroup();
  void SetSimdgroup(uint32_t index) { simdgroup_ = index; }

  // One lane's access of [address, address + size); thread and constant
  // memory are not checked. `written` holds the bytes a plain write stored
  // (else null).
  void MemoryAccess(const DecodedInstruction& d, isa::AddressSpace space,
                    int lane, uint64_t address, uint32_t size, AccessType type,
                    const uint8_t* written = nullptr);
  // All 32 lanes' accesses of consecutive elements of `size` bytes from
  // `first` (lane l at first + l * size); `written` as above, for all.
  void ContiguousAccess(const DecodedInstruction& d, isa::AddressSpace space,
                        uint64_t first, uint32_t size, AccessType type,
                        const uint8_t* written);
  // The active lanes' accesses by one instruction, lane l at address[l]
  // (A: uint32_t or uint64_t): what MemoryAccess does for each, in lane
  // order, in one call. Not for device writes, whose lanes are told one by
  // one as they store (each record keeps the bytes its lane stored).
  template <typename A>
  void LaneAccesses(const DecodedInstruction& d, isa::AddressSpace space,
                    uint32_t mask, const A* address, uint32_t size,
                    AccessType type);
  // A cross-lane function run by `lane` read `source`, an inactive lane.
  void InactiveLaneRead(const DecodedInstruction& d, int lane, int source);
  void SimdgroupBarrier(uint8_t mem_flags);
  // The SIMD groups waiting at a threadgroup barrier are released; `waiting`
  // holds each one's index and the barrier instruction it waits at,
  // `finished` those that finished since the last barrier, with the last
  // instruction they ran (past the barrier: they skipped it).
  void ThreadgroupBarrier(
      const std::vector<std::pair<uint32_t, uint32_t>>& waiting,
      const std::vector<std::pair<uint32_t, uint32_t>>& finished);

  // The record limit is reached: no more device records (race check).
  void StopDeviceRecords() { record_device_ = false; }

  const CheckOptions& options() const { return options_; }
  const FindingSet& findings() const { return findings_; }
  // The device records of the threadgroups run since the last call, in the
  // order they ran.
  DeviceAccessLog& device_log() { return log_; }
  // Writes to uninitialized regions since the last call: (address >> 3,
  // bit mask of the 8 bytes).
  std::vector<std::pair<uint64_t, uint8_t>>& initialized_bytes() {
    return initialized_bytes_;
  }

 private:
  uint32_t Pc(const DecodedInstruction& d) const {
    return static_cast<uint32_t>(&d - code_);
  }
  void DeviceInit(uint32_t pc, uint32_t thread, uint64_t address, uint32_t size,
                  AccessType type);
  void ThreadgroupAccess(uint32_t pc, uint32_t thread, uint32_t address,
                         uint32_t size, AccessType type);
  void ThreadgroupAccesses(uint32_t pc, uint32_t mask, const uint32_t* address,
                           uint32_t size, AccessType type);
  // One record for `lanes` lanes from `first_lane` at consecutive elements
  // of `size` bytes from `begin`.
  void RecordDevice(uint32_t pc, uint32_t first_lane, uint32_t lanes,
                    uint64_t begin, uint32_t size, AccessType type,
                    const uint8_t* written);

  CheckOptions options_;
  bool record_device_;
  const DecodedInstruction* code_;
  const std::vector<UninitializedRegion>* uninitialized_;

  uint64_t threadgroup_ = 0;
  uint32_t simdgroup_ = 0;
  uint32_t device_epoch_ = 0;
  std::vector<uint32_t> simd_device_epoch_;
  ThreadgroupShadow shadow_;
  // This threadgroup's writes to uninitialized regions, by 8-byte word.
  std::unordered_map<uint64_t, uint8_t> written_words_;

  FindingSet findings_;
  DeviceAccessLog log_;
  std::vector<std::pair<uint64_t, uint8_t>> initialized_bytes_;
};

}  // namespace mtlemu::emu
