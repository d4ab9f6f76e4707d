// A set-associative cache of lines with LRU replacement, for the timing
// model's L1, L2 and SLC. Lines are line numbers (address / line size).
#pragma once

#include <cstdint>
#include <vector>

namespace mtlemu::emu {

class CacheModel {
 public:
  CacheModel() = default;
  CacheModel(uint64_t bytes, uint32_t line_bytes, int ways) {
    ways_ = ways < 1 ? 1 : ways;
    const uint64_t lines = bytes / line_bytes;
    sets_ = lines / ways_ < 1 ? 1 : lines / ways_;
    tags_.assign(sets_ * ways_, kEmpty);
    ages_.assign(sets_ * ways_, 0);
  }

  bool Contains(uint64_t line) const {
    if (sets_ == 0) return false;
    const uint64_t* t = &tags_[(line % sets_) * ways_];
    for (int w = 0; w < ways_; ++w) {
      if (t[w] == line) return true;
    }
    return false;
  }

  // Looks `line` up and makes it the most recent; true on a hit (a miss
  // brings it in, evicting the least recent).
  bool Access(uint64_t line) {
    if (sets_ == 0) return false;
    const uint64_t set = line % sets_;
    uint64_t* t = &tags_[set * ways_];
    uint64_t* a = &ages_[set * ways_];
    ++clock_;
    for (int w = 0; w < ways_; ++w) {
      if (t[w] == line) {
        a[w] = clock_;
        return true;
      }
    }
    // The least recent way, the first of equals (unused ways are 0), with
    // the oldest age kept in a register rather than read again.
    int victim = 0;
    uint64_t oldest = a[0];
    for (int w = 1; w < ways_; ++w) {
      const bool older = a[w] < oldest;
      oldest = older ? a[w] : oldest;
      victim = older ? w : victim;
    }
    t[victim] = line;
    a[victim] = clock_;
    return false;
  }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  uint64_t sets_ = 0;
  int ways_ = 1;
  uint64_t clock_ = 0;
  std::vector<uint64_t> tags_;
  std::vector<uint64_t> ages_;
};

}  // namespace mtlemu::emu
