#include "emu/check/device_access_log.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace mtlemu::emu {
namespace {

FindingSide SideAt(const DeviceAccessRecord& r, uint64_t byte) {
  return {r.pc, r.ThreadAt(byte), r.type, r.threadgroup};
}

// The first byte at which `a` and `b` race, or nullopt-like max.
constexpr uint64_t kNoRace = std::numeric_limits<uint64_t>::max();

uint64_t FirstRacingByte(const DeviceAccessRecord& a,
                         const DeviceAccessRecord& b) {
  const uint64_t lo = std::max(a.begin, b.begin);
  const uint64_t hi = std::min(a.end(), b.end());
  if (lo >= hi || !Conflicts(a.type, b.type)) return kNoRace;
  if (a.threadgroup != b.threadgroup) return lo;
  if (a.barrier_epoch != b.barrier_epoch) return kNoRace;
  for (uint64_t byte = lo; byte < hi; ++byte) {
    const uint32_t ta = a.ThreadAt(byte);
    const uint32_t tb = b.ThreadAt(byte);
    const bool ordered =
        ta == tb || ((ta >> 5) == (tb >> 5) && a.simd_epoch != b.simd_epoch);
    if (!ordered) return byte;
  }
  return kNoRace;
}

// Records whose end lies past the sweep's position, with the least end, so
// that pruning happens only when something can go.
class ActiveSet {
 public:
  void Prune(const std::vector<DeviceAccessRecord>& all, uint64_t position) {
    if (position < min_end_) return;
    min_end_ = std::numeric_limits<uint64_t>::max();
    std::erase_if(indices_, [&](size_t i) { return all[i].end() <= position; });
    for (size_t i : indices_) min_end_ = std::min(min_end_, all[i].end());
  }
  void Add(const std::vector<DeviceAccessRecord>& all, size_t i) {
    indices_.push_back(i);
    min_end_ = std::min(min_end_, all[i].end());
  }
  const std::vector<size_t>& indices() const { return indices_; }

 private:
  std::vector<size_t> indices_;
  uint64_t min_end_ = std::numeric_limits<uint64_t>::max();
};

// Whether `a` and `b` both kept the bytes they wrote and agree on [lo, hi).
bool SameValue(const DeviceAccessLog& log, const DeviceAccessRecord& a,
               const DeviceAccessRecord& b, uint64_t lo, uint64_t hi) {
  if (!a.has_value || !b.has_value) return false;
  return std::equal(log.values.begin() + (a.value_offset + (lo - a.begin)),
                    log.values.begin() + (a.value_offset + (hi - a.begin)),
                    log.values.begin() + (b.value_offset + (lo - b.begin)));
}

}  // namespace

void DeviceAccessLog::Append(const DeviceAccessRecord& access,
                             const uint8_t* written) {
  // The record this access may continue: the last one of its instruction
  // (a loop's SIMD groups interleave their instructions' records).
  size_t& open = open_[access.pc % open_.size()];
  if (open < records.size()) {
    DeviceAccessRecord& last = records[open];
    if (last.pc == access.pc && last.type == access.type &&
        last.threadgroup == access.threadgroup &&
        last.element_size == access.element_size &&
        last.barrier_epoch == access.barrier_epoch &&
        last.simd_epoch == access.simd_epoch && last.end() == access.begin &&
        last.first_thread + last.length / last.element_size ==
            access.first_thread) {
      // Bytes are kept while the record's are the last ones stored.
      if (last.has_value && last.value_offset + last.length == values.size() &&
          last.length + access.length <= DeviceAccessRecord::kMaxValueBytes) {
        values.insert(values.end(), written, written + access.length);
      } else {
        last.has_value = false;
      }
      last.length += access.length;
      return;
    }
  }
  open = records.size();
  records.push_back(access);
  if (written != nullptr &&
      access.length <= DeviceAccessRecord::kMaxValueBytes) {
    records.back().has_value = true;
    records.back().value_offset = values.size();
    values.insert(values.end(), written, written + access.length);
  }
}

void DeviceAccessLog::Take(DeviceAccessLog& other) {
  const uint64_t base = values.size();
  for (DeviceAccessRecord& r : other.records) {
    r.value_offset += base;
    records.push_back(r);
  }
  values.insert(values.end(), other.values.begin(), other.values.end());
  other.Clear();
}

void DeviceAccessLog::Clear() {
  records.clear();
  values.clear();
  open_.fill(SIZE_MAX);
}

