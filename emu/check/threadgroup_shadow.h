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
  // A new threadgroup with `length` bytes of threadgroup memory and
  // `simdgroups` SIMD groups: nothing written, nothing accessed.
  void StartThreadgroup(uint32_t length, uint32_t simdgroups);
  // A threadgroup_barrier with mem_threadgroup: a new interval.
  void Barrier() {
    ++interval_;
    NextGeneration();
  }
  // A simdgroup_barrier with mem_threadgroup in SIMD group `simdgroup`.
  void SimdgroupBarrier(uint32_t simdgroup) {
    ++simd_epochs_[simdgroup];
    NextGeneration();
  }
  // The simdgroup_barriers with mem_threadgroup `simdgroup` has passed.
  uint32_t simd_epoch(uint32_t simdgroup) const {
    return simd_epochs_[simdgroup];
  }

  // Whether a plain read of a whole word would neither find anything nor
  // change the word's cell (what Update does): the word was written in this
  // threadgroup but not in this interval, and it already keeps two readers
  // of this interval unordered with this one. Most lanes of a broadcast or
  // a tile row read so once two threads have.
  //
  // quiet_ holds that state per word, as a key: the generation it holds in
  // (the high half; the generation changes with every interval and
  // simdgroup_barrier), and the two readers' threads. The readers were
  // current in their SIMD groups' epochs when the key was made and no
  // epoch has changed since, so a reader is ordered with this read only
  // when it is the same thread.
  bool IsQuietRead(uint32_t address, uint32_t size, AccessType type,
                   uint32_t thread) const {
    if (type != AccessType::kRead || size != 4 || address % 4 != 0) {
      return false;
    }
    const uint64_t key = quiet_[address / 4];
    return (key >> 32) == generation_ && (key & 0xffff) != thread &&
           ((key >> 16) & 0xffff) != thread;
  }

  // Checks one thread's access of [address, address + size) and records it
  // (callers pass over quiet reads first: IsQuietRead).
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
    Update update{access, race, uninit, interval_, threadgroup_start_};
    const uint32_t end = address + size;
    for (uint32_t word = address / 4; word * 4 < end; ++word) {
      const uint32_t lo = std::max(address, word * 4);
      const uint32_t hi = std::min(end, word * 4 + 4);
      Cell& w = words_[word];
      if (w.split_threadgroup != threadgroup_start_) {
        if (hi - lo == 4) {
          update(w, lo);
          // Only a read can leave a word quiet.
          quiet_[word] = IsWrite(access.type) ? 0 : QuietKeyOf(w);
          continue;
        }
        for (uint32_t b = 0; b < 4; ++b) bytes_[word * 4 + b] = w;
        w.split_threadgroup = threadgroup_start_;
        quiet_[word] = 0;
      }
      for (uint32_t byte = lo; byte < hi; ++byte) update(bytes_[byte], byte);
    }
  }

 private:
  struct Cell {
    uint64_t write_interval = 0;       // the interval of `write` (0: none yet)
    uint64_t read_interval = 0;        // the interval of `read`, `other_read`
    uint64_t written_threadgroup = 0;  // threadgroup_start_ when written
    uint64_t split_threadgroup = 0;    // words: threadgroup_start_ when split
    ShadowAccess write, read, other_read;
  };

  // The quiet key of a word's cell (see IsQuietRead), 0 for none.
  uint64_t QuietKeyOf(const Cell& c) const {
    if (c.read_interval != interval_ || c.write_interval == interval_ ||
        c.written_threadgroup != threadgroup_start_ ||
        c.other_read.type == AccessType::kNone ||
        c.read.simd_epoch != simd_epochs_[c.read.thread >> 5] ||
        c.other_read.simd_epoch != simd_epochs_[c.other_read.thread >> 5]) {
      return 0;
    }
    return uint64_t{generation_} << 32 | uint64_t{c.other_read.thread} << 16 |
           c.read.thread;
  }
  // Every quiet key is stale from here on.
  void NextGeneration() {
    if (++generation_ == 0) {  // wrapped: no key may match by chance
      std::fill(quiet_.begin(), quiet_.end(), 0);
      generation_ = 1;
    }
  }

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

  std::vector<Cell> words_;            // a cell per 4-byte word
  std::vector<uint64_t> quiet_;        // a quiet key per 4-byte word
  std::vector<Cell> bytes_;            // a cell per byte, for split words
  std::vector<uint32_t> simd_epochs_;  // per SIMD group
  uint32_t generation_ = 1;
  uint64_t interval_ = 0;  // counts up over threadgroups and barriers
  uint64_t threadgroup_start_ = 0;
};

}  // namespace mtlemu::emu
