// Findings as the checks make them while a dispatch runs: instruction
// indices and thread indices only (cheap to record), de-duplicated by kind
// and instruction pair, each kept with the count of times it was found and
// one example. The example is the one of the lowest-numbered threadgroup,
// and within a threadgroup the first found, so that a report is the same on
// any number of host threads.
#pragma once

#include <cstdint>
#include <map>
#include <tuple>

#include "isa/instruction.h"

namespace mtlemu::emu {

enum class FindingKind : uint8_t {
  kThreadgroupRace,
  kDeviceRace,
  kUninitializedThreadgroupRead,
  kUninitializedDeviceRead,
  kInactiveLaneRead,
  kMismatchedBarrier,
  kSkippedBarrier,
  // A device or constant access just outside a buffer, which read zeros or
  // stored nothing (emu/exec/near_buffer.h): found whatever checks are on.
  kNearBufferAccess,
  // Bytes a dispatch wrote differently in sequential and interleaved order
  // (CheckOptions::order; made whole by the order check, never raw).
  kOrderDependentResult,
};

enum class AccessType : uint8_t {
  kNone,
  kRead,
  kWrite,
  kAtomicRead,    // atomic_load
  kAtomicWrite,   // atomic_store
  kAtomicUpdate,  // the read-modify-writes (atomic_fetch_add, exchange, ...)
};

inline bool IsWrite(AccessType t) {
  return t == AccessType::kWrite || t == AccessType::kAtomicWrite ||
         t == AccessType::kAtomicUpdate;
}
// Whether the access reads the bytes' old value.
inline bool IsRead(AccessType t) {
  return t == AccessType::kRead || t == AccessType::kAtomicRead ||
         t == AccessType::kAtomicUpdate;
}
inline bool IsAtomic(AccessType t) {
  return t == AccessType::kAtomicRead || t == AccessType::kAtomicWrite ||
         t == AccessType::kAtomicUpdate;
}
// Whether two accesses to the same bytes by different threads race: one
// writes, and they are not both atomic.
inline bool Conflicts(AccessType a, AccessType b) {
  return (IsWrite(a) || IsWrite(b)) && !(IsAtomic(a) && IsAtomic(b));
}

// One thread's part in a finding: the instruction, the thread (its
// thread_index_in_threadgroup) and what it did.
struct FindingSide {
  uint32_t pc = 0;
  uint32_t thread = 0;
  AccessType type = AccessType::kNone;
  uint64_t threadgroup = 0;  // its threadgroup's index in the grid
};

struct RawFinding {
  FindingKind kind = FindingKind::kThreadgroupRace;
  FindingSide first;   // the earlier access, or the only thread
  FindingSide second;  // the later access, or the other SIMD group
  bool has_second = false;
  isa::AddressSpace space = isa::AddressSpace::kNone;
  uint64_t address = 0;      // the first byte concerned
  uint32_t size = 0;         // bytes of the access
  uint32_t source_lane = 0;  // kInactiveLaneRead: the lane read
  // Device races: both accesses wrote the same bytes (every time found).
  bool same_value = false;
  uint64_t count = 1;
};

class FindingSet {
 public:
  void Add(const RawFinding& finding);
  void Merge(const FindingSet& other);
  bool empty() const { return findings_.empty(); }
  size_t size() const { return findings_.size(); }

  // In the order of kind, then instruction pair.
  template <class F>
  void ForEach(F f) const {
    for (const auto& [key, finding] : findings_) f(finding);
  }

 private:
  // Kind, then the pair of instructions in increasing order.
  using Key = std::tuple<FindingKind, uint32_t, uint32_t>;
  std::map<Key, RawFinding> findings_;
};

}  // namespace mtlemu::emu
