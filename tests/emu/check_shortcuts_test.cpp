// The race and init checks' shortcuts against the plain way they stand for:
// quiet threadgroup reads (known from a word's quiet key) against every read
// through the shadow's full update; a SIMD group's device reads recorded in
// runs against one lane at a time; the device records of a batch put in
// threadgroup order by counting against a stable sort.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <tuple>
#include <vector>

#include "emu/check/device_access_log.h"
#include "emu/check/kernel_checker.h"
#include "emu/check/threadgroup_shadow.h"
#include "emu/exec/decoded_kernel.h"

namespace mtlemu::emu {
namespace {

// What the shadow reported, in order: races (earlier pc and thread, the
// later access's thread, the byte) and uninitialized reads.
struct Event {
  int kind;  // 0: race, 1: uninitialized read
  uint32_t earlier_pc, earlier_thread, thread, byte;
  bool operator==(const Event&) const = default;
};

// Runs the same random program of accesses and barriers through two
// shadows, one passing over quiet reads as the checker does and one
// updating for every access, and returns
// both event streams. Few words and threads, so that accesses meet often.
std::pair<std::vector<Event>, std::vector<Event>> RunBoth(uint32_t seed) {
  std::mt19937 rng(seed);
  ThreadgroupShadow fast, full;
  std::vector<Event> fast_events, full_events;
  constexpr uint32_t kWords = 8, kSimdgroups = 3;
  for (int threadgroup = 0; threadgroup < 4; ++threadgroup) {
    fast.StartThreadgroup(kWords * 4, kSimdgroups);
    full.StartThreadgroup(kWords * 4, kSimdgroups);
    for (int step = 0; step < 600; ++step) {
      const uint32_t r = rng() % 100;
      if (r < 2) {
        fast.Barrier();
        full.Barrier();
        continue;
      }
      if (r < 4) {
        const uint32_t s = rng() % kSimdgroups;
        fast.SimdgroupBarrier(s);
        full.SimdgroupBarrier(s);
        continue;
      }
      // Mostly whole-word plain reads (the shortcut's case), some writes,
      // atomics and narrow accesses that split words.
      AccessType type = AccessType::kRead;
      if (r >= 70 && r < 85) type = AccessType::kWrite;
      if (r >= 85 && r < 90) type = AccessType::kAtomicUpdate;
      if (r >= 90 && r < 93) type = AccessType::kAtomicRead;
      uint32_t size = 4;
      if (r >= 93) size = (rng() % 2) ? 2 : 1;
      const uint32_t address =
          (rng() % kWords) * 4 + (size < 4 ? rng() % 2 * size : 0);
      const uint32_t thread = rng() % (kSimdgroups * 32);
      // A few threads per SIMD group, so that the same thread comes back.
      const uint32_t t = (thread / 32) * 32 + thread % 4;
      const auto run = [&](ThreadgroupShadow& shadow, std::vector<Event>& out,
                           bool pass_quiet_reads) {
        if (pass_quiet_reads && shadow.IsQuietRead(address, size, type, t)) {
          return;
        }
        const ShadowAccess access{static_cast<uint32_t>(step),
                                  static_cast<uint16_t>(t), type,
                                  shadow.simd_epoch(t / 32)};
        shadow.Access(
            address, size, access,
            [&](const ShadowAccess& earlier, uint32_t byte) {
              out.push_back({0, earlier.pc, earlier.thread, t, byte});
            },
            [&](uint32_t byte) {
              out.push_back({1, 0, 0, t, byte});
            });
      };
      run(fast, fast_events, true);
      run(full, full_events, false);
    }
  }
  return {fast_events, full_events};
}

TEST(CheckShortcutsTest, QuietReadsFindWhatTheFullUpdateFinds) {
  size_t events = 0;
  for (uint32_t seed = 1; seed <= 200; ++seed) {
    const auto [fast, full] = RunBoth(seed);
    ASSERT_EQ(fast, full) << "seed " << seed;
    events += full.size();
  }
  // The programs do find races and uninitialized reads to compare.
  EXPECT_GT(events, 1000u);
}

DeviceAccessRecord Record(uint64_t threadgroup, uint64_t begin, uint32_t pc) {
  DeviceAccessRecord r;
  r.threadgroup = threadgroup;
  r.begin = begin;
  r.length = 4;
  r.pc = pc;
  r.element_size = 4;
  r.first_thread = static_cast<uint16_t>(pc % 32);
  r.type = pc % 3 == 0 ? AccessType::kWrite : AccessType::kRead;
  return r;
}

TEST(CheckShortcutsTest, TakeByThreadgroupIsAStableSortByThreadgroup) {
  std::mt19937 rng(7);
  // Three workers' logs: each threadgroup runs on one worker, which may
  // take threadgroups out of order; writes keep the bytes they stored.
  std::vector<DeviceAccessLog> logs(3);
  std::vector<DeviceAccessRecord> all;
  std::vector<std::vector<uint8_t>> stored;  // by the order in `all`
  std::vector<uint64_t> threadgroups(40);
  for (uint64_t t = 0; t < threadgroups.size(); ++t) threadgroups[t] = 100 + t;
  std::shuffle(threadgroups.begin(), threadgroups.end(), rng);
  for (uint64_t t : threadgroups) {
    DeviceAccessLog& log = logs[rng() % logs.size()];
    const int n = static_cast<int>(rng() % 5);
    for (int i = 0; i < n; ++i) {
      // Far apart, so that Append keeps one record per access.
      DeviceAccessRecord r = Record(t, rng() % 1000 * 64, rng() % 200);
      const uint8_t v[4] = {static_cast<uint8_t>(t), static_cast<uint8_t>(i),
                            static_cast<uint8_t>(r.pc), 9};
      log.Append(r, IsWrite(r.type) ? v : nullptr);
    }
  }
  // The reference: each log's records with their bytes, concatenated,
  // then stable-sorted by threadgroup.
  struct Kept {
    DeviceAccessRecord r;
    std::vector<uint8_t> bytes;
  };
  std::vector<Kept> reference;
  for (const DeviceAccessLog& log : logs) {
    for (const DeviceAccessRecord& r : log.records) {
      Kept k{r, {}};
      if (r.has_value) {
        k.bytes.assign(log.values.begin() + r.value_offset,
                       log.values.begin() + r.value_offset + r.length);
      }
      reference.push_back(k);
    }
  }
  std::stable_sort(reference.begin(), reference.end(),
                   [](const Kept& a, const Kept& b) {
                     return a.r.threadgroup < b.r.threadgroup;
                   });
  DeviceAccessLog merged;
  merged.Append(Record(1, 0, 5), nullptr);  // what an earlier batch left
  std::vector<DeviceAccessLog*> parts;
  for (DeviceAccessLog& log : logs) parts.push_back(&log);
  merged.TakeByThreadgroup(parts);
  ASSERT_EQ(merged.records.size(), reference.size() + 1);
  for (size_t i = 0; i < reference.size(); ++i) {
    const DeviceAccessRecord& got = merged.records[i + 1];
    const Kept& want = reference[i];
    EXPECT_EQ(
        std::tie(got.threadgroup, got.begin, got.pc, got.has_value),
        std::tie(want.r.threadgroup, want.r.begin, want.r.pc, want.r.has_value))
        << i;
    if (got.has_value) {
      EXPECT_EQ(std::vector<uint8_t>(
                    merged.values.begin() + got.value_offset,
                    merged.values.begin() + got.value_offset + got.length),
                want.bytes)
          << i;
    }
  }
  for (const DeviceAccessLog& log : logs) EXPECT_TRUE(log.records.empty());
}

TEST(CheckShortcutsTest, LaneAccessesRecordWhatEachLaneWouldRecord) {
  // Uninitialized bytes too, so that the init check sees each lane.
  std::vector<uint64_t> bits(4, 0);
  const std::vector<UninitializedRegion> uninitialized = {{0x1000, 256, &bits}};
  CheckOptions options;
  options.race = options.init = true;
  std::vector<DecodedInstruction> code(3);
  std::mt19937 rng(3);
  for (int trial = 0; trial < 200; ++trial) {
    KernelChecker batch(options, code.data(), &uninitialized);
    KernelChecker lanes(options, code.data(), &uninitialized);
    for (KernelChecker* c : {&batch, &lanes}) {
      c->StartThreadgroup(7, 0, 2);
      c->SetSimdgroup(1);
    }
    // Runs of consecutive elements, repeats and jumps, with holes in the
    // mask; the same instruction twice continues the first's records.
    for (int instruction = 0; instruction < 2; ++instruction) {
      uint64_t address[32];
      uint64_t next = 0x1000 + rng() % 8 * 4;
      for (uint64_t& a : address) {
        a = next;
        next = rng() % 4 == 0 ? 0x1000 + rng() % 60 * 4 : next + 4;
      }
      const uint32_t mask = rng() % 2 ? ~0u : static_cast<uint32_t>(rng());
      batch.LaneAccesses(code[1], isa::AddressSpace::kDevice, mask, address, 4,
                         AccessType::kRead);
      for (int l = 0; l < 32; ++l) {
        if ((mask >> l) & 1) {
          lanes.MemoryAccess(code[1], isa::AddressSpace::kDevice, l, address[l],
                             4, AccessType::kRead);
        }
      }
    }
    const auto& got = batch.device_log().records;
    const auto& want = lanes.device_log().records;
    ASSERT_EQ(got.size(), want.size()) << trial;
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(
          std::tie(got[i].begin, got[i].length, got[i].first_thread, got[i].pc),
          std::tie(want[i].begin, want[i].length, want[i].first_thread,
                   want[i].pc))
          << trial << " record " << i;
    }
    EXPECT_EQ(batch.findings().size(), lanes.findings().size());
    size_t count_batch = 0, count_lanes = 0;
    batch.findings().ForEach(
        [&](const RawFinding& f) { count_batch += f.count; });
    lanes.findings().ForEach(
        [&](const RawFinding& f) { count_lanes += f.count; });
    EXPECT_EQ(count_batch, count_lanes) << trial;
    EXPECT_GT(count_lanes, 0u);
  }
}

}  // namespace
}  // namespace mtlemu::emu
