// The GPU virtual address space: every buffer is mapped at its own range of
// 64-bit addresses, with unmapped guard space between buffers, and every
// device or constant access is translated and bounds-checked here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mtlemu::emu {

struct MemoryRegion {
  uint64_t base = 0;    // GPU virtual address of byte 0
  uint64_t length = 0;  // bytes
  uint8_t* host = nullptr;
  uint64_t id = 0;  // the owner's id (a Buffer's), for reports
};

// Contract: Map/Unmap are not called while a dispatch runs; Find and Nearest
// may be called from many threads at once.
class DeviceMemory {
 public:
  // First address handed out; low addresses stay unmapped so that a null or
  // small integer used as a pointer faults.
  static constexpr uint64_t kFirstAddress = 0x100000000ull;
  // Each region starts on this alignment and is followed by at least this
  // much unmapped space.
  static constexpr uint64_t kRegionAlignment = 0x10000ull;

  // Maps `length` bytes at `host` at a fresh address and returns it.
  // Addresses are never reused, so a stale pointer faults.
  uint64_t Map(uint8_t* host, uint64_t length, uint64_t id);
  void Unmap(uint64_t base);

  // The region that holds all of [address, address + size), or nullptr.
  const MemoryRegion* Find(uint64_t address, uint64_t size) const;
  // The region nearest to `address` (for fault reports): the one holding
  // it, else whichever of the regions below and above is closer; nullptr
  // when nothing is mapped.
  const MemoryRegion* Nearest(uint64_t address) const;

 private:
  std::vector<MemoryRegion> regions_;  // sorted by base
  uint64_t next_address_ = kFirstAddress;
};

}  // namespace mtlemu::emu
