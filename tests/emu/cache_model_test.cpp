// CacheModel (emu/timing/cache_model.h): LRU replacement kept as an order
// of use per set gives the same hits and misses as LRU by age stamps (the
// textbook form, written out here as the reference).
#include "emu/timing/cache_model.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

namespace mtlemu::emu {
namespace {

// LRU by age: a hit stamps the way with the access count, a miss replaces
// the way with the oldest stamp (unused ways are 0; the first of equals).
class AgeLru {
 public:
  AgeLru(uint64_t bytes, uint32_t line_bytes, int ways) : ways_(ways) {
    sets_ = bytes / line_bytes / ways;
    tags_.assign(sets_ * ways_, ~uint64_t{0});
    ages_.assign(sets_ * ways_, 0);
  }
  bool Contains(uint64_t line) const {
    for (int w = 0; w < ways_; ++w) {
      if (tags_[(line % sets_) * ways_ + w] == line) return true;
    }
    return false;
  }
  bool Access(uint64_t line) {
    uint64_t* t = &tags_[(line % sets_) * ways_];
    uint64_t* a = &ages_[(line % sets_) * ways_];
    ++clock_;
    int victim = 0;
    for (int w = 0; w < ways_; ++w) {
      if (t[w] == line) {
        a[w] = clock_;
        return true;
      }
      if (a[w] < a[victim]) victim = w;
    }
    t[victim] = line;
    a[victim] = clock_;
    return false;
  }

 private:
  int ways_;
  uint64_t sets_;
  uint64_t clock_ = 0;
  std::vector<uint64_t> tags_, ages_;
};

TEST(CacheModel, HitsAfterAMissAndEvictsTheLeastRecent) {
  CacheModel c(4 * 128, 128, 4);  // one set of 4 ways
  EXPECT_FALSE(c.Access(1));
  EXPECT_TRUE(c.Access(1));
  for (uint64_t l = 2; l <= 4; ++l) EXPECT_FALSE(c.Access(l));
  EXPECT_TRUE(c.Access(1));   // 1 is now the most recent; 2 the least
  EXPECT_FALSE(c.Access(5));  // evicts 2
  EXPECT_FALSE(c.Contains(2));
  for (uint64_t l : {1, 3, 4, 5}) EXPECT_TRUE(c.Contains(l));
}

TEST(CacheModel, SameAsLruByAge) {
  for (int ways : {1, 2, 8, 16}) {
    const uint64_t bytes = 64 * 128 * ways;  // 64 sets
    CacheModel c(bytes, 128, ways);
    AgeLru reference(bytes, 128, ways);
    std::mt19937_64 random(ways);
    for (int i = 0; i < 200000; ++i) {
      // Mostly a working set a little larger than the cache, some streams.
      const uint64_t line = random() % 4 == 0
                                ? 1000000 + i
                                : random() % (64 * ways + 64 * ways / 2 + 3);
      if (random() % 3 == 0) {
        ASSERT_EQ(c.Contains(line), reference.Contains(line)) << i;
      } else {
        ASSERT_EQ(c.Access(line), reference.Access(line)) << i;
      }
    }
  }
}

}  // namespace
}  // namespace mtlemu::emu
