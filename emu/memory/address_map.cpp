#include "emu/memory/address_map.h"

#include <algorithm>

namespace mtlemu::emu {

const MemoryRegion* AddressMap::Find(uint64_t address, uint64_t size) const {
  auto it = std::upper_bound(
      regions_.begin(), regions_.end(), address,
      [](uint64_t a, const MemoryRegion& r) { return a < r.base; });
  if (it == regions_.begin()) return nullptr;
  --it;
  const uint64_t offset = address - it->base;
  if (offset > it->length || size > it->length - offset) return nullptr;
  return &*it;
}

const MemoryRegion* AddressMap::Nearest(uint64_t address) const {
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