void DeviceAccessLog::TakeByThreadgroup(
    const std::vector<DeviceAccessLog*>& parts) {
  uint64_t lo = std::numeric_limits<uint64_t>::max();
  uint64_t hi = 0;
  size_t count = 0;
  for (const DeviceAccessLog* part : parts) {
    for (const DeviceAccessRecord& r : part->records) {
      lo = std::min(lo, r.threadgroup);
      hi = std::max(hi, r.threadgroup);
    }
    count += part->records.size();
  }
  if (count == 0) {
    for (DeviceAccessLog* part : parts) part->Clear();
    return;
  }
  // position[t - lo]: where threadgroup t's next record goes.
  std::vector<size_t> position(hi - lo + 2, 0);
  for (const DeviceAccessLog* part : parts) {
    for (const DeviceAccessRecord& r : part->records) {
      ++position[r.threadgroup - lo + 1];
    }
  }
  position[0] = records.size();
  for (size_t i = 1; i < position.size(); ++i) position[i] += position[i - 1];
  records.resize(records.size() + count);
  for (DeviceAccessLog* part : parts) {
    const uint64_t base = values.size();
    for (DeviceAccessRecord r : part->records) {
      r.value_offset += base;
      records[position[r.threadgroup - lo]++] = r;
    }
    values.insert(values.end(), part->values.begin(), part->values.end());
    part->Clear();
  }
}

bool FindDeviceRaces(const DeviceAccessLog& log, FindingSet& findings) {
  const std::vector<DeviceAccessRecord>& records = log.records;
  // Only bytes somebody writes can race: reads elsewhere are dropped first.
  std::vector<std::pair<uint64_t, uint64_t>> written;  // merged [begin, end)
  for (const DeviceAccessRecord& r : records) {
    if (IsWrite(r.type)) written.emplace_back(r.begin, r.end());
  }
  if (written.empty()) return true;
  std::sort(written.begin(), written.end());
  size_t n = 0;
  for (const auto& w : written) {
    if (n > 0 && w.first <= written[n - 1].second) {
      written[n - 1].second = std::max(written[n - 1].second, w.second);
    } else {
      written[n++] = w;
    }
  }
  written.resize(n);
  const auto touches_written = [&](const DeviceAccessRecord& r) {
    auto it = std::upper_bound(
        written.begin(), written.end(), r.begin,
        [](uint64_t a, const std::pair<uint64_t, uint64_t>& w) {
          return a < w.first;
        });
    if (it != written.end() && it->first < r.end()) return true;
    return it != written.begin() && std::prev(it)->second > r.begin;
  };
  std::vector<DeviceAccessRecord> all;
  for (const DeviceAccessRecord& r : records) {
    if (IsWrite(r.type) || touches_written(r)) all.push_back(r);
  }
  // The records come in threadgroup order; a stable sort keeps the sweep
  // (and so the examples chosen) the same on any number of host threads.
  std::stable_sort(
      all.begin(), all.end(),
      [](const DeviceAccessRecord& a, const DeviceAccessRecord& b) {
        return a.begin < b.begin;
      });

  bool complete = true;
  ActiveSet writes, reads;
  const auto compare = [&](const ActiveSet& earlier,
                           const DeviceAccessRecord& x) {
    const std::vector<size_t>& indices = earlier.indices();
    const size_t first = indices.size() > kMaxOverlapsCompared
                             ? indices.size() - kMaxOverlapsCompared
                             : 0;
    if (first > 0) complete = false;
    for (size_t k = indices.size(); k-- > first;) {
      const DeviceAccessRecord& a = all[indices[k]];
      const uint64_t byte = FirstRacingByte(a, x);
      if (byte == kNoRace) continue;
      RawFinding f;
      f.kind = FindingKind::kDeviceRace;
      f.first = SideAt(a, byte);
      f.second = SideAt(x, byte);
      f.has_second = true;
      f.space = isa::AddressSpace::kDevice;
      f.address = byte;
      f.size = x.element_size;
      f.same_value = SameValue(log, a, x, std::max(a.begin, x.begin),
                               std::min(a.end(), x.end()));
      findings.Add(f);
    }
  };
  for (size_t i = 0; i < all.size(); ++i) {
    const DeviceAccessRecord& x = all[i];
    writes.Prune(all, x.begin);
    reads.Prune(all, x.begin);
    compare(writes, x);
    if (IsWrite(x.type)) {
      compare(reads, x);
      writes.Add(all, i);
    } else {
      reads.Add(all, i);
    }
  }
  return complete;
}

}  // namespace mtlemu::emu
