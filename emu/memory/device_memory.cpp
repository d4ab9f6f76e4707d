#include "emu/memory/device_memory.h"

#include <algorithm>

namespace mtlemu::emu {

uint64_t DeviceMemory::Map(uint8_t* host, uint64_t length, uint64_t id) {
  const uint64_t base = next_address_;
  const uint64_t end = base + std::max<uint64_t>(length, 1);
  next_address_ =
      (end + kRegionAlignment + kRegionAlignment - 1) & ~(kRegionAlignment - 1);
  regions_.push_back({base, length, host, id});  // bases only grow: sorted
  return base;
}

void DeviceMemory::Unmap(uint64_t base) {
  auto it = std::lower_bound(
      regions_.begin(), regions_.end(), base,
      [](const MemoryRegion& r, uint64_t b) { return r.base < b; });
  if (it != regions_.end() && it->base == base) regions_.erase(it);
}

const MemoryRegion* DeviceMemory::Find(uint64_t address, uint64_t size) const {
  auto it = std::upper_bound(
      regions_.begin(), regions_.end(), address,
      [](uint64_t a, const MemoryRegion& r) { return a < r.base; });
  if (it == regions_.begin()) return nullptr;
  --it;
  const uint64_t offset = address - it->base;
  if (offset > it->length || size > it->length - offset) return nullptr;
  return &*it;
}

const MemoryRegion* DeviceMemory::Nearest(uint64_t address) const {
  if (regions_.empty()) return nullptr;
  auto above = std::upper_bound(
      regions_.begin(), regions_.end(), address,
      [](uint64_t a, const MemoryRegion& r) { return a < r.base; });
  if (above == regions_.begin()) return &*above;
  const MemoryRegion& below = *(above - 1);
  if (above == regions_.end()) return &below;
  // Past the end of the region below, or before the start of the one above:
  // whichever is closer.
  const uint64_t end = below.base + below.length;
  const uint64_t past_end = address >= end ? address - end : 0;
  const uint64_t before_start = above->base - address;
  return past_end <= before_start ? &below : &*above;
}

}  // namespace mtlemu::emu
