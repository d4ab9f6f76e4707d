// The GPU virtual address space at one moment: the regions mapped then,
// sorted by address, never changed afterwards. A dispatch translates every
// device and constant access through the map taken when it starts
// (DeviceMemory::Snapshot), so buffers that other host threads create or
// release meanwhile never move a region under it.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace mtlemu::emu {

struct MemoryRegion {
  uint64_t base = 0;    // GPU virtual address of byte 0
  uint64_t length = 0;  // bytes
  uint8_t* host = nullptr;
  uint64_t id = 0;  // the owner's id (a Buffer's), for reports
};

// Contract: immutable once made; Find and Nearest may be called from many
// threads at once.
class AddressMap {
 public:
  // The region that holds all of [address, address + size), or nullptr.
  const MemoryRegion* Find(uint64_t address, uint64_t size) const;
  // The region nearest to `address` (for fault reports): the one holding
  // it, else whichever of the regions below and above is closer; nullptr
  // when nothing is mapped.
  const MemoryRegion* Nearest(uint64_t address) const;
  // Every region, by address.
  const std::vector<MemoryRegion>& regions() const { return regions_; }

 private:
  friend class DeviceMemory;
  std::vector<MemoryRegion> regions_;  // sorted by base
  // What keeps each region's bytes alive while the map is in use (null
  // where the bytes are the caller's): a buffer released by another thread
  // during a dispatch that still reaches it by address stays readable.
  std::vector<std::shared_ptr<const void>> storage_;
};

}  // namespace mtlemu::emu
