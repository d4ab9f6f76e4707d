#include "emu/memory/device_memory.h"

#include <algorithm>

namespace mtlemu::emu {

uint64_t DeviceMemory::Map(uint8_t* host, uint64_t length, uint64_t id,
                           std::shared_ptr<const void> storage) {
  std::lock_guard<std::mutex> lock(mutex_);
  const uint64_t base = next_address_;
  const uint64_t end = base + std::max<uint64_t>(length, 1);
  next_address_ =
      (end + kRegionAlignment + kRegionAlignment - 1) & ~(kRegionAlignment - 1);
  // Bases only grow: the table stays sorted.
  current_.regions_.push_back({base, length, host, id});
  current_.storage_.push_back(std::move(storage));
  snapshot_.reset();
  return base;
}

void DeviceMemory::Unmap(uint64_t base) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<MemoryRegion>& regions = current_.regions_;
  auto it = std::lower_bound(
      regions.begin(), regions.end(), base,
      [](const MemoryRegion& r, uint64_t b) { return r.base < b; });
  if (it == regions.end() || it->base != base) return;
  current_.storage_.erase(current_.storage_.begin() + (it - regions.begin()));
  regions.erase(it);
  snapshot_.reset();
}

std::shared_ptr<const AddressMap> DeviceMemory::Snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (snapshot_ == nullptr) snapshot_ = std::make_shared<AddressMap>(current_);
  return snapshot_;
}

}  // namespace mtlemu::emu
