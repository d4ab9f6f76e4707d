// The race check's record of device-memory accesses: one record per run of
// consecutive lanes of a SIMD-group instruction reaching consecutive
// elements (a coalesced load is one record, a gather one per lane). Races
// between threadgroups have no order to observe while threadgroups run in
// parallel, so they are found after the dispatch, from every record, the
// same way on any number of host threads.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "emu/check/finding_set.h"

namespace mtlemu::emu {

struct DeviceAccessRecord {
  uint64_t begin = 0;        // first byte's address
  uint64_t threadgroup = 0;  // index in the grid
  uint32_t length = 0;       // bytes
  uint32_t pc = 0;
  // threadgroup_barriers with mem_device its threadgroup passed before it,
  // and simdgroup_barriers with mem_device its SIMD group passed.
  uint32_t barrier_epoch = 0;
  uint32_t simd_epoch = 0;
  uint16_t first_thread = 0;  // thread_index_in_threadgroup at `begin`
  uint8_t element_size = 0;   // bytes per thread
  AccessType type = AccessType::kNone;
  // A plain write of at most kMaxValueBytes keeps the bytes it wrote, at
  // values[value_offset] of the log, to tell a race whose writes agree (the
  // writes of one lane, or of a few: a whole SIMD group's coalesced store is
  // not kept, which would copy everything a kernel writes).
  static constexpr uint32_t kMaxValueBytes = 64;
  bool has_value = false;
  uint64_t value_offset = 0;

  uint64_t end() const { return begin + length; }
  // The thread whose element holds `byte`.
  uint32_t ThreadAt(uint64_t byte) const {
    return first_thread + static_cast<uint32_t>((byte - begin) / element_size);
  }
};

// The records of some threadgroups, and the bytes their writes stored.
struct DeviceAccessLog {
  std::vector<DeviceAccessRecord> records;
  std::vector<uint8_t> values;

  // Appends one thread's access (with the bytes it wrote, or null),
  // extending the last record when the access is the next thread's element
  // right after it (same instruction, same barrier epochs).
  void Append(const DeviceAccessRecord& access, const uint8_t* written);
  // Moves `other`'s records and values to the end of this log.
  void Take(DeviceAccessLog& other);
  // Moves the records and values of `parts` to the end of this log in
  // threadgroup order, as a stable sort of their concatenation by
  // threadgroup would: each threadgroup's records are all in one part, in
  // the order they ran. One pass to count, one to place.
  void TakeByThreadgroup(const std::vector<DeviceAccessLog*>& parts);
  // Drops every record and value.
  void Clear();
  uint64_t bytes() const {
    return records.size() * sizeof(DeviceAccessRecord) + values.size();
  }

 private:
  // By instruction (modulo the size): the record its next access may
  // continue; SIZE_MAX (or a stale index that no longer matches) for none.
  std::array<size_t, 64> open_ = MakeClosed();
  static std::array<size_t, 64> MakeClosed() {
    std::array<size_t, 64> a;
    a.fill(SIZE_MAX);
    return a;
  }
};

// Pairs of accesses to the same bytes by different threads, one of them a
// write and not both atomic, that no barrier orders: threads of different
// threadgroups never are; threads of one threadgroup are by a
// threadgroup_barrier with mem_device between them, lanes of one SIMD
// group by a simdgroup_barrier with mem_device. Adds one finding per racing
// pair of records to `findings` (same_value when both wrote the same
// bytes). Each record is compared with at most
// kMaxOverlapsCompared others overlapping it; returns false when that limit
// cut some comparisons short (counts are then lower bounds).
inline constexpr int kMaxOverlapsCompared = 256;
bool FindDeviceRaces(const DeviceAccessLog& log, FindingSet& findings);

}  // namespace mtlemu::emu
