// A set of line numbers for one epoch (of one core, or of the model):
// open addressing in a
// table that grows, emptied in O(1) per epoch by a generation count (no
// allocation per line, unlike std::unordered_set).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace mtlemu::emu {

class LineSet {
 public:
  void Clear() {
    if (++generation_ == 0) {  // wrapped: really empty the table
      std::fill(stamps_.begin(), stamps_.end(), 0);
      generation_ = 1;
    }
    size_ = 0;
  }

  bool Contains(uint64_t line) const {
    if (slots_.empty()) return false;
    for (size_t i = Hash(line) & mask_;; i = (i + 1) & mask_) {
      if (stamps_[i] != generation_) return false;
      if (slots_[i] == line) return true;
    }
  }

  void Insert(uint64_t line) {
    if ((size_ + 1) * 2 > slots_.size()) Grow();
    for (size_t i = Hash(line) & mask_;; i = (i + 1) & mask_) {
      if (stamps_[i] != generation_) {
        stamps_[i] = generation_;
        slots_[i] = line;
        ++size_;
        return;
      }
      if (slots_[i] == line) return;
    }
  }

 private:
  static size_t Hash(uint64_t v) {
    return static_cast<size_t>((v * 0x9e3779b97f4a7c15ull) >> 17);
  }
  void Grow() {
    std::vector<uint64_t> old_slots;
    std::vector<uint32_t> old_stamps;
    old_slots.swap(slots_);
    old_stamps.swap(stamps_);
    const size_t capacity = old_slots.empty() ? 1024 : old_slots.size() * 2;
    slots_.assign(capacity, 0);
    stamps_.assign(capacity, 0);
    mask_ = capacity - 1;
    const uint32_t generation = generation_;
    size_ = 0;
    for (size_t i = 0; i < old_slots.size(); ++i) {
      if (old_stamps[i] == generation) Insert(old_slots[i]);
    }
  }

  std::vector<uint64_t> slots_;
  std::vector<uint32_t> stamps_;  // == generation_: slot in use
  size_t mask_ = 0;
  size_t size_ = 0;
  uint32_t generation_ = 1;
};

}  // namespace mtlemu::emu
