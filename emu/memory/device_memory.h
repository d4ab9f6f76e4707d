// The GPU virtual address space of a device: every buffer is mapped at its
// own range of 64-bit addresses, with unmapped guard space between buffers.
// Accesses are translated and bounds-checked through an AddressMap, the
// regions mapped at the moment a dispatch starts.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>

#include "emu/memory/address_map.h"

namespace mtlemu::emu {

// Contract: thread-safe. Map, Unmap and Snapshot may be called from many
// threads at once, also while dispatches run on maps taken before.
class DeviceMemory {
 public:
  // First address handed out; low addresses stay unmapped so that a null or
  // small integer used as a pointer faults.
  static constexpr uint64_t kFirstAddress = 0x100000000ull;
  // Each region starts on this alignment and is followed by at least this
  // much unmapped space.
  static constexpr uint64_t kRegionAlignment = 0x10000ull;

  // Maps `length` bytes at `host` at a fresh address and returns it.
  // Addresses are never reused, so a stale pointer faults. `storage`, where
  // given, owns the bytes: maps taken while the region is mapped keep it.
  uint64_t Map(uint8_t* host, uint64_t length, uint64_t id,
               std::shared_ptr<const void> storage = nullptr);
  void Unmap(uint64_t base);

  // The regions mapped now. Made once per change of the mapping (a copy of
  // the region table), shared by every caller until the next change.
  std::shared_ptr<const AddressMap> Snapshot() const;

 private:
  mutable std::mutex mutex_;
  AddressMap current_;
  uint64_t next_address_ = kFirstAddress;
  mutable std::shared_ptr<const AddressMap> snapshot_;  // null: stale
};

}  // namespace mtlemu::emu
