// IssueQueue (emu/timing/issue_queue.h): which SIMD group a scheduler may
// issue, oldest first, when operands and pipes allow; its kept summary
// follows every change. Each answer is checked against a plain scan.
#include "emu/timing/issue_queue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace mtlemu::emu {
namespace {

constexpr uint64_t kNever = IssueQueue::kNever;

TEST(IssueQueue, EmptyUntilSet) {
  IssueQueue q({0, 4, 8});
  EXPECT_EQ(q.Earliest(), kNever);
  EXPECT_EQ(q.OldestLive(), -1);
  EXPECT_EQ(q.FirstReady(1000), -1);
}

TEST(IssueQueue, OldestReadyFirst) {
  IssueQueue q({3, 7, 11});
  q.Set(0, 50, 0, true);
  q.Set(1, 10, 1, true);
  q.Set(2, 10, 1, true);
  EXPECT_EQ(q.Earliest(), 10u);
  EXPECT_EQ(q.OldestLive(), 3);
  EXPECT_EQ(q.FirstReady(9), -1);
  EXPECT_EQ(q.FirstReady(10), 1);
  EXPECT_EQ(q.FirstReady(60), 0);  // later, the oldest is ready too
}

TEST(IssueQueue, BusyPipeHolds) {
  IssueQueue q({0, 1});
  q.Set(0, 10, 2, true);
  q.Set(1, 12, 3, true);
  q.set_pipe_free(2, 20.5);  // accepts in the cycle its busy time ends in
  EXPECT_EQ(q.IssueTime(0), 20u);
  EXPECT_EQ(q.Earliest(), 12u);
  EXPECT_EQ(q.FirstReady(12), 1);
  EXPECT_EQ(q.FirstReady(20), 0);
  EXPECT_DOUBLE_EQ(q.pipe_free(2), 20.5);
}

TEST(IssueQueue, DoneAndAtBarrier) {
  IssueQueue q({0, 1, 2});
  q.Set(0, kNever, 0, false);  // done
  q.Set(1, kNever, 0, true);   // at a barrier
  q.Set(2, 5, 0, true);
  EXPECT_EQ(q.OldestLive(), 1);
  EXPECT_EQ(q.Earliest(), 5u);
  q.Set(2, kNever, 0, false);
  EXPECT_EQ(q.Earliest(), kNever);
  EXPECT_EQ(q.FirstReady(100), -1);
}

// Random changes: every answer equals a scan of the state as it is. `n`
// SIMD groups (more than 64 take more than one word of bits), operand
// waits of `shortest` to `longest` cycles (past the wheel's 64: the far
// set), and time that moves by up to `stride` cycles between questions.
void CheckAgainstAPlainScan(size_t n, uint64_t shortest, uint64_t longest,
                            uint64_t stride, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::vector<int> simd_groups(n);
  for (size_t i = 0; i < n; ++i) simd_groups[i] = static_cast<int>(4 * i + 1);
  IssueQueue q(simd_groups);
  std::vector<uint64_t> ready(n, kNever);
  std::vector<int> pipe_of(n, 0);
  std::vector<bool> live(n, false);
  std::vector<double> pipe(kNumPipes, 0);
  auto time = [&](size_t i) {
    return std::max(ready[i], static_cast<uint64_t>(pipe[pipe_of[i]]));
  };
  uint64_t now = 0;
  for (int step = 0; step < 20000; ++step) {
    if (random() % 4 == 0) now += random() % (stride + 1);
    if (random() % 3 == 0) {
      const int u = static_cast<int>(random() % kNumPipes);
      pipe[u] = std::max(pipe[u], double(now)) + (random() % 9) * 0.75;
      q.set_pipe_free(u, pipe[u]);
    } else {
      const size_t i = random() % n;
      live[i] = random() % 5 != 0;
      ready[i] = live[i] && random() % 4 != 0
                     ? now + shortest + random() % (longest - shortest)
                     : kNever;
      pipe_of[i] = static_cast<int>(random() % kNumPipes);
      q.Set(i, ready[i], pipe_of[i], live[i]);
    }
    uint64_t earliest = kNever;
    int first = -1, oldest = -1;
    for (size_t i = 0; i < n; ++i) {
      earliest = std::min(earliest, time(i));
      if (first < 0 && time(i) <= now) first = static_cast<int>(i);
      if (oldest < 0 && live[i]) oldest = simd_groups[i];
    }
    // Asked in either order: the summary and the search keep each other
    // right.
    if (step % 2 == 0) {
      ASSERT_EQ(q.Earliest(), earliest) << "step " << step;
      ASSERT_EQ(q.FirstReady(now), first) << "step " << step;
    } else {
      ASSERT_EQ(q.FirstReady(now), first) << "step " << step;
      ASSERT_EQ(q.Earliest(), earliest) << "step " << step;
    }
    ASSERT_EQ(q.OldestLive(), oldest) << "step " << step;
  }
}

TEST(IssueQueue, MatchesAPlainScan) { CheckAgainstAPlainScan(24, 0, 40, 1, 7); }

TEST(IssueQueue, LongWaitsAndJumpsMatchAPlainScan) {
  CheckAgainstAPlainScan(24, 0, 300, 90, 11);
  CheckAgainstAPlainScan(8, 64, 400, 30, 17);  // only waits past the wheel
}

TEST(IssueQueue, MoreThan64SimdGroupsMatchAPlainScan) {
  CheckAgainstAPlainScan(130, 0, 200, 20, 13);
}

// The soonest of the long waits ends (a barrier, say): the next soonest
// is the answer.
TEST(IssueQueue, SoonestLongWaitTakenBack) {
  IssueQueue q({0, 1, 2});
  q.Set(0, 200, 0, true);
  q.Set(1, 300, 0, true);
  EXPECT_EQ(q.FirstReady(10), -1);
  EXPECT_EQ(q.Earliest(), 200u);
  q.Set(0, kNever, 0, true);
  EXPECT_EQ(q.Earliest(), 300u);
}

// The soonest long wait's pipe is busy past it: another may go first.
TEST(IssueQueue, SoonestLongWaitOnABusyPipe) {
  IssueQueue q({0, 1});
  q.Set(0, 250, 1, true);
  q.Set(1, 270, 0, true);
  EXPECT_EQ(q.FirstReady(10), -1);
  q.set_pipe_free(1, 280.0);
  EXPECT_EQ(q.Earliest(), 270u);
  q.set_pipe_free(0, 290.0);
  EXPECT_EQ(q.Earliest(), 280u);
}

// Asked about an earlier cycle than before (the model never does): the
// answers are still those of a scan.
TEST(IssueQueue, BackInTime) {
  IssueQueue q({0, 1, 2});
  q.Set(0, 100, 0, true);
  q.Set(1, 30, 1, true);
  q.Set(2, 500, 1, true);
  EXPECT_EQ(q.FirstReady(600), 0);
  EXPECT_EQ(q.FirstReady(50), 1);
  EXPECT_EQ(q.FirstReady(20), -1);
  EXPECT_EQ(q.Earliest(), 30u);
  EXPECT_EQ(q.FirstReady(499), 0);
  EXPECT_EQ(q.FirstReady(500), 0);
}

}  // namespace
}  // namespace mtlemu::emu
