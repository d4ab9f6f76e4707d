// What the race and init checks know about each byte of one threadgroup's
// memory: the last write and up to two reads of the current barrier
// interval, and whether this threadgroup has written the byte.
//
// Two accesses by different threads, one a write and not both atomic, race
// unless a threadgroup_barrier with mem_threadgroup lies between them, or
// they come from the same SIMD group and a simdgroup_barrier with
// mem_threadgroup lies between them (its "SIMD epoch" changed). Apple's
// SIMD groups run their lanes in lockstep, but Metal orders the memory
// accesses of two lanes only through a barrier, and the compiler may move
// accesses that no barrier holds in place.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "emu/check/finding_set.h"

namespace mtlemu::emu {

struct ShadowAccess {
  uint32_t pc = 0;
  uint16_t thread = 0;  // thread_index_in_threadgroup
  AccessType type = AccessType::kNone;
  uint32_t simd_epoch = 0;  // of the thread's SIMD group, when it accessed
};

// Whether `earlier` is ordered before `later` without a threadgroup barrier:
// the same thread, or the same SIMD group with a simdgroup_barrier between.
inline bool OrderedInInterval(const ShadowAccess& earlier,
                              const ShadowAccess& later) {
  return earlier.thread == later.thread ||
         ((earlier.thread >> 5) == (later.thread >> 5) &&
          earlier.simd_epoch != later.simd_epoch);
}

class ThreadgroupShadow {
 public:
  // A new threadgroup with `length` bytes of threadgroup memory: nothing
  // written, nothing accessed.
  void StartThreadgroup(uint32_t length);
  // A threadgroup_barrier with mem_threadgroup: a new interval.
  void Barrier() { ++interval_; }

  // Checks one thread's access of [address, address + size) and records it.
  // Calls race(earlier, byte) for each earlier access it races with (once
  // per earlier thread and instruction), uninit(byte) once when it reads a
  // byte this threadgroup never wrote.
  //
  // Bytes are tracked a 4-byte word at a time while every access to the
  // word covers all of it (floats, ints), and one by one once an access
  // covers part of it (halves, chars) until the threadgroup ends.
  template <class Race, class Uninit>
  void Access(uint32_t address, uint32_t size, const ShadowAccess& access,
              Race&& race, Uninit&& uninit) {
    if (IsQuietRead(address, size, access)) return;
    Update update{access, race, uninit, interval_, threadgroup_start_};
    const uint32_t end = address + size;
    for (uint32_t word = address / 4; word * 4 < end; ++word) {
      const uint32_t lo = std::max(address, word * 4);
      const uint32_t hi = std::min(end, word * 4 + 4);
      Cell& w = words_[word];
      if (w.split_threadgroup != threadgroup_start_) {
        if (hi - lo == 4) {
          update(w, lo);
          continue;
        }
        for (uint32_t b = 0; b < 4; ++b) bytes_[word * 4 + b] = w;
        w.split_threadgroup = threadgroup_start_;
      }
      for (uint32_t byte = lo; byte < hi; ++byte) update(bytes_[byte], byte);
    }
  }

 private:
  // Whether a plain read of a whole word would neither find anything nor
  // change the word's cell (what Update does, checked first): the word was
  // written in this threadgroup but not in this interval, and it already
  // keeps two readers of this interval unordered with this one. Most
  // lanes of a broadcast or a tile row read so once two threads have.
  bool IsQuietRead(uint32_t address, uint32_t size,
                   const ShadowAccess& access) const {
    if (access.type != AccessType::kRead || size != 4 || address % 4 != 0) {
      return false;
    }
    const Cell& c = words_[address / 4];
    return c.split_threadgroup != threadgroup_start_ &&
           c.written_threadgroup == threadgroup_start_ &&
           c.write_interval != interval_ && c.read_interval == interval_ &&
           c.other_read.type != AccessType::kNone &&
           !OrderedInInterval(c.read, access) &&
           !OrderedInInterval(c.other_read, access);
  }

  struct Cell {
    uint64_t write_interval = 0;       // the interval of `write` (0: none yet)
    uint64_t read_interval = 0;        // the interval of `read`, `other_read`
    uint64_t written_threadgroup = 0;  // threadgroup_start_ when written
    uint64_t split_threadgroup = 0;    // words: threadgroup_start_ when split
    ShadowAccess write, read, other_read;
  };

  // One access applied to the cells it covers, one after the other.
  template <class Race, class Uninit>
  struct Update {
    const ShadowAccess& access;
    Race& race;
    Uninit& uninit;
    uint64_t interval;
    uint64_t threadgroup_start;
    bool uninit_reported = false;
    bool reported = false;  // whether `last` was reported
    ShadowAccess last;

    void Check(const ShadowAccess& earlier, uint32_t byte) {
      if (earlier.type == AccessType::kNone ||
          !Conflicts(earlier.type, access.type) ||
          OrderedInInterval(earlier, access)) {
        return;
      }
      if (reported && last.pc == earlier.pc && last.thread == earlier.thread) {
        return;
      }
      race(earlier, byte);
      reported = true;
      last = earlier;
    }

    void operator()(Cell& c, uint32_t byte) {
      if (IsRead(access.type) && !uninit_reported &&
          c.written_threadgroup != threadgroup_start) {
        uninit(byte);
        uninit_reported = true;
      }
      if (c.write_interval == interval) Check(c.write, byte);
      if (IsWrite(access.type)) {
        if (c.read_interval == interval) {
          Check(c.read, byte);
          Check(c.other_read, byte);
        }
        c.write = access;
        c.write_interval = interval;
        c.read_interval = 0;  // later accesses race with this write instead
        c.written_threadgroup = threadgroup_start;
      } else if (c.read_interval != interval) {
        c.read = access;
        c.other_read.type = AccessType::kNone;
        c.read_interval = interval;
      } else if (OrderedInInterval(c.read, access)) {
        c.read = access;
      } else if (c.other_read.type == AccessType::kNone ||
                 OrderedInInterval(c.other_read, access)) {
        c.other_read = access;
      }  // else two unordered readers are kept: a write races with both
    }
  };

  std::vector<Cell> words_;  // a cell per 4-byte word
  std::vector<Cell> bytes_;  // a cell per byte, for split words
  uint64_t interval_ = 0;    // counts up over threadgroups and barriers
  uint64_t threadgroup_start_ = 0;
};

}  // namespace mtlemu::emu
