// A set-associative cache of lines with LRU replacement, for the timing
// model's L1, L2 and SLC. Lines are line numbers (address / line size).
//
// Each set keeps its lines in order of use, the most recent first, with
// unused ways (kEmpty) at the end: a hit moves its line to the front, a
// miss shifts the set by one and drops the last way, which is an unused
// one while there is one, else the least recent line. Only the tags are
// stored (no ages), so a lookup reads one short array.
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
    uint64_t* t = &tags_[(line % sets_) * ways_];
    int w = 0;
    while (w < ways_ && t[w] != line) ++w;
    const bool hit = w < ways_;
    if (!hit) w = ways_ - 1;  // (line numbers are never kEmpty)
    for (; w > 0; --w) t[w] = t[w - 1];
    t[0] = line;
    return hit;
  }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  uint64_t sets_ = 0;
  int ways_ = 1;
  std::vector<uint64_t> tags_;  // per set, most recent first
};

}  // namespace mtlemu::emu
