// What the functional executor tells the timing model: per SIMD group, the
// instructions it issued in order, with their active lanes and the memory
// they touched. Recorded only in timed mode (timing never changes a
// result, and costs nothing when off).
//
// The model holds the traces of every resident threadgroup and of the
// batches on their way to it, so a trace is stored compressed, without
// loss. ALU code issues long stretches of instructions at consecutive pcs
// with the same lanes, no bank conflict and no memory lines; one 8-byte
// TraceRecord stands for such a stretch (a run), so an ALU loop costs 8
// bytes an iteration instead of 8 bytes an instruction:
//
//   run = 0  one instruction: pc, lanes, conflict, and `count` lines (the
//            next `count` entries of SimdGroupTrace::lines).
//   run = 1  `count` instructions (1 to kMaxRun) at pc, pc + 1, ...: each
//            with `lanes` active lanes, conflict 1 and no lines.
//
// A run ends at a taken branch (the next pc is not pc + 1), a change of
// active lanes, an instruction with lines or a conflict, or kMaxRun. An
// instruction that can be in a run always is (alone, a run of 1), so a
// sequence of instructions has one encoding. The timing model reads the
// instructions back one at a time (TraceCursor), as they were issued.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace mtlemu::emu {

// How memory is recorded: in the cache lines and threadgroup memory banks
// of the chip the trace is for (ChipTiming::line_bytes and
// threadgroup_banks; the TraceSink says them).
struct TraceGeometry {
  uint32_t line_shift = 0;         // log2 of a line's bytes
  uint32_t threadgroup_banks = 0;  // of 4 bytes each, at most kMaxBanks
  static constexpr uint32_t kMaxBanks = 64;
};

// One issued instruction.
struct TraceEvent {
  uint32_t pc = 0;
  uint8_t lanes = 0;  // active lanes
  // Threadgroup memory: accesses to the busiest bank (1 = no conflict).
  // Device atomics: lanes on the busiest address.
  uint8_t conflict = 1;
  uint16_t line_count = 0;  // device and constant memory: lines touched
};

// One instruction or a run of them (see the top of this file).
struct TraceRecord {
  static constexpr uint32_t kMaxRun = UINT16_MAX;

  uint32_t pc : 31 = 0;  // (a kernel has far fewer than 2^31 instructions)
  uint32_t run : 1 = 0;
  uint8_t lanes = 0;
  uint8_t conflict = 1;
  uint16_t count = 0;  // lines, or a run's instructions
};
static_assert(sizeof(TraceRecord) == 8);

struct SimdGroupTrace {
  std::vector<TraceRecord> records;
  // Line numbers (address / line size): each instruction's line_count, in
  // the order of the instructions (so a record needs no index into them).
  std::vector<uint64_t> lines;
  uint64_t instructions = 0;  // (records.size() counts runs once)

  // Appends an instruction (its lines are already in `lines`).
  void Append(const TraceEvent& e) {
    assert(e.pc < (1u << 31));
    ++instructions;
    if (e.line_count == 0 && e.conflict == 1) {
      if (!records.empty()) {
        TraceRecord& last = records.back();
        if (last.run && last.lanes == e.lanes &&
            last.count < TraceRecord::kMaxRun &&
            uint64_t{last.pc} + last.count == e.pc) {
          ++last.count;
          return;
        }
      }
      records.push_back({.pc = e.pc, .run = 1, .lanes = e.lanes, .count = 1});
      return;
    }
    records.push_back({.pc = e.pc,
                       .run = 0,
                       .lanes = e.lanes,
                       .conflict = e.conflict,
                       .count = e.line_count});
  }

  // Appends `count` instructions at pc, pc + 1, ..., each with `lanes`
  // active lanes and no lines or conflict: what as many calls of Append
  // would give.
  void AppendRun(uint32_t pc, uint8_t lanes, uint32_t count) {
    assert(pc + uint64_t{count} <= (1u << 31));
    instructions += count;
    if (!records.empty()) {
      TraceRecord& last = records.back();
      if (last.run && last.lanes == lanes &&
          uint64_t{last.pc} + last.count == pc) {
        const uint32_t more =
            std::min<uint32_t>(count, TraceRecord::kMaxRun - last.count);
        last.count = static_cast<uint16_t>(last.count + more);
        pc += more;
        count -= more;
      }
    }
    while (count != 0) {
      const uint32_t n = std::min<uint32_t>(count, TraceRecord::kMaxRun);
      records.push_back({.pc = pc,
                         .run = 1,
                         .lanes = lanes,
                         .count = static_cast<uint16_t>(n)});
      pc += n;
      count -= n;
    }
  }

  void Clear() {
    records.clear();
    lines.clear();
    instructions = 0;
  }

  // Frees what the vectors' doubling reserved beyond their contents (up to
  // as much as they hold): a finished trace waits for the timing model
  // beside hundreds of others. A slack of an eighth, or of a few KB, stays:
  // a reused trace a little longer than the last then does not reallocate
  // twice, and short traces are not copied for nothing.
  void Trim() {
    TrimVector(records);
    TrimVector(lines);
  }

 private:
  template <class T>
  static void TrimVector(std::vector<T>& v) {
    constexpr size_t kKeptBytes = 4096;
    const size_t slack = v.capacity() - v.size();
    if (slack > v.size() / 8 && slack * sizeof(T) > kKeptBytes) {
      v.shrink_to_fit();
    }
  }
};

// Reads a SimdGroupTrace back an instruction at a time, as they were
// appended.
class TraceCursor {
 public:
  TraceCursor() = default;
  // Pointers into `trace`, which must not change while the cursor reads
  // it: the timing model reads a record in every issue, and a chain of
  // loads through the vectors cost more than the rest of the read.
  explicit TraceCursor(const SimdGroupTrace* trace)
      : trace_(trace),
        record_(trace->records.data()),
        end_(trace->records.data() + trace->records.size()),
        line_(trace->lines.data()) {}

  const SimdGroupTrace& trace() const { return *trace_; }
  bool done() const { return record_ == end_; }

  // The current instruction.
  uint32_t pc() const { return record_->pc + offset_; }
  TraceEvent event() const {
    const TraceRecord& r = *record_;
    return {.pc = r.pc + offset_,
            .lanes = r.lanes,
            .conflict = r.conflict,
            .line_count = r.run ? uint16_t{0} : r.count};
  }
  // Its event().line_count lines.
  const uint64_t* lines() const { return line_; }

  // On to the next instruction.
  void Next() {
    const TraceRecord& r = *record_;
    if (r.run) {
      if (++offset_ < r.count) return;
      offset_ = 0;
    } else {
      line_ += r.count;
    }
    ++record_;
  }

 private:
  const SimdGroupTrace* trace_ = nullptr;
  const TraceRecord* record_ = nullptr;  // the current record
  const TraceRecord* end_ = nullptr;
  const uint64_t* line_ = nullptr;  // the current instruction's first line
  uint32_t offset_ = 0;  // instructions of the current run already read
};

struct ThreadgroupTrace {
  uint64_t index = 0;  // linear threadgroup index in the grid
  uint32_t threads = 0;
  std::vector<SimdGroupTrace> simd_groups;
};

}  // namespace mtlemu::emu
