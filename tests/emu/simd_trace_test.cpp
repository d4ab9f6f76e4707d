// SimdGroupTrace (emu/exec/simd_trace.h): instructions appended one by one
// and read back through a TraceCursor are the same instructions, with the
// same lines, as a plain list of them; runs of plain instructions take one
// record.
#include "emu/exec/simd_trace.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace mtlemu::emu {
namespace {

// An instruction and the lines it touched (line_count of them).
struct Issued {
  TraceEvent event;
  std::vector<uint64_t> lines;
};

Issued Plain(uint32_t pc, uint8_t lanes = 32) {
  return {{.pc = pc, .lanes = lanes}, {}};
}

Issued Memory(uint32_t pc, std::vector<uint64_t> lines, uint8_t lanes = 32) {
  return {{.pc = pc,
           .lanes = lanes,
           .line_count = static_cast<uint16_t>(lines.size())},
          std::move(lines)};
}

Issued Conflicted(uint32_t pc, uint8_t conflict) {
  return {{.pc = pc, .lanes = 32, .conflict = conflict}, {}};
}

// As event_recorder.h does: the lines, then the instruction.
void Record(const std::vector<Issued>& issued, SimdGroupTrace& trace) {
  for (const Issued& i : issued) {
    trace.lines.insert(trace.lines.end(), i.lines.begin(), i.lines.end());
    trace.Append(i.event);
  }
}

SimdGroupTrace Encode(const std::vector<Issued>& issued) {
  SimdGroupTrace trace;
  Record(issued, trace);
  return trace;
}

// Reads `trace` back and checks it against `issued`, instruction by
// instruction, as the timing model reads it.
void ExpectDecodesTo(const SimdGroupTrace& trace,
                     const std::vector<Issued>& issued) {
  EXPECT_EQ(trace.instructions, issued.size());
  TraceCursor cursor(&trace);
  for (size_t i = 0; i < issued.size(); ++i) {
    ASSERT_FALSE(cursor.done()) << "instruction " << i;
    const TraceEvent e = cursor.event();
    const TraceEvent& want = issued[i].event;
    ASSERT_EQ(e.pc, want.pc) << "instruction " << i;
    ASSERT_EQ(cursor.pc(), want.pc) << "instruction " << i;
    ASSERT_EQ(e.lanes, want.lanes) << "instruction " << i;
    ASSERT_EQ(e.conflict, want.conflict) << "instruction " << i;
    ASSERT_EQ(e.line_count, want.line_count) << "instruction " << i;
    const std::vector<uint64_t> lines(cursor.lines(),
                                      cursor.lines() + e.line_count);
    ASSERT_EQ(lines, issued[i].lines) << "instruction " << i;
    cursor.Next();
  }
  EXPECT_TRUE(cursor.done());
}

TEST(SimdGroupTrace, EmptyTrace) {
  const SimdGroupTrace trace = Encode({});
  EXPECT_TRUE(trace.records.empty());
  ExpectDecodesTo(trace, {});
}

TEST(SimdGroupTrace, ConsecutivePlainInstructionsAreOneRecord) {
  std::vector<Issued> issued;
  for (uint32_t pc = 7; pc < 7 + 100; ++pc) issued.push_back(Plain(pc));
  const SimdGroupTrace trace = Encode(issued);
  EXPECT_EQ(trace.records.size(), 1u);
  ExpectDecodesTo(trace, issued);
}

TEST(SimdGroupTrace, LaneCountChangeBreaksARun) {
  const std::vector<Issued> issued = {Plain(0), Plain(1), Plain(2, 16),
                                      Plain(3, 16), Plain(4)};
  const SimdGroupTrace trace = Encode(issued);
  EXPECT_EQ(trace.records.size(), 3u);
  ExpectDecodesTo(trace, issued);
}

TEST(SimdGroupTrace, MemoryInstructionBreaksARun) {
  const std::vector<Issued> issued = {
      Plain(0),         Plain(1),       Memory(2, {40, 41}),   Plain(3),
      Plain(4),         Memory(5, {7}), Memory(6, {7, 9, 12}), Plain(7),
      Conflicted(8, 4),  // threadgroup memory, a bank conflict
      Plain(9)};
  const SimdGroupTrace trace = Encode(issued);
  EXPECT_EQ(trace.records.size(), 8u);
  EXPECT_EQ(trace.lines.size(), 6u);
  ExpectDecodesTo(trace, issued);
}

TEST(SimdGroupTrace, BranchBackBreaksARun) {
  // A loop of 5 instructions, 10 times: a record an iteration.
  std::vector<Issued> issued = {Plain(0), Plain(1)};
  for (int i = 0; i < 10; ++i) {
    for (uint32_t pc = 2; pc < 7; ++pc) issued.push_back(Plain(pc));
  }
  issued.push_back(Plain(7));
  const SimdGroupTrace trace = Encode(issued);
  EXPECT_EQ(trace.records.size(), 10u);  // the first and last join a run
  ExpectDecodesTo(trace, issued);
}

TEST(SimdGroupTrace, RepeatedPcIsNotARun) {
  // A branch to itself: the same pc, not the next one.
  const std::vector<Issued> issued = {Plain(3), Plain(3), Plain(3)};
  const SimdGroupTrace trace = Encode(issued);
  EXPECT_EQ(trace.records.size(), 3u);
  ExpectDecodesTo(trace, issued);
}

TEST(SimdGroupTrace, LongRunSplitsAtTheLargestCount) {
  std::vector<Issued> issued;
  const uint32_t n = 2 * TraceRecord::kMaxRun + 10;
  for (uint32_t pc = 0; pc < n; ++pc) issued.push_back(Plain(pc));
  const SimdGroupTrace trace = Encode(issued);
  ASSERT_EQ(trace.records.size(), 3u);
  EXPECT_EQ(trace.records[0].count, TraceRecord::kMaxRun);
  EXPECT_EQ(trace.records[1].count, TraceRecord::kMaxRun);
  EXPECT_EQ(trace.records[2].count, 10u);
  ExpectDecodesTo(trace, issued);
}

TEST(SimdGroupTrace, LargestPcAndLineCount) {
  const uint32_t top = (1u << 31) - 1;
  std::vector<uint64_t> many(UINT16_MAX);
  for (size_t i = 0; i < many.size(); ++i) many[i] = 1000 + i;
  const std::vector<Issued> issued = {Plain(top - 1), Plain(top),
                                      Memory(top, many), Plain(0)};
  ExpectDecodesTo(Encode(issued), issued);
}

TEST(SimdGroupTrace, TrimKeepsTheInstructionsAndFreesTheSlack) {
  // A loop with a load an iteration, then a shorter trace in the same
  // (reused) vectors.
  std::vector<Issued> issued;
  for (uint64_t i = 0; i < 1000; ++i) {
    issued.push_back(Memory(0, {i, i + 1}));
    issued.push_back(Plain(1));
    issued.push_back(Plain(2));
  }
  SimdGroupTrace trace = Encode(issued);
  trace.Trim();
  ExpectDecodesTo(trace, issued);
  issued.resize(300);
  trace.Clear();
  Record(issued, trace);
  trace.Trim();
  ExpectDecodesTo(trace, issued);
  EXPECT_LE(trace.records.capacity(), trace.records.size() * 9 / 8);
  EXPECT_LE(trace.lines.capacity(), trace.lines.size() * 9 / 8);
}

TEST(SimdGroupTrace, RandomSequencesRoundTrip) {
  std::mt19937 rng(12345);
  for (int round = 0; round < 200; ++round) {
    std::vector<Issued> issued;
    uint32_t pc = 0;
    uint8_t lanes = 32;
    const int length = static_cast<int>(rng() % 400);
    for (int i = 0; i < length; ++i) {
      switch (rng() % 16) {
        case 0:  // a branch
          pc = rng() % 64;
          break;
        case 1:  // divergence
          lanes = static_cast<uint8_t>(1 + rng() % 32);
          break;
        case 2: {
          std::vector<uint64_t> lines(1 + rng() % 8);
          for (uint64_t& l : lines) l = rng() % 1000;
          issued.push_back(Memory(pc++, lines, lanes));
          continue;
        }
        case 3:
          issued.push_back(
              Conflicted(pc++, static_cast<uint8_t>(1 + rng() % 4)));
          continue;
        case 4:  // thread or threadgroup memory without a conflict
          issued.push_back(Memory(pc++, {}, lanes));
          continue;
      }
      issued.push_back(Plain(pc++, lanes));
    }
    ExpectDecodesTo(Encode(issued), issued);
    if (HasFatalFailure()) return;
  }
}

// AppendRun (stretches of plain instructions, as the executor records a
// straight run or compiled code) gives the records that Append gives one
// instruction at a time: runs joined where they continue one another,
// split at kMaxRun.
TEST(SimdGroupTrace, AppendRunIsAppendedOneByOne) {
  std::mt19937 rng(2026);
  for (int round = 0; round < 300; ++round) {
    SimdGroupTrace by_run;
    SimdGroupTrace one_by_one;
    uint32_t pc = 0;
    const int stretches = static_cast<int>(rng() % 12);
    for (int i = 0; i < stretches; ++i) {
      if (rng() % 3 == 0) pc = rng() % 64;  // a branch
      const auto lanes = static_cast<uint8_t>(rng() % 2 ? 32 : 1 + rng() % 32);
      if (rng() % 5 == 0) {
        const TraceEvent memory{.pc = pc++, .lanes = lanes, .conflict = 2};
        by_run.Append(memory);
        one_by_one.Append(memory);
        continue;
      }
      const uint32_t count =
          rng() % 8 == 0 ? TraceRecord::kMaxRun - 5 + rng() % 10 : rng() % 40;
      by_run.AppendRun(pc, lanes, count);
      for (uint32_t k = 0; k < count; ++k) {
        one_by_one.Append({.pc = pc + k, .lanes = lanes});
      }
      pc += count;
    }
    ASSERT_EQ(by_run.instructions, one_by_one.instructions);
    ASSERT_EQ(by_run.records.size(), one_by_one.records.size());
    for (size_t r = 0; r < by_run.records.size(); ++r) {
      const TraceRecord& a = by_run.records[r];
      const TraceRecord& b = one_by_one.records[r];
      ASSERT_EQ(a.pc, b.pc) << "record " << r;
      ASSERT_EQ(a.run, b.run) << "record " << r;
      ASSERT_EQ(a.lanes, b.lanes) << "record " << r;
      ASSERT_EQ(a.conflict, b.conflict) << "record " << r;
      ASSERT_EQ(a.count, b.count) << "record " << r;
    }
  }
}

}  // namespace
}  // namespace mtlemu::emu
